"""Zhang–Zhu Z6, "DVP has a smaller variance of the empirical loss than PVP" (seed 001 §V, Fig. 5; spec E4
Z-F5 i), on its natural scale: the log10 variance ratio of ln L and its study-given 95 % interval (issue 55).

Per α cell, with ``L_m(r, t)`` mechanism m's total empirical loss in repetition r at iteration t,

    V_m = mean over the own iterations t of Var_r(ln L_m(r, t))      (sample variance, ddof 1)
    Z6  = log10(V_DVP / V_PVP)                                      (< 0: DVP varies less)

The seed's "given iteration t" is stripped (I-11), so the variance is pooled over every own release
(iterations 1..T−1: PVP's release T is a DVP step), as the claim's earlier reading did.

The interval is a two-sample BCa bootstrap over repetitions (:data:`RESAMPLES` resamples, a fixed seed per
cell from the config's root seed): DVP's and PVP's repetitions are resampled **independently**, because
their runs share no randomness — every run's noise stream is keyed by its mechanism
(:func:`mpdp.studies.admm.train.noise_key`) and the node split is one fixed condition of all runs — so a
paired bootstrap would pretend a pairing that is not there. Whole runs are resampled (every iteration of a
run together), which keeps the strong correlation of one run's iterations; an F interval would not (its
degrees of freedom hold for one iteration of independent normal runs only). Fewer than :data:`MIN_REPS`
repetitions of either mechanism give no interval (a bootstrap of so few runs has next to no distinct
resamples).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import stats

#: bootstrap resamples per cell
RESAMPLES: int = 2000
#: the fewest repetitions of each mechanism for an interval
MIN_REPS: int = 5
#: confidence of the interval (the engine's two-sided 95 %)
CONFIDENCE: float = 0.95

_NAN = float("nan")


def _statistic(dvp: np.ndarray, pvp: np.ndarray) -> np.ndarray:
    """log10(V_DVP / V_PVP) of arrays (…, repetitions, iterations)."""
    v_dvp = np.var(dvp, axis=-2, ddof=1).mean(axis=-1)
    v_pvp = np.var(pvp, axis=-2, ddof=1).mean(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log10(v_dvp / v_pvp)


def log_variance_ratio(log_dvp: np.ndarray, log_pvp: np.ndarray) -> float:
    """Z6's statistic of ln L arrays of shape (repetitions, iterations), one per mechanism (module docstring);
    NaN when either mechanism has fewer than 2 repetitions or a variance of 0."""
    dvp, pvp = np.asarray(log_dvp, dtype=float), np.asarray(log_pvp, dtype=float)
    if min(dvp.shape[0], pvp.shape[0]) < 2 or dvp.shape[1] == 0 or dvp.shape[1] != pvp.shape[1]:
        return _NAN
    value = float(_statistic(dvp, pvp))
    return value if np.isfinite(value) else _NAN


def interval(log_dvp: np.ndarray, log_pvp: np.ndarray, rng: np.random.Generator) -> tuple[float, float, float]:
    """(estimate, lo, hi): :func:`log_variance_ratio` and its two-sample BCa bootstrap interval (module
    docstring); lo/hi NaN with fewer than :data:`MIN_REPS` repetitions of either mechanism or a degenerate
    bootstrap."""
    est = log_variance_ratio(log_dvp, log_pvp)
    dvp, pvp = np.asarray(log_dvp, dtype=float), np.asarray(log_pvp, dtype=float)
    if not np.isfinite(est) or min(dvp.shape[0], pvp.shape[0]) < MIN_REPS:
        return est, _NAN, _NAN

    def resampled(i: np.ndarray, j: np.ndarray, axis: int = -1) -> np.ndarray:
        # the bootstrap resamples repetition indices (whole runs); ``axis`` is always the last
        return _statistic(dvp[np.asarray(i, dtype=int)], pvp[np.asarray(j, dtype=int)])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a degenerate resample: its bounds come back non-finite
        ci = stats.bootstrap((np.arange(dvp.shape[0]), np.arange(pvp.shape[0])), resampled, vectorized=True,
                             n_resamples=RESAMPLES, batch=500, confidence_level=CONFIDENCE, method="BCa",
                             random_state=rng).confidence_interval
    lo, hi = float(ci.low), float(ci.high)
    return (est, lo, hi) if np.isfinite(lo) and np.isfinite(hi) else (est, _NAN, _NAN)
