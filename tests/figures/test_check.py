"""The figure layout check (issue 35): boxes over data, cut text and small text are found."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from mpdp.figures import check, plot  # noqa: E402


def _figure(legend_loc: str, fontsize: float = 11.0, width: float = 8.0):
    fig, ax = plt.subplots(figsize=(width, 4))
    x = np.linspace(0, 1, 30)
    ax.plot(x, np.full_like(x, 0.9), label="a line near the top")
    ax.plot(x, 0.1 + 0.0 * x, label="a line near the bottom")
    ax.set_ylim(0, 1)
    ax.legend(loc=legend_loc, fontsize=fontsize)
    ax.set_title("title", fontsize=fontsize)
    ax.tick_params(labelsize=fontsize)
    ax.xaxis.label.set_fontsize(fontsize)
    return fig, ax


def test_a_legend_over_a_line_is_found_and_one_in_empty_space_is_not():
    fig, _ = _figure("upper center")
    problems = check.check(fig).problems
    assert any("legend covers" in p for p in problems), problems
    fig, _ = _figure("center")  # between the two lines: covers nothing
    assert check.check(fig).problems == []
    plt.close("all")


def test_an_annotation_box_over_a_marker_is_found():
    fig, ax = _figure("center")
    ax.scatter([0.5], [0.75])
    ax.text(0.5, 0.75, "ε accounted = 3", bbox={"facecolor": "white"}, ha="center", va="center", fontsize=11)
    assert any("box 'ε accounted = 3' covers" in p for p in check.check(fig).problems)
    plt.close("all")


def test_text_cut_at_the_edge_and_text_too_small_are_found():
    fig, ax = _figure("center")
    ax.set_ylabel("a label")
    fig.text(0.99, 0.5, "a long right-hand label that runs out", fontsize=11)
    assert any("cut at the figure's edge" in p for p in check.check(fig).problems)
    fig, _ = _figure("center", fontsize=5.0)
    layout = check.check(fig)
    assert any("smallest text 5 pt" in p for p in layout.problems), layout
    # a wide figure is shrunk into the report's column: the same font becomes too small
    fig, _ = _figure("center", fontsize=9.0, width=8.0)
    assert check.check(fig).problems == []
    fig, _ = _figure("center", fontsize=9.0, width=16.0)
    assert any("smallest text 9 pt" in p for p in check.check(fig).problems)
    plt.close("all")


def test_save_figure_refuses_a_bad_layout_when_strict(tmp_path, monkeypatch):
    fig, _ = _figure("upper center")
    monkeypatch.setenv(check.CHECK_ENV, "strict")
    with pytest.raises(check.FigureLayoutError, match="legend covers"):
        plot.save_figure(fig, tmp_path / "f.png", tmp_path / "f.pdf")
    assert not (tmp_path / "f.png").exists()
    monkeypatch.setenv(check.CHECK_ENV, str(tmp_path / "records"))
    plot.save_figure(fig, tmp_path / "f.png", tmp_path / "f.pdf")
    assert "legend covers" in (tmp_path / "records" / "f.json").read_text()
    plt.close("all")


def test_a_note_written_over_a_legend_is_found():
    fig, ax = _figure("center")
    ax.text(0.5, 0.5, "a note in the middle", transform=ax.transAxes, ha="center", fontsize=11)
    assert any("overlaps a legend" in p for p in check.check(fig).problems)
    plt.close("all")


def test_a_figure_jobs_warnings_go_to_its_log_without_the_machine_path(capsys):
    """Issue 46: a warning of the figure code is written to the job's log (file name, no folder),
    not to the console (and so never into a report)."""
    import logging
    import warnings

    records: list[str] = []
    log = logging.getLogger("test-figure-job")
    log.propagate = False
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())  # type: ignore[method-assign]
    log.addHandler(handler)

    def step(log):
        warnings.warn("a glyph is missing", UserWarning, stacklevel=1)

    plot.logged_warnings(step)(log)
    assert len(records) == 1 and records[0].startswith("test_check.py:") and "a glyph is missing" in records[0]
    assert "/" not in records[0].split(":")[0]
    assert "a glyph is missing" not in capsys.readouterr().err


def test_labels_written_over_each_other_are_found():
    """Issue 46: noise_diagnostics' x-labels ran into their neighbours' on the full config."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(13, 4))
    for ax in fig.subplots(1, 6):
        ax.plot([1, 3], [1, 2])
        ax.set_xlabel("size unevenness u = n_max/n_min")
    problems = check.check(fig).problems
    assert any("'size unevenness u = n_max/n_min' overlaps 'size unevenness" in p for p in problems), problems
    fig = Figure(figsize=(13, 4), layout="constrained")
    for ax in fig.subplots(1, 3):
        ax.plot([1, 3], [1, 2])
        ax.set_xlabel("size unevenness u = n_max/n_min")
    assert check.check(fig).problems == []
    # a second axes over the first (as zz_f3's twin axes) draws the same x tick labels again, at the
    # same place: one label drawn twice, not two labels over each other
    fig = Figure(figsize=(8, 4))
    ax = fig.add_axes((0.1, 0.15, 0.8, 0.75))
    ax.plot([1, 3], [1, 2])
    over = fig.add_axes((0.1, 0.15, 0.8, 0.75), frameon=False)
    over.plot([1, 3], [5, 6])
    over.yaxis.tick_right()
    assert check.check(fig).problems == []


def test_a_title_overprinted_by_column_headings_is_found():
    """Issue 59: claims_map_wddp's figure title was overprinted by its panels' two-line headings."""
    fig, axes = plt.subplots(1, 2, figsize=(8, 3))
    for ax, name in zip(axes, ("KDDCup99", "Adult"), strict=True):
        ax.plot([0, 1], [0, 1])
        ax.set_title(f"{name}\n12 cells")
    fig.suptitle("every cell of every claim, coloured by its verdict")
    fig.subplots_adjust(top=0.86)  # too little room: the headings reach into the title
    problems = check.check(fig).problems
    assert any("every cell of every claim" in p and "overlaps" in p for p in problems), problems
    fig.subplots_adjust(top=0.72)  # room for both
    assert not any("overlaps" in p for p in check.check(fig).problems)
    plt.close("all")


def test_markers_stacked_on_each_other_are_found_and_spread_ones_are_not():
    """Issue 59: audit_eps drew about 40 markers on one spot at ε = 1."""
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.scatter(np.ones(20), np.ones(20), s=36)  # 20 markers on one spot
    ax.scatter(np.linspace(2, 9, 20), np.linspace(2, 9, 20), s=36)
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    problems = check.check(fig).problems
    assert any("20 of 40 markers" in p and "on top of another" in p for p in problems), problems
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(np.linspace(0, 9, 40), np.linspace(0, 9, 40), marker="o", ms=5)
    ax.plot([1.0, 1.0], [1.0, 1.0], marker="o", ms=5, ls="")  # two stacked of 42: below the share
    ax.set_xlim(-1, 10)
    ax.set_ylim(-1, 10)
    assert not any("on top of" in p for p in check.check(fig).problems)
    plt.close("all")


def test_a_log_axis_labels_its_decades_at_the_full_font_size_and_mathtext_exponents_count_small():
    """Issue 59: matplotlib draws a log axis' exponents as 7 pt superscripts (noise_diagnostics at 7.9 px);
    save_figure and the check label decades in plain text ("10⁻²") and the check counts an exponent
    of mathtext at 70 % of its font."""
    from mpdp.figures import style

    fig, ax = plt.subplots(figsize=(8, 4))
    ax.plot([1e-3, 1e2], [1, 2])
    ax.set_xscale("log")
    for t in (ax.title, ax.xaxis.label, ax.yaxis.label):
        t.set_fontsize(10)
    ax.tick_params(labelsize=10)
    layout = check.check(fig)
    assert layout.smallest_pt == 10 and not any("smallest" in p for p in layout.problems), layout
    assert {"10⁻²", "1", "10²"} <= {t.get_text() for t in ax.get_xticklabels()}
    ax.set_title("$\\sigma = 10^{-2}$", fontsize=10)  # a mathtext exponent: 7 pt
    assert any("smallest text 7 pt" in p for p in check.check(fig).problems)
    assert style.plain_log_label("$\\mathdefault{2\\times10^{-2}}$") == "2×10⁻²"
    plt.close("all")
