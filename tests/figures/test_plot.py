"""Rendering of the WD-DP figures (spec E3.4, bounds.md B9, B10) on synthetic tables."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mpdp.errors import InputDataError
from mpdp.figures import style
from mpdp.studies.wddp.figure_spec import FIGURES, OVERLAYS, VARIANTS
from mpdp.studies.wddp.figures import (
    noise_rows,
    overlay_label,
    overlay_lines,
    render_figure,
    render_noise_diagnostics,
    select_rows,
    sigma_ratio,
    table1_frame,
)


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def rendered(tmp_path_factory, tables, unavailable):
    """fig03 and fig12 rendered twice into separate folders."""
    out = {}
    for attempt in ("first", "second"):
        folder = tmp_path_factory.mktemp(attempt)
        for fig_id in ("fig03", "fig12"):
            png, pdf = folder / f"{fig_id}.png", folder / f"{fig_id}.pdf"
            out[(attempt, fig_id)] = (
                render_figure(fig_id, "", tables, png, pdf, unavailable),
                png,
                pdf,
            )
    return out


@pytest.mark.parametrize("fig_id", ["fig03", "fig12"])
def test_files_exist_and_are_byte_reproducible(rendered, fig_id):
    _, png1, pdf1 = rendered[("first", fig_id)]
    _, png2, pdf2 = rendered[("second", fig_id)]
    assert _png_size(png1) == (
        round(style.PANEL_FIGSIZE[0] * style.DPI),
        round(style.PANEL_FIGSIZE[1] * style.DPI),
    )
    assert pdf1.read_bytes()[:5] == b"%PDF-"
    assert png1.read_bytes() == png2.read_bytes()
    assert pdf1.read_bytes() == pdf2.read_bytes()
    pdf = pdf1.read_bytes()
    assert b"CreationDate" not in pdf and b"Matplotlib" not in pdf
    assert b"matplotlib" not in png1.read_bytes().lower()


def test_missing_data_sets_say_why(rendered):
    """Issue 46: a data set without raw data or not in this run gets no empty panel; the legend
    panel says why once. A data set of this run without runs keeps its panel with the message."""
    summary = rendered[("first", "fig03")][0]
    assert list(summary.panels) == ["kddcup99", "adult", "bank", "breast_cancer", "credit_card"]
    card = summary.panels["credit_card"]
    assert card.status == "unavailable" and card.texts == ()  # no axes drawn for it
    assert "Credit Card Fraud: raw data not available — see README" in card.message
    assert summary.panels["bank"].status == "empty"
    assert any("no results table" in t for t in summary.panels["bank"].texts)
    assert "not part of this run" in summary.panels["breast_cancer"].message
    assert summary.panels["breast_cancer"].texts == ()
    for ds in ("kddcup99", "adult"):
        panel = summary.panels[ds]
        assert panel.status == "plotted"
        assert panel.mechanisms == ("wddp", "jayaraman", "wyx")
        assert panel.n_runs == 3 * 2 * 3  # mechanisms × ε values × repetitions


def test_titles_legends_and_vacuous_bounds(rendered):
    fig03 = rendered[("first", "fig03")][0]
    assert (
        fig03.title.startswith("Fig. 3 (main")
        and "optimal gap vs privacy budget ε, m = 32" in fig03.title
    )
    assert "local_then_aggregate" in fig03.subtitle and "ma16" in fig03.subtitle
    legend = fig03.legend
    assert legend[:3] == tuple(style.mechanism_label(m) for m in ("wddp", "jayaraman", "wyx"))
    b1 = [label for label in legend if label.startswith("B1′ upper bound")]
    # the synthetic B1′ is far above ln 2 and identical for WD-DP and WYX: one merged, vacuous line
    assert b1 == ["B1′ upper bound (WD-DP/WYX; per-round theory) — vacuous, > ln 2 in every panel"]
    assert any(
        label.startswith("B3 bound (Jayaraman; per-round theory) — vacuous") for label in legend
    )
    assert any(
        label.startswith("B1‴ predicted noise floor") and "vacuous" not in label for label in legend
    )
    fig12 = rendered[("first", "fig12")][0]
    assert "B3 aggregation-bias floor b_F (Jayaraman)" in fig12.legend


def test_accuracy_figure_has_no_overlays(tmp_path, tables, unavailable):
    summary = render_figure(
        "fig01", "-pr", tables, tmp_path / "a.png", tmp_path / "a.pdf", unavailable
    )
    assert summary.legend == tuple(style.mechanism_label(m) for m in ("wddp", "jayaraman", "wyx"))
    assert "per_round" in summary.subtitle


def test_select_rows_follows_the_variant(tables):
    table = tables["adult"]
    main = select_rows(table, FIGURES["fig03"], VARIANTS[""])
    assert set(main["accountant"]) == {"ma16"}
    assert set(zip(main["mechanism"], main["mode"], strict=True)) == {
        ("wddp", "local_then_aggregate"),
        ("jayaraman", "local_then_aggregate"),
        ("wyx", "central"),
    }
    assert main.loc[main["mechanism"] == "wyx", "m"].isna().all()  # ε-sweep WYX has no m
    assert set(main.loc[main["mechanism"] != "wyx", "m"]) == {32}
    exact = select_rows(table, FIGURES["fig12"], VARIANTS["-exact"])
    assert set(exact["accountant"]) == {"exact"} and set(exact["m"]) == {16}
    assert set(exact["mechanism"]) == {"wddp", "jayaraman", "wyx"}  # u-sweep WYX carries m
    assert np.allclose(exact["epsilon"], 0.05) and sorted(exact["x"].unique()) == [1.0, 3.0]
    assert select_rows(table, FIGURES["fig14"], VARIANTS[""]).empty  # m = 32 u-sweep not run


def test_select_rows_refuses_duplicated_runs(tables):
    table = tables["adult"]
    doubled = pd.concat([table, table[table["mechanism"] == "wddp"]], ignore_index=True)
    with pytest.raises(InputDataError, match="appear more than once"):
        select_rows(doubled, FIGURES["fig03"], VARIANTS[""])


def test_overlay_lines_merge_only_identical_bounds(tables):
    rows = select_rows(tables["adult"], FIGURES["fig03"], VARIANTS["-pr"])
    lines = overlay_lines(rows, FIGURES["fig03"])
    b1 = [line for line in lines if line.overlay.key == "B1prime"]
    assert [line.mechanisms for line in b1] == [("wddp", "wyx")]
    changed = rows.copy()
    changed.loc[changed["mechanism"] == "wyx", "bound_gap"] *= 2  # e.g. another CV-chosen η
    b1 = [
        line for line in overlay_lines(changed, FIGURES["fig03"]) if line.overlay.key == "B1prime"
    ]
    assert [line.mechanisms for line in b1] == [("wddp",), ("wyx",)]
    label = overlay_label(OVERLAYS["B1prime"], ("wddp",), "per_round", [], 2)
    assert label == "B1′ upper bound (WD-DP)"  # per-round figures need no "per-round theory" note
    assert overlay_label(OVERLAYS["B3"], ("jayaraman",), "per_round", ["a"], 2).endswith(
        "vacuous, > ln 2 in panel a"
    )


def test_noise_diagnostics_ratio_matches_two_group_theory(tmp_path, tables, unavailable):
    summary = render_noise_diagnostics(
        tables, tmp_path / "n.png", tmp_path / "n.pdf", unavailable=unavailable
    )
    assert (tmp_path / "n.png").stat().st_size > 0 and (tmp_path / "n.pdf").stat().st_size > 0
    assert summary.panels["credit_card"].status == "unavailable"
    ratio = sigma_ratio(noise_rows(tables["kddcup99"], VARIANTS[""], "u_sweep"))
    assert sorted(ratio["u"]) == [1.0, 3.0]
    np.testing.assert_allclose(ratio["ratio"], (1 + ratio["u"]) / 2, rtol=1e-12)


def test_table1_uses_the_runs_settings(tables):
    frame = table1_frame(tables, epsilon=0.1)
    assert set(frame["dataset"]) == {"kddcup99", "adult"}
    assert len(frame) % 5 == 0  # five methods of Table 1 per setting
    eps_rows = frame[(frame["experiment"] == "eps_sweep") & (frame["dataset"] == "adult")]
    assert set(eps_rows["m"]) == {2, 32} and np.allclose(eps_rows["epsilon"], 0.1)
    assert set(eps_rows.loc[eps_rows["m"] == 32, "n_min"]) == {700 // 96}
    jay = frame[frame["method"] == "Jayaraman et al. 2018"]
    # with explicit constants WD-DP's computed advantage equals the paper's claimed factor
    np.testing.assert_allclose(jay["risk_factor"], jay["claimed_risk_factor"], rtol=1e-9)
    u = frame[(frame["experiment"] == "u_sweep") & (frame["method"] == "Jayaraman et al. 2018")]
    np.testing.assert_allclose(u["noise_factor"], (2 / (1 + u["u"])) ** 2, rtol=1e-9)


def test_reference_lines_are_floor_and_ceilings_from_the_table():
    from mpdp.studies.wddp.figures import REFERENCE_STYLES, accounted_ratios, reference_lines

    spec = FIGURES["fig01"]  # accuracy vs ε
    rows = pd.DataFrame({
        "x": [0.05, 0.05, 0.25, 0.25], "mechanism": ["wddp", "wyx", "wddp", "wyx"],
        "majority_rate": [0.75] * 4, "optimal_accuracy": [0.84, 0.84, 0.86, 0.86],
        "eps_accounted": [5.0, 0.01, 25.0, 0.06], "eps_claimed": [0.05, 0.05, 0.25, 0.25],
    })
    table = pd.DataFrame({
        "experiment": ["eps_sweep"] * 2 + ["u_sweep"], "mechanism": ["nonprivate"] * 3,
        "m": pd.array([None, None, 16], dtype="Int64"), "u": [None, None, 1.0],
        "accuracy": [0.80, 0.82, 0.5],
    })
    lines = reference_lines(table, rows, spec)
    floor, theta, gd = (lines[label] for label in REFERENCE_STYLES)
    assert floor.tolist() == [0.75, 0.75] and theta.tolist() == [0.84, 0.86]
    assert gd.tolist() == pytest.approx([0.81, 0.81])  # ε-sweep rows only
    assert accounted_ratios(rows) == pytest.approx({"wddp": 100.0, "wyx": 0.22})


def test_no_empty_panel_and_vacuous_bounds_do_not_squash_the_curves(tmp_path, tables, unavailable, monkeypatch):
    """Issue 46: the figure has one panel per data set of the run (three here, in a 2 × 2 grid with
    the legend panel: no empty cell), and a log panel's scale is its curves': the synthetic B1′ and B3
    bounds (far above ln 2) are marked at the top edge instead of stretching the axis."""
    import matplotlib

    from mpdp.figures import check
    from mpdp.studies.wddp import figures as wf

    captured = {}
    monkeypatch.setattr(wf, "save_figure", lambda fig, png, pdf: captured.setdefault("fig", fig))
    render_figure("fig03", "", tables, tmp_path / "f.png", tmp_path / "f.pdf", unavailable)
    fig = captured["fig"]
    assert len(fig.axes) == 4  # kddcup99, adult, bank (its message), the legend panel
    notes = " ".join(t.get_text() for ax in fig.axes for t in ax.texts).replace("\n", " ")
    assert notes.count("Credit Card Fraud: raw data not available") == 1
    for ax in fig.axes[:2]:
        curves = [line for line in ax.get_lines() if line.get_marker() == "o"]
        top = max(float(np.nanmax(line.get_ydata())) for line in curves)
        assert ax.get_ylim()[1] <= max(top, 0.7) * wf.OFF_SCALE_HEADROOM * 1.5  # runs scatter above the mean
        marks = [line for line in ax.get_lines() if line.get_marker() == "^"]
        assert marks and all(np.all(np.asarray(m.get_ydata()) < ax.get_ylim()[1]) for m in marks)
    labels = [t.get_text().replace("\n", " ") for t in fig.axes[3].get_legend().get_texts()]
    assert wf.OFF_SCALE_LABEL in labels
    assert check.check(fig).problems == []
    matplotlib.pyplot.close("all")


def test_noise_diagnostics_have_no_column_for_a_data_set_without_runs(tmp_path, tables, unavailable, monkeypatch):
    from mpdp.figures import check
    from mpdp.studies.wddp import figures as wf

    captured = {}
    monkeypatch.setattr(wf, "save_figure", lambda fig, png, pdf: captured.setdefault("fig", fig))
    summary = render_noise_diagnostics(tables, tmp_path / "n.png", tmp_path / "n.pdf", unavailable=unavailable)
    fig = captured["fig"]
    plotted = [ds for ds, p in summary.panels.items() if p.status == "plotted"]
    assert plotted == ["kddcup99", "adult"] and len(fig.axes) == 3 * len(plotted) + 1
    notes = " ".join(t.get_text() for t in fig.axes[-1].texts).replace("\n", " ")
    assert "Credit Card Fraud: raw data not available" in notes and "Bank Marketing" in notes
    assert check.check(fig).problems == []
