"""Experiment tables, claims rows and report helpers of the least-squares study."""

import numpy as np
import pandas as pd
import pytest

from mpdp.claims import engine
from mpdp.claims.intervals import median_interval, ratio_interval
from mpdp.errors import ConfigError
from mpdp.studies.ls import claims, experiment, report


@pytest.fixture(scope="module")
def tables(ls_cfg):
    t1, tail = experiment.run("ls_1", ls_cfg, 0)
    t2, none = experiment.run("ls_2", ls_cfg, 0)
    assert none is None
    return {"ls_1": t1, "ls_2": t2, "tail": tail}


def test_median_interval_is_order_statistics_and_covers():
    med, lo, hi = median_interval(np.arange(1.0, 21.0))
    assert (med, lo, hi) == (10.5, 6.0, 15.0)  # n = 20: x_(6), x_(15) (P(Bin(20,.5) <= 5) = 0.021)
    rng = np.random.default_rng(0)
    hits = [lo <= 0 <= hi for lo, hi in (median_interval(rng.standard_cauchy(40))[1:] for _ in range(2000))]
    assert np.mean(hits) >= 0.94  # distribution-free: holds for Cauchy samples
    assert np.isnan(median_interval(np.ones(4))[1])  # too few values for 95 %


def test_ratio_interval():
    assert ratio_interval((2.0, 4.0), (1.0, 2.0)) == (1.0, 4.0)
    assert np.isnan(ratio_interval((-1.0, 4.0), (1.0, 2.0))[0])


def test_tables_have_the_issue_columns_and_reproduce(tables, ls_cfg):
    t1 = tables["ls_1"]
    for col in ("mechanism", "noise_model", "t", "epsilon", "delta", "d", "excess_median", "excess_mean",
                "draws", "writeup_formula", "delta_method"):
        assert col in t1.columns
    assert list(t1.columns) == list(experiment.COLUMNS)
    ssp = t1[t1["mechanism"] == "ls_ssp"]
    assert len(ssp) == 2 * len(ls_cfg["eps_grid"]) * len(ls_cfg["t_grid"]) * 2  # models × z2
    assert (ssp["excess_median"] > 0).all() and (ssp["draws"] == ls_cfg["draws"]).all()
    assert (ssp.loc[~ssp["z2"], "writeup_formula"] < 0).all()  # B8: negative at σ₂ = 0
    assert (ssp.loc[ssp["z2"], "eps_accounted"] <= ssp.loc[ssp["z2"], "epsilon"]).all()
    again, _ = experiment.run("ls_1", ls_cfg, 0)
    pd.testing.assert_frame_equal(t1, again)  # bit-for-bit from config + seed
    other, _ = experiment.run("ls_1", ls_cfg, 1)
    assert not np.allclose(other["excess_median"].iloc[:4], t1["excess_median"].iloc[:4])
    t2 = tables["ls_2"]
    assert set(t2["mechanism"]) == {"ls_ssp", "ls_sgd", "ols"}
    sgd = t2[t2["mechanism"] == "ls_sgd"]
    assert set(sgd["noise_model"]) == {"permutation_zcdp", "bst_sampling", "nonprivate"}
    assert sgd["t"].isna().all() and (sgd["draws"] == ls_cfg["sgd"]["reps"]).all()
    private = sgd[sgd["epsilon"].notna()]
    assert (private["eps_accounted"] <= private["epsilon"]).all()


def _verdicts(tables: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    cells = engine.evaluate(claims.CLAIMS, engine.Inputs(claims.observations(tables), claims.baselines(tables)))
    return cells, engine.verdicts(claims.CLAIMS, cells).set_index("claim_id")


def test_claims_through_the_engine(tables, ls_cfg):
    cells, verdicts = _verdicts({"ls_1": tables["ls_1"], "ls_2": tables["ls_2"]})
    formula = cells[cells["claim_id"] == "LS1-formula"]
    negative = formula[formula["estimate"] < -1]  # formula/mean − 1 < −1: a negative printed closed form
    assert len(negative) > 0 and (negative["cell_verdict"] == "against").sum() >= len(negative) - 1
    assert not (formula["cell_verdict"] == "for").any()
    assert verdicts.loc["LS1-formula", "verdict"] in ("FAILS", "MIXED")
    assert verdicts.loc["LS1-t", "verdict"] == "HOLDS"  # independent noise: excess ∝ t
    assert verdicts.loc["LS1-t2", "verdict"] == "FAILS"  # … not t²
    assert verdicts.loc["LS1-t-writeup", "verdict"] != "FAILS"
    assert (cells.loc[cells["claim_id"] == "LS1-t", "n_reps"] == ls_cfg["reps"]).all()
    assert verdicts.loc["LS1-delta", "n_against"] == 0
    assert {"LS1-delta", "LS-sgd"} <= set(verdicts.index)


def test_sgd_vs_ssp_is_uninformative_when_both_are_worse_than_releasing_zero(tables):
    """The guard of issue 33: an SGD-vs-SSP cell where either estimator's median excess is not below
    that of releasing θ = 0 is uninformative, never scored."""
    t2 = tables["ls_2"]
    cells, verdicts = _verdicts({"ls_2": t2})
    sgd = cells[cells["claim_id"] == "LS-sgd"]
    zero = float(t2["zero_excess"].iloc[0])
    assert zero > 0 and len(sgd) > 0
    worse = t2[(t2["mechanism"] == "ls_sgd") & (t2["excess_median_hi"] >= zero)]
    if not worse.empty:
        assert (sgd["cell_verdict"] == "uninformative").any()
    # a θ = 0 release far better than any estimator: every cell uninformative, the claim too
    cheap = t2.assign(zero_excess=1e-12 * zero)
    cells, verdicts = _verdicts({"ls_2": cheap})
    assert (cells.loc[cells["claim_id"] == "LS-sgd", "cell_verdict"] == "uninformative").all()
    assert verdicts.loc["LS-sgd", "verdict"] == "UNINFORMATIVE"
    # and no guard at all (no zero_excess column) scores the same comparison
    _, scored = _verdicts({"ls_2": t2.drop(columns="zero_excess")})
    assert scored.loc["LS-sgd", "n_informative"] > 0


def test_claims_detect_a_wrong_growth():
    """A table whose independent-noise excess grows as t² makes LS1-t fail."""
    rows = []
    gen = np.random.default_rng(0)
    for eps in (0.1, 0.5, 0.9):
        for t in (1, 2, 4, 8):
            reps = t**2 / eps * np.exp(0.05 * gen.standard_normal(6))  # six repetitions of the setting
            rows.append({"mechanism": "ls_ssp", "noise_model": "independent", "z2": True, "t": t,
                         "epsilon": eps, "excess_median": float(np.median(reps)), "dataset": "x",
                         "excess_rep_medians": list(reps)})
    cells, verdicts = _verdicts({"ls_1": pd.DataFrame(rows).assign(
        writeup_formula=np.nan, delta_method_median=np.nan, in_validity=False)})
    assert verdicts.loc["LS1-t", "verdict"] == "FAILS" and verdicts.loc["LS1-t2", "verdict"] == "HOLDS"
    # real repetitions (issue 42): one cell per ε, each with the six repetitions, not ε as repetitions
    growth = cells[cells["claim_id"] == "LS1-t"]
    assert len(growth) == 3 and (growth["n_reps"] == 6).all() and growth["cell"].str.contains("ε=").all()


def test_each_repetition_is_a_disjoint_block_of_the_draws(ls_cfg):
    excess = np.arange(100, dtype=float)
    assert experiment.rep_medians(excess, 4) == [12.0, 37.0, 62.0, 87.0]
    with pytest.raises(ConfigError, match="ls.reps"):
        experiment.rep_medians(excess, 20)  # 5 draws a repetition


def test_report_helpers(tables, tmp_path, ls_cfg):
    paths = []
    for name in ("ls_1", "ls_2"):
        tables[name].to_parquet(tmp_path / f"{name}.parquet")
        paths.append(str(tmp_path / f"{name}.parquet"))
    tables["tail"].to_parquet(tmp_path / "ls_1_tail.parquet")
    paths.append(str(tmp_path / "ls_1_tail.parquet"))
    ctx = report.context({"tables": paths[:2], "files": paths + [str(tmp_path / "ls_3.parquet"),
                                                                  str(tmp_path / "ls_1.png")]})  # absent
    assert ctx["tables"]["ls_1"].endswith("ls_1.parquet") and "ls_1" in ctx["figures"]
    res = report.load(ctx)
    assert set(res.tables) == {"ls_1", "ls_2"}
    lines = report.findings(res)
    assert any("negative" in line for line in lines) and any("ls_2" in line for line in lines)
    assert any("synthetic by design" in line for line in report.data_lines(res))
    assert report.negative_table(res).empty
    assert not report.ledger(res).empty
    assert report.load(None) is None and report.context({"tables": [], "files": []}) is None
    assert not report.reconstructed_choices({"ls": ls_cfg}).empty


def test_sgd_guard_and_margin_are_the_documented_ones(tables):
    """Issue 55: LS-sgd's guard needs SGD a quarter of releasing θ = 0's excess below it (converged reference
    0, θ* itself), and its practical margin is a factor 1.25 (log10 1.25 on its log-ratio)."""
    t2 = tables["ls_2"]
    base = claims.baselines({"ls_2": t2})
    assert (base["reference"] == 0.0).all()
    sgd = t2[(t2["mechanism"] == "ls_sgd") & t2["epsilon"].notna()]
    top = float(np.fmax(sgd["excess_median"], sgd["excess_median_hi"]).max())
    zero = 1.2 * top  # every SGD excess below θ = 0's, the largest not a quarter below it
    cells, verdicts = _verdicts({"ls_2": t2.assign(zero_excess=zero)})
    sgd = cells[cells["claim_id"] == "LS-sgd"]
    assert np.allclose(sgd["guard_margin"], 0.25 * zero)
    assert not sgd["informative"].all() and sgd["informative"].any()
    assert np.allclose(sgd["delta"], np.log10(1.25))
    assert verdicts.loc["LS-sgd", "delta"] == pytest.approx(np.log10(1.25))
