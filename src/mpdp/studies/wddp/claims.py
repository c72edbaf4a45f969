"""Claims of the WD-DP experiment section (spec E3.4) declared for the claims engine (issue 33).

The study provides (a) :func:`observations`: the tidy per-repetition observations of its results
table, per reading of :data:`READINGS`; (b) :func:`baselines`: the trivial baselines (accuracy:
the majority rate; optimality gap: the gap of the initial point θ₀); (c) :data:`CLAIMS`: the
declarations. Every statistic, guard and verdict is the engine's (:mod:`mpdp.claims.engine`).

Cells: ``ε-sweep: m=…, ε=…`` (C1–C3, C3-gap), ``ε-sweep: m=…`` along ε (C4; C4-gap along log10 ε),
``u-sweep: m=…, ε=…`` along u (C5, C6a, C5-gap, C6a-gap) or per repetition's spread across u (C6b,
C6b-gap), ``u-sweep: m=…, ε=…, u=1`` (C7). The central Wang–Ye–Xu run (no m) is paired with every m of
its (ε, rep). Repetitions share the partition and θ₀ across mechanisms (paired design, spec E0). The
``-gap`` claims are the optimal-gap statements of the paper's App. B (Figs. 3, 5, 7, 9, 11 over ε;
Figs. 12, 14, 16 over u), on the log10 scale like C2.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import NamedTuple

import numpy as np
import pandas as pd

from mpdp.claims.declare import Claim
from mpdp.errors import InputDataError
from mpdp.results import conform

STUDY = "wddp"

#: Equivalence margin for test accuracy (C3, C7): 1 percentage point (invisible on the paper's
#: accuracy figures; 1 point of Breast Cancer's 140 test records is 0.7 pp).
ACCURACY_MARGIN: float = 0.01

#: Equivalence margin for "steady in u" (C5): the fitted accuracy change across the u grid.
STEADY_MARGIN: float = 0.01

#: Practical margin of every optimal-gap claim (C2, C3-gap … C6a-gap) on the log10 scale: a factor 1.25
GAP_MARGIN: float = math.log10(1.25)
#: gaps below it are raised to it before a log (as the claims' own floor, ``Claim.floor``: a gap is ≥ 0 up to the
#: solver's tolerance)
GAP_FLOOR: float = 1e-10
_GAP_WHY = ("a factor 1.25 (a tenth of a decade): the paper reads its gaps on log axes spanning decades (App. B), "
            "where a smaller ratio is invisible")
_RATE_WHY = ("1 point of accuracy: invisible on the paper's accuracy figures (1 record of Breast Cancer's 140 test "
             "records is 0.7 point), and a smaller difference does not change which method a practitioner picks")

_SRC = "seed 000 (Kang–Liu–Wang, WD-DP), Experiments"
_ACC_EPS = f"{_SRC}, Figs. 1, 4, 6, 8, 10"
_GAP_EPS = f"{_SRC}, App. B, Figs. 3, 5, 7, 9, 11"
_ACC_U = f"{_SRC}, Figs. 2, 13, 15"
_GAP_U = f"{_SRC}, App. B, Figs. 12, 14, 16"
_EPS_CELL = r"^ε-sweep: m=\d+, ε="  # one (m, ε) of the ε-sweep
_EPS_AXIS = r"^ε-sweep: m=\d+$"  # one m, along ε
_U_AXIS = r"^u-sweep: m=\d+, ε=[^,]+$"  # one (m, ε) setting of the u-sweep, along u
_U_ONE = r"^u-sweep: .*, u=1$"

#: claim id -> the paper's figures it concerns (the report links each claim to them)
FIGURES: dict[str, str] = {"C1": "1, 4, 6, 8, 10", "C2": "3, 5, 7, 9, 11", "C3": "1, 4, 6, 8, 10",
                           "C4": "1, 4, 6, 8, 10", "C5": "2, 13, 15", "C6a": "2, 13, 15", "C6b": "2, 13, 15",
                           "C7": "2, 13, 15", "C3-gap": "3, 5, 7, 9, 11", "C4-gap": "3, 5, 7, 9, 11",
                           "C5-gap": "12, 14, 16", "C6a-gap": "12, 14, 16", "C6b-gap": "12, 14, 16"}

#: the declarations (C6, "decreases rapidly or fluctuates sharply", is two claims: C6a and C6b; likewise its
#: optimal-gap counterpart "increases rapidly or fluctuates sharply": C6a-gap and C6b-gap)
CLAIMS: tuple[Claim, ...] = (
    Claim(STUDY, "C1", "WD-DP has higher test accuracy than Jayaraman et al.", _ACC_EPS, "accuracy",
          ("wddp", "jayaraman"), "compare", "greater", cell_match=_EPS_CELL, margin_reason=_RATE_WHY),
    Claim(STUDY, "C2", "WD-DP has a smaller optimal gap than Jayaraman et al.", _GAP_EPS, "optimal_gap",
          ("wddp", "jayaraman"), "compare", "less", effect_scale="log_ratio", cell_match=_EPS_CELL,
          practical_margin=GAP_MARGIN, margin_reason=_GAP_WHY),
    Claim(STUDY, "C3", "WD-DP is similar to the centralised Wang–Ye–Xu method in test accuracy", _ACC_EPS,
          "accuracy", ("wddp", "wyx"), "compare", "equivalence", margin=ACCURACY_MARGIN, cell_match=_EPS_CELL,
          margin_reason=_RATE_WHY),
    Claim(STUDY, "C4", "Performance (WD-DP test accuracy) improves as ε increases", _ACC_EPS, "accuracy",
          ("wddp",), "trend", "greater", cell_match=_EPS_AXIS,
          margin_reason="1 point of accuracy gained over the ε grid: a smaller gain is invisible on the paper's "
                        "accuracy figures"),
    Claim(STUDY, "C5", "As u grows, WD-DP's test accuracy is steady", _ACC_U, "accuracy", ("wddp",), "trend",
          "equivalence", margin=STEADY_MARGIN, cell_match=_U_AXIS,
          margin_reason="steady: the fitted accuracy moves by less than 1 point across the u grid, invisible on "
                        "the paper's figures"),
    Claim(STUDY, "C6a", "As u grows, Jayaraman et al.'s test accuracy decreases (C6, first reading)", _ACC_U,
          "accuracy", ("jayaraman",), "trend", "less", cell_match=_U_AXIS,
          margin_reason="1 point of accuracy lost across the u grid: the least fall that reads as 'decreases'"),
    Claim(STUDY, "C6b", "As u grows, Jayaraman et al.'s test accuracy fluctuates more than WD-DP's "
          "(C6, second reading)", _ACC_U, "accuracy_spread", ("jayaraman", "wddp"), "compare", "greater",
          guard_metric="accuracy", cell_match=_U_AXIS, guard_methods=("jayaraman", "wddp"),
          guard_reason="a classifier at chance predicts one class at every u: its spread is 0 by construction, "
                       "so both must be above chance for their spreads to be compared"),
    Claim(STUDY, "C7", "At u = 1 (equal sizes) WD-DP and Jayaraman et al. have similar test accuracy", _ACC_U,
          "accuracy", ("wddp", "jayaraman"), "compare", "equivalence", margin=ACCURACY_MARGIN,
          cell_match=_U_ONE, margin_reason=_RATE_WHY),
    Claim(STUDY, "C3-gap", "WD-DP's optimal gap is similar to the centralised Wang–Ye–Xu method's", _GAP_EPS,
          "optimal_gap", ("wddp", "wyx"), "compare", "equivalence", margin=GAP_MARGIN, effect_scale="log_ratio",
          cell_match=_EPS_CELL, margin_reason=_GAP_WHY),
    Claim(STUDY, "C4-gap", "WD-DP's optimal gap decreases as ε increases", _GAP_EPS, "optimal_gap", ("wddp",),
          "trend", "less", effect_scale="log_ratio", cell_match=_EPS_AXIS, practical_margin=GAP_MARGIN,
          margin_reason="a fall by a factor 1.25 (a tenth of a decade) over the ε grid: the least fall visible on "
                        "the paper's log-scale gap figures"),
    Claim(STUDY, "C5-gap", "As u grows, WD-DP's optimal gap is steady", _GAP_U, "optimal_gap", ("wddp",), "trend",
          "equivalence", margin=GAP_MARGIN, effect_scale="log_ratio", cell_match=_U_AXIS,
          margin_reason="steady: the fitted gap moves by less than a factor 1.25 (a tenth of a decade) across the u "
                        "grid, invisible on the paper's log-scale gap figures"),
    Claim(STUDY, "C6a-gap", "As u grows, Jayaraman et al.'s optimal gap increases (first reading of 'increases "
          "rapidly or fluctuates sharply')", _GAP_U, "optimal_gap", ("jayaraman",), "trend", "greater",
          effect_scale="log_ratio", cell_match=_U_AXIS, practical_margin=GAP_MARGIN,
          margin_reason="a rise by a factor 1.25 (a tenth of a decade) across the u grid: the least rise visible on "
                        "the paper's log-scale gap figures"),
    Claim(STUDY, "C6b-gap", "As u grows, Jayaraman et al.'s optimal gap fluctuates more than WD-DP's (second "
          "reading of 'increases rapidly or fluctuates sharply')", _GAP_U, "log_gap_spread",
          ("jayaraman", "wddp"), "compare", "greater", guard_metric="optimal_gap", cell_match=_U_AXIS),
)


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


def _select(table: pd.DataFrame, experiment: str, mechanism: str, mode: str, accountant: str) -> pd.DataFrame:
    """Rows of one (experiment, mechanism, mode, accountant); a run key twice is an error."""
    mask = ((table["experiment"] == experiment) & (table["mechanism"] == mechanism) & (table["mode"] == mode)
            & (table["accountant"] == accountant)).fillna(False)
    rows = table.loc[mask.astype(bool)]
    dup = rows.duplicated(subset=["dataset", "m", "u", "epsilon", "rep"], keep=False)
    if dup.any():
        example = rows.loc[dup, ["dataset", "m", "u", "epsilon", "rep"]].iloc[0].to_dict()
        raise InputDataError(
            f"results table has {int(dup.sum())} duplicated {mechanism}/{mode}/{accountant} {experiment} runs "
            f"(e.g. {example}); filter it to one variant (noise_sharing, dtype, …) before checking claims")
    return rows


def _jayaraman_accountant(table: pd.DataFrame, mode: str, accountant: str) -> str:
    """Jayaraman's runs under ``accountant``, or ``zcdp_code`` where only those exist for ma16."""
    jay = table.loc[((table["mechanism"] == "jayaraman") & (table["mode"] == mode)).fillna(False)]
    present = set(jay["accountant"].dropna())
    if accountant == "ma16" and accountant not in present and "zcdp_code" in present:
        return "zcdp_code"
    return accountant


def _eps(e: float) -> str:
    return f"{e:g}"


def _key(rows: pd.DataFrame, prefix: str, u_one: bool = False, with_eps: bool = True) -> pd.Series:
    """The cell key of each row (an empty string Series for no rows)."""
    if rows.empty:
        return pd.Series([], dtype=str)
    key = prefix + rows["m"].astype(str)
    if with_eps:
        key = key + ", ε=" + rows["epsilon"].map(_eps).astype(str)
    return key + ", u=1" if u_one else key


def _frame(rows: pd.DataFrame, reading: str, method: str, metric: str, cell: pd.Series,
           x: pd.Series | float = np.nan) -> pd.DataFrame:
    return pd.DataFrame({"dataset": rows["dataset"].astype(str).to_numpy(), "reading": reading,
                         "cell": cell.to_numpy(), "rep": rows["rep"].astype(int).to_numpy(), "method": method,
                         "metric": metric, "value": rows[metric].astype(float).to_numpy(),
                         "x": x.astype(float).to_numpy() if isinstance(x, pd.Series) else x, "bound": np.nan})


def _with_n_test(obs: pd.DataFrame, n_test: Mapping[str, int] | None) -> pd.DataFrame:
    """The test-set size of each data set on its accuracy rows (the resolution of a rate, issue 42)."""
    if not n_test:
        return obs
    sizes = obs["dataset"].map(lambda d: float(n_test[d]) if d in n_test else np.nan)
    return obs.assign(n_test=sizes.where(obs["metric"] == "accuracy"))


def _reading_obs(table: pd.DataFrame, reading: str) -> list[pd.DataFrame]:
    r = READINGS[reading]
    jay_acc = _jayaraman_accountant(table, r.mode, r.accountant)
    eps = {"wddp": _select(table, "eps_sweep", "wddp", r.mode, r.accountant),
           "jayaraman": _select(table, "eps_sweep", "jayaraman", r.mode, jay_acc)}
    wyx = _select(table, "eps_sweep", "wyx", "central", r.central_accountant)
    frames = []
    for method, rows in eps.items():
        if rows.empty:
            continue
        cell = _key(rows, "ε-sweep: m=")
        frames += [_frame(rows, reading, method, "accuracy", cell), _frame(rows, reading, method, "optimal_gap", cell)]
        trend_cell = _key(rows, "ε-sweep: m=", with_eps=False)
        frames.append(_frame(rows, reading, method, "accuracy", trend_cell, rows["epsilon"]))
        # the gap along log10 ε: a power law in ε is a straight line there (C4-gap)
        frames.append(_frame(rows, reading, method, "optimal_gap", trend_cell, np.log10(rows["epsilon"].astype(float))))
    ms = eps["wddp"][["dataset", "m"]].drop_duplicates()
    if not wyx.empty and not ms.empty:  # the central run (no m) paired with every m of its (ε, rep)
        paired = wyx.drop(columns="m").merge(ms, on="dataset")
        key = _key(paired, "ε-sweep: m=")
        frames += [_frame(paired, reading, "wyx", "accuracy", key), _frame(paired, reading, "wyx", "optimal_gap", key)]
    u_runs = {"wddp": _select(table, "u_sweep", "wddp", r.mode, r.accountant),
              "jayaraman": _select(table, "u_sweep", "jayaraman", r.mode, jay_acc)}
    for method, rows in u_runs.items():
        if rows.empty:
            continue
        setting = _key(rows, "u-sweep: m=")
        frames.append(_frame(rows, reading, method, "accuracy", setting, rows["u"].astype(float)))
        frames.append(_frame(rows, reading, method, "optimal_gap", setting, rows["u"].astype(float)))
        one = rows[(rows["u"] == 1).fillna(False)]
        frames.append(_frame(one, reading, method, "accuracy", _key(one, "u-sweep: m=", u_one=True)))
        log_gap = np.log10(np.maximum(rows["optimal_gap"].astype(float), GAP_FLOOR))
        spread = rows.assign(setting=setting, log_gap=log_gap).groupby(["dataset", "setting", "rep"]).agg(
            accuracy=("accuracy", "std"), log_gap=("log_gap", "std"), n_u=("u", "nunique")).reset_index()
        spread = spread[spread["n_u"] >= 2]
        for metric, column in (("accuracy_spread", "accuracy"), ("log_gap_spread", "log_gap")):
            frames.append(pd.DataFrame({"dataset": spread["dataset"].astype(str), "reading": reading,
                                        "cell": spread["setting"], "rep": spread["rep"].astype(int),
                                        "method": method, "metric": metric, "value": spread[column].astype(float),
                                        "x": np.nan, "bound": np.nan}))
    return frames


def survival(paper: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """Per claim: its verdict on the paper's reading and on ``other`` (verdict rows of verdicts.parquet).

    ``status``: ``survives`` (HOLDS on both), ``lost`` (HOLDS on the paper's reading only), ``not
    confirmed`` (does not hold on the paper's reading).
    """
    cols = ["claim_id", "claim", "paper", "other", "status"]
    if paper.empty:
        return pd.DataFrame(columns=cols)
    theirs = dict(zip(other["claim_id"], other["verdict"], strict=True)) if not other.empty else {}
    rows = []
    for r in paper.itertuples():
        mine, their = str(r.verdict), str(theirs.get(r.claim_id, "no data"))
        status = "not confirmed" if mine != "HOLDS" else "survives" if their == "HOLDS" else "lost"
        rows.append({"claim_id": r.claim_id, "claim": r.claim, "paper": mine, "other": their, "status": status})
    return pd.DataFrame(rows, columns=cols)


def survival_sentence(paper: pd.DataFrame, other: pd.DataFrame, other_name: str) -> str:
    """One sentence: which of the claims that hold on the paper's reading still hold on ``other``."""
    table = survival(paper, other)
    if table.empty:
        return "No claim could be checked (no results)."
    held = table[table["status"] != "not confirmed"]
    if held.empty:
        return (f"No claim HOLDS on the paper's own reading (over all its cells), so there is nothing to carry "
                f"over to the {other_name} reading.")
    kept = ", ".join(held.loc[held["status"] == "survives", "claim_id"]) or "none"
    lost = "; ".join(f"{r.claim_id} ({r.other})" for r in held.itertuples() if r.status == "lost") or "none"
    return (f"Of the {len(held)} claims that HOLD on the paper's reading ({', '.join(held['claim_id'])}), at "
            f"{other_name} these still hold: {kept}; these do not: {lost}.")


def observations(table: pd.DataFrame, n_test: Mapping[str, int] | None = None) -> pd.DataFrame:
    """The tidy observations of a WD-DP results table, every reading of :data:`READINGS`; ``n_test``
    (data set -> test-set size, from its data card) gives the accuracies their resolution, one record."""
    table = conform(table)
    frames = [f for reading in READINGS for f in _reading_obs(table, reading)]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(columns=["dataset", "reading", "cell", "rep", "method", "metric", "value", "x", "bound"])
    return _with_n_test(pd.concat(frames, ignore_index=True), n_test)


def baselines(table: pd.DataFrame) -> pd.DataFrame:
    """Trivial baselines: the majority rate (accuracy, every cell; its converged reference θ*'s test
    accuracy, median over runs) and θ₀'s optimality gap (reference 0: θ* itself) per ε-sweep cell, per m
    along ε and per u-sweep setting along u."""
    table = conform(table)
    rows = []
    for ds, g in table.groupby("dataset"):
        majority = g["majority_rate"].dropna()
        if not majority.empty:
            star = g["optimal_accuracy"].dropna() if "optimal_accuracy" in g else pd.Series(dtype=float)
            # median over runs: every repetition's own test records under a split per repetition (issue 60),
            # the one shared value under the fixed split
            rows.append({"dataset": str(ds), "cell": "*", "metric": "accuracy", "value": float(majority.median()),
                         "baseline": "majority rate", "reference": float(star.median()) if len(star) else np.nan})
        eps = g[(g["experiment"] == "eps_sweep") & g["m"].notna()]
        u = g[(g["experiment"] == "u_sweep") & g["m"].notna()]
        cells = [_key(eps, "ε-sweep: m="), _key(eps, "ε-sweep: m=", with_eps=False), _key(u, "u-sweep: m=")]
        for part, key in zip((eps, eps, u), cells, strict=True):
            if part.empty:
                continue
            init_gap = (part["init_loss"] - part["optimal_loss"]).groupby(key).median()
            rows += [{"dataset": str(ds), "cell": cell, "metric": "optimal_gap", "value": float(v),
                      "baseline": "the initial point θ₀", "reference": 0.0} for cell, v in init_gap.items()
                     if np.isfinite(v)]
    return pd.DataFrame(rows, columns=["dataset", "cell", "metric", "value", "baseline", "reference"])


__all__ = ["ACCURACY_MARGIN", "CLAIMS", "FIGURES", "GAP_MARGIN", "READINGS", "STEADY_MARGIN", "baselines",
           "observations"]
