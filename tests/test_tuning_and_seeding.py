"""The study-agnostic tuning rules: disjoint tuning streams, grid-edge warnings, UNINFORMATIVE."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mpdp import seeding, tuning
from mpdp.claims.declare import Claim
from mpdp.claims.engine import Inputs, evaluate, verdicts


def test_tuning_streams_differ_from_the_evaluated_stream_of_the_same_key():
    evaluated = seeding.rng(7, "admm_noise", "ring", "dvp", 0.1, 0).standard_normal(8)
    tuned = seeding.tuning_rng(7, "admm_noise", "ring", "dvp", 0.1, 0).standard_normal(8)
    assert not np.array_equal(evaluated, tuned)
    again = seeding.rng(7, *seeding.tuning_key("admm_noise", "ring", "dvp", 0.1, 0)).standard_normal(8)
    assert np.array_equal(tuned, again)


def test_assert_disjoint_accepts_prefixed_tuning_keys_and_rejects_reuse():
    evaluated = [("noise", r) for r in range(3)]
    seeding.assert_disjoint([seeding.tuning_key("noise", 0)], evaluated)
    with pytest.raises(ValueError, match="without the 'tuning' prefix"):
        seeding.assert_disjoint([("noise", 0)], evaluated)
    with pytest.raises(ValueError, match="evaluated repetitions draw from tuning"):
        seeding.assert_disjoint([seeding.tuning_key("noise", 0)], [seeding.tuning_key("noise", 0)])


def test_grid_edge():
    grid = [0.01, 0.1, 1.0]
    assert tuning.grid_edge(0.01, grid) == "low"
    assert tuning.grid_edge(1.0, grid) == "high"
    assert tuning.grid_edge(0.1, grid) is None
    with pytest.raises(ValueError, match="not in its grid"):
        tuning.grid_edge(0.5, grid)


def test_edge_warnings_lists_edges_only_and_skips_untuned_grids():
    table = tuning.edge_warnings("admm", [("ring, dvp", "rho", 0.1, [0.1, 1, 10]),
                                          ("ring, pvp", "rho", 1.0, [0.1, 1, 10]),
                                          ("ring, admm", "eta", 5.0, [5.0])])
    assert list(table.columns) == tuning.EDGE_COLUMNS
    assert table[["setting", "edge"]].values.tolist() == [["ring, dvp", "low"]]
    assert "rho = 0.1" in tuning.edge_sentence(table)
    assert tuning.edge_sentence(table.iloc[:0]).startswith("No tuned value")


def test_uninformative_check_is_not_scored():
    """A comparison at the trivial baseline is UNINFORMATIVE (the engine's guard), not scored."""
    claim = Claim("t", "V1", "A beats B", "Fig. 1", "accuracy", ("a", "b"), "compare", "greater")
    rows = [{"dataset": "bank", "reading": "-", "cell": "c", "rep": r, "method": m, "metric": "accuracy",
             "value": v + (0.002 if m == "a" else 0.001) * r, "x": float("nan"), "bound": float("nan")}
            for r in range(4) for m, v in (("a", 0.88), ("b", 0.86))]
    base = pd.DataFrame([{"dataset": "bank", "cell": "*", "metric": "accuracy", "value": 0.887,
                          "baseline": "majority rate"}])
    cells = evaluate([claim], Inputs(pd.DataFrame(rows), base))
    assert verdicts([claim], cells).iloc[0]["verdict"] == "UNINFORMATIVE"
    assert "majority rate" in cells["note"].iloc[0]
    cells = evaluate([claim], Inputs(pd.DataFrame(rows), base.assign(value=0.5)))
    assert verdicts([claim], cells).iloc[0]["verdict"] == "HOLDS"
