"""Audit adapters of the one-release mechanisms: output perturbation, voting, PVP's noise.

Each builds the worst-case neighbouring pair of spec audit.md A3 in one feature (p = 1), computes
the exact pre-noise releases a, a' once with the mechanism's own solvers, takes the N-L2 rate of
the mechanism's own calibration, and hands them to the many-draws audit
(:func:`mpdp.audit.adapters.nl2_audit_row`, spec A1).

- :class:`OutputMechanismAdapter` — Jayaraman output perturbation (M5) and Pathak's averaging
  (M6a), record level: ``parties`` parties of ``n`` records; the audited record (x = 1, label
  ±1) sits in party 0, every other record has x = 0 (no gradient), so the other local
  minimisers are 0 and the released average is ±c/M with n λ c = σ(−c). Party-level averaging
  (M6b) uses the same pair (A3); its claimed Δ is party level. Hamm's majority vote (M11) and
  soft vote (M12), party level (A6.11): (M−1)/2 parties vote +1 everywhere, (M−1)/2 vote −1,
  the audited party +1 in D and −1 in D' (M even: M/2 − 1 parties +1, M/2 parties −1), on an
  auxiliary pool of ``n`` points x = 1; the curator's ERM
  (:func:`~mpdp.models.voting_erm.global_models`) is solved on both vote vectors.
- :class:`PVPNoiseAdapter` — ADMM with primal variable perturbation (M10): each iteration
  releases a primal minimiser plus N-L2 noise of rate ζ = α/Δ_p (:func:`mpdp.mechanisms.admm.
  pvp_zeta`), α the per-iteration budget that composes to the target (ε, δ) over T iterations
  (:func:`mpdp.privacy.pure_dp.per_step_alpha`, as in the benchmark). The audit attacks ONE
  iteration's release on its noise stage (a = Δ_p e₁, a' = 0): a lower bound for one release
  is a lower bound for the whole transcript, which contains it (post-processing), so
  ε̂ ≤ α ≤ ε is the honest outcome; ε_up = α.

- :class:`DVPFirstIterationAdapter` — ADMM with dual variable perturbation (M9, objective
  perturbation): the first iteration's release of a node, f = argmin (C^R/B_p) Σ l(y xᵀf) +
  ((κ_p + Φ)/2) f² + (C^R/B_p) ε f (the primal step of :func:`mpdp.mechanisms.admm.run_batch`
  at t = 0, where the dual and the neighbours' iterates are 0), solved exactly for every draw
  of ε by the batched Newton solver (:func:`mpdp.models.newton.solve`, one column per draw);
  Φ and ζ from :func:`~mpdp.mechanisms.admm.dvp_calibration` at the per-iteration α. Pair
  (p = 1): the node's B_p − 1 other records have x = 0 (no gradient); the audited record is
  x = 1 with y = +1 in D and −1 in D'. Score: the release itself (it grows with y). Honest:
  ε̂ ≤ ε_up = ζ ≤ α ≤ ε (:meth:`DVPFirstIterationAdapter.ceiling`).

DVP and PVP claim (ε, δ) for a node's whole transcript (T pure (α, 0) releases composed by
PLD, δ = the benchmark's δ): their bounds ε̂ use that δ and the row records it. The single
pure-DP releases (output perturbation, voting, N-L2) claim δ = 0 and are bounded at δ = 0.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from mpdp.audit.adapters import (
    AuditContext,
    nl2_audit_row,
    noise_factor,
    record_pair,
    setting_label,
)
from mpdp.audit.bugs import bug_name
from mpdp.audit.many_draws import many_draws_audit
from mpdp.errors import ConfigError
from mpdp.mechanisms import output_perturbation as op
from mpdp.mechanisms.admm import dvp_calibration, pvp_sensitivity, pvp_zeta
from mpdp.models import newton
from mpdp.models.logistic import solve_optimum
from mpdp.models.voting_erm import global_models, vote_targets
from mpdp.privacy.pure_dp import composed_pure_epsilon, per_step_alpha
from mpdp.privacy.samplers import l2_laplace
from mpdp.seeding import rng


def _required(setting: Mapping[str, Any], *keys: str) -> list[Any]:
    missing = [k for k in keys if setting.get(k) is None]
    if missing:
        raise ConfigError(f"audit setting for {setting['mechanism']!r} needs {missing}")
    return [setting[k] for k in keys]


def record_average_pair(n: int, parties: int, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """(a, a'): the average of the ``parties`` local minimisers on the spec A3 record pair."""
    X, y_d, y_p = record_pair(n)
    local_d, local_p = solve_optimum(X, y_d, lam), solve_optimum(X, y_p, lam)
    # every other party holds only x = 0 records: its minimiser is exactly 0
    return local_d / parties, local_p / parties


def vote_pair(mechanism: str, n_aux: int, parties: int, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """(a, a'): Hamm's curator ERM on the auxiliary pool for the spec A3 party-level pair."""
    plus = (parties - 1) // 2 if parties % 2 else parties // 2 - 1
    minus = parties - 1 - plus
    fixed = [1.0] * plus + [-1.0] * minus
    X_aux = np.ones((n_aux, 1))
    targets = []
    for audited in (1.0, -1.0):
        preds = np.repeat(np.array([*fixed, audited])[:, None], n_aux, axis=1)
        vote, alpha = vote_targets(preds, 2)
        targets.append(vote if mechanism == "hamm_vote" else alpha)
    models = global_models(X_aux, targets, lam, 2)
    return models[0].reshape(1), models[1].reshape(1)


@dataclass(frozen=True)
class OutputMechanismAdapter:
    """Many-draws audit of an output-perturbation or voting release (spec A1, A3; M5, M6, M11, M12)."""

    id: str  # an id of mpdp.mechanisms.output_perturbation.PRIVACY_UNIT
    method: str = "many_draws"

    @property
    def privacy_unit(self) -> str:
        return op.PRIVACY_UNIT[self.id]

    def run(self, setting: Mapping[str, Any], ctx: AuditContext) -> dict[str, Any]:
        start = time.perf_counter()
        n, parties, lam = _required(setting, "n", "parties", "lambda")
        n, parties, lam = int(n), int(parties), float(lam)
        epsilon = float(setting["epsilon"])
        if self.id in ("hamm_vote", "hamm_soft"):
            a, a_prime = vote_pair(self.id, n, parties, lam)
            note = f"spec A3 party-level vote pair (synthetic, p = 1, M = {parties}, {n} auxiliary points)"
        else:
            a, a_prime = record_average_pair(n, parties, lam)
            note = f"spec A3 record pair in party 1 of {parties} (synthetic, p = 1, n_j = {n})"
        cal = op.calibrate(self.id, epsilon, 1, lam, parties, n)
        row = nl2_audit_row(self.id, self.privacy_unit, setting, ctx, a, a_prime, cal.beta, cal.sensitivity)
        return row | {"eps_accounted": cal.eps_accounted, "eps_accounted_scope": "aggregate",
                      "accountant": "pure", "n": n * parties, "n_min": n, "data": note,
                      "seconds": time.perf_counter() - start}


@dataclass(frozen=True)
class PVPNoiseAdapter:
    """Many-draws audit of one PVP iteration's release, on its noise stage (spec M10, A1)."""

    id: str = "pvp"
    method: str = "many_draws"
    privacy_unit: str = "record"

    def run(self, setting: Mapping[str, Any], ctx: AuditContext) -> dict[str, Any]:
        start = time.perf_counter()
        T, n, kappa = _required(setting, "T", "n", "kappa")
        epsilon = float(setting["epsilon"])
        alpha = per_step_alpha(epsilon, int(T), ctx.delta, "pld")
        sensitivity = float(pvp_sensitivity(float(n), float(kappa)))
        zeta = float(pvp_zeta(alpha, float(n), float(kappa)))
        a, a_prime = np.array([sensitivity]), np.zeros(1)
        row = nl2_audit_row(self.id, self.privacy_unit, setting, ctx, a, a_prime, zeta, sensitivity,
                            ctx.delta)
        eps_total = composed_pure_epsilon(alpha, int(T), ctx.delta, "pld")
        return row | {
            "eps_accounted": eps_total, "eps_accounted_scope": "per_node", "accountant": "pure_pld",
            "T": int(T), "n": int(n), "n_min": int(n),
            "data": (f"one of T = {int(T)} releases of a node (B_p = {int(n)}, κ_p = {float(kappa):g}), noise "
                     f"stage a = Δ_p e₁, a' = 0; per-iteration α = {alpha:.4g} (ε_up), whole transcript "
                     f"(ε = {eps_total:.4g}, δ = {ctx.delta:g})"),
            "seconds": time.perf_counter() - start,
        }



@dataclass(frozen=True)
class DVPFirstIterationAdapter:
    """Many-draws audit of DVP's first release at one node (spec M9, A1; exact solve per draw)."""

    id: str = "dvp"
    method: str = "many_draws"
    privacy_unit: str = "record"

    def releases(self, y: float, alpha: float, n: int, kappa: float, noise: np.ndarray,
                 factor: float = 1.0) -> np.ndarray:
        """f for every draw of the N-L2 noise (1 × N), on the node whose audited record has label y."""
        cal = dvp_calibration(alpha, float(n), kappa)
        scale = 1.0 / n  # C^R / B_p with C^R = 1 (the ADMM study's default)
        eps = noise / (float(cal.zeta) / factor)  # unit-rate draws scaled to rate ζ/factor
        res = newton.solve(np.ones((1, 1)), np.array([y]), scale, kappa + float(cal.phi), scale * eps)
        return res.theta[0]

    @staticmethod
    def ceiling(alpha: float, n: int, kappa: float, factor: float = 1.0) -> float:
        """ε_up: the exact ε (δ = 0) of this release on the audited pair, ζ/factor · 1 [DER].

        The release's first-order condition gives the noise that produces an output f:
        ε_y(f) = y σ(−y f) − B_p(κ_p + Φ) f. Its derivative in f is the same for y = ±1, so the
        Jacobians cancel and the log-density ratio of f is ζ(|ε_−(f)| − |ε_+(f)|), with
        ε_+ − ε_− = σ(−f) + σ(f) = 1 (the pair's gradient gap; the claimed sensitivity is 2).
        Its supremum over f (ε_− ranges over ℝ) is ζ, in both orders.
        """
        return float(dvp_calibration(alpha, float(n), kappa).zeta) / factor

    def run(self, setting: Mapping[str, Any], ctx: AuditContext) -> dict[str, Any]:
        start = time.perf_counter()
        T, n, kappa = _required(setting, "T", "n", "kappa")
        T, n, kappa = int(T), int(n), float(kappa)
        epsilon = float(setting["epsilon"])
        label = setting_label(setting)
        bug = bool(setting.get("planted_bug"))
        factor = noise_factor(setting, ctx, self.method)
        alpha = per_step_alpha(epsilon, T, ctx.delta, "pld")
        draws = int(setting.get("draws", ctx.many_draws["draws"]))
        unit = [l2_laplace(rng(ctx.root_seed, "audit", side, self.id, label, bug), 1.0, 1, draws)[:, 0]
                for side in ("draws_d", "draws_d'")]
        out_d = self.releases(1.0, alpha, n, kappa, unit[0][None, :], factor)
        out_p = self.releases(-1.0, alpha, n, kappa, unit[1][None, :], factor)
        result = many_draws_audit(out_d, out_p, rng(ctx.root_seed, "audit", "split", self.id, label, bug),
                                  ctx.beta, ctx.delta, float(ctx.many_draws["f_sel"]))
        cal = dvp_calibration(alpha, float(n), kappa)
        return {
            "mechanism": self.id, "setting": label, "method": self.method, "dataset": None,
            "privacy_unit": self.privacy_unit, "planted_bug": bug, "bug": bug_name(setting), "noise_factor": factor,
            "eps_claimed": epsilon, "eps_accounted": composed_pure_epsilon(alpha, T, ctx.delta, "pld"),
            "eps_accounted_scope": "per_node", "accountant": "pure_pld", "delta": ctx.delta,
            "beta": ctx.beta, "eps_lower": result.eps_lower,
            "eps_up": self.ceiling(alpha, n, kappa, factor), "mu": None,
            "eps_gdp": None, "noise": 1.0 / float(cal.zeta), "T": T, "trials": draws, "k": None,
            "guesses": None, "correct": None, "tp": result.tp, "fp": result.fp,
            "threshold": result.threshold, "n_min": n, "n": n,
            "data": (f"first of T = {T} releases of a node (B_p = {n}, κ_p = {kappa:g}, Φ = {float(cal.phi):.3g}), "
                     f"spec A3-style record pair in p = 1, exact solve per draw; per-iteration α = "
                     f"{alpha:.4g} bounds this release"),
            "seconds": time.perf_counter() - start,
        }
