"""The verdict map of a study (issue 33, item 7): one row per claim and reading, one panel per data set,
every cell coloured by its verdict."""

from __future__ import annotations

import numpy as np
import pandas as pd
from PIL import Image

from mpdp.claims import maps


def _cells() -> pd.DataFrame:
    rows = []
    for cid, verdicts in (("A", ["for", "for", "against"]), ("B", ["uninformative", "underpowered"])):
        for i, v in enumerate(verdicts):
            rows.append({"study": "s", "claim_id": cid, "reading": "-", "cell": f"k={i}", "dataset": "d1",
                         "informative": v != "uninformative", "estimate": 0.0, "lo": 0.0, "hi": 0.0,
                         "cell_verdict": v})
    rows.append({"study": "s", "claim_id": "A", "reading": "-", "cell": "k=0", "dataset": "d2", "informative": True,
                 "estimate": 0.0, "lo": 0.0, "hi": 0.0, "cell_verdict": "no_data"})
    rows.append({"study": "other", "claim_id": "Z", "reading": "-", "cell": "k=0", "dataset": "d1",
                 "informative": True, "estimate": 0.0, "lo": 0.0, "hi": 0.0, "cell_verdict": "for"})
    return pd.DataFrame(rows)


def test_matrices_code_every_cell_of_the_study_by_dataset():
    verdicts = pd.DataFrame({"study": ["s", "s"], "claim_id": ["A", "B"], "reading": ["-", "-"],
                             "verdict": ["MIXED", "UNINFORMATIVE"]})
    labels, mats = maps.matrices(_cells(), "s", verdicts)
    assert labels[0].startswith("A — MIXED  (2 for, 1 against, 3/4 informative)")
    assert labels[1].startswith("B — UNINFORMATIVE  (0 for, 0 against, 1/2 informative)")
    code = {v: c for v, (c, _, _) in maps.COLOURS.items()}
    np.testing.assert_array_equal(mats["d1"], [[code["for"], code["for"], code["against"]],
                                               [code["uninformative"], code["underpowered"], np.nan]])
    np.testing.assert_array_equal(mats["d2"], [[code["no_data"]], [np.nan]])
    assert set(mats) == {"d1", "d2"}  # the other study's cells are not drawn


def test_the_map_is_written_as_a_png(tmp_path):
    maps.write(_cells(), "s", tmp_path / "map.png")
    image = Image.open(tmp_path / "map.png")
    assert image.format == "PNG" and image.size[0] > 500
    maps.write(_cells(), "absent", tmp_path / "none.png")  # a study without cells: a message, not an error
    assert (tmp_path / "none.png").stat().st_size > 0
