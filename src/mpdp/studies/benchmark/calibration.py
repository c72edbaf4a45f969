"""Calibration of every benchmark mechanism to the common target (ε, δ) (spec E10 table).

Replace-one neighbours; the whole released transcript must be (ε, δ)-DP under the tightest
accountant available:

========================================  =================================================
mechanisms                                calibration (spec E10 "Calibration")
========================================  =================================================
wyx, wddp_per_round, jayaraman_per_round  composed Gaussian, σ = √T · Δ · z*(ε, δ) with
                                          Δ = 2G/n (2G/(m n_(1)) for Jayaraman, M4.2);
                                          accountant ``exact`` of
                                          :mod:`mpdp.privacy.calibration` (analytic Gaussian
                                          = PLD of dp-accounting)
wddp_literal, jayaraman_literal           per party: σ_j = √T · (2G/n_j) · z*(ε, δ)
                                          (``exact_per_party``, spec M3.1, M4.1, I-1)
dvp, pvp                                  per-iteration α from the PLD composition of T
                                          (α, 0) steps (:func:`mpdp.privacy.pure_dp.
                                          per_step_alpha`), each node's T releases; PVP's
                                          noise calibrated to the hidden-state bound
                                          Δ_p/(1−r) (spec I-20, :func:`pvp_bound_alpha`)
output family (M5, M6a, M6b, M11, M12)    one pure ε-DP N-L2 release (δ unused: 0)
========================================  =================================================

Every calibration returns a :class:`Ledger` with the noise actually used and ``eps_total``:
the ε the whole transcript really gives at ``delta_total`` under the accountant named, computed
by an *independent* route from the noise (the ledger functions, not the inverse used to
calibrate), so that a test can check ``eps_total == ε`` up to the accountant's tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mpdp import mechanisms
from mpdp.mechanisms import RunSpec
from mpdp.mechanisms import admm as zz
from mpdp.mechanisms import output_perturbation as op
from mpdp.privacy.pure_dp import composed_pure_epsilon, per_step_alpha

#: gradient mechanism id -> (registry mechanism of mpdp.mechanisms, mode, accountant)
GRADIENT: dict[str, tuple[str, str, str]] = {
    "wyx": ("wyx", "central", "exact"),
    "wddp_per_round": ("wddp", "per_round", "exact"),
    "jayaraman_per_round": ("jayaraman", "per_round", "exact"),
    "wddp_literal": ("wddp", "local_then_aggregate", "exact_per_party"),
    "jayaraman_literal": ("jayaraman", "local_then_aggregate", "exact_per_party"),
}

#: output-family ids (mpdp.mechanisms.output_perturbation)
OUTPUT = ("jayaraman_output", "pathak", "param_avg", "hamm_vote", "hamm_soft")


@dataclass(frozen=True)
class Ledger:
    """Noise actually used by one run and the (ε, δ) its whole transcript gives."""

    accountant: str  # exact | exact_per_party | pure | pure_pld | none
    sensitivity: float  # ℓ2 sensitivity of one release (per step; smallest party for literal)
    sigma: float  # Gaussian std per step (largest party σ for literal); NaN for N-L2
    beta: float  # N-L2 parameter (output: ε/Δ); NaN for Gaussian
    alpha_step: float  # ADMM per-iteration α; NaN otherwise
    eps_total: float
    delta_total: float
    scope: str  # aggregate | worst_party | per_node


def gradient_runspec(mechanism: str, dataset: str, epsilon: float, delta: float, T: int, eta: float,
                     lam: float, G: float, m: int, u: int, rep: int, seed: int = 0,
                     experiment: str = "benchmark") -> RunSpec:
    """The :class:`RunSpec` of a benchmark gradient mechanism (its id mapped by :data:`GRADIENT`)."""
    registry_id, mode, accountant = GRADIENT[mechanism]
    return RunSpec(dataset=dataset, experiment=f"{experiment}:{mechanism}", mechanism=registry_id,
                   mode=mode, accountant=accountant, epsilon=float(epsilon), delta=float(delta),
                   rep=rep, eta=float(eta), T=int(T), lam=float(lam), G=float(G), m=int(m), u=int(u),
                   seed=seed, eta_source="tuned")


def gradient_ledger(run: RunSpec, party_sizes: Sequence[int]) -> Ledger:
    """Composed-Gaussian calibration of a gradient run (spec E10 rows 1–3, §0.5).

    σ comes from :meth:`mpdp.mechanisms.GradientPerturbation.calibrate` (accountant
    ``exact``/``exact_per_party``); ``eps_total`` is that calibration's ledger ε (analytic
    Gaussian composition of the noise actually used, worst party for the literal mode).
    """
    cal = mechanisms.get(run.mechanism).calibrate(run, party_sizes)
    sigma = max(cal.party_sigmas) if cal.party_sigmas else cal.sigma
    return Ledger(cal.accountant, cal.sensitivity, float(sigma), math.nan, math.nan,
                  float(cal.eps_accounted), run.delta, cal.eps_accounted_scope)


def output_ledger(mechanism: str, epsilon: float, dim: int, lam: float, m: int, n_min: int
                  ) -> tuple[Ledger, op.OutputCalibration]:
    """Pure ε-DP N-L2 calibration of an output/voting mechanism (spec M5, M6, M11, M12).

    β = ε/Δ₂ with Δ₂ of :func:`mpdp.mechanisms.output_perturbation.sensitivity`; one release, so
    the transcript is ``(β Δ₂, 0)``-DP (party level for M6b, M11, M12).
    """
    cal = op.calibrate(mechanism, epsilon, dim, lam, m, n_min)
    eps_total = cal.beta * cal.sensitivity if math.isfinite(cal.beta) else math.inf
    return Ledger("pure", cal.sensitivity, math.nan, cal.beta, math.nan, float(eps_total), 0.0,
                  "aggregate"), cal


def admm_alpha(epsilon: float, T: int, delta: float, method: str = "pld") -> float:
    """Per-iteration α such that T adaptive (α, 0)-DP releases of a node are (ε, δ)-DP (spec E10).

    Each record lives on one node, whose T releases (DVP: f_p(t+1); PVP: T − 1 perturbed primals
    and the final DVP step) compose; the other nodes' releases are post-processing of them.
    An α installed by :func:`install_admm_alpha` (computed once by rule ``benchmark_budgets``,
    the same function) is returned as it was computed.
    """
    if (known := _ADMM_ALPHAS.get(_alpha_key(epsilon, T, delta, method))) is not None:
        return known
    return per_step_alpha(float(epsilon), int(T), float(delta), method)


#: per-step α installed from rule ``benchmark_budgets``'s file: (ε, T, δ, method) -> α (issue 45:
#: each bisection is ~47 PLD compositions of T steps, and every data set's ADMM job needed the same)
_ADMM_ALPHAS: dict[tuple[float, int, float, str], float] = {}


def _alpha_key(epsilon: float, T: int, delta: float, method: str) -> tuple[float, int, float, str]:
    return float(epsilon), int(T), float(delta), str(method)


def install_admm_alpha(epsilon: float, T: int, delta: float, method: str, alpha: float) -> None:
    """Make :func:`admm_alpha` (ε, T, δ, method) return ``alpha`` (:mod:`mpdp.studies.benchmark.budgets`)."""
    _ADMM_ALPHAS[_alpha_key(epsilon, T, delta, method)] = float(alpha)


def admm_ledger(epsilon: float, T: int, delta: float, method: str = "pld") -> Ledger:
    """Ledger of a DVP/PVP run: α from :func:`admm_alpha`, ``eps_total`` its composition.

    The sensitivity and ζ of each release depend on the node (spec M9, M10) and are filled from
    the training batch; here they are NaN.
    """
    alpha = admm_alpha(epsilon, T, delta, method)
    eps_total = composed_pure_epsilon(alpha, int(T), float(delta), method)
    return Ledger(f"pure_{method}", math.nan, math.nan, math.nan, alpha, float(eps_total),
                  float(delta), "per_node")


def pvp_hidden_gain_max(rho: float, P: int, penalty: float, topology: str) -> float:
    """The largest gain r = ηV_p/κ_p over the nodes of the graph (spec I-20)."""
    degrees = {len(nb) for nb in zz.neighbours(topology, P)}
    return float(max(zz.pvp_hidden_gain(rho, P, penalty, deg) for deg in degrees))


def pvp_bound_alpha(alpha: float, rho: float, P: int, penalty: float, topology: str) -> float:
    """The α to hand to :func:`mpdp.mechanisms.admm.run_batch` so that PVP is α-DP per release.

    Spec I-20: PVP minimises with its own unreleased f_p(t), so given the released history the
    t-th minimiser of two neighbouring data sets differs by d(t) ≤ Δ_p/(1 − r)
    (:func:`mpdp.mechanisms.admm.pvp_conditional_sensitivity`, ``t=None``), not Δ_p. The batch
    trainer sets ζ_p = α_run/Δ_p (spec M10 (19)); with α_run = α(1 − r) this is
    ζ_p = α/(Δ_p/(1 − r)), the N-L2 scale of sensitivity Δ_p/(1 − r), so each perturbed release
    is α-DP given the history. The final DVP step (spec M9) gets the same α_run: its noise-space
    sensitivity grows from 2 to 2 + (B_p/C^R)ηV_p·d(T−1) ≤ 2/(1 − r) and its Jacobian term J is
    at most the one of α_run, so its loss is at most α′_run/(1 − r) + J ≤ α (both cases of M9).
    """
    return float(alpha) * (1.0 - pvp_hidden_gain_max(rho, P, penalty, topology))


NONPRIVATE = Ledger("none", math.nan, 0.0, math.nan, math.nan, math.inf, 0.0, "aggregate")


def size_summary(sizes: Sequence[int]) -> dict[str, float]:
    """n, n_min, n_max and n/(m n_(1)) of a partition (common schema columns)."""
    s = np.asarray(sizes)
    return {"n": int(s.sum()), "n_min": int(s.min()), "n_max": int(s.max()),
            "size_ratio": float(s.sum() / (len(s) * s.min()))}
