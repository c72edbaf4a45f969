"""The verdict map of a study (issue 33, item 7): one row per claim and reading, one panel per data set,
every cell coloured by its verdict."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from mpdp.claims import maps
from mpdp.figures import check


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
    assert labels[0].startswith("A — MIXED (2 for, 1 against, 3/4 informative)")
    assert labels[1].startswith("B — UNINFORMATIVE (0 for, 0 against, 1/2 informative)")
    code = {v: c for v, (c, _, _) in maps.COLOURS.items()}
    np.testing.assert_array_equal(mats["d1"], [[code["for"], code["for"], code["against"]],
                                               [code["uninformative"], code["underpowered"], np.nan]])
    np.testing.assert_array_equal(mats["d2"], [[code["no_data"]], [np.nan]])
    assert set(mats) == {"d1", "d2"}  # the other study's cells are not drawn


def test_the_map_is_written_as_png_and_pdf_and_passes_the_layout_check(tmp_path, monkeypatch):
    """Issue 46: the map has its PDF, and its text is legible at the report's width (the layout check
    that save_figure runs raises in strict mode)."""
    monkeypatch.setenv(check.CHECK_ENV, "strict")
    maps.write(_cells(), "s", tmp_path / "map.png", tmp_path / "map.pdf")
    image = Image.open(tmp_path / "map.png")
    assert image.format == "PNG" and image.size[0] > 500
    assert (tmp_path / "map.pdf").read_bytes().startswith(b"%PDF")
    maps.write(_cells(), "absent", tmp_path / "none.png", tmp_path / "none.pdf")  # no cells: a message
    assert (tmp_path / "none.png").stat().st_size > 0


def test_a_map_of_many_cells_and_long_labels_stays_legible():
    """The widest map (120 cells of a claim, four data sets) keeps its text at least 80 % of the
    report's body text where it is shown, and nothing is cut."""
    many = pd.DataFrame([{"study": "s", "claim_id": f"C{c}", "reading": "equal_privacy", "cell": f"ε={i}",
                          "dataset": f"data set {i % 4}", "informative": True, "estimate": 0.0, "lo": 0.0,
                          "hi": 0.0, "cell_verdict": "for"} for c in range(8) for i in range(120)])
    verdicts = pd.DataFrame({"study": "s", "claim_id": [f"C{c}" for c in range(8)], "reading": "equal_privacy",
                             "verdict": "INCONCLUSIVE"})
    fig = maps.figure(many, "s", verdicts)
    assert check.check(fig).problems == []
    assert "C0 · equal privacy — INCONCLUSIVE" in fig.axes[0].get_yticklabels()[0].get_text()


def test_the_written_map_names_its_study_in_the_title(tmp_path, monkeypatch):
    """Issue 59: a map says which paper it belongs to; the workflow passes the study's registry name."""
    seen = {}
    real = maps.figure

    def spy(*args, **kwargs):
        fig = real(*args, **kwargs)
        seen["title"] = fig._suptitle.get_text()
        return fig

    monkeypatch.setattr(maps, "figure", spy)
    maps.write(_cells(), "s", tmp_path / "map.png", tmp_path / "map.pdf", title=maps.study_title("Paper X"))
    assert seen["title"].startswith("Paper X: every cell of every claim")
    script = (Path(__file__).resolve().parents[2] / "workflow" / "scripts" / "claims_map.py").read_text()
    assert "title=maps.study_title(registry.get(study).name)" in script
