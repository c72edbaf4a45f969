"""Statistical check of the qualitative claims of the WD-DP experiment section (spec E3.4).

The paper states its findings in words ("WD-DP is better than Jayaraman", "steady in u", …).
:func:`evaluate_claims` turns each into a statistic on the results table
(:mod:`mpdp.results`), estimated per data set with a confidence interval across repetitions,
and a verdict with the fixed rule of the generic engine :mod:`mpdp.claims`.

**Unit of replication.** A repetition redraws the partition, θ₀ and all noise (spec E0), and
within a repetition every mechanism shares the partition and θ₀ (paired design). So each
statistic is first aggregated *within* a repetition (a paired difference, a fitted change,
…, averaged over the settings the claim covers), giving one number per repetition; the
estimate is the mean of these numbers and the interval a two-sided 95% Student-t interval over
repetitions (:func:`mpdp.claims.t_interval`).

The default reading is the paper's main one: ``mode="local_then_aggregate"`` (Algorithm 1 as
printed) with the ``ma16`` accountant (c = 16, mechanisms.md C1); ``per_round`` and ``exact``
can be checked with the same function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pandas as pd

from mpdp.claims import (
    COLUMNS,
    GAP_FLOOR,
    Claim,
    NoData,
    Result,
    evaluate_one,
    fitted_change,
    log_gap,
)
from mpdp.errors import InputDataError
from mpdp.results import conform

#: Equivalence margin for test accuracy (C3, C7): 1 percentage point. Differences smaller than
#: this are invisible on the paper's accuracy figures and below the test-set resolution of the
#: small data sets (1 point of 140 test records of Breast Cancer is 0.7 pp).
ACCURACY_MARGIN: float = 0.01

#: Equivalence margin for "steady in u" (C5): the accuracy change fitted across the whole u grid
#: (OLS slope × (u_max − u_min)) must stay within ±1 percentage point.
STEADY_MARGIN: float = 0.01

_NAN = float("nan")

_ACC_EPS_FIGS = "1, 4, 6, 8, 10"
_GAP_EPS_FIGS = "3, 5, 7, 9, 11"
_ACC_U_FIGS = "2, 13, 15"

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


class Reading(NamedTuple):
    """A way of running and calibrating the methods on which the claims are checked."""

    name: str
    mode: str  # of WD-DP and Jayaraman
    accountant: str  # of WD-DP and Jayaraman
    central_accountant: str  # of Wang–Ye–Xu
    variant: str  # figure-name suffix showing this reading


#: reading id -> reading. ``paper``: Algorithm 1 as printed with c = 16, compared at equal
#: *claimed* ε; ``equal_privacy``: every method really (ε, δ)-DP at the plotted ε under the
#: tight accountant (literal mode calibrated per party to its own n_j, WYX ``exact``, I-1);
#: ``per_round``: the per-round reading of the proof with c = 16.
READINGS: dict[str, Reading] = {
    "paper": Reading("paper's reading", "local_then_aggregate", "ma16", "ma16", ""),
    "equal_privacy": Reading(
        "equal privacy", "local_then_aggregate", "exact_per_party", "exact", "-eq"
    ),
    "per_round": Reading("per-round reading", "per_round", "ma16", "ma16", "-pr"),
}


def evaluate_reading(table: pd.DataFrame, reading: str) -> pd.DataFrame:
    """:func:`evaluate_claims` on one reading of :data:`READINGS`."""
    r = READINGS[reading]
    return evaluate_claims(
        table, mode=r.mode, accountant=r.accountant, central_accountant=r.central_accountant
    )


def survival(paper: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """Per claim: the data sets where it PASSes on the paper's reading, and on ``other``.

    Columns ``claim_id``, ``claim``, ``pass_paper`` (data sets), ``pass_other`` (those of
    ``pass_paper`` that also PASS on ``other``) and ``status``: ``survives`` (all of them),
    ``partly`` (some), ``lost`` (none) or ``not confirmed`` (PASS nowhere on the paper's
    reading).
    """
    rows = []
    if paper.empty:
        return pd.DataFrame(columns=["claim_id", "claim", "pass_paper", "pass_other", "status"])
    other_pass = (
        set(map(tuple, other.loc[other["verdict"] == "PASS", ["claim_id", "dataset"]].to_numpy()))
        if not other.empty
        else set()
    )
    for claim_id, group in paper.groupby("claim_id", sort=False):
        passed = sorted(group.loc[group["verdict"] == "PASS", "dataset"])
        kept = [ds for ds in passed if (claim_id, ds) in other_pass]
        if not passed:
            status = "not confirmed"
        elif len(kept) == len(passed):
            status = "survives"
        else:
            status = "partly" if kept else "lost"
        rows.append({"claim_id": claim_id, "claim": group["claim"].iloc[0],
                     "pass_paper": passed, "pass_other": kept, "status": status})
    return pd.DataFrame(rows)


def survival_sentence(paper: pd.DataFrame, other: pd.DataFrame, other_name: str) -> str:
    """One sentence: which of the claims confirmed on the paper's reading survive ``other``."""
    table = survival(paper, other)
    if table.empty:
        return "No claim could be checked (no results)."
    confirmed = table[table["status"] != "not confirmed"]
    if confirmed.empty:
        return (
            "None of the paper's claims passes on any data set on the paper's own reading, so "
            f"there is nothing to carry over to the {other_name} reading."
        )

    def ids(status: str) -> str:
        chosen = confirmed[confirmed["status"] == status]
        return ", ".join(
            f"{r.claim_id} ({len(r.pass_other)}/{len(r.pass_paper)} data sets)"
            if status == "partly"
            else str(r.claim_id)
            for r in chosen.itertuples()
        )

    parts = [f"{label} {ids(st)}" for st, label in (
        ("survives", "still pass on every data set where they passed:"),
        ("partly", "pass on only some of them:"),
        ("lost", "pass on none of them:"),
    ) if (confirmed["status"] == st).any()]
    return (
        f"Of the {len(confirmed)} claims the paper's reading confirms on at least one data set "
        f"({', '.join(confirmed['claim_id'])}), at {other_name} " + "; ".join(parts) + "."
    )
_SETTING = ["m", "epsilon"]


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
        raise NoData(f"no paired runs for {what}")
    return pairs


def _per_rep_change(runs: pd.DataFrame, x: str, setting: list[str]) -> pd.Series:
    """Fitted accuracy change over ``x`` per (rep, setting), then the mean over settings."""
    changes = pd.Series(
        {
            key: fitted_change(
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


_Check = Callable[[_Runs], Result]


def _c1(r: _Runs) -> Result:
    pairs = _pair(r.eps_wddp, r.eps_jay, ["m", "epsilon", "rep"], "WD-DP vs Jayaraman (ε-sweep)")
    pairs["d"] = pairs["accuracy_a"] - pairs["accuracy_b"]
    cells = pairs.groupby(_SETTING)["d"].mean()
    return Result(
        pairs.groupby("rep")["d"].mean(),
        "paired difference in test accuracy WD-DP − Jayaraman per (m, ε, rep), averaged over "
        "(m, ε) within each repetition; claim: > 0",
        f"{len(pairs)} pairs; WD-DP ahead in {int((cells > 0).sum())} of {len(cells)} (m, ε) "
        f"cells (means over reps); worst cell {cells.min():+.4f}",
    )


def _c2(r: _Runs) -> Result:
    pairs = _pair(r.eps_wddp, r.eps_jay, ["m", "epsilon", "rep"], "WD-DP vs Jayaraman (ε-sweep)")
    log_a, floored_a = log_gap(pairs["optimal_gap_a"])
    log_b, floored_b = log_gap(pairs["optimal_gap_b"])
    pairs["d"] = log_a - log_b
    pairs = pairs.loc[np.isfinite(pairs["d"])]
    cells = pairs.groupby(_SETTING)["d"].mean()
    floored = floored_a + floored_b
    return Result(
        pairs.groupby("rep")["d"].mean(),
        "paired difference log10(gap WD-DP) − log10(gap Jayaraman) per (m, ε, rep), averaged "
        "over (m, ε) within each repetition; claim: < 0",
        f"{len(pairs)} pairs; WD-DP smaller in {int((cells < 0).sum())} of {len(cells)} (m, ε) "
        f"cells; estimate −1 means a 10× smaller gap"
        + (f"; {floored} gaps below {GAP_FLOOR:g} floored" if floored else ""),
    )


def _c3(r: _Runs) -> Result:
    if r.eps_wyx.empty:
        raise NoData("no Wang–Ye–Xu (central) ε-sweep runs")
    pairs = r.eps_wddp[["m", "epsilon", "rep", "accuracy"]].merge(
        r.eps_wyx[["epsilon", "rep", "accuracy"]], on=["epsilon", "rep"], suffixes=("_a", "_b")
    )
    if pairs.empty:
        raise NoData("no WD-DP run shares (ε, rep) with a Wang–Ye–Xu run")
    pairs["d"] = pairs["accuracy_a"] - pairs["accuracy_b"]
    by_m = pairs.groupby("m")["d"].mean()
    return Result(
        pairs.groupby("rep")["d"].mean(),
        "paired difference in test accuracy WD-DP − Wang–Ye–Xu per (m, ε, rep) (WYX paired by "
        f"(ε, rep)), averaged over (m, ε) within each repetition; claim: within ±{ACCURACY_MARGIN:g}",
        f"{len(pairs)} pairs; mean difference per m: "
        + ", ".join(f"m={m}: {d:+.4f}" for m, d in by_m.items()),
    )


def _c4(r: _Runs) -> Result:
    if r.eps_wddp.empty:
        raise NoData("no WD-DP ε-sweep runs")
    others = []
    for name, runs, setting in (
        ("Jayaraman", r.eps_jay, ["m"]),
        ("Wang–Ye–Xu", r.eps_wyx, []),
    ):
        change = _per_rep_change(runs, "epsilon", setting)
        if not change.empty:
            others.append(f"{name} {change.mean():+.4f}")
    return Result(
        _per_rep_change(r.eps_wddp, "epsilon", ["m"]),
        "WD-DP accuracy change across the ε grid fitted by OLS (slope × (ε_max − ε_min)) per "
        "(m, rep), averaged over m within each repetition; claim: > 0",
        "same statistic for the other methods (mean over reps): "
        + ("; ".join(others) if others else "none available"),
    )


def _u_setting_text(runs: pd.DataFrame) -> str:
    settings = runs[_SETTING].drop_duplicates().sort_values(_SETTING)
    return ", ".join(f"(m={int(m)}, ε={e:g})" for m, e in settings.itertuples(index=False))


def _c5(r: _Runs) -> Result:
    if r.u_wddp.empty:
        raise NoData("no WD-DP u-sweep runs")
    return Result(
        _per_rep_change(r.u_wddp, "u", _SETTING),
        "WD-DP accuracy change across the u grid fitted by OLS (slope × (u_max − u_min)) per "
        f"(m, ε, rep), averaged over settings within each repetition; claim: within "
        f"±{STEADY_MARGIN:g}",
        f"settings {_u_setting_text(r.u_wddp)}",
    )


def _c6a(r: _Runs) -> Result:
    if r.u_jay.empty:
        raise NoData("no Jayaraman u-sweep runs")
    wd = _per_rep_change(r.u_wddp, "u", _SETTING)
    return Result(
        _per_rep_change(r.u_jay, "u", _SETTING),
        "Jayaraman accuracy change across the u grid fitted by OLS (slope × (u_max − u_min)) "
        "per (m, ε, rep), averaged over settings within each repetition; claim: < 0",
        f"settings {_u_setting_text(r.u_jay)}; WD-DP's fitted change "
        + (f"{wd.mean():+.4f}" if not wd.empty else "unavailable"),
    )


def _c6b(r: _Runs) -> Result:
    pairs = _pair(r.u_wddp, r.u_jay, ["m", "epsilon", "u", "rep"], "WD-DP vs Jayaraman (u-sweep)")
    spread = pairs.groupby(["rep", *_SETTING]).agg(
        n_u=("u", "nunique"), wd=("accuracy_a", "std"), jy=("accuracy_b", "std")
    )
    spread = spread.loc[spread["n_u"] >= 2]
    if spread.empty:
        raise NoData("no u-sweep setting has two or more u values")
    spread["d"] = spread["jy"] - spread["wd"]
    return Result(
        spread.groupby(level="rep")["d"].mean(),
        "std across u of Jayaraman accuracy minus that of WD-DP, per (m, ε, rep) on paired "
        "runs, averaged over settings within each repetition; claim: > 0",
        f"mean std across u: Jayaraman {spread['jy'].mean():.4f}, WD-DP {spread['wd'].mean():.4f}",
    )


def _c7(r: _Runs) -> Result:
    at_one = [runs.loc[(runs["u"] == 1).fillna(False)] for runs in (r.u_wddp, r.u_jay)]
    pairs = _pair(*at_one, ["m", "epsilon", "rep"], "WD-DP vs Jayaraman at u = 1")
    pairs["d"] = pairs["accuracy_a"] - pairs["accuracy_b"]
    return Result(
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


def _runs_of(
    table: pd.DataFrame, mode: str, accountant: str, jay_acc: str, central_acc: str
) -> _Runs:
    """Select the runs of one data set for the claims."""
    reading = f"mode={mode}, accountant={accountant}"
    if jay_acc != accountant:
        reading += f" (Jayaraman: {jay_acc})"
    if central_acc != accountant:
        reading += f" (Wang–Ye–Xu: {central_acc})"
    return _Runs(
        eps_wddp=_select(table, "eps_sweep", "wddp", mode, accountant),
        eps_jay=_select(table, "eps_sweep", "jayaraman", mode, jay_acc),
        eps_wyx=_select(table, "eps_sweep", "wyx", "central", central_acc),
        u_wddp=_select(table, "u_sweep", "wddp", mode, accountant),
        u_jay=_select(table, "u_sweep", "jayaraman", mode, jay_acc),
        reading=reading,
    )


def evaluate_claims(
    table: pd.DataFrame,
    mode: str = "local_then_aggregate",
    accountant: str = "ma16",
    jayaraman_accountant: str | None = None,
    central_accountant: str | None = None,
) -> pd.DataFrame:
    """Check the claims of :data:`CLAIMS` per data set of a results table (spec E3.4).

    ``mode`` selects the WD-DP/Jayaraman runs (``local_then_aggregate`` or ``per_round``);
    ``accountant`` the calibration of WD-DP, Jayaraman and the Wang–Ye–Xu runs (mode
    ``central``) compared with them. ``jayaraman_accountant`` overrides it for Jayaraman; by
    default it is ``accountant``, except that for ``ma16`` a table whose Jayaraman runs exist
    only under ``zcdp_code`` (config ``wddp.jayaraman_accountant: zcdp_code``) uses those.
    ``central_accountant`` is that of the Wang–Ye–Xu runs (default ``accountant``); the
    equal-privacy reading is ``accountant="exact_per_party", central_accountant="exact"``.

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
        runs = _runs_of(data, mode, accountant, jay_acc, central_accountant or accountant)
        prefix = "SYNTHETIC data; " if bool(data["synthetic"].fillna(False).any()) else ""
        for claim_id, check in _CHECKS.items():
            rows.append(
                evaluate_one(
                    claim_id, CLAIMS[claim_id], check, runs, str(dataset), runs.reading, prefix
                )
            )
    return pd.DataFrame(rows, columns=COLUMNS)


__all__ = [
    "ACCURACY_MARGIN",
    "CLAIMS",
    "COLUMNS",
    "READINGS",
    "STEADY_MARGIN",
    "evaluate_claims",
    "evaluate_reading",
    "survival",
    "survival_sentence",
]
