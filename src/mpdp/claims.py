"""Statistical check of the qualitative claims of the WD-DP experiment section (spec E3.4).

The paper states its findings in words ("WD-DP is better than Jayaraman", "steady in u", …).
:func:`evaluate_claims` turns each into a statistic on the results table
(:mod:`mpdp.results`), estimated per data set with a confidence interval across repetitions,
and a verdict with a fixed rule.

**Unit of replication.** A repetition redraws the partition, θ₀ and all noise (spec E0), and
within a repetition every mechanism shares the partition and θ₀ (paired design). So each
statistic is first aggregated *within* a repetition (a paired difference, a fitted change,
…, averaged over the settings the claim covers), giving one number per repetition; the
estimate is the mean of these numbers and the interval a two-sided 95% Student-t interval over
repetitions (:func:`t_interval`).

**Verdict rule** (:func:`verdict`):

* one-sided claims (``greater`` / ``less`` than 0): PASS if the CI lies entirely on the claimed
  side of 0, FAIL if entirely on the other side, else INCONCLUSIVE;
* equivalence claims: PASS if the CI lies inside ``(-margin, +margin)``, FAIL if it lies
  entirely outside (above ``+margin`` or below ``-margin``), else INCONCLUSIVE;
* fewer than :data:`MIN_REPS` repetitions, or no data: INCONCLUSIVE with the reason in ``note``.

The default reading is the paper's main one: ``mode="local_then_aggregate"`` (Algorithm 1 as
printed) with the ``ma16`` accountant (c = 16, mechanisms.md C1); ``per_round`` and ``exact``
can be checked with the same function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, NamedTuple

import numpy as np
import pandas as pd
from scipy import stats

from mpdp.errors import InputDataError
from mpdp.results import conform

#: Equivalence margin for test accuracy (C3, C7): 1 percentage point. Differences smaller than
#: this are invisible on the paper's accuracy figures and below the test-set resolution of the
#: small data sets (1 point of 140 test records of Breast Cancer is 0.7 pp).
ACCURACY_MARGIN: float = 0.01

#: Equivalence margin for "steady in u" (C5): the accuracy change fitted across the whole u grid
#: (OLS slope × (u_max − u_min)) must stay within ±1 percentage point.
STEADY_MARGIN: float = 0.01

#: Optimal gaps below this value (including non-positive gaps from float round-off at the
#: optimum) are raised to it before taking log10 (C2). Private runs have gaps far above it.
GAP_FLOOR: float = 1e-10

#: Minimum number of repetitions for an interval; fewer gives INCONCLUSIVE.
MIN_REPS: int = 2

#: Confidence level of the two-sided t-interval.
CONFIDENCE: float = 0.95

Kind = Literal["greater", "less", "equivalence"]
Verdict = Literal["PASS", "FAIL", "INCONCLUSIVE"]

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
    """A claim of the paper (spec E3.4), the figures it concerns and its test."""

    text: str
    figures: str
    kind: Kind
    margin: float  # equivalence margin; NaN for one-sided claims (threshold 0)


_ACC_EPS_FIGS = "1, 4, 6, 8, 10"
_GAP_EPS_FIGS = "3, 5, 7, 9, 11"
_ACC_U_FIGS = "2, 13, 15"
_NAN = float("nan")

#: Claim id -> claim. C6 ("decreases rapidly or fluctuates sharply") is a disjunction, checked
#: as two rows: C6a (decrease) and C6b (fluctuation); it holds if either passes.
CLAIMS: dict[str, Claim] = {
    "C1": Claim(
        "WD-DP has higher test accuracy than Jayaraman et al. (ε-sweeps, all m and ε)",
        _ACC_EPS_FIGS,
        "greater",
        _NAN,
    ),
    "C2": Claim(
        "WD-DP has a smaller optimal gap than Jayaraman et al. (ε-sweeps, all m and ε)",
        _GAP_EPS_FIGS,
        "less",
        _NAN,
    ),
    "C3": Claim(
        "WD-DP is similar to the centralised Wang–Ye–Xu method in test accuracy",
        _ACC_EPS_FIGS,
        "equivalence",
        ACCURACY_MARGIN,
    ),
    "C4": Claim(
        "Performance (WD-DP test accuracy) improves as ε increases",
        _ACC_EPS_FIGS,
        "greater",
        _NAN,
    ),
    "C5": Claim(
        "As u grows, WD-DP's test accuracy is steady",
        _ACC_U_FIGS,
        "equivalence",
        STEADY_MARGIN,
    ),
    "C6a": Claim(
        "As u grows, Jayaraman et al.'s test accuracy decreases (C6, first reading)",
        _ACC_U_FIGS,
        "less",
        _NAN,
    ),
    "C6b": Claim(
        "As u grows, Jayaraman et al.'s test accuracy fluctuates more than WD-DP's "
        "(C6, second reading)",
        _ACC_U_FIGS,
        "greater",
        _NAN,
    ),
    "C7": Claim(
        "At u = 1 (equal sizes) WD-DP and Jayaraman et al. have similar test accuracy",
        _ACC_U_FIGS,
        "equivalence",
        ACCURACY_MARGIN,
    ),
}

_MODES = ("local_then_aggregate", "per_round")
_SETTING = ["m", "epsilon"]


class _NoData(Exception):
    """A claim cannot be evaluated on this data set; the message says why."""


class _Result(NamedTuple):
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


# --------------------------------------------------------------------------------------------
# selection and pairing
# --------------------------------------------------------------------------------------------


def _select(
    table: pd.DataFrame, experiment: str, mechanism: str, mode: str, accountant: str
) -> pd.DataFrame:
    """Rows of one (experiment, mechanism, mode, accountant).

    Raises :class:`InputDataError` if a run key (m, u, ε, rep) appears twice: the table then
    mixes variants (e.g. noise sharing or dtype) that must be filtered before the check.
    """
    mask = (
        (table["experiment"] == experiment)
        & (table["mechanism"] == mechanism)
        & (table["mode"] == mode)
        & (table["accountant"] == accountant)
    ).fillna(False)
    rows = table.loc[mask.astype(bool)]
    dup = rows.duplicated(subset=["m", "u", "epsilon", "rep"], keep=False)
    if dup.any():
        example = rows.loc[dup, ["dataset", "m", "u", "epsilon", "rep"]].iloc[0].to_dict()
        raise InputDataError(
            f"results table has {int(dup.sum())} duplicated {mechanism}/{mode}/{accountant} "
            f"{experiment} runs (e.g. {example}); filter it to one variant (noise_sharing, "
            "dtype, …) before checking claims"
        )
    return rows


def _pair(a: pd.DataFrame, b: pd.DataFrame, on: list[str], what: str) -> pd.DataFrame:
    """Inner join of two mechanisms' runs on ``on``; suffixes ``_a``/``_b``."""
    cols = [*on, "accuracy", "optimal_gap"]
    pairs = a[cols].merge(b[cols], on=on, suffixes=("_a", "_b"), how="inner")
    if pairs.empty:
        raise _NoData(f"no paired runs for {what}")
    return pairs


def _fitted_change(x: np.ndarray, y: np.ndarray) -> float:
    """OLS slope of ``y`` on ``x`` times the range of ``x`` (NaN if fewer than 2 distinct x)."""
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if np.unique(x).size < 2:
        return _NAN
    xc = x - x.mean()
    return float(np.sum(xc * (y - y.mean())) / np.sum(xc * xc) * (x.max() - x.min()))


def _per_rep_change(runs: pd.DataFrame, x: str, setting: list[str]) -> pd.Series:
    """Fitted accuracy change over ``x`` per (rep, setting), then the mean over settings."""
    changes = pd.Series(
        {
            key: _fitted_change(
                g[x].to_numpy(float, na_value=np.nan),
                g["accuracy"].to_numpy(float, na_value=np.nan),
            )
            for key, g in runs.groupby(["rep", *setting], dropna=False)
        },
        dtype=float,
    )
    if changes.empty:
        return changes
    return changes.groupby(level=0).mean().dropna()


def _log_gap(gap: pd.Series) -> tuple[np.ndarray, int]:
    """log10 of the optimal gap floored at :data:`GAP_FLOOR`, and the number floored."""
    g = gap.to_numpy(float)
    floored = int(np.sum(np.isfinite(g) & (g < GAP_FLOOR)))
    return np.log10(np.maximum(g, GAP_FLOOR)), floored


# --------------------------------------------------------------------------------------------
# the claims
# --------------------------------------------------------------------------------------------


class _Runs(NamedTuple):
    """The runs of one data set that the claims use."""

    eps_wddp: pd.DataFrame
    eps_jay: pd.DataFrame
    eps_wyx: pd.DataFrame
    u_wddp: pd.DataFrame
    u_jay: pd.DataFrame
    reading: str


_Check = Callable[[_Runs], _Result]


def _c1(r: _Runs) -> _Result:
    pairs = _pair(r.eps_wddp, r.eps_jay, ["m", "epsilon", "rep"], "WD-DP vs Jayaraman (ε-sweep)")
    pairs["d"] = pairs["accuracy_a"] - pairs["accuracy_b"]
    cells = pairs.groupby(_SETTING)["d"].mean()
    return _Result(
        pairs.groupby("rep")["d"].mean(),
        "paired difference in test accuracy WD-DP − Jayaraman per (m, ε, rep), averaged over "
        "(m, ε) within each repetition; claim: > 0",
        f"{len(pairs)} pairs; WD-DP ahead in {int((cells > 0).sum())} of {len(cells)} (m, ε) "
        f"cells (means over reps); worst cell {cells.min():+.4f}",
    )


def _c2(r: _Runs) -> _Result:
    pairs = _pair(r.eps_wddp, r.eps_jay, ["m", "epsilon", "rep"], "WD-DP vs Jayaraman (ε-sweep)")
    log_a, floored_a = _log_gap(pairs["optimal_gap_a"])
    log_b, floored_b = _log_gap(pairs["optimal_gap_b"])
    pairs["d"] = log_a - log_b
    pairs = pairs.loc[np.isfinite(pairs["d"])]
    cells = pairs.groupby(_SETTING)["d"].mean()
    floored = floored_a + floored_b
    return _Result(
        pairs.groupby("rep")["d"].mean(),
        "paired difference log10(gap WD-DP) − log10(gap Jayaraman) per (m, ε, rep), averaged "
        "over (m, ε) within each repetition; claim: < 0",
        f"{len(pairs)} pairs; WD-DP smaller in {int((cells < 0).sum())} of {len(cells)} (m, ε) "
        f"cells; estimate −1 means a 10× smaller gap"
        + (f"; {floored} gaps below {GAP_FLOOR:g} floored" if floored else ""),
    )


def _c3(r: _Runs) -> _Result:
    if r.eps_wyx.empty:
        raise _NoData("no Wang–Ye–Xu (central) ε-sweep runs")
    pairs = r.eps_wddp[["m", "epsilon", "rep", "accuracy"]].merge(
        r.eps_wyx[["epsilon", "rep", "accuracy"]], on=["epsilon", "rep"], suffixes=("_a", "_b")
    )
    if pairs.empty:
        raise _NoData("no WD-DP run shares (ε, rep) with a Wang–Ye–Xu run")
    pairs["d"] = pairs["accuracy_a"] - pairs["accuracy_b"]
    by_m = pairs.groupby("m")["d"].mean()
    return _Result(
        pairs.groupby("rep")["d"].mean(),
        "paired difference in test accuracy WD-DP − Wang–Ye–Xu per (m, ε, rep) (WYX paired by "
        f"(ε, rep)), averaged over (m, ε) within each repetition; claim: within ±{ACCURACY_MARGIN:g}",
        f"{len(pairs)} pairs; mean difference per m: "
        + ", ".join(f"m={m}: {d:+.4f}" for m, d in by_m.items()),
    )


def _c4(r: _Runs) -> _Result:
    if r.eps_wddp.empty:
        raise _NoData("no WD-DP ε-sweep runs")
    others = []
    for name, runs, setting in (
        ("Jayaraman", r.eps_jay, ["m"]),
        ("Wang–Ye–Xu", r.eps_wyx, []),
    ):
        change = _per_rep_change(runs, "epsilon", setting)
        if not change.empty:
            others.append(f"{name} {change.mean():+.4f}")
    return _Result(
        _per_rep_change(r.eps_wddp, "epsilon", ["m"]),
        "WD-DP accuracy change across the ε grid fitted by OLS (slope × (ε_max − ε_min)) per "
        "(m, rep), averaged over m within each repetition; claim: > 0",
        "same statistic for the other methods (mean over reps): "
        + ("; ".join(others) if others else "none available"),
    )


def _u_setting_text(runs: pd.DataFrame) -> str:
    settings = runs[_SETTING].drop_duplicates().sort_values(_SETTING)
    return ", ".join(f"(m={int(m)}, ε={e:g})" for m, e in settings.itertuples(index=False))


def _c5(r: _Runs) -> _Result:
    if r.u_wddp.empty:
        raise _NoData("no WD-DP u-sweep runs")
    return _Result(
        _per_rep_change(r.u_wddp, "u", _SETTING),
        "WD-DP accuracy change across the u grid fitted by OLS (slope × (u_max − u_min)) per "
        f"(m, ε, rep), averaged over settings within each repetition; claim: within "
        f"±{STEADY_MARGIN:g}",
        f"settings {_u_setting_text(r.u_wddp)}",
    )


def _c6a(r: _Runs) -> _Result:
    if r.u_jay.empty:
        raise _NoData("no Jayaraman u-sweep runs")
    wd = _per_rep_change(r.u_wddp, "u", _SETTING)
    return _Result(
        _per_rep_change(r.u_jay, "u", _SETTING),
        "Jayaraman accuracy change across the u grid fitted by OLS (slope × (u_max − u_min)) "
        "per (m, ε, rep), averaged over settings within each repetition; claim: < 0",
        f"settings {_u_setting_text(r.u_jay)}; WD-DP's fitted change "
        + (f"{wd.mean():+.4f}" if not wd.empty else "unavailable"),
    )


def _c6b(r: _Runs) -> _Result:
    pairs = _pair(r.u_wddp, r.u_jay, ["m", "epsilon", "u", "rep"], "WD-DP vs Jayaraman (u-sweep)")
    spread = pairs.groupby(["rep", *_SETTING]).agg(
        n_u=("u", "nunique"), wd=("accuracy_a", "std"), jy=("accuracy_b", "std")
    )
    spread = spread.loc[spread["n_u"] >= 2]
    if spread.empty:
        raise _NoData("no u-sweep setting has two or more u values")
    spread["d"] = spread["jy"] - spread["wd"]
    return _Result(
        spread.groupby(level="rep")["d"].mean(),
        "std across u of Jayaraman accuracy minus that of WD-DP, per (m, ε, rep) on paired "
        "runs, averaged over settings within each repetition; claim: > 0",
        f"mean std across u: Jayaraman {spread['jy'].mean():.4f}, WD-DP {spread['wd'].mean():.4f}",
    )


def _c7(r: _Runs) -> _Result:
    at_one = [runs.loc[(runs["u"] == 1).fillna(False)] for runs in (r.u_wddp, r.u_jay)]
    pairs = _pair(*at_one, ["m", "epsilon", "rep"], "WD-DP vs Jayaraman at u = 1")
    pairs["d"] = pairs["accuracy_a"] - pairs["accuracy_b"]
    return _Result(
        pairs.groupby("rep")["d"].mean(),
        "paired difference in test accuracy WD-DP − Jayaraman at u = 1 per (m, ε, rep), "
        f"averaged over settings within each repetition; claim: within ±{ACCURACY_MARGIN:g}",
        f"{len(pairs)} pairs; settings {_u_setting_text(pairs)}",
    )


_CHECKS: dict[str, _Check] = {
    "C1": _c1,
    "C2": _c2,
    "C3": _c3,
    "C4": _c4,
    "C5": _c5,
    "C6a": _c6a,
    "C6b": _c6b,
    "C7": _c7,
}


def _jayaraman_accountant(
    table: pd.DataFrame, mode: str, accountant: str, requested: str | None
) -> str:
    """The accountant of the Jayaraman runs to compare with (see :func:`evaluate_claims`)."""
    if requested is not None:
        return requested
    jay = table.loc[((table["mechanism"] == "jayaraman") & (table["mode"] == mode)).fillna(False)]
    present = set(jay["accountant"].dropna())
    if accountant == "ma16" and accountant not in present and "zcdp_code" in present:
        return "zcdp_code"
    return accountant


def _runs_of(table: pd.DataFrame, mode: str, accountant: str, jay_acc: str) -> _Runs:
    """Select the runs of one data set for the claims."""
    reading = f"mode={mode}, accountant={accountant}"
    if jay_acc != accountant:
        reading += f" (Jayaraman: {jay_acc})"
    return _Runs(
        eps_wddp=_select(table, "eps_sweep", "wddp", mode, accountant),
        eps_jay=_select(table, "eps_sweep", "jayaraman", mode, jay_acc),
        eps_wyx=_select(table, "eps_sweep", "wyx", "central", accountant),
        u_wddp=_select(table, "u_sweep", "wddp", mode, accountant),
        u_jay=_select(table, "u_sweep", "jayaraman", mode, jay_acc),
        reading=reading,
    )


def evaluate_claims(
    table: pd.DataFrame,
    mode: str = "local_then_aggregate",
    accountant: str = "ma16",
    jayaraman_accountant: str | None = None,
) -> pd.DataFrame:
    """Check the claims of :data:`CLAIMS` per data set of a results table (spec E3.4).

    ``mode`` selects the WD-DP/Jayaraman runs (``local_then_aggregate`` or ``per_round``);
    ``accountant`` the calibration of WD-DP, Jayaraman and the Wang–Ye–Xu runs (mode
    ``central``) compared with them. ``jayaraman_accountant`` overrides it for Jayaraman; by
    default it is ``accountant``, except that for ``ma16`` a table whose Jayaraman runs exist
    only under ``zcdp_code`` (config ``wddp.jayaraman_accountant: zcdp_code``) uses those.

    Returns one row per (claim, data set) with the columns of :data:`COLUMNS`: the statistic
    in words, its estimate (mean over repetitions of the per-repetition value), the 95%
    t-interval across repetitions, the number of repetitions, the equivalence margin (NaN for
    one-sided claims, whose threshold is 0), the verdict and a note (pair counts, per-setting
    detail, or why the claim is INCONCLUSIVE). Notes of synthetic tables say so.
    """
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {_MODES}, got {mode!r}")
    table = conform(table)
    rows = []
    for dataset in sorted(table["dataset"].dropna().unique()):
        data = table.loc[(table["dataset"] == dataset).fillna(False)]
        jay_acc = _jayaraman_accountant(data, mode, accountant, jayaraman_accountant)
        runs = _runs_of(data, mode, accountant, jay_acc)
        prefix = "SYNTHETIC data; " if bool(data["synthetic"].fillna(False).any()) else ""
        for claim_id, check in _CHECKS.items():
            rows.append(_evaluate_one(claim_id, check, runs, str(dataset), prefix))
    return pd.DataFrame(rows, columns=COLUMNS)


def _evaluate_one(
    claim_id: str, check: _Check, runs: _Runs, dataset: str, prefix: str
) -> dict[str, object]:
    """Evaluate one claim on one data set and build its output row."""
    claim = CLAIMS[claim_id]
    row: dict[str, object] = {
        "claim_id": claim_id,
        "claim": claim.text,
        "dataset": dataset,
        "figures": claim.figures,
        "margin": claim.margin,
    }
    try:
        result = check(runs)
    except _NoData as reason:
        return row | {
            "statistic": "",
            "estimate": _NAN,
            "ci_low": _NAN,
            "ci_high": _NAN,
            "n_reps": 0,
            "verdict": "INCONCLUSIVE",
            "note": f"{prefix}no data: {reason} ({runs.reading})",
        }
    per_rep = result.per_rep.dropna()
    estimate, low, high = t_interval(per_rep.to_numpy())
    n_reps = int(per_rep.size)
    note = f"{prefix}{runs.reading}; {result.note}"
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
