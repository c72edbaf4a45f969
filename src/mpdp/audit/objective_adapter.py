"""Many-draws audit of objective perturbation (spec audit.md A1, A3; docs/objective_perturbation.md OP4).

The attack runs the benchmark mechanisms' own code (:meth:`~mpdp.studies.benchmark.objective.
CentralObjective.ledger` and ``train_batch``, hence :func:`mpdp.mechanisms.objective_perturbation.solve`)
on the spec A3 record pair: ``n`` records on one coordinate (p = 1), n − 1 of them x = 0 (no
gradient, no curvature) and one canary x = 1 whose label is +1 in D and −1 in D′ (replace-one).
``objpert`` pools them; ``objpert_avg`` splits them over ``m`` parties (default 2), the canary in
the first, and releases the average. Every draw is one release with its own noise (one stream per
side, drawn in order); the score is the released θ (larger under D).
:func:`mpdp.audit.many_draws.many_draws_audit` turns the two sides' scores into the (1 − β)
lower bound ε̂ (pure DP: at δ = 0).

Planted bug ``objective_noise_scale`` (:mod:`mpdp.audit.bugs`): the linear term is bᵀθ/n² — the
noise n times too small in θ — while the ledger still claims ε. ``eps_up`` is the ε of the noise
as implemented (:func:`~mpdp.mechanisms.objective_perturbation.epsilon_given` at β·n for the bug),
an upper bound for the audited pair: honest rows have ε̂ ≤ ``eps_accounted`` = ``eps_up``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from mpdp.audit import bugs
from mpdp.audit.adapters import AuditContext, record_pair, setting_label
from mpdp.audit.many_draws import many_draws_audit
from mpdp.errors import ConfigError
from mpdp.mechanisms import objective_perturbation as op
from mpdp.seeding import rng
from mpdp.studies.benchmark import objective
from mpdp.studies.benchmark.interface import Run

#: defaults of the setting keys the audit config may leave out (``m``: parties of ``objpert_avg``)
DEFAULTS: dict[str, Any] = {"n": 100, "m": 2, "lambda": 0.01}
#: releases solved per batched Newton call
CHUNK = 4000


def draws_per_side(setting: Mapping[str, Any], many_draws: Mapping[str, Any]) -> int:
    """``draws`` of the setting, else ``audit.many_draws.training_draws`` (each draw an exact solve),
    at most ``audit.many_draws.draws``."""
    if setting.get("draws"):
        return int(setting["draws"])
    return min(int(many_draws.get("training_draws", many_draws["draws"])), int(many_draws["draws"]))


@dataclass(frozen=True)
class ObjectiveAudit:
    """Many-draws audit of one objective-perturbation mechanism (module docstring)."""

    mechanism: objective.CentralObjective
    method: str = "many_draws"
    privacy_unit: str = "record"

    @property
    def id(self) -> str:
        return self.mechanism.id

    def parties(self, n: int, m: int) -> list[np.ndarray]:
        if not isinstance(self.mechanism, objective.PartyObjective):
            return [np.arange(n)]
        return np.array_split(np.roll(np.arange(n), 1), m)  # the canary (last record) in the first party

    def scores(self, setting: Mapping[str, Any], ctx: AuditContext, label: str) -> tuple[np.ndarray, np.ndarray]:
        """The released θ over the draws on D and on D′."""
        o = DEFAULTS | {k: v for k, v in setting.items() if v is not None}
        n, lam, eps = int(o["n"]), float(o["lambda"]), float(setting["epsilon"])
        draws = draws_per_side(setting, ctx.many_draws)
        X, y_d, y_p = record_pair(n)
        parties = self.parties(n, int(o["m"]))
        sizes = np.array([len(p) for p in parties])
        ledger = self.mechanism.ledger({}, eps, sizes, lam, 1)
        bug = bugs.bug_name(setting)
        out = []
        for side, y in (("D", y_d), ("D'", y_p)):
            gen = rng(ctx.root_seed, "audit", self.id, side, label, str(bug))
            theta = np.empty(draws)
            with bugs.planted(setting, self.method, 1.0):
                for start in range(0, draws, CHUNK):
                    k = min(CHUNK, draws - start)
                    runs = [Run(eps, lam, i, ledger, gen) for i in range(start, start + k)]
                    theta[start:start + k] = self.mechanism.train_batch({}, X, y, parties, runs)[0]
            out.append(theta)
        return out[0], out[1]

    def run(self, setting: Mapping[str, Any], ctx: AuditContext) -> dict[str, Any]:
        start = time.perf_counter()
        o = DEFAULTS | {k: v for k, v in setting.items() if v is not None}
        n, lam, eps = int(o["n"]), float(o["lambda"]), float(setting["epsilon"])
        bug = bugs.bug_name(setting)
        if bug not in (None, "objective_noise_scale"):
            raise ConfigError(f"config key 'audit.settings[].planted_bug': {bug!r} cannot be planted in the "
                                   f"{self.id} audit (it takes objective_noise_scale)")
        label = setting_label(o)
        parties = self.parties(n, int(o["m"]))
        sizes = [len(p) for p in parties]
        ledger = self.mechanism.ledger({}, eps, np.array(sizes), lam, 1)
        s_d, s_p = self.scores(setting, ctx, label)
        result = many_draws_audit(s_d, s_p, rng(ctx.root_seed, "audit", "split", self.id, label, str(bug)),
                                  ctx.beta, 0.0, float(ctx.many_draws["f_sel"]))
        # the canary's party: the ε its noise as implemented gives (β·n when the noise is divided by n twice)
        n_canary = sizes[0]
        beta_used = ledger.betas[0] * (n_canary if bug else 1.0)
        eps_up = op.epsilon_given(n_canary, lam + ledger.extra_regs[0], beta_used)
        note = (f"spec A3 record pair (synthetic, p = 1, n = {n}, parties {len(sizes)}), released θ; "
                f"λ = {lam:g}, Δ = {ledger.extra_regs[0]:.3g}")
        if bug:
            note += "; linear term bᵀθ/n² (planted bug)"
        return {
            "mechanism": self.id, "setting": label, "method": self.method,
            "dataset": setting.get("dataset"), "privacy_unit": self.privacy_unit,
            "planted_bug": bug is not None, "bug": bug, "noise_factor": 1.0,
            "eps_claimed": eps, "eps_accounted": ledger.eps_total, "eps_accounted_scope": ledger.scope,
            "accountant": ledger.accountant, "delta": 0.0, "beta": ctx.beta,
            "eps_lower": result.eps_lower, "eps_up": eps_up,
            "mu": None, "eps_gdp": None, "noise": 1.0 / ledger.betas[0], "T": 1, "trials": s_d.size,
            "k": None, "guesses": None, "correct": None, "tp": result.tp, "fp": result.fp,
            "threshold": result.threshold, "n_min": min(sizes), "n": n, "data": note,
            "seconds": time.perf_counter() - start,
        }


ADAPTERS = (ObjectiveAudit(objective.MECHANISM), ObjectiveAudit(objective.PARTY_MECHANISM))
