"""The report's view of the claims tables (issue 33): every section reads verdicts.parquet and
cells.parquet (:mod:`mpdp.claims.tables`) and computes no statistic of its own.

* :func:`load`: the tables and the verdict maps from the report context key ``claims``;
* :func:`study_readings`: a study's verdict rows per reading (what ``StudySection.claims_tables`` holds);
* :func:`verdict_table` / :func:`significant_cells`: display tables of verdicts and of the cells
  that decided them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from mpdp.claims import forest, tables
from mpdp.report import names, verdicts

#: display columns of a verdict row
VERDICT_DISPLAY: dict[str, str] = {
    "claim_id": "id", "claim": "claim", "hedge": "the paper's own hedge", "verdict": "verdict", "reason": "reason",
    "n_cells": "cells", "n_informative": "can decide", "n_for": "for", "n_against": "against",
    "n_no_effect": "no effect", "n_underpowered": "underpowered", "n_uninformative": "uninformative",
    "n_no_data": "no data", "delta": "margin ±δ",
    "mde": "mde (median)", "equivalence": "equivalence (TOST)", "guard_rule": "above chance by",
    "where": "where", "source": "source",
}


@dataclass(frozen=True)
class ClaimsTables:
    """verdicts.parquet, cells.parquet, the verdict maps (study -> PNG path) and the folders of
    forest plots (study -> folder of :func:`mpdp.claims.forest.write_study`)."""

    verdicts: pd.DataFrame
    cells: pd.DataFrame
    maps: dict[str, str] = field(default_factory=dict)
    forests: dict[str, str] = field(default_factory=dict)

    def forest_png(self, study: str, reading: str, claim_id: str) -> str | None:
        """The PNG of a claim's forest plot in this build (None: not drawn)."""
        folder = self.forests.get(study)
        if not folder:
            return None
        png = Path(folder) / f"{forest.name(study, reading, claim_id)}.png"
        return str(png) if png.is_file() else None

    def forest_anchor(self, study: str, reading: str, claim_id: str) -> str | None:
        """The report anchor of a claim's forest plot (None: not drawn), for the matrix's cells."""
        if self.forest_png(study, reading, claim_id) is None:
            return None
        return f"fig-{forest.name(study, reading, claim_id)}"


EMPTY = ClaimsTables(pd.DataFrame(columns=list(tables.VERDICT_COLUMNS)), pd.DataFrame(columns=list(tables.CELL_COLUMNS)))


def load(ctx: Mapping[str, Any] | None) -> ClaimsTables:
    """The claims tables named by the report context (empty tables when the build has none)."""
    if not ctx or not ctx.get("verdicts"):
        return EMPTY
    maps = {s: p for s, p in (ctx.get("maps") or {}).items() if p and Path(p).is_file()}
    forests = {s: p for s, p in (ctx.get("forests") or {}).items() if p and Path(p).is_dir()}
    cells = tables.read_cells(ctx["cells"])
    # every count of a verdict's composition, counted from the cells where verdicts.parquet lacks it
    return ClaimsTables(verdicts.with_composition(tables.read_verdicts(ctx["verdicts"]), cells), cells, maps, forests)


def forest_caption(claims: ClaimsTables, row: pd.Series) -> str:
    """The caption of a claim's forest plot, generated from what it draws (:func:`mpdp.claims.forest.caption`)."""
    cells = claims.cells[(claims.cells["study"] == row["study"]) & (claims.cells["claim_id"] == row["claim_id"])
                         & (claims.cells["reading"] == row["reading"])]
    return forest.caption(row, cells)


def forest_items(claims: ClaimsTables, study: str) -> list[tuple[str, str, str]]:
    """(name, PNG path, caption) of every forest plot of ``study`` in this build, in verdict order."""
    out = []
    for _, row in claims.verdicts[claims.verdicts["study"] == study].iterrows():
        png = claims.forest_png(study, str(row["reading"]), str(row["claim_id"]))
        if png:
            out.append((forest.name(study, str(row["reading"]), str(row["claim_id"])), png,
                        forest_caption(claims, row)))
    return out


def study_readings(claims: ClaimsTables, study: str, names: Mapping[str, str] | None = None,
                   figures: Mapping[str, str] | None = None) -> dict[str, pd.DataFrame]:
    """Reading label -> the study's verdict rows of that reading (declaration order).

    ``names`` maps a reading id to its label (default: the id; "-" becomes ""), and only the
    readings it names are kept when given; ``figures`` adds a ``figures`` column (claim id ->
    the figures it concerns) for the sections that link claims to figures.
    """
    rows = claims.verdicts[claims.verdicts["study"] == study]
    out: dict[str, pd.DataFrame] = {}
    for reading in dict.fromkeys(rows["reading"]):
        if names is not None and reading not in names:
            continue
        part = rows[rows["reading"] == reading].reset_index(drop=True)
        if figures is not None:
            part = part.assign(figures=part["claim_id"].map(lambda c: figures.get(str(c), "")))
        label = names[reading] if names is not None else ("" if reading == "-" else str(reading))
        out[label] = part
    return out


def verdict_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Verdict rows for display: id, claim, verdict, its reason, cells, informative, for, against, the practical
    margin ±δ, the median minimum detectable effect, the equivalence test's result, where, source."""
    if rows.empty:
        return pd.DataFrame(columns=list(VERDICT_DISPLAY.values()))
    rows = verdicts.with_composition(rows)
    out = rows[[c for c in VERDICT_DISPLAY if c in rows]].copy()
    if "hedge" in out and not out["hedge"].astype(str).str.strip().any():
        out = out.drop(columns="hedge")
    out.insert(out.columns.get_loc("verdict") + 1, "in words", [verdicts.support(r) for r in rows.itertuples()])
    for col in ("reason", "where", "guard_rule", "equivalence"):
        if col in out:
            out[col] = [names.prose(str(t), str(v)) if pd.notna(t) else ""
                        for t, v in zip(out[col], rows["verdict"], strict=True)]
    for col in ("delta", "mde"):
        if col in out:
            out[col] = out[col].map(lambda v: f"{v:.2g}" if pd.notna(v) else "—")
    return out.rename(columns=VERDICT_DISPLAY).reset_index(drop=True)


def significant_cells(claims: ClaimsTables, study: str, reading: str | None = None,
                      limit: int = 40) -> pd.DataFrame:
    """The cells that decided the study's verdicts (for, against, or no effect beyond the margin), estimate
    with its interval."""
    c = claims.cells[(claims.cells["study"] == study)
                     & claims.cells["cell_verdict"].isin(["for", "against", "no_effect"])]
    if reading is not None:
        c = c[c["reading"] == reading]
    if c.empty:
        return pd.DataFrame(columns=["id", "reading", "data set", "cell", "estimate [95 % CI]", "cell verdict"])
    shown = c.head(limit)
    return pd.DataFrame({
        "id": shown["claim_id"], "reading": shown["reading"].map(names.reading),
        "data set": shown["dataset"].map(names.dataset), "cell": shown["cell"].map(names.prose),
        "estimate [95 % CI]": [f"{e:+.3g} [{lo:+.3g}, {hi:+.3g}]" for e, lo, hi in
                               zip(shown["estimate"], shown["lo"], shown["hi"], strict=True)],
        "cell verdict": shown["cell_verdict"].map(names.reason),
        "p (Holm)": shown["p_holm"].map(lambda p: f"{p:.2g}") if "p_holm" in shown else "",
    }).reset_index(drop=True)
