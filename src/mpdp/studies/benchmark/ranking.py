"""Which mechanism is best in each cell of the benchmark grid (spec experiments.md E10 "Ranking").

The **primary metric** is declared in the config (``benchmark.primary_metric``, default
``test_logloss``: the mean logistic loss of the released model on the test set, the common
objective every mechanism minimises, without its regulariser). It is lower-is-better and stays
informative on imbalanced data, where accuracy sits at the majority rate for every private
model. Log-loss is heavy-tailed over repetitions (a few noisy releases dominate a mean), so the
**summary is the median over repetitions** (issue 33): in each cell (data set, ε, m, u) the best
mechanism has the lowest median primary metric; a competitor is *tied* with it when it is not
significantly worse: one-sided paired t-test over the repetitions (rep r of every mechanism uses
the same data split and partition), p-values Holm-corrected within the cell at level
:data:`ALPHA`. Accuracy is secondary (reported, not ranked on). A cell is **uninformative** when
no mechanism is significantly better than the trivial baseline *on the primary metric* (issue
33): for ``test_logloss`` the constant base-rate predictor, whose test log-loss is the entropy
H(r) of the test labels' base rate (r = ``majority_rate``; the best constant on the test set, a
conservative baseline); for ``optimal_gap`` the gap of θ = 0, log 2 − L_D(θ*) (one-sided
one-sample t-test of metric − baseline < 0 over the repetitions, Holm within the cell). The
non-private reference is not a competitor.

**Privacy readings** (issue 34): the tables hold the rows of every selection protocol
(``selection``, :mod:`mpdp.studies.benchmark.selection`); each protocol's rows are ranked
separately and labelled ``privacy_reading``: ``end_to_end`` (``private``/``public``: the whole
procedure, selection included, is accounted at the cell's ε — the headline) or ``final_run``
(``oracle``: only the released run is accounted, the papers' convention).
:func:`winner_changes` counts, per data set, the cells whose best mechanism differs between the
two readings. Each ranking row says what its ranked rows guarantee (issue 58): the privacy units
among them (``privacy_units``) and, over the cell's competing rows, the largest ε of the whole
procedure for a party member in the row's unit (``eps_end_to_end_max``) and for one validation
record (``eps_validation_record_max``): at most the cell's ε in the ``end_to_end`` reading of the
``private`` protocol, +inf for the validation records of ``public`` (declared public) and for the
``final_run`` reading.

:func:`ranking_table` gives one row per cell (:data:`RANKING_COLUMNS`), written by the
workflow to ``data/results/benchmark/ranking.parquet``, which ``xp_rank`` and the report read.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from mpdp import io
from mpdp.studies.benchmark.schema import CELL
from mpdp.studies.benchmark.tables import read_tables

ALPHA = 0.05
#: declarable primary metrics (``benchmark.primary_metric``), all lower-is-better
PRIMARY_METRICS: dict[str, str] = {
    "test_logloss": "test log-loss (mean logistic loss of the released model on the test set)",
    "optimal_gap": "optimality gap L(θ) − L(θ*) on the private pool (against each mechanism's own λ)",
}
#: the ``family`` of rows that are references, not competitors (excluded from the ranking)
REFERENCE_FAMILY = "reference"
#: columns of :func:`cell_ranking` (one row per cell and competing mechanism)
COLUMNS = [*CELL, "mechanism", "median_metric", "mean_metric", "mean_accuracy", "n_reps", "rank", "best",
           "p_value", "p_holm", "tied", "p_below_baseline"]
#: columns of :func:`ranking_table` (one row per cell; ``tied`` and ``ranked`` are comma-separated ids)
RANKING_COLUMNS = [*CELL, "privacy_reading", "selection", "primary_metric", "summary", "best_mechanism",
                   "best_value", "baseline_value", "tied", "n_tied", "ranked", "best_accuracy", "majority_rate",
                   "n_reps", "uninformative", "privacy_units", "eps_end_to_end_max", "eps_validation_record_max"]
#: the protocol -> reading map (mirrors mpdp.studies.benchmark.selection.READING; the tables say it)
READINGS = {"private": "end_to_end", "public": "end_to_end", "oracle": "final_run"}
SUMMARY = "median over repetitions"


def ranking_path() -> str:
    """The workflow's per-cell ranking table."""
    return "data/results/benchmark/ranking.parquet"


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm–Bonferroni adjusted p-values (step-down, monotone, capped at 1)."""
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p)
    k = len(p)
    adjusted = np.empty(k)
    running = 0.0
    for i, idx in enumerate(order):
        running = max(running, min(1.0, (k - i) * p[idx]))
        adjusted[idx] = running
    return adjusted


def paired_worse_p(best: np.ndarray, other: np.ndarray) -> float:
    """One-sided p-value of "``other`` is below ``best``" (paired t-test over repetitions).

    For the lower-is-better primary metric pass (competitor, best): "best is below it".

    Identical columns (all differences 0) give p = 1: no evidence of a difference. Fewer than
    two pairs give p = 1 too (no test possible).
    """
    diff = np.asarray(best, dtype=float) - np.asarray(other, dtype=float)
    if len(diff) < 2 or not diff.any():
        return 1.0
    if np.all(diff == diff[0]):  # constant non-zero shift: zero variance, certain sign
        return 0.0 if diff[0] > 0 else 1.0
    return float(stats.ttest_rel(best, other, alternative="greater").pvalue)


def base_rate_logloss(rate: np.ndarray | float) -> np.ndarray:
    """The constant base-rate predictor's test log-loss, H(r) in nats, for a majority rate r (0 at r = 1)."""
    r = np.asarray(rate, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -(r * np.log(r) + (1 - r) * np.log1p(-r))
    return np.where((r > 0) & (r < 1), h, 0.0)


def baseline(cell: pd.DataFrame, metric: str) -> float:
    """The trivial baseline of ``metric`` in a cell (module docstring)."""
    if metric == "test_logloss":
        return float(base_rate_logloss(float(cell["majority_rate"].iloc[0])))
    return float(np.log(2.0) - cell["optimal_loss"].median())


def _rank_cell(cell: pd.DataFrame, metric: str) -> pd.DataFrame:
    wide = cell.pivot_table(index="rep", columns="mechanism", values=metric, aggfunc="mean")
    wide = wide.dropna(axis=0, how="any")  # pair on the repetitions every mechanism has
    acc = cell.pivot_table(index="rep", columns="mechanism", values="accuracy", aggfunc="mean").loc[wide.index]
    base = baseline(cell, metric)
    medians = wide.median().sort_values(ascending=True, kind="stable")
    best = str(medians.index[0])
    others = [m for m in medians.index if m != best]
    # lower is better: "other worse than best" = best below other, i.e. other − best > 0
    p = np.array([paired_worse_p(wide[m].to_numpy(), wide[best].to_numpy()) for m in others])
    p_holm = holm(p) if len(p) else p
    below = holm(np.array([paired_worse_p(np.full(len(wide), base), wide[m].to_numpy()) for m in medians.index]))
    rows = [{"mechanism": best, "p_value": np.nan, "p_holm": np.nan, "best": True, "tied": True}]
    rows += [{"mechanism": m, "p_value": float(pv), "p_holm": float(ph), "best": False, "tied": bool(ph >= ALPHA)}
             for m, pv, ph in zip(others, p, p_holm, strict=True)]
    out = pd.DataFrame(rows)
    out["median_metric"] = [float(medians[m]) for m in out["mechanism"]]
    out["mean_metric"] = [float(wide[m].mean()) for m in out["mechanism"]]
    out["mean_accuracy"] = [float(acc[m].mean()) for m in out["mechanism"]]
    out["p_below_baseline"] = below
    out["n_reps"] = len(wide)
    out["rank"] = np.arange(1, len(out) + 1)
    return out


def cell_ranking(table: pd.DataFrame, metric: str = "test_logloss") -> pd.DataFrame:
    """One row per (cell, competing mechanism) ranked on ``metric`` (:data:`COLUMNS`), one protocol's rows."""
    if metric not in PRIMARY_METRICS:
        raise ValueError(f"benchmark.primary_metric = {metric!r}; known: {sorted(PRIMARY_METRICS)}")
    runs = table[table["family"] != REFERENCE_FAMILY]
    frames = []
    for key, cell in runs.groupby(CELL, sort=True, dropna=False):
        ranked = _rank_cell(cell, metric)
        for col, value in zip(CELL, key, strict=True):
            ranked[col] = value
        frames.append(ranked)
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    return pd.concat(frames, ignore_index=True)[COLUMNS]


def _protocols(table: pd.DataFrame) -> list[str]:
    if "selection" not in table.columns:
        return ["oracle"]
    return [p for p in READINGS if p in set(table["selection"])]


def ranking_table(table: pd.DataFrame, metric: str = "test_logloss") -> pd.DataFrame:
    """One row per cell and privacy reading: the best mechanism on ``metric``, its tied set, the
    uninformative flag (module docstring)."""
    rows = []
    for protocol in _protocols(table):
        part = table if "selection" not in table.columns else table[table["selection"] == protocol]
        long = cell_ranking(part, metric)
        runs = part[part["family"] != REFERENCE_FAMILY]
        for key, cell in long.groupby(CELL, sort=True):
            cell = cell.sort_values("rank")
            best = cell.iloc[0]
            tied = cell.loc[cell["tied"], "mechanism"].tolist()
            raw = runs.set_index(CELL).loc[key]
            rows.append({**dict(zip(CELL, key, strict=True)), "privacy_reading": READINGS[protocol],
                         "selection": protocol, "primary_metric": metric, "summary": SUMMARY,
                         "best_mechanism": best["mechanism"], "best_value": float(best["median_metric"]),
                         "baseline_value": baseline(raw.reset_index(), metric),
                         "tied": ",".join(tied), "n_tied": len(tied), "ranked": ",".join(cell["mechanism"]),
                         "best_accuracy": float(best["mean_accuracy"]),
                         "majority_rate": float(raw["majority_rate"].iloc[0]),
                         "n_reps": int(best["n_reps"]),
                         "uninformative": bool(not (cell["p_below_baseline"] < ALPHA).any()),
                         **guarantee(raw)})
    return pd.DataFrame(rows, columns=RANKING_COLUMNS)


def guarantee(rows: pd.DataFrame) -> dict[str, object]:
    """What a cell's competing rows guarantee (module docstring): their privacy units and the
    largest ``eps_end_to_end`` and ``eps_validation_record`` among them (NaN where the tables do
    not carry the column)."""
    def worst(col: str) -> float:
        return float(rows[col].max()) if col in rows and rows[col].notna().any() else float("nan")

    return {"privacy_units": ",".join(sorted(rows["privacy_unit"].dropna().unique())) if "privacy_unit" in rows
            else "", "eps_end_to_end_max": worst("eps_end_to_end"),
            "eps_validation_record_max": worst("eps_validation_record")}


def headline(ranking: pd.DataFrame) -> pd.DataFrame:
    """The headline reading's rows (``end_to_end`` where present, else ``final_run``)."""
    if "privacy_reading" not in ranking.columns:
        return ranking
    reading = "end_to_end" if (ranking["privacy_reading"] == "end_to_end").any() else "final_run"
    return ranking[ranking["privacy_reading"] == reading].reset_index(drop=True)


def winner_changes(ranking: pd.DataFrame) -> pd.DataFrame:
    """Per data set: cells ranked under both readings, and how many change best mechanism between
    ``end_to_end`` and ``final_run`` (and how many change among the informative ones)."""
    cols = ["dataset", "cells", "changed", "informative_cells", "changed_informative"]
    if "privacy_reading" not in ranking.columns or ranking["privacy_reading"].nunique() < 2:
        return pd.DataFrame(columns=cols)
    key = [c for c in CELL if c != "dataset"]
    e2e = ranking[ranking["privacy_reading"] == "end_to_end"].set_index(["dataset", *key])
    fin = ranking[ranking["privacy_reading"] == "final_run"].set_index(["dataset", *key])
    both = e2e.merge(fin, how="inner", left_index=True, right_index=True, suffixes=("_e2e", "_final"))
    both["changed"] = both["best_mechanism_e2e"] != both["best_mechanism_final"]
    both["informative"] = ~(both["uninformative_e2e"] & both["uninformative_final"])
    out = both.reset_index().groupby("dataset").agg(
        cells=("changed", "size"), changed=("changed", "sum"), informative_cells=("informative", "sum"),
        changed_informative=("changed", lambda c: int((c & both.reset_index().loc[c.index, "informative"]).sum())))
    return out.reset_index()[cols]


def write(tables: Sequence[Path], metric: str, out: Path) -> pd.DataFrame:
    """Read the data sets' tables, rank every cell, write ``out`` (parquet, atomically)."""
    frame = ranking_table(read_tables(tables, every_protocol=True), metric)
    with io.atomic_path(out) as tmp:
        frame.to_parquet(tmp, index=False)
    return frame


def leaderboard(ranking: pd.DataFrame) -> pd.DataFrame:
    """Per mechanism over the cells of one reading of a :func:`ranking_table` (the headline when it
    holds several): cells, times best, times tied-best, mean rank, the share of cells best or tied
    (the sort key), and best in informative cells."""
    ranking = headline(ranking)
    cols = ["mechanism", "cells", "best", "best_or_tied", "share_best_or_tied", "mean_rank", "best_informative"]
    rows = []
    for r in ranking.itertuples():
        tied = set(r.tied.split(","))
        for rank, mech in enumerate(r.ranked.split(","), start=1):
            rows.append({"mechanism": mech, "rank": rank, "best": mech == r.best_mechanism, "tied": mech in tied,
                         "best_informative": mech == r.best_mechanism and not r.uninformative})
    if not rows:
        return pd.DataFrame(columns=cols)
    board = pd.DataFrame(rows).groupby("mechanism").agg(
        cells=("rank", "size"), best=("best", "sum"), best_or_tied=("tied", "sum"), mean_rank=("rank", "mean"),
        best_informative=("best_informative", "sum"))
    board["share_best_or_tied"] = board["best_or_tied"] / board["cells"]
    board = board.reset_index().sort_values(["share_best_or_tied", "mean_rank"], ascending=[False, True])
    return board[cols].reset_index(drop=True)
