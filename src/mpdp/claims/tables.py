"""The claims tables (issue 33 contract): ``data/results/claims/{cells,verdicts}.parquet``.

Written by the rules of ``workflow/rules/claims.smk`` (target ``claims``) and read by the report,
the notebooks and the tests through :func:`read_cells` / :func:`read_verdicts`, which check the
columns and name the rebuild command. :func:`paper_order` is the one place that orders a paper's
claims for a summary: a claim that FAILS or is MIXED anywhere comes before any HOLDS (no majority
vote over data sets: a claim's verdict already spans all its cells).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mpdp import results
from mpdp.errors import InputDataError
from mpdp.io import atomic_path

CELLS_PATH = "data/results/claims/cells.parquet"
VERDICTS_PATH = "data/results/claims/verdicts.parquet"

#: cells.parquet: required column -> dtype (then the optional ones)
CELL_COLUMNS: dict[str, str] = {
    "study": "string", "claim_id": "string", "reading": "string", "cell": "string", "dataset": "string",
    "informative": "bool", "estimate": "float64", "lo": "float64", "hi": "float64", "cell_verdict": "string",
}
CELL_OPTIONAL: dict[str, str] = {"n_reps": "int64", "p_value": "float64", "p_holm": "float64", "note": "string",
                                 "slack": "float64", "reason": "string", "at_chance": "string",
                                 "guard_margin": "float64", "guard_rule": "string", "resolution": "float64", "p_equiv": "float64",
                                 "p_equiv_holm": "float64", "mde": "float64", "delta": "float64",
                                 "reps_needed": "float64", "identical": "bool", "family": "int64"}

#: verdicts.parquet: required column -> dtype (then the optional ones)
VERDICT_COLUMNS: dict[str, str] = {
    "study": "string", "claim_id": "string", "reading": "string", "claim": "string", "source": "string",
    "verdict": "string", "n_cells": "int64", "n_informative": "int64", "n_for": "int64", "n_against": "int64",
    "where": "string",
}
VERDICT_OPTIONAL: dict[str, str] = {"metric": "string", "effect_scale": "string", "summary": "string",
                                    "margin": "float64", "kind": "string", "direction": "string",
                                    "reason": "string", "delta": "float64", "mde": "float64",
                                    "reps_needed": "float64", "equivalence": "string", "n_no_effect": "int64",
                                    "n_underpowered": "int64", "n_identical": "int64", "guarded": "string",
                                    "guard_rule": "string", "n_uninformative": "int64", "n_no_data": "int64",
                                    "margin_reason": "string", "hedge": "string", "family": "int64"}

#: claim verdicts, worst first (the display order of the contract)
VERDICT_ORDER: tuple[str, ...] = ("FAILS", "MIXED", "VACUOUS", "IDENTICAL", "UNDERPOWERED", "UNINFORMATIVE",
                                  "HOLDS")
CELL_VERDICTS: tuple[str, ...] = ("for", "against", "no_effect", "underpowered", "identical", "uninformative",
                                  "no_data")
#: the words of a non-decisive verdict's ``reason`` (verdicts.parquet; the report quotes them)
REASONS: tuple[str, ...] = ("at chance", "reference unconverged", "identical by construction", "underpowered",
                            "no effect beyond margin", "no data")

REBUILD = "snakemake --cores all claims"

#: reading id -> its plain name in the report and the figures (issue 46); unknown readings are shown
#: with their underscores as spaces, a study's only reading ("-") as nothing
READING_NAMES: dict[str, str] = {
    "paper": "as printed", "paper's reading": "as printed",
    "eq": "equal privacy", "equal_privacy": "equal privacy",
    "per_round": "per-round privacy", "end_to_end": "end to end", "final_run": "final run only",
    "-": "", "": "",
}


def reading_label(reading: str) -> str:
    """The plain name of a reading (:data:`READING_NAMES`; empty for a study's only reading)."""
    return READING_NAMES.get(str(reading), str(reading).replace("_", " "))


def _conform(frame: pd.DataFrame, required: dict[str, str], optional: dict[str, str]) -> pd.DataFrame:
    out = frame.copy()
    for col in required:
        if col not in out:
            out[col] = pd.NA
    cols = [*required, *[c for c in optional if c in out]]
    out = out[cols]
    return out.astype({c: t for c, t in {**required, **optional}.items() if c in out})


def cells_frame(cells: pd.DataFrame) -> pd.DataFrame:
    """The engine's cells (:func:`mpdp.claims.engine.evaluate`) in the contract's columns."""
    return _conform(cells, CELL_COLUMNS, CELL_OPTIONAL)


def verdicts_frame(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The engine's verdicts (:func:`mpdp.claims.engine.verdicts`) in the contract's columns."""
    return _conform(verdicts, VERDICT_COLUMNS, VERDICT_OPTIONAL)


def write(frame: pd.DataFrame, path: str | Path) -> None:
    """Write a claims table atomically (:func:`mpdp.io.atomic_path`)."""
    with atomic_path(path) as tmp:
        frame.to_parquet(tmp, index=False)


def _read(path: str | Path, required: dict[str, str], what: str) -> pd.DataFrame:
    path = Path(path)
    frame = results.read_parquet(path, what)  # missing or damaged: one line naming the rebuild
    missing = [c for c in required if c not in frame]
    if missing:
        raise InputDataError(f"{path} is not a {what} table (missing columns {missing}): rebuild it with "
                             f"`{REBUILD}`")
    return frame


def read_cells(path: str | Path = CELLS_PATH) -> pd.DataFrame:
    """cells.parquet, its columns checked (:class:`mpdp.errors.InputDataError` names the rebuild)."""
    return _read(path, CELL_COLUMNS, "claims cells")


def read_verdicts(path: str | Path = VERDICTS_PATH) -> pd.DataFrame:
    """verdicts.parquet, its columns checked (:class:`mpdp.errors.InputDataError` names the rebuild)."""
    return _read(path, VERDICT_COLUMNS, "claims verdicts")


def paper_order(verdicts: pd.DataFrame) -> pd.DataFrame:
    """A paper's verdict rows ordered worst first (:data:`VERDICT_ORDER`), declaration order within.

    Every FAILS and MIXED claim is listed before any HOLDS: the summary never takes a majority.
    """
    rank = {v: i for i, v in enumerate(VERDICT_ORDER)}
    out = verdicts.reset_index(drop=True)
    key = out["verdict"].map(lambda v: rank.get(str(v), len(rank)))
    return out.iloc[sorted(range(len(out)), key=lambda i: (key.iloc[i], i))].reset_index(drop=True)


def verdict_counts(verdicts: pd.DataFrame) -> dict[str, int]:
    """Number of claims per verdict, in :data:`VERDICT_ORDER`."""
    counts = verdicts["verdict"].value_counts()
    return {v: int(counts.get(v, 0)) for v in VERDICT_ORDER}
