"""Interval helpers of the claims engine (:mod:`mpdp.claims`): Student-t, distribution-free
median, Clopper–Pearson and ratio intervals; the fitted change along an axis; log10 of a gap.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

#: Optimal gaps below this value (including non-positive gaps from float round-off at the
#: optimum) are raised to it before taking log10 (C2). Private runs have gaps far above it.
GAP_FLOOR: float = 1e-10

#: Minimum number of repetitions for an interval; fewer gives UNDERPOWERED (too few for an interval).
MIN_REPS: int = 2

#: Confidence level of the two-sided t-interval.
CONFIDENCE: float = 0.95

_NAN = float("nan")

def t_interval(values: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """Mean and two-sided Student-t interval ``mean ± t_{(1+c)/2, R-1} s / sqrt(R)``.

    ``values`` holds one number per repetition (NaNs dropped). With fewer than 2 values the
    bounds are NaN.
    """
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return _NAN, _NAN, _NAN
    mean = float(x.mean())
    if x.size < 2:
        return mean, _NAN, _NAN
    half = float(
        stats.t.ppf((1.0 + confidence) / 2.0, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size)
    )
    return mean, mean - half, mean + half


def median_interval(
    values: np.ndarray, confidence: float = CONFIDENCE
) -> tuple[float, float, float]:
    """Sample median and a distribution-free two-sided interval for the population median.

    The interval is [x_(l), x_(u)] (order statistics, 1-based) with l the largest index such that
    P(Bin(N, 1/2) < l) ≤ (1 − c)/2 and u = N + 1 − l, so it covers the median with probability
    ≥ c for any continuous distribution (no moment needed: the right statistic for heavy-tailed
    samples such as the least-squares study's excess risk, whose mean does not exist). NaNs are
    dropped; with too few values for the level the bounds are NaN.
    """
    x = np.sort(np.asarray(values, dtype=float))
    x = x[np.isfinite(x)]
    if x.size == 0:
        return _NAN, _NAN, _NAN
    med = float(np.median(x))
    alpha = (1.0 - confidence) / 2.0
    lower = int(stats.binom.ppf(alpha, x.size, 0.5))  # P(Bin < lower) <= alpha
    if stats.binom.cdf(lower - 1, x.size, 0.5) > alpha:
        lower -= 1
    if lower < 1:
        return med, _NAN, _NAN
    return med, float(x[lower - 1]), float(x[x.size - lower])


def ratio_interval(
    num: tuple[float, float], den: tuple[float, float]
) -> tuple[float, float]:
    """Conservative interval for a/b from intervals (lo, hi) of positive a and b: (a_lo/b_hi,
    a_hi/b_lo). If each input interval has coverage ≥ c and they are independent, the result
    has coverage ≥ c² (Bonferroni-type); NaN if an input bound is missing or not positive."""
    a_lo, a_hi = num
    b_lo, b_hi = den
    if not all(np.isfinite([a_lo, a_hi, b_lo, b_hi])) or min(a_lo, b_lo) <= 0:
        return _NAN, _NAN
    return a_lo / b_hi, a_hi / b_lo


def binomial_interval(
    successes: int, trials: int, confidence: float = CONFIDENCE
) -> tuple[float, float, float]:
    """Proportion and two-sided Clopper–Pearson (exact binomial) interval.

    Used for claims about a frequency, e.g. "the fraction of repetitions above the Lemma 6
    line is at most δ_p" (spec B6). With no trials all three values are NaN.
    """
    if trials <= 0:
        return _NAN, _NAN, _NAN
    if not 0 <= successes <= trials:
        raise ValueError(f"successes must be in [0, {trials}], got {successes!r}")
    alpha = 1.0 - confidence
    low = 0.0 if successes == 0 else float(stats.beta.ppf(alpha / 2, successes, trials - successes + 1))
    high = (
        1.0 if successes == trials else float(stats.beta.ppf(1 - alpha / 2, successes + 1, trials - successes))
    )
    return successes / trials, low, high


def fitted_change(x: np.ndarray, y: np.ndarray) -> float:
    """OLS slope of ``y`` on ``x`` times the range of ``x`` (NaN if fewer than 2 distinct x)."""
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if np.unique(x).size < 2:
        return _NAN
    xc = x - x.mean()
    return float(np.sum(xc * (y - y.mean())) / np.sum(xc * xc) * (x.max() - x.min()))


def log_gap(gap: pd.Series) -> tuple[np.ndarray, int]:
    """log10 of the optimal gap floored at :data:`GAP_FLOOR`, and the number floored."""
    g = gap.to_numpy(float)
    floored = int(np.sum(np.isfinite(g) & (g < GAP_FLOOR)))
    return np.log10(np.maximum(g, GAP_FLOOR)), floored
