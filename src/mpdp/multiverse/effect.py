"""Claim-level effect sizes of one universe and the cells an alternative changes (issue 48), from
the claims engine's own ``cells.parquet`` (issue 33 contract: one row per cell with ``estimate``,
``lo``, ``hi``, ``informative`` and ``cell_verdict``).

**The claim-level estimate** of a universe is defined once, here: the *median* of the estimates
of the claim's informative cells (those with a finite estimate), and as its interval the *range*
of those cells' intervals (the smallest ``lo`` to the largest ``hi``). It is on the claim's own
effect scale (verdicts.parquet ``effect_scale``); a claim without an informative cell has none
(NaN). It measures how far the evidence moves between universes (the specification curve,
:mod:`.curves`), apart from the verdict, which also depends on margins and power.

**A changed cell** is a cell of the claim that is present in one universe's table only, or whose
estimate, interval, informativeness or cell verdict differs (exactly: the runs are
bit-reproducible, so an untouched cell is identical). An alternative that changes no cell of a
claim cannot have tested it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: the claim key of the claims tables
KEYS = ["study", "claim_id", "reading"]
#: the columns of :func:`claim_estimates` besides :data:`KEYS`
ESTIMATE_COLUMNS = ["estimate", "lo", "hi"]
#: what makes one cell: its claim, its label and its data set
CELL_KEYS = [*KEYS, "cell", "dataset"]
#: the columns compared cell by cell
COMPARED = ["estimate", "lo", "hi", "informative", "cell_verdict"]


def claim_estimates(cells: pd.DataFrame) -> pd.DataFrame:
    """Per claim (:data:`KEYS`): the median estimate of its informative cells and the range of their
    intervals (``estimate``, ``lo``, ``hi``; NaN without an informative cell)."""
    rows = []
    for key, g in cells.groupby(KEYS, sort=False):
        est = pd.to_numeric(g["estimate"], errors="coerce").astype(float)
        used = g[g["informative"].fillna(False).astype(bool) & np.isfinite(est)]
        if used.empty:
            rows.append((*key, np.nan, np.nan, np.nan))
            continue
        lo = pd.to_numeric(used["lo"], errors="coerce").astype(float)
        hi = pd.to_numeric(used["hi"], errors="coerce").astype(float)
        rows.append((*key, float(np.median(used["estimate"].astype(float))),
                     float(lo.min()) if lo.notna().any() else np.nan,
                     float(hi.max()) if hi.notna().any() else np.nan))
    return pd.DataFrame(rows, columns=[*KEYS, *ESTIMATE_COLUMNS])


def _cell_frame(cells: pd.DataFrame) -> pd.DataFrame:
    out = cells[[*CELL_KEYS, *COMPARED]].copy()
    for col in CELL_KEYS:
        out[col] = out[col].astype("string").fillna("")
    for col in ("estimate", "lo", "hi"):
        out[col] = pd.to_numeric(out[col], errors="coerce").astype(float)
    out["informative"] = out["informative"].astype("boolean")
    out["cell_verdict"] = out["cell_verdict"].astype("string")
    return out


def _differs(a: pd.Series, b: pd.Series) -> pd.Series:
    """Element-wise difference where two missing values are equal."""
    both_missing = a.isna() & b.isna()
    return ~both_missing & (a.isna() | b.isna() | (a != b).fillna(True))


def changed_cells(default: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """Per claim of either cells table: ``n_cells_changed``, the number of its cells that differ
    between ``default`` and ``other`` (present in one of them only, or any of :data:`COMPARED`
    different)."""
    d, o = _cell_frame(default), _cell_frame(other)
    merged = d.merge(o, on=CELL_KEYS, how="outer", suffixes=("_d", "_o"), indicator=True)
    changed = merged["_merge"] != "both"
    for col in COMPARED:
        changed |= _differs(merged[f"{col}_d"], merged[f"{col}_o"]).astype(bool)
    merged["n_cells_changed"] = changed.astype(int)
    return merged.groupby(KEYS, sort=False, as_index=False)["n_cells_changed"].sum()
