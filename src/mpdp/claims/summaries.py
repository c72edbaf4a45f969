"""Summaries over repetitions with their 95 % interval and one-sided p-values (docs/claims.md).

* ``mean``: Student-t interval and t-test;
* ``median``: distribution-free order-statistic interval (:func:`mpdp.claims.intervals.median_interval`)
  and the sign test — for heavy-tailed statistics (no moment needed);
* ``trimmed``: 20 % trimmed mean, robust to a few heavy-tailed repetitions while still using most of
  them. Up to :data:`EXACT_FLIPS_MAX` repetitions its test is the exact **sign-flip permutation
  test** of the values (all 2^R sign vectors) and its interval the inversion of that test — valid at
  the small R of the benchmark, where Yuen's t at df 5 was anti-conservative (issue 55), assuming only
  that the values are symmetric about the tested location; beyond it, Yuen's test and interval
  (winsorised variance, df = R − 2g − 1 ≥ 8);
* ``proportion`` (bound claims): the fraction of draws above the bound, Clopper–Pearson interval and
  the exact binomial test.

Every p-value is one-sided ("the location is above ``c``" or "below ``c``"); a cell is significant
at :data:`ALPHA` one-sided, which matches the two-sided 95 % interval excluding ``c``. A standard
error of 0 (every repetition tied) is never certainty: the t path then falls back to the exact sign
test, whose p-value is at least 2^-R.

Power is stated for the procedure that decides (issue 55): a cell is tested inside its claim's Holm
family of ``family`` cells, so :func:`mde`, :func:`tost_reps_needed` and the bound's draws use the
one-sided level ALPHA / family — the level of Holm's first step, the least favourable case (a cell whose
family's other hypotheses are not rejected); Holm's step-down only adds power. Power formulas are exact
under normality (the noncentral t for the one-sided test, the TOST's power integrated over the sample
standard deviation's distribution).
"""

from __future__ import annotations

import functools
from typing import Literal

import numpy as np
from scipy import optimize, special, stats

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
    """Trimmed mean and its two-sided 95 % interval: up to :data:`EXACT_FLIPS_MAX` values the inversion
    of the sign-flip test (:func:`flip_p`: the locations ``c`` neither one-sided test rejects at
    :data:`ALPHA`; NaN bounds when the 2^R sign vectors cannot reach ALPHA, i.e. R ≤ 5), beyond it
    Yuen's interval."""
    x = np.sort(_finite(values))
    n = x.size
    if n == 0:
        return _NAN, _NAN, _NAN
    tm = float(stats.trim_mean(x, trim))
    if n < 2 or (n <= EXACT_FLIPS_MAX and min_flip_p(n) > ALPHA):
        return tm, _NAN, _NAN
    if n <= EXACT_FLIPS_MAX:
        return tm, _invert(x, "above", ALPHA), _invert(x, "below", ALPHA)
    se, df = _yuen_se(x, trim)
    if not np.isfinite(se) or df < 1:
        return tm, _NAN, _NAN
    half = float(stats.t.ppf(1 - ALPHA, df) * se)
    return tm, tm - half, tm + half


#: the trimmed summary's sign-flip test enumerates all 2^R sign vectors up to this many repetitions
#: (Yuen's test beyond, where its degrees of freedom are ≥ 8)
EXACT_FLIPS_MAX: int = 12

_flip_cache: dict[int, np.ndarray] = {}


def _flips(n: int) -> np.ndarray:
    """All 2^n sign vectors of the sign-flip test for ``n`` values (rows; the identity first)."""
    if n not in _flip_cache:
        bits = (np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1
        _flip_cache[n] = 1.0 - 2.0 * bits
    return _flip_cache[n]


def min_flip_p(n: int) -> float:
    """The smallest p-value the exact sign-flip test can give with ``n`` values: 2^-n."""
    return float(2.0 ** -n)


def _trimmed_rows(matrix: np.ndarray, trim: float = TRIM) -> np.ndarray:
    """The ``trim`` trimmed mean of every row."""
    n = matrix.shape[1]
    g = int(np.floor(trim * n))
    return np.sort(matrix, axis=1)[:, g:n - g].mean(axis=1)


def flip_p(values: np.ndarray, c: float, side: Side, tol: float = 0.0, trim: float = TRIM) -> float:
    """One-sided p-value of "the trimmed mean is ``side`` ``c``" by the sign-flip permutation test of the
    values' deviations from ``c`` (deviations within ``tol`` are 0; ties never give p = 0: the identity
    is one of the sign vectors, so p ≥ :func:`min_flip_p`)."""
    x = _finite(values)
    if x.size < 2:
        return _NAN
    d = x - c if side == "above" else c - x
    d[np.abs(d) < tol] = 0.0
    stat = _trimmed_rows(_flips(x.size) * d[None, :], trim)
    slack = 1e-12 * max(float(np.abs(d).max()), 1e-300)
    return float(np.mean(stat >= stat[0] - slack))


_BISECTIONS = 40


def _invert(x: np.ndarray, side: Side, level: float) -> float:
    """The end of the sign-flip test's confidence set on ``side``: the c where its one-sided p-value
    crosses ``level`` (bisection; lower end for "above", upper for "below")."""
    lo, hi = float(x.min()), float(x.max())
    span = max(hi - lo, abs(hi), 1e-300)
    if side == "above":  # p(c) grows with c: find the smallest c that is not rejected
        a, b = lo - span, hi
        for _ in range(_BISECTIONS):
            mid = 0.5 * (a + b)
            a, b = (mid, b) if flip_p(x, mid, "above") <= level else (a, mid)
        return b
    a, b = lo, hi + span
    for _ in range(_BISECTIONS):
        mid = 0.5 * (a + b)
        a, b = (a, mid) if flip_p(x, mid, "below") <= level else (mid, b)
    return a


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
    ``median``: the sign test; ``trimmed``: the sign-flip test (:func:`flip_p`); ``mean``: Student t, and
    the exact sign test when every value is tied (a standard error of 0 is no certainty).
    """
    x = _finite(values)
    if x.size < 2:
        return _NAN
    if summary == "trimmed" and x.size <= EXACT_FLIPS_MAX:
        return flip_p(x, c, side, tol)
    if summary in ("mean", "trimmed"):
        if summary == "mean":
            loc, se, df = float(x.mean()), float(x.std(ddof=1) / np.sqrt(x.size)), float(x.size - 1)
        else:
            loc = float(stats.trim_mean(np.sort(x), TRIM))
            se, df = (float(v) for v in _yuen_se(np.sort(x), TRIM))
        if se > 0:
            diff = loc - c if side == "above" else c - loc
            return float(stats.t.sf(0.0 if abs(diff) < tol else diff / se, df))
    elif summary != "median":
        raise ValueError(f"unknown summary {summary!r}")
    d = x - c
    d[np.abs(d) < tol] = 0.0
    above, below = int(np.sum(d > 0)), int(np.sum(d < 0))
    k = above if side == "above" else below
    return float(stats.binom.sf(k - 1, x.size, 0.5))


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


def family_alpha(family: int) -> float:
    """The one-sided level of a cell inside a Holm family of ``family`` cells at its first step."""
    return ALPHA / max(int(family), 1)


@functools.lru_cache(maxsize=4096)
def _mde_factor(df: float, family: int) -> float:
    """k with P(T'_{df, k} > t_{1−α/family, df}) = POWER (noncentral t; normal when df is infinite)."""
    a = family_alpha(family)
    if not np.isfinite(df):
        return float(stats.norm.ppf(1 - a) + stats.norm.ppf(POWER))
    crit = float(stats.t.ppf(1 - a, df))
    return _root(lambda ncp: float(stats.nct.sf(crit, df, ncp)) - POWER, crit + 50.0)


def _root(f: object, hi: float, lo: float = 0.0) -> float:
    """The root of an increasing ``f`` on (0, ∞), the bracket widened tenfold until it holds (∞ when
    ``f`` stays below 0: at few degrees of freedom and a large family no effect reaches the power)."""
    while f(hi) < 0:  # type: ignore[operator]
        if hi > 1e12:
            return float("inf")
        hi *= 10.0
    return float(optimize.brentq(f, lo, hi))  # type: ignore[arg-type]


def mde(se: float, df: float, family: int = 1) -> float:
    """How far beyond a tested threshold a true effect must lie to be found with :data:`POWER` by the
    one-sided test at :func:`family_alpha` given the standard error ``se``: ``k · se`` with k solving
    P(T'_{df, k} > t_{1−α/family, df}) = POWER (noncentral t; normal when df is infinite). A
    directional cell's effect must reach δ plus this (:func:`mpdp.claims.engine` adds δ)."""
    if not (np.isfinite(se) and df > 0):
        return _NAN
    return float(_mde_factor(float(df), int(family)) * se)


_CHI_GRID = (np.arange(400) + 0.5) / 400


@functools.lru_cache(maxsize=4096)
def _tost_terms(df: float, family: int) -> tuple[float, np.ndarray]:
    """(t_{1−α/family, df}, s/σ at the mid-quantiles of the sample standard deviation's distribution)."""
    crit = float(stats.t.ppf(1 - family_alpha(family), df))
    return crit, np.sqrt(stats.chi2.ppf(_CHI_GRID, df) / df)


def tost_power(se: float, df: float, delta: float, family: int = 1) -> float:
    """Power of the TOST within ±``delta`` at a true effect of 0 when each one-sided test runs at
    :func:`family_alpha` (Student t with ``df`` and standard error ``se``): P(|x̄| + t·s/√n < δ),
    integrated over s (χ² with df degrees of freedom; normal, s = se, when df is infinite)."""
    if not (np.isfinite(se) and se > 0 and delta > 0 and df > 0):
        return _NAN
    if not np.isfinite(df):
        return float(max(0.0, 2 * stats.norm.cdf(delta / se - stats.norm.ppf(1 - family_alpha(family))) - 1))
    crit, ratio = _tost_terms(float(df), int(family))
    return float(np.mean(np.maximum(0.0, 2 * special.ndtr((delta - crit * se * ratio) / se) - 1)))


def tost_mde(se: float, df: float, family: int = 1) -> float:
    """The half-width ±e within which the TOST shows a true effect of 0 with :data:`POWER` inside a
    family of ``family`` cells (:func:`tost_power` = POWER; NaN when unknown)."""
    if not (np.isfinite(se) and se > 0 and df > 0):
        return _NAN
    hi = se * (stats.norm.ppf(1 - family_alpha(family)) + 10.0) * (1 if not np.isfinite(df) else 1 + 20 / df)
    return float(se * _root(lambda e: tost_power(se, df, e * se, family) - POWER, hi / se, 1e-12))


def tost_reps_needed(n: int, se: float, df: float, delta: float, family: int = 1, floor: int = 2) -> float:
    """The fewest repetitions at which a true effect of 0 is shown within ±``delta`` with :data:`POWER`
    inside a family of ``family`` cells (:func:`tost_power`, the spread seen now: se scales as 1/√n,
    df as the repetitions do), at least ``floor``; ``n`` itself when already powered, NaN when unknown.
    At that count an effect of 2δ is also found beyond δ with power above 90 % (the one-sided test at
    the same level, δ/se ≥ its two quantiles)."""
    if not (np.isfinite(se) and se > 0 and delta > 0 and n >= 1):
        return _NAN
    finite = np.isfinite(df)
    lost = (n - 1 - df) if finite else 0.0  # degrees of freedom a summary spends (Yuen's trimming)

    def power(k: int) -> float:
        return tost_power(se * np.sqrt(n / k), max(k - 1 - lost * k / n, 1.0) if finite else df, delta, family)

    if n >= floor and power(n) >= POWER:
        return float(n)
    z = stats.norm.ppf(1 - family_alpha(family)) + stats.norm.ppf((1 + POWER) / 2)
    k = max(n + 1, floor, int(np.ceil((z * se * np.sqrt(n) / delta) ** 2)) - 2)
    while power(k) < POWER:
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
