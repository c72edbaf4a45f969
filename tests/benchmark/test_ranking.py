"""The benchmark's per-cell ranking: paired one-sided t-tests, Holm-corrected (spec E10)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mpdp.studies.benchmark import ranking


def _table(columns: dict[str, np.ndarray], cell: tuple = ("toy", 1.0, 8, 1.0), majority: float = 0.5,
           accuracy: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    """Rows whose test log-loss is ``columns[mech]`` (accuracy 0.9 unless given)."""
    rows = []
    for mech, loss in columns.items():
        acc = accuracy[mech] if accuracy else np.full(len(loss), 0.9)
        for rep, a in enumerate(loss):
            rows.append(dict(zip(["dataset", "epsilon", "m", "u"], cell, strict=True),
                             mechanism=mech, family="reference" if mech == "nonprivate" else "toy",
                             rep=rep, test_logloss=float(a), accuracy=float(acc[rep]),
                             majority_rate=majority, synthetic=True))
    return pd.DataFrame(rows)


def test_holm_matches_the_step_down_definition():
    p = np.array([0.01, 0.04, 0.03, 0.20])
    # sorted 0.01, 0.03, 0.04, 0.20 -> 4*0.01, max(.., 3*0.03), max(.., 2*0.04), max(.., 1*0.2)
    assert ranking.holm(p) == pytest.approx([0.04, 0.09, 0.09, 0.20])
    assert ranking.holm(np.array([0.5, 0.6])).max() <= 1.0


def test_identical_columns_tie_and_a_constant_shift_is_significant():
    rng = np.random.default_rng(0)
    base = 0.8 + 0.02 * rng.standard_normal(10)
    table = _table({"a": base, "b": base.copy(), "c": base + 0.05, "nonprivate": base - 0.1})
    ranked = ranking.cell_ranking(table).set_index("mechanism")
    assert "nonprivate" not in ranked.index  # the reference is not a competitor
    assert ranked["tied"].to_dict() == {"a": True, "b": True, "c": False}
    assert ranked.loc["c", "p_value"] == 0.0


def test_p_values_equal_scipy_paired_t_test_and_holm_decides_ties():
    rng = np.random.default_rng(1)
    best = 0.40 + 0.03 * rng.standard_normal(10)  # log-losses: lower is better
    close = best.copy()
    close[np.argmax(best)] += 0.2  # same median, one worse repetition: not significantly worse
    far = best + 0.05 + 0.01 * rng.standard_normal(10)
    ranked = ranking.cell_ranking(_table({"best": best, "close": close, "far": far})).set_index("mechanism")
    assert ranked.loc["best", "best"]
    for name, other in (("close", close), ("far", far)):
        expected = stats.ttest_rel(other, best, alternative="greater").pvalue
        assert ranked.loc[name, "p_value"] == pytest.approx(expected)
    assert ranked.loc["far", "p_holm"] == pytest.approx(min(1.0, 2 * ranked.loc["far", "p_value"]))
    assert bool(ranked.loc["close", "tied"]) and not bool(ranked.loc["far", "tied"])


def test_leaderboard_counts_best_and_ties_per_mechanism():
    base = np.linspace(0.3, 0.4, 6)
    t1 = _table({"a": base, "b": base + 0.1}, ("toy", 1.0, 8, 1.0))
    t2 = _table({"a": base + 0.1, "b": base}, ("toy", 3.0, 8, 1.0))
    board = ranking.leaderboard(ranking.ranking_table(pd.concat([t1, t2]))).set_index("mechanism")
    assert board.loc["a", ["cells", "best", "best_or_tied"]].tolist() == [2, 1, 1]
    assert board.loc["b", "mean_rank"] == pytest.approx(1.5)


def test_ranking_uses_the_primary_metric_not_accuracy():
    """At the majority rate accuracy cannot separate; the log-loss does, and it beats the constant
    base-rate predictor, so the cell is informative (issue 33: the flag uses the primary metric)."""
    loss = {"a": np.array([0.30, 0.31, 0.29, 0.30]), "b": np.array([0.50, 0.52, 0.49, 0.51])}
    flat = {"a": np.full(4, 0.887), "b": np.full(4, 0.887)}
    table = _table(loss, majority=0.887, accuracy=flat)
    row = ranking.ranking_table(table).iloc[0]
    assert row["best_mechanism"] == "a" and row["tied"] == "a" and row["n_tied"] == 1
    assert row["primary_metric"] == "test_logloss" and row["ranked"] == "a,b"
    entropy = -(0.887 * np.log(0.887) + 0.113 * np.log(0.113))
    assert row["baseline_value"] == pytest.approx(entropy)
    assert not bool(row["uninformative"])
    # accuracy far above the majority rate does not make a cell informative when no log-loss beats H(r)
    worse = {"a": np.array([0.40, 0.41, 0.39, 0.40]), "b": loss["b"]}
    above = {"a": np.array([0.92, 0.93, 0.91, 0.92]), "b": flat["b"]}
    assert bool(ranking.ranking_table(_table(worse, majority=0.887, accuracy=above)).iloc[0]["uninformative"])


def test_the_summary_is_the_median_so_one_heavy_tailed_repetition_does_not_decide():
    a = np.array([0.30, 0.30, 0.31, 0.29, 0.30, 9.0])  # one divergent release
    b = np.array([0.35, 0.36, 0.34, 0.35, 0.35, 0.35])
    row = ranking.ranking_table(_table({"a": a, "b": b})).iloc[0]
    assert a.mean() > b.mean() and row["best_mechanism"] == "a"
    assert row["best_value"] == pytest.approx(np.median(a)) and row["summary"] == "median over repetitions"


def test_each_protocol_is_its_own_reading_and_winner_changes_are_counted():
    base = np.linspace(0.30, 0.32, 5)
    e2e = pd.concat([_table({"a": base, "b": base + 0.1}, ("d", 1.0, 8, 1.0)),
                     _table({"a": base, "b": base + 0.1}, ("d", 2.0, 8, 1.0))]).assign(selection="private")
    final = pd.concat([_table({"a": base + 0.1, "b": base}, ("d", 1.0, 8, 1.0)),
                       _table({"a": base, "b": base + 0.1}, ("d", 2.0, 8, 1.0))]).assign(selection="oracle")
    ranked = ranking.ranking_table(pd.concat([e2e, final]))
    assert sorted(set(ranked["privacy_reading"])) == ["end_to_end", "final_run"] and len(ranked) == 4
    assert (ranking.headline(ranked)["privacy_reading"] == "end_to_end").all()
    changes = ranking.winner_changes(ranked).set_index("dataset")
    assert changes.loc["d", "cells"] == 2 and changes.loc["d", "changed"] == 1
    board = ranking.leaderboard(ranked).set_index("mechanism")  # the headline reading only
    assert board.loc["a", "best"] == 2


def test_unknown_primary_metric_is_a_clear_error():
    with pytest.raises(ValueError, match="benchmark.primary_metric"):
        ranking.cell_ranking(_table({"a": np.ones(3)}), "accuracy")


def test_ranking_table_is_written_atomically_with_its_columns(tmp_path, monkeypatch):
    table = _table({"a": np.array([0.3, 0.31]), "b": np.array([0.5, 0.52])})
    monkeypatch.setattr(ranking, "read_tables", lambda paths, every_protocol=False: table)
    out = tmp_path / "ranking.parquet"
    ranking.write([tmp_path / "x.parquet"], "test_logloss", out)
    assert list(pd.read_parquet(out).columns) == ranking.RANKING_COLUMNS
