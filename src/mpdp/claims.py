"""Generic engine of a claims check: turn a paper's qualitative claims into verdicts.

A study states each claim of its paper as a statistic computed once per repetition (the unit of
replication: a repetition redraws the partition, the initial point and all noise, and within a
repetition the mechanisms compared share them: a paired design). The estimate is the mean of
these per-repetition values and the interval a two-sided 95% Student-t interval over
repetitions (:func:`t_interval`); :func:`evaluate_one` turns that into one row of the claims
table (:data:`COLUMNS`) with a fixed verdict rule (:func:`verdict`):

* one-sided claims (``greater`` / ``less`` than 0): PASS if the CI lies entirely on the claimed
  side of 0, FAIL if entirely on the other side, else INCONCLUSIVE;
* equivalence claims: PASS if the CI lies inside ``(-margin, +margin)``, FAIL if it lies
  entirely outside (above ``+margin`` or below ``-margin``), else INCONCLUSIVE;
* fewer than :data:`MIN_REPS` repetitions, or no data: INCONCLUSIVE with the reason in ``note``;
* a comparison whose classifiers are at chance or at the majority rate: UNINFORMATIVE (the check
  raises :class:`Uninformative`; the reason goes to ``note``). It is not scored as PASS or FAIL.

The claims themselves live with their study (WD-DP: :mod:`mpdp.studies.wddp.claims`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, NamedTuple, TypeVar

import numpy as np
import pandas as pd
from scipy import stats

#: Optimal gaps below this value (including non-positive gaps from float round-off at the
#: optimum) are raised to it before taking log10 (C2). Private runs have gaps far above it.
GAP_FLOOR: float = 1e-10

#: Minimum number of repetitions for an interval; fewer gives INCONCLUSIVE.
MIN_REPS: int = 2

#: Confidence level of the two-sided t-interval.
CONFIDENCE: float = 0.95

Kind = Literal["greater", "less", "equivalence"]
Verdict = Literal["PASS", "FAIL", "INCONCLUSIVE", "UNINFORMATIVE"]

#: Every verdict, in the order reports count them.
VERDICTS: tuple[str, ...] = ("PASS", "FAIL", "INCONCLUSIVE", "UNINFORMATIVE")

COLUMNS: list[str] = [
    "claim_id",
    "claim",
    "dataset",
    "figures",
    "statistic",
    "estimate",
    "ci_low",
    "ci_high",
    "n_reps",
    "margin",
    "verdict",
    "note",
]


class Claim(NamedTuple):
    """A claim of a paper, the figures it concerns and its test."""

    text: str
    figures: str
    kind: Kind
    margin: float  # equivalence margin; NaN for one-sided claims (threshold 0)


_NAN = float("nan")

#: the runs a study hands to its checks (any container)
R = TypeVar("R")


class NoData(Exception):
    """A claim cannot be evaluated on this data set; the message says why."""


class Uninformative(Exception):
    """A claim compares classifiers at chance or at the majority rate; the message says which.

    Such a comparison says nothing about the claim, so it gets the verdict UNINFORMATIVE
    instead of PASS or FAIL.
    """


class Result(NamedTuple):
    """Per-repetition values of a statistic, its description and a note."""

    per_rep: pd.Series
    statistic: str
    note: str


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


def verdict(ci_low: float, ci_high: float, kind: Kind, margin: float = _NAN) -> Verdict:
    """Verdict of a claim from its confidence interval (rule in the module docstring)."""
    if not (np.isfinite(ci_low) and np.isfinite(ci_high)):
        return "INCONCLUSIVE"
    if kind == "greater":
        return "PASS" if ci_low > 0 else "FAIL" if ci_high < 0 else "INCONCLUSIVE"
    if kind == "less":
        return "PASS" if ci_high < 0 else "FAIL" if ci_low > 0 else "INCONCLUSIVE"
    if kind == "equivalence":
        if not margin > 0:
            raise ValueError(f"an equivalence claim needs a margin > 0, got {margin!r}")
        if -margin < ci_low and ci_high < margin:
            return "PASS"
        return "FAIL" if ci_low > margin or ci_high < -margin else "INCONCLUSIVE"
    raise ValueError(f"unknown claim kind {kind!r}")


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


def evaluate_one(
    claim_id: str,
    claim: Claim,
    check: Callable[[R], Result],
    runs: R,
    dataset: str,
    reading: str,
    prefix: str = "",
) -> dict[str, object]:
    """Evaluate one claim on one data set and build its row of :data:`COLUMNS`.

    ``check(runs)`` returns the per-repetition values (:class:`Result`) or raises
    :class:`NoData`; ``reading`` (which runs were used) and ``prefix`` (e.g. "SYNTHETIC data; ")
    start the note.
    """
    row: dict[str, object] = {
        "claim_id": claim_id,
        "claim": claim.text,
        "dataset": dataset,
        "figures": claim.figures,
        "margin": claim.margin,
    }
    try:
        result = check(runs)
    except (NoData, Uninformative) as reason:
        no_data = isinstance(reason, NoData)
        return row | {
            "statistic": "",
            "estimate": _NAN,
            "ci_low": _NAN,
            "ci_high": _NAN,
            "n_reps": 0,
            "verdict": "INCONCLUSIVE" if no_data else "UNINFORMATIVE",
            "note": f"{prefix}{'no data' if no_data else 'uninformative'}: {reason} ({reading})",
        }
    per_rep = result.per_rep.dropna()
    estimate, low, high = t_interval(per_rep.to_numpy())
    n_reps = int(per_rep.size)
    note = f"{prefix}{reading}; {result.note}"
    if n_reps < MIN_REPS:
        outcome: Verdict = "INCONCLUSIVE"
        note += f"; only {n_reps} repetition(s), need {MIN_REPS}"
    else:
        outcome = verdict(low, high, claim.kind, claim.margin)
    return row | {
        "statistic": result.statistic + f"; {CONFIDENCE:.0%} t-interval over repetitions",
        "estimate": estimate,
        "ci_low": low,
        "ci_high": high,
        "n_reps": n_reps,
        "verdict": outcome,
        "note": note,
    }
