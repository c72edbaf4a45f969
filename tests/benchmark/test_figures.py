"""Benchmark figures on a one-data-set run: nothing clipped, accuracy bands in [0, 1], plain
tick labels, the data size in the titles (spec E10 "Outputs")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mpdp.studies.benchmark import figures, ranking


def _table() -> pd.DataFrame:
    gen = np.random.default_rng(3)
    rows = []
    for mech, label, unit, fam in (("nonprivate", "non-private ERM θ*", "record", "reference"),
                                   ("a", "a long legend label of a record-level mechanism", "record", "x"),
                                   ("b", "another mechanism with a long legend label", "party", "y")):
        for eps in (1.0, 10.0):
            for m in (2, 4):
                for u in (1.0, 3.0):
                    for rep in range(3):
                        rows.append({"dataset": "breast_cancer", "mechanism": mech, "label": label,
                                     "privacy_unit": unit, "public_data": False, "family": fam,
                                     "epsilon": eps, "m": m, "u": u, "rep": rep, "n": 502,
                                     "accuracy": float(np.clip(0.97 + 0.05 * gen.standard_normal(), 0, 1)),
                                     "optimal_gap": 0.1 + gen.random(), "test_logloss": 0.3 + gen.random(),
                                     "majority_rate": 0.65})
    return pd.DataFrame(rows)


@pytest.fixture()
def captured(monkeypatch):
    figs = []
    monkeypatch.setattr(figures, "save_figure", lambda fig, png, pdf: (fig.canvas.draw(), figs.append(fig)))
    monkeypatch.setattr(figures.plt, "close", lambda fig: None)
    return figs


def _inside(fig, artist) -> bool:
    box = artist.get_window_extent(fig.canvas.get_renderer())
    W, H = fig.bbox.width, fig.bbox.height
    return box.x0 >= -1 and box.y0 >= -1 and box.x1 <= W + 1 and box.y1 <= H + 1


@pytest.mark.parametrize("name", ["xp_eps", "xp_m", "xp_u"])
def test_sweep_on_one_data_set_fits_and_bands_stay_in_the_unit_interval(captured, name, tmp_path):
    figures.plot_sweep(_table(), name, {"epsilon": 1.0, "m": 2, "u": 1.0}, 1e-5, tmp_path / "a.png",
                       tmp_path / "a.pdf", cap=2000)
    fig = captured[0]
    assert _inside(fig, fig._suptitle) and all(_inside(fig, leg) for leg in fig.legends)
    for ax in fig.axes:
        assert _inside(fig, ax.xaxis.label) and _inside(fig, ax.title)
        assert "n = 502 private records, cap 2000" in ax.get_title()
    acc = fig.axes[0]
    for band in acc.collections:
        ys = np.concatenate([p.vertices[:, 1] for p in band.get_paths()])
        assert ys.min() >= 0.0 and ys.max() <= 1.0
    labels = [t.get_text() for t in acc.get_xticklabels()]
    expected = {"xp_eps": ["1", "10"], "xp_m": ["2", "4"], "xp_u": ["1", "3"]}[name]
    assert labels == expected  # no 2×10⁰ style labels


def test_rank_on_one_data_set_fits_and_marks_uninformative_cells(captured, tmp_path):
    table = _table()
    ranked = ranking.ranking_table(table)
    figures.plot_rank(ranked, figures.catalogue(table), tmp_path / "r.png", tmp_path / "r.pdf",
                      figures.data_sizes(table, 2000))
    fig = captured[0]
    assert _inside(fig, fig._suptitle) and all(_inside(fig, leg) for leg in fig.legends)
    assert "n = 502" in fig.axes[0].get_title()
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert len(texts) == len(ranked)
    assert sum(t.endswith(" u") for t in texts) == int(ranked["uninformative"].sum())


def test_four_data_sets_stay_legible_at_report_width(tmp_path):
    """Issue 46: with the full config's four data sets side by side, xp_eps/xp_m/xp_u were shown at
    0.47 scale and xp_rank with 5–6 px text; now at most three data sets per row, the legend below,
    and both figures pass the layout check (text ≥ 80 % of the body text where shown)."""
    from mpdp.figures import check

    table = pd.concat([_table().assign(dataset=ds) for ds in ("adult", "bank", "breast_cancer", "kddcup99")])
    figures.plot_sweep(table, "xp_eps", {"epsilon": 1.0, "m": 2, "u": 1.0}, 1e-5, tmp_path / "e.png",
                       tmp_path / "e.pdf", cap=2000)
    figures.plot_rank(ranking.ranking_table(table), figures.catalogue(table), tmp_path / "r.png", tmp_path / "r.pdf",
                      figures.data_sizes(table, 2000))
    for name in ("e", "r"):
        layout = check.read_record(check.record_path(tmp_path / f"{name}.png"))
        assert layout.problems == [] and layout.width_px <= 12.6 * 110 + 1, (name, layout)
