"""Which mechanism is best in each cell of the benchmark grid (spec experiments.md E10 "Ranking").

In each cell (data set, ε, m, u) the best mechanism is the one with the highest mean test
accuracy over repetitions; a competitor is *tied* with it when it is not significantly worse:
one-sided paired t-test of accuracy(best) − accuracy(competitor) over the repetitions (rep r of
every mechanism uses the same data split and partition), p-values Holm-corrected within the
cell at level :data:`ALPHA`. The non-private reference is not a competitor.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from mpdp.studies.benchmark.schema import CELL, MECHANISMS

ALPHA = 0.05
#: mechanisms excluded from the ranking (references, not competitors)
REFERENCES = tuple(m.id for m in MECHANISMS if m.family == "reference")
#: columns of :func:`cell_ranking`
COLUMNS = [*CELL, "mechanism", "mean_accuracy", "n_reps", "rank", "best", "p_value", "p_holm", "tied"]


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
    """One-sided p-value of "``other`` is worse than ``best``" (paired t-test over repetitions).

    Identical columns (all differences 0) give p = 1: no evidence of a difference. Fewer than
    two pairs give p = 1 too (no test possible).
    """
    diff = np.asarray(best, dtype=float) - np.asarray(other, dtype=float)
    if len(diff) < 2 or not diff.any():
        return 1.0
    if np.all(diff == diff[0]):  # constant non-zero shift: zero variance, certain sign
        return 0.0 if diff[0] > 0 else 1.0
    return float(stats.ttest_rel(best, other, alternative="greater").pvalue)


def _rank_cell(cell: pd.DataFrame) -> pd.DataFrame:
    wide = cell.pivot_table(index="rep", columns="mechanism", values="accuracy", aggfunc="mean")
    wide = wide.dropna(axis=0, how="any")  # pair on the repetitions every mechanism has
    means = wide.mean().sort_values(ascending=False, kind="stable")
    best = str(means.index[0])
    others = [m for m in means.index if m != best]
    p = np.array([paired_worse_p(wide[best].to_numpy(), wide[m].to_numpy()) for m in others])
    p_holm = holm(p) if len(p) else p
    rows = [{"mechanism": best, "mean_accuracy": float(means[best]), "p_value": np.nan, "p_holm": np.nan,
             "best": True, "tied": True}]
    for m, pv, ph in zip(others, p, p_holm, strict=True):
        rows.append({"mechanism": m, "mean_accuracy": float(means[m]), "p_value": float(pv),
                     "p_holm": float(ph), "best": False, "tied": bool(ph >= ALPHA)})
    out = pd.DataFrame(rows)
    out["n_reps"] = len(wide)
    out["rank"] = np.arange(1, len(out) + 1)
    return out


def cell_ranking(table: pd.DataFrame) -> pd.DataFrame:
    """One row per (cell, competing mechanism): mean accuracy, rank, best, tied (:data:`COLUMNS`)."""
    runs = table[~table["mechanism"].isin(REFERENCES)]
    frames = []
    for key, cell in runs.groupby(CELL, sort=True, dropna=False):
        ranked = _rank_cell(cell)
        for col, value in zip(CELL, key, strict=True):
            ranked[col] = value
        frames.append(ranked)
    if not frames:
        return pd.DataFrame(columns=COLUMNS)
    return pd.concat(frames, ignore_index=True)[COLUMNS]


def leaderboard(ranking: pd.DataFrame) -> pd.DataFrame:
    """Per mechanism over all cells: cells, times best, times tied-best, mean rank, and the
    share of cells in which it is best or tied (the leaderboard's sort key)."""
    if ranking.empty:
        return pd.DataFrame(columns=["mechanism", "cells", "best", "best_or_tied", "share_best_or_tied",
                                     "mean_rank"])
    board = ranking.groupby("mechanism").agg(
        cells=("rank", "size"), best=("best", "sum"), best_or_tied=("tied", "sum"), mean_rank=("rank", "mean"))
    board["share_best_or_tied"] = board["best_or_tied"] / board["cells"]
    board = board.reset_index().sort_values(["share_best_or_tied", "mean_rank"], ascending=[False, True])
    return board[["mechanism", "cells", "best", "best_or_tied", "share_best_or_tied", "mean_rank"]].reset_index(
        drop=True)
