"""Report lines of the benchmark computed from the rows (spec E10)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

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


def test_baseline_standing_is_computed_from_the_ranking():
    from mpdp.studies.benchmark.report import Benchmark

    ranked = pd.DataFrame({
        "dataset": ["d"] * 4, "epsilon": [1.0, 1.0, 3.0, 3.0], "m": [2, 2, 2, 2], "u": [1.0, 3.0, 1.0, 3.0],
        "primary_metric": "test_logloss",
        "best_mechanism": ["dpsgd", "pathak", "pathak", "pathak"],
        "tied": ["dpsgd,pathak", "pathak,dpsgd", "pathak", "pathak"],
        "ranked": ["dpsgd,pathak,dvp", "pathak,dpsgd,dvp", "pathak,dvp,dpsgd", "pathak,dpsgd,dvp"],
        "uninformative": [False, False, True, False]})
    table = _rows(["pathak", "dvp", "dpsgd"])
    bench = Benchmark(table, [], {}, ranked)
    text = report.baseline_sentence(bench)
    assert "in 1 of 4 cells" in text and "best or not significantly worse than the best in 2" in text
    assert "other 2 cells another mechanism is significantly better" in text and "1 of the 4 cells" in text
    standing = report.baseline_standing(bench).set_index("ε")
    assert standing.loc[1.0, "rank of DP-SGD (mean over u)"] == 1.5
    assert standing.loc[3.0, "rank of DP-SGD (mean over u)"] == 2.5
    assert standing.loc[1.0, "best or tied (u cells)"] == "2 of 2"
    assert standing.loc[3.0, "highest-ranked paper mechanism"] == "Pathak parameter averaging"


def test_paper_comparison_at_the_base_rate_log_loss_is_uninformative():
    """Each paper's comparison is a declared claim on the primary metric (log-loss): cells where a
    mechanism does not beat the constant base-rate predictor are uninformative (issue 33)."""
    from mpdp.claims import engine
    from mpdp.studies.benchmark import claims as xp_claims

    card = {"positive_rate_train": 0.113, "positive_rate": 0.113, "n_train": 800, "n_test": 200, "n_total": 1000}
    base = xp_claims.base_rate_logloss(card)
    assert base == pytest.approx(-(0.113 * np.log(0.113) + 0.887 * np.log(0.887)))
    rows = []
    for rep in range(8):  # the sign-flip test needs 2^-R below 2.5 %: at least 6 repetitions
        for mech, loss in (("dvp", base * 1.01), ("pvp", base * (1.2 + 0.01 * rep))):
            rows.append({"dataset": "bank", "epsilon": 1.0, "m": 2, "u": 1.0, "rep": rep, "mechanism": mech,
                         "test_logloss": loss})
    table = pd.DataFrame(rows)

    def verdict(t):
        cells = engine.evaluate(xp_claims.CLAIMS, engine.Inputs(xp_claims.observations(t),
                                                                xp_claims.baselines({"bank": card})))
        return engine.verdicts(xp_claims.CLAIMS, cells).set_index("claim_id").loc["XP-ZZ"]
    zz = verdict(table)
    assert zz["verdict"] == "UNINFORMATIVE" and zz["n_cells"] == 1
    table.loc[table["mechanism"] == "dvp", "test_logloss"] = base * np.array([0.5, 0.52, 0.49, 0.51, 0.5, 0.5, 0.51,
                                                                                0.49])
    table.loc[table["mechanism"] == "pvp", "test_logloss"] = base * np.array([0.8, 0.82, 0.79, 0.81, 0.8, 0.8, 0.82,
                                                                                0.8])
    assert verdict(table)["verdict"] == "HOLDS"


def test_paper_comparison_guard_uses_the_non_private_reference():
    """Issue 55: the benchmark's baselines carry the converged non-private reference (the ``nonprivate``
    rows' log-loss), so a mechanism must beat the base rate by a quarter of the way to it, not by 1 % of it."""
    from mpdp.claims import engine
    from mpdp.studies.benchmark import claims as xp_claims

    card = {"positive_rate_train": 0.113, "positive_rate": 0.113, "n_train": 800, "n_test": 200, "n_total": 1000}
    base = xp_claims.base_rate_logloss(card)
    rows = []
    for rep in range(10):  # the benchmark's R: enough for its sign-flip test
        for mech, loss in (("nonprivate", 0.2 * base), ("dvp", 0.9 * base * (1 + 0.001 * rep)),
                           ("pvp", 1.3 * base * (1 + 0.001 * rep))):
            rows.append({"dataset": "bank", "epsilon": 1.0, "m": 2, "u": 1.0, "rep": rep, "mechanism": mech,
                         "test_logloss": loss})
    table = pd.DataFrame(rows)
    baselines = xp_claims.baselines({"bank": card}, table)
    assert baselines["reference"].tolist() == [pytest.approx(0.2 * base)]
    assert math.isnan(xp_claims.baselines({"bank": card})["reference"].iloc[0])  # no table: no reference

    def cells(b):
        out = engine.evaluate(xp_claims.CLAIMS, engine.Inputs(xp_claims.observations(table), b))
        return out[out["claim_id"] == "XP-ZZ"].iloc[0]
    with_ref = cells(baselines)
    assert with_ref["guard_margin"] == pytest.approx(0.25 * 0.8 * base)
    assert not with_ref["informative"]  # 10 % below the base rate is not a quarter of the way to θ*
    assert cells(xp_claims.baselines({"bank": card}))["informative"]  # 1 % of the base rate would pass it
