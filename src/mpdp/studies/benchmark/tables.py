"""Reading the benchmark's tables (spec E10): the per-data-set results tables and the ranking.

Read by the figures, the ranking, the report section and the claims engine; damaged files are a
one-line error naming the file and the rebuild command (:func:`mpdp.results.read_parquet`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from mpdp import results
from mpdp.errors import InputDataError
from mpdp.studies.benchmark.schema import EXTRA_COLUMNS


def read_tables(paths: Sequence[Path | str], every_protocol: bool = False) -> pd.DataFrame:
    """The benchmark tables of the data sets, concatenated (schema-checked on read).

    By default only the headline selection protocol's rows (:func:`headline_rows`: the figures and
    the report's sweeps show the end-to-end reading); ``every_protocol`` keeps every protocol's
    rows (the ranking ranks each).
    """
    frames = [results.read(p, extra=_extra(p)) for p in paths]
    if not frames:
        raise InputDataError("no benchmark tables to plot")
    table = pd.concat(frames, ignore_index=True)
    return table if every_protocol else headline_rows(table)


def headline_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of the headline protocol: every non-``oracle`` row if any, else the oracle rows."""
    if "selection" not in table.columns or not (table["selection"] != "oracle").any():
        return table
    return table[table["selection"] != "oracle"].reset_index(drop=True)


def _extra(path: Path | str) -> dict[str, str]:
    """The benchmark's extra columns plus whatever further columns the table carries."""
    columns = results.read_parquet(path, "benchmark table").columns
    extra = dict(EXTRA_COLUMNS)
    for col in columns:
        if col not in results.COLUMNS and col not in extra:
            extra[col] = "object"
    return extra


def read_ranking(path: str | Path) -> pd.DataFrame:
    """The per-cell ranking table (data/results/benchmark/ranking.parquet); a damaged file is a
    one-line error naming it and the rebuild command (:func:`mpdp.results.read_parquet`)."""
    return results.read_parquet(path, "benchmark ranking table")
