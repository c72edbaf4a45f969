"""Many-draws audit of multi-party DP-SGD (spec audit.md A1, A3; :mod:`mpdp.mechanisms.dpsgd`).

The attack runs the shipped trainer (:func:`mpdp.mechanisms.dpsgd.train`) on the spec A3
record pair: ``n`` records on one coordinate (p = 1), n − 1 of them zero (no gradient) and one
canary x = e₁ whose label is +1 in D and −1 in D' (a replace-one change). The canary's clipped
gradient −y·expit(−y θ)·e₁ has norm ≤ G, so the pair is within the mechanism's claim. Without
clipping the label flip moves the gradient by expit(−θ) + expit(θ) = 1 only (spec A2: the
logistic fallback has half the power); with the default clipping norm G = 0.4 < 1/2 both
labels' gradients are clipped to exactly G while |θ| ≤ ln((1 − G)/G) ≈ 0.41, so the flip moves
the aggregate by the full replace-one gap 2G in every round that samples the canary (the small
default step keeps θ there). The
records are split over ``m`` parties (default 1; the canary in the first), each sampling its
own records. Every draw is an independent run, :func:`training_draws` of them per side (a
seed: its own sampling and noise streams, :func:`mpdp.seeding.rng` keys under
``("audit", "dpsgd", side, label)``); the score is the
canary coordinate of the released model θ_T (post-processing of the transcript), larger under D.
:func:`mpdp.audit.many_draws.many_draws_audit` turns the two sides' scores into the (1 − β)
lower bound ε̂ at the ledger's δ.

σ comes from the mechanism's own calibration (:func:`mpdp.mechanisms.dpsgd.ledger`) at the
setting's ``epsilon``, ``q`` and ``T``. The **planted bug** (``planted_bug: true``): the
sampling amplification is claimed — σ calibrated for rate q — while every record is sampled
(the trainer runs with q = 1). ``eps_up`` is the replace-one ε of the noise as implemented at
the rate really used (:func:`mpdp.privacy.subsampled_gaussian.epsilon`), an upper bound for the
audited pair: honest runs have ε̂ ≤ ``eps_accounted`` ≤ ``eps_up``; the bug's ``eps_up`` is the
full-batch ε, far above the claim, and ε̂ exceeds ``eps_accounted``.

The audit registry (:mod:`mpdp.audit.registry`) registers :data:`ADAPTER` under id ``dpsgd``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from mpdp.audit.adapters import AuditContext, record_pair, setting_label
from mpdp.audit.many_draws import many_draws_audit
from mpdp.mechanisms import dpsgd
from mpdp.privacy import subsampled_gaussian as sg
from mpdp.seeding import rng

#: defaults of the setting keys that the audit config may leave out
DEFAULTS: dict[str, Any] = {"n": 100, "m": 1, "q": 0.01, "T": 10, "eta": 1e-3, "lambda": 0.0,
                            "G": 0.4}


def training_draws(many_draws: Mapping[str, Any]) -> int:
    """Draws per side unless the setting names ``draws``: ``audit.many_draws.training_draws``, at
    most ``draws``. Every draw is a whole DP-SGD run with its own streams (about 15 s per 10⁵
    draws and side on one core; 10⁶ took about 6 minutes per setting), where the other
    many-draws adapters draw single releases."""
    return min(int(many_draws.get("training_draws", many_draws["draws"])), int(many_draws["draws"]))


@dataclass(frozen=True)
class DpsgdAdapter:
    """Many-draws canary audit of :mod:`mpdp.mechanisms.dpsgd` (module docstring)."""

    id: str = "dpsgd"
    method: str = "many_draws"
    privacy_unit: str = "record"

    def scores(self, setting: Mapping[str, Any], ctx: AuditContext, label: str, sigma: float,
               q_used: float) -> tuple[np.ndarray, np.ndarray]:
        """Canary coordinate of θ_T over ``draws`` runs on D and on D'."""
        o = DEFAULTS | {k: v for k, v in setting.items() if v is not None}
        n, m = int(o["n"]), int(o["m"])
        draws = int(setting.get("draws", training_draws(ctx.many_draws)))
        X, y_d, y_p = record_pair(n)
        # the canary (last record) goes to the first party
        parties = np.array_split(np.roll(np.arange(n), 1), m)
        bug = bool(setting.get("planted_bug"))
        out = []
        for side, y in (("D", y_d), ("D'", y_p)):
            theta = dpsgd.train(X, y, parties, etas=[float(o["eta"])], seeds=range(draws),
                                sigma=sigma, q=q_used, T=int(o["T"]), G=float(o["G"]),
                                lam=float(o["lambda"]), theta0=np.zeros(1),
                                root_seed=ctx.root_seed, key=("audit", "dpsgd", side, label, bug))
            out.append(theta[0])
        return out[0], out[1]

    def run(self, setting: Mapping[str, Any], ctx: AuditContext) -> dict[str, Any]:
        start = time.perf_counter()
        o = DEFAULTS | {k: v for k, v in setting.items() if v is not None}
        q, T, G, epsilon = float(o["q"]), int(o["T"]), float(o["G"]), float(setting["epsilon"])
        bug = bool(setting.get("planted_bug"))
        label = f"{setting_label(o)} q={q:g}"
        led = dpsgd.ledger(epsilon, ctx.delta, q, T, G)
        q_used = 1.0 if bug else q
        s_d, s_p = self.scores(setting, ctx, label, led["sigma"], q_used)
        draws = s_d.size
        result = many_draws_audit(s_d, s_p, rng(ctx.root_seed, "audit", "split", self.id, label, bug),
                                  ctx.beta, ctx.delta, float(ctx.many_draws["f_sel"]))
        n = int(o["n"])
        note = (f"spec A3 record pair (synthetic, p = 1, n = {n}, m = {int(o['m'])}), "
                f"canary coordinate of the final model; sampled at q = {q_used:g}")
        if bug:
            note += f" while sigma is calibrated for q = {q:g} (planted bug)"
        return {
            "mechanism": self.id, "setting": label, "method": self.method,
            "dataset": setting.get("dataset"), "privacy_unit": self.privacy_unit,
            "planted_bug": bug, "bug": "sampling_rate" if bug else None, "noise_factor": 1.0,
            "eps_claimed": epsilon,
            "eps_accounted": led["eps_accounted"], "eps_accounted_scope": led["scope"],
            "accountant": led["accountant"], "delta": ctx.delta, "beta": ctx.beta,
            "eps_lower": result.eps_lower, "eps_up": sg.epsilon(q_used, led["sigma"], T, ctx.delta),
            "mu": None, "eps_gdp": None, "noise": led["noise_std"], "T": T, "trials": draws,
            "k": None, "guesses": None, "correct": None, "tp": result.tp, "fp": result.fp,
            "threshold": result.threshold, "n_min": n // int(o["m"]), "n": n, "data": note,
            "seconds": time.perf_counter() - start,
        }


ADAPTER = DpsgdAdapter()
