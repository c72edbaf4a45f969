"""The forest plot of a claim (issue 46): every informative cell's estimate and interval against the
thresholds the claims engine tests, grouped by data set, the cells it does not score counted."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from mpdp.claims import declare, engine, forest, tables  # noqa: E402
from mpdp.figures import check  # noqa: E402

#: (dataset, cell, estimate, lo, hi, cell verdict)
CELLS = [("d1", "ε=1", 0.03, 0.02, 0.04, "for"), ("d1", "ε=2", -0.02, -0.03, -0.01, "against"),
         ("d1", "ε=4", 0.004, -0.01, 0.02, "underpowered"), ("d2", "ε=1", 0.05, 0.04, 0.06, "for"),
         ("d2", "ε=2", 0.0, float("nan"), float("nan"), "uninformative"),
         ("d3", "ε=1", float("nan"), float("nan"), float("nan"), "no_data")]


def _tables(reading: str = "paper") -> tuple[pd.DataFrame, pd.DataFrame]:
    cells = tables.cells_frame(pd.DataFrame([
        {"study": "s", "claim_id": "C1", "reading": reading, "cell": f"{ds}: {cell}", "dataset": ds,
         "informative": v != "uninformative", "estimate": e, "lo": lo, "hi": hi, "cell_verdict": v}
        for ds, cell, e, lo, hi, v in CELLS]))
    verdicts = tables.verdicts_frame(pd.DataFrame([{
        "study": "s", "claim_id": "C1", "reading": reading, "claim": "Method A is more accurate than B (all sets).",
        "source": "seed", "verdict": "MIXED", "n_cells": 6, "n_informative": 3, "n_for": 2, "n_against": 1,
        "where": "", "metric": "accuracy", "effect_scale": "difference", "summary": "mean", "margin": 0.005,
        "kind": "compare", "direction": "greater"}]))
    return cells, verdicts


def test_names_are_stable_file_stems_and_anchors():
    assert forest.name("wddp", "equal_privacy", "C1") == "forest_wddp_equal-privacy_c1"
    assert forest.name("ls", "-", "LS1-t") == "forest_ls_ls1-t"


@pytest.mark.parametrize(("kind", "direction"), [("compare", "greater"), ("compare", "less"),
                                                 ("compare", "equivalence"), ("bound", "less")])
def test_the_lines_drawn_are_the_thresholds_the_engine_tests(kind, direction):
    claim = declare.Claim(study="s", claim_id="X", text="t", source="seed", kind=kind, metric="accuracy",
                          methods=("a", "b") if kind == "compare" else ("a",), direction=direction, margin=0.01)
    tests_for, tests_against = engine._thresholds(claim)
    delta = claim.delta if kind != "bound" else 0.0
    drawn = {value for value, _ in forest.thresholds(kind, direction, 0.01, delta)}
    assert drawn - {0.0} == {value for value, _ in tests_for + tests_against}  # the lines the engine tests
    if kind != "bound":  # the practical margin on both sides (issue 59), from δ whatever the claim's margin
        assert {-claim.delta, claim.delta} <= drawn
        assert {-0.02, 0.02} <= {value for value, _ in forest.thresholds(kind, direction, 0.0, 0.02)}


def test_each_informative_cell_is_drawn_at_its_estimate_with_its_interval_by_data_set():
    cells, verdicts = _tables()
    fig = forest.figure(cells, verdicts.iloc[0])
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title(loc="left") for ax in axes] == ["d1 (3 informative cells)", "d2 (1 informative cell)"]
    points = np.vstack([c.get_offsets() for c in axes[0].collections if type(c).__name__ == "PathCollection"])
    np.testing.assert_allclose(sorted(points[:, 0]), sorted([0.03, -0.02, 0.004]))
    intervals = [seg for c in axes[0].collections if type(c).__name__ == "LineCollection" for seg in c.get_segments()]
    assert sorted((s[0][0], s[1][0]) for s in intervals) == sorted([(0.02, 0.04), (-0.03, -0.01), (-0.01, 0.02)])
    assert [t.get_text() for t in axes[0].get_yticklabels()] == ["ε=1", "ε=2", "ε=4"]  # top down; no data set
    head = fig._suptitle.get_text()
    assert "C1 (as printed): Method A is more accurate" in head
    assert "MIXED: 2 for, 1 against, 0 no effect, 1 underpowered of 4 informative cells" in head
    assert "not drawn: 1 uninformative, 1 without data" in head.replace("\n", " ")
    assert check.check(fig).problems == []


def test_a_study_gets_one_png_and_pdf_per_claim_and_reading(tmp_path, monkeypatch):
    monkeypatch.setenv(check.CHECK_ENV, "strict")  # every plot passes the layout check, or this raises
    cells, verdicts = _tables()
    cells_eq, verdicts_eq = _tables("equal_privacy")
    names = forest.write_study(pd.concat([cells, cells_eq]), pd.concat([verdicts, verdicts_eq]), "s", tmp_path)
    assert names == ["forest_s_paper_c1", "forest_s_equal-privacy_c1"]
    for stem in names:
        assert (tmp_path / f"{stem}.png").stat().st_size > 0
        assert (tmp_path / f"{stem}.pdf").read_bytes().startswith(b"%PDF")
    nothing = cells.assign(cell_verdict="uninformative")
    assert forest.write_study(nothing, verdicts, "s", tmp_path / "none") == ["forest_s_paper_c1"]


@pytest.mark.parametrize(("kind", "direction", "margin"), [("bound", "less", 0.05), ("compare", "equivalence", 0.15),
                                                          ("compare", "greater", 0.005)])
def test_the_legend_fits_the_figure_whatever_lines_it_names(kind, direction, margin):
    """Every verdict and threshold of the legend stays inside the figure: five columns of the longest
    labels ran past the edge ('allowed share above the bound', 'equivalence margin ±0.15')."""
    cells, verdicts = _tables()
    verdict = verdicts.iloc[0].copy()
    verdict["kind"], verdict["direction"], verdict["margin"] = kind, direction, margin
    fig = forest.figure(cells, verdict)
    (legend,) = fig.legends
    assert len(legend.get_texts()) == len(forest.DRAWN) + sum(1 for _, label in forest.thresholds(
        kind, direction, margin) if label)
    assert check.check(fig).problems == []


def test_the_margin_is_drawn_from_the_cells_delta_and_the_axis_says_which_side_favours_the_claim():
    """Issue 59: a claim with margin 0 still gets its practical margin ±δ (cells.parquet ``delta``), the
    x-axis says where a cell is for or against the claim, panels carry display names and the caption
    says what is drawn."""
    cells, verdicts = _tables()
    cells = cells.assign(dataset=cells["dataset"].replace({"d1": "adult", "d2": "kddcup99"}), delta=0.008)
    verdict = verdicts.iloc[0].copy()
    verdict["margin"] = 0.0
    fig = forest.figure(cells, verdict)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title(loc="left") for ax in axes] == ["Adult (3 informative cells)",
                                                         "KDDCup99 (1 informative cell)"]
    vertical = sorted({float(line.get_xdata()[0]) for line in axes[0].get_lines()})
    assert vertical == [-0.008, 0.0, 0.008]
    label = axes[-1].get_xlabel()
    assert "right of +0.008: for it" in label and "left of −0.008: against the claim" in label
    verdict["direction"] = "less"
    assert "left of −0.008: for the claim" in forest.figure(cells, verdict).axes[-1].get_xlabel()
    text = forest.caption(verdicts.iloc[0], cells)
    assert "(Adult, KDDCup99)" in text and "practical margin ±0.008 (dashed)" in text
    assert "Green circles: for the claim (2)" in text and "dark-yellow triangles: underpowered (1)" in text
    assert "adult" not in text and "Not drawn: 1 uninformative, 1 without data cells." in text
    assert check.check(fig).problems == []
