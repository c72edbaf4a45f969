"""ADMM study pieces: results schema extension, trade-off fit and α*, claims, report helpers."""

import math

import numpy as np
import pandas as pd
import pytest

from mpdp import config, results
from mpdp.errors import InputDataError
from mpdp.studies.admm import claims, report, tradeoff
from mpdp.studies.admm.schema import EXTRA_COLUMNS


def test_results_extra_columns_roundtrip_and_wddp_schema_unchanged(tmp_path):
    row = {"dataset": "adult", "mechanism": "dvp", "rep": 0, "T": 5, "n": 10, "p": 3, "alpha": 0.1,
           "iteration": 2, "mer": 0.2, "topology": "ring", "own_unperturbed_in_dual": False}
    frame = results.to_frame([row], EXTRA_COLUMNS)
    assert list(frame.columns) == list(results.COLUMNS) + list(EXTRA_COLUMNS)
    results.write(frame, tmp_path / "t.parquet", EXTRA_COLUMNS)
    back = results.read(tmp_path / "t.parquet", EXTRA_COLUMNS)
    assert back["iteration"].dtype == "int64" and back.loc[0, "alpha"] == 0.1
    with pytest.raises(InputDataError, match="unknown columns"):
        results.to_frame([row])  # the common schema alone rejects study columns
    with pytest.raises(ValueError, match="clashes"):
        results.columns({"epsilon": "Int64"})  # a study may not retype a common column
    assert list(results.to_frame([{"rep": 0, "T": 1, "n": 1, "p": 1}]).columns) == list(results.COLUMNS)


def test_fit_g_recovers_known_parameters():
    alpha = np.repeat([0.01, 0.03, 0.1, 0.3, 1, 3, 10], 3)
    truth = (2.0, 1.5, 0.7)
    noise = np.random.default_rng(0).normal(scale=1e-4, size=alpha.size)
    fit = tradeoff.fit_g(alpha, tradeoff.g(alpha, *truth) + noise)
    assert (fit.kappa1, fit.kappa2, fit.kappa3) == pytest.approx(truth, rel=1e-2)
    assert fit.rmse < 1e-3
    assert math.isnan(tradeoff.fit_g(np.array([1.0, 2.0]), np.array([1.0, 0.5])).kappa1)


def test_alpha_star_matches_the_stationary_point():
    # U − g = q e^{−α} − k1 e^{−k2 α} − k3 is maximal where q e^{−α} = k1 k2 e^{−k2 α}
    fit = tradeoff.GFit(kappa1=0.5, kappa2=3.0, kappa3=0.2, rmse=0.0)
    q = 1.0
    closed = math.log(fit.kappa1 * fit.kappa2 / q) / (fit.kappa2 - 1.0)
    assert tradeoff.alpha_star(fit, q, 0.01, 10.0, points=200_001) == pytest.approx(closed, rel=1e-3)


def _synthetic_table(reps=6, dvp_better_mer=True, T=5):
    rng = np.random.default_rng(1)
    rows = []
    for mech in ("dvp", "pvp"):
        for alpha in (0.1, 1.0, 10.0):
            for rep in range(reps):
                for t in range(1, T + 1):
                    base = 1.0 + 2.0 / (alpha * t)  # larger α: lower loss, converges faster
                    wiggle = 0.3 * (-1) ** t if mech == "pvp" else 0.0  # PVP oscillates
                    loss = base + wiggle + 0.01 * rng.normal()
                    mer = 0.2 + (0.0 if (mech == "dvp") == dvp_better_mer else 0.05) + 0.005 * rng.normal()
                    rows.append({"topology": "ring", "mechanism": mech, "alpha": alpha, "rep": rep,
                                 "iteration": t, "train_loss": loss, "mer": mer})
    return pd.DataFrame(rows)


def _cfg():
    return config.load("config/smoke.yaml") | {}


def test_claims_verdicts_follow_the_data():
    cfg = _cfg()
    cfg["admm"] = {**cfg["admm"], "f4_iterations": [1, 5]}
    out = claims.evaluate(_synthetic_table(dvp_better_mer=True), cfg).set_index("claim_id")
    assert list(out.reset_index().columns) == list(__import__("mpdp.claims", fromlist=["COLUMNS"]).COLUMNS)
    assert out.loc["Z1-DVP", "verdict"] == "PASS"
    assert out.loc["Z2", "verdict"] == "PASS"
    assert out.loc["Z3", "verdict"] == "PASS"
    assert out.loc["Z5", "verdict"] == "FAIL"  # loss falls by far more than 10 % between t = 1 and 5
    flipped = claims.evaluate(_synthetic_table(dvp_better_mer=False), cfg).set_index("claim_id")
    assert flipped.loc["Z3", "verdict"] == "FAIL"
    few = claims.evaluate(_synthetic_table(reps=1), cfg)
    assert set(few["verdict"]) == {"INCONCLUSIVE"}


def test_report_helpers_without_and_with_results():
    assert report.load({}) is None
    assert report.load({"admm": None}) is None
    table = _synthetic_table()
    assert not report.spread(table, "ring").empty
    assert report.findings(table[table["topology"] == "complete"], "complete") == ["No runs on the main topology."]
    choices = report.rec_choices(_cfg())
    assert choices["choice"].str.contains("admm.delta").any()
