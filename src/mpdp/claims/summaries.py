"""Summaries over repetitions with their 95 % interval and one-sided p-values (docs/claims.md).

* ``mean``: Student-t interval and t-test;
* ``median``: distribution-free order-statistic interval (:func:`mpdp.claims.intervals.median_interval`)
  and the sign test — for heavy-tailed statistics (no moment needed);
* ``trimmed``: 20 % trimmed mean with Yuen's interval and test (winsorised variance) — robust to a
  few heavy-tailed repetitions while still using most of them;
* ``proportion`` (bound claims): the fraction of draws above the bound, Clopper–Pearson interval and
  the exact binomial test.

Every p-value is one-sided ("the location is above ``c``" or "below ``c``"); a cell is significant
at :data:`ALPHA` one-sided, which matches the two-sided 95 % interval excluding ``c``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from scipy import stats

from mpdp.claims.intervals import CONFIDENCE, binomial_interval, median_interval, t_interval

#: one-sided significance level of a cell (and of the Holm family of a claim's cells)
ALPHA: float = (1.0 - CONFIDENCE) / 2.0

#: fraction trimmed from each end by the ``trimmed`` summary
TRIM: float = 0.2

_NAN = float("nan")
Side = Literal["above", "below"]


def _finite(values: np.ndarray) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    return x[np.isfinite(x)]


def trimmed_interval(values: np.ndarray, trim: float = TRIM) -> tuple[float, float, float]:
    """Trimmed mean and Yuen's two-sided interval (winsorised standard error, df = n − 2g − 1)."""
    x = np.sort(_finite(values))
    n = x.size
    if n == 0:
        return _NAN, _NAN, _NAN
    tm = float(stats.trim_mean(x, trim))
    se, df = _yuen_se(x, trim)
    if not np.isfinite(se) or df < 1:
        return tm, _NAN, _NAN
    half = float(stats.t.ppf(1 - ALPHA, df) * se)
    return tm, tm - half, tm + half


def _yuen_se(x: np.ndarray, trim: float) -> tuple[float, int]:
    n = x.size
    g = int(np.floor(trim * n))
    df = n - 2 * g - 1
    if n < 2 or df < 1:
        return _NAN, df
    w = np.clip(x, x[g], x[n - g - 1])
    return float(np.sqrt(np.var(w, ddof=1)) / ((1 - 2 * trim) * np.sqrt(n))), df


def interval(values: np.ndarray, summary: str) -> tuple[float, float, float]:
    """Estimate and two-sided 95 % interval of ``summary`` over per-repetition values."""
    if summary == "mean":
        return t_interval(values)
    if summary == "median":
        return median_interval(values)
    if summary == "trimmed":
        return trimmed_interval(values)
    raise ValueError(f"unknown summary {summary!r}")


def p_value(values: np.ndarray, summary: str, c: float, side: Side, tol: float = 0.0) -> float:
    """One-sided p-value of "the location is ``side`` ``c``" (NaN with fewer than 2 values).

    ``tol`` is the data's resolution (:func:`mpdp.claims.resolution.zero_below`): a value or a location
    within ``tol`` of ``c`` is *at* ``c`` — a difference smaller than the resolution is zero, never evidence.
    """
    x = _finite(values)
    if x.size < 2:
        return _NAN
    if summary == "median":
        d = x - c
        d[np.abs(d) < tol] = 0.0
        above, below = int(np.sum(d > 0)), int(np.sum(d < 0))
        k, n = (above, above + below) if side == "above" else (below, above + below)
        return float(stats.binom.sf(k - 1, n, 0.5)) if n else 1.0
    if summary == "mean":
        loc, se, df = float(x.mean()), float(x.std(ddof=1) / np.sqrt(x.size)), x.size - 1
    elif summary == "trimmed":
        loc = float(stats.trim_mean(np.sort(x), TRIM))
        se, df = _yuen_se(np.sort(x), TRIM)
        if not np.isfinite(se):
            return _NAN
    else:
        raise ValueError(f"unknown summary {summary!r}")
    diff = loc - c if side == "above" else c - loc
    if abs(diff) < tol:
        diff = 0.0
    if se == 0:
        return 0.0 if diff > 0 else 1.0
    return float(stats.t.sf(diff / se, df))


#: power of the minimum detectable effect (one-sided test at :data:`ALPHA`)
POWER: float = 0.8


def standard_error(values: np.ndarray, summary: str) -> tuple[float, float]:
    """(standard error, degrees of freedom) of ``summary`` over per-repetition values (NaN with < 2).

    ``mean``: s/√n, n − 1; ``trimmed``: Yuen's winsorised one; ``median``: the half-width of its
    distribution-free interval over z (an approximation, infinite degrees of freedom).
    """
    x = _finite(values)
    if x.size < 2:
        return _NAN, _NAN
    if summary == "mean":
        return float(x.std(ddof=1) / np.sqrt(x.size)), float(x.size - 1)
    if summary == "trimmed":
        se, df = _yuen_se(np.sort(x), TRIM)
        return se, float(df)
    if summary == "median":
        _, lo, hi = median_interval(x)
        if not np.isfinite(lo):
            return _NAN, _NAN
        return float((hi - lo) / (2 * stats.norm.ppf(1 - ALPHA))), float("inf")
    raise ValueError(f"unknown summary {summary!r}")


def mde(se: float, df: float) -> float:
    """Minimum detectable effect: the true effect a one-sided test at :data:`ALPHA` finds with
    probability :data:`POWER` given the standard error ``se`` — (t_{1−α} + t_{power}) · se."""
    if not (np.isfinite(se) and df > 0):
        return _NAN
    return float((stats.t.ppf(1 - ALPHA, df) + stats.t.ppf(POWER, df)) * se)


def reps_needed(n: int, se: float, df: float, delta: float) -> float:
    """The fewest repetitions whose minimum detectable effect is at most ``delta`` at the spread seen now
    (the standard error scales as 1/√n; degrees of freedom n − 1, or infinite for a study-given
    interval); ``n`` itself when the cell is already powered, NaN when unknown."""
    if not (np.isfinite(se) and delta > 0 and n >= 1):
        return _NAN
    if mde(se, df) <= delta:
        return float(n)
    sd = se * np.sqrt(n)
    z = stats.norm.ppf(1 - ALPHA) + stats.norm.ppf(POWER)
    k = max(n + 1, int(np.ceil((z * sd / delta) ** 2)))
    while mde(sd / np.sqrt(k), (k - 1) if np.isfinite(df) else df) > delta:
        k += 1
    return float(k)


def proportion(above: int, n: int) -> tuple[float, float, float]:
    """Fraction of ``n`` draws above a bound and its Clopper–Pearson interval."""
    return binomial_interval(above, n)


def proportion_p(above: int, n: int, c: float, side: Side) -> float:
    """Exact binomial one-sided p-value of "the proportion is ``side`` ``c``"."""
    if n <= 0:
        return _NAN
    if side == "below":
        return float(stats.binom.cdf(above, n, c))
    return float(stats.binom.sf(above - 1, n, c))


def given_se(lo: float, hi: float) -> float:
    """The standard error of a study-given 95 % interval read as a normal one (its half-width / z)."""
    if not np.all(np.isfinite([lo, hi])) or hi <= lo:
        return _NAN
    return float((hi - lo) / (2 * stats.norm.ppf(1 - ALPHA)))


def given_p(estimate: float, lo: float, hi: float, c: float, side: Side, tol: float = 0.0) -> float:
    """One-sided p-value from a study-given 95 % interval read as a normal one (its half-width / z)."""
    se = given_se(lo, hi)
    if not np.isfinite(estimate) or not np.isfinite(se):
        return _NAN
    diff = estimate - c if side == "above" else c - estimate
    if abs(diff) < tol:
        diff = 0.0
    return float(stats.norm.sf(diff / se))


def holm(p: np.ndarray) -> np.ndarray:
    """Holm–Bonferroni adjusted p-values (step-down, monotone, capped at 1; NaN stays NaN)."""
    p = np.asarray(p, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    if ok.size == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    m = order.size
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out[order] = adjusted
    return out
