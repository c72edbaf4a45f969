"""Report lines of the benchmark computed from the rows (spec E10)."""

from __future__ import annotations

import pandas as pd

from mpdp.studies.benchmark import registry, report


def _rows(mechs: list[str]) -> pd.DataFrame:
    spec = [registry.get(m) for m in mechs]
    return pd.DataFrame({"mechanism": mechs, "calibration": [m.calibration for m in spec],
                         "label": [m.label for m in spec], "privacy_unit": [m.privacy_unit for m in spec],
                         "public_data": [m.public_data for m in spec], "family": [m.family for m in spec]})


def test_calibration_note_names_pvp_bound_only_when_pvp_ran():
    note = report._calibration_notes(_rows(["dvp", "pvp", "wyx"]))
    assert "PVP" in note and "Δp/(1−r)" in note and "DVP" not in note
    assert report._calibration_notes(_rows(["dvp", "wyx"])) == ""
