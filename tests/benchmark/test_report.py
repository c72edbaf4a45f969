"""Report lines of the benchmark computed from the rows (spec E10)."""

from __future__ import annotations

import pandas as pd

from mpdp.studies.benchmark import report
from mpdp.studies.benchmark.schema import MECHANISM_BY_ID


def _rows(mechs: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"mechanism": mechs, "calibration": [MECHANISM_BY_ID[m].calibration for m in mechs]})


def test_calibration_note_names_pvp_bound_only_when_pvp_ran():
    note = report._calibration_notes(_rows(["dvp", "pvp", "wyx"]))
    assert "PVP" in note and "Δp/(1−r)" in note and "DVP" not in note
    assert report._calibration_notes(_rows(["dvp", "wyx"])) == ""
