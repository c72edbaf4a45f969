"""λ selection protocols of the voting study (issue 34): end-to-end pure DP of every private row,
oracle rows identical to the tables before the protocols existed, verdicts under both readings."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from dp_accounting.rdp import rdp_privacy_accountant as rdp_acc

from mpdp import bounds, config, results
from mpdp.claims import engine as claims_engine
from mpdp.privacy import private_selection as ps
from mpdp.studies.voting import claims as voting_claims
from mpdp.studies.voting import plan, selection, train
from mpdp.studies.voting import report as vr

ROOT = Path(__file__).resolve().parents[2]
#: the study's rows of this config recorded on commit d2dc779 (before the protocols existed)
TODAY = Path(__file__).parent / "data" / "oracle_rows_d2dc779.csv"
COLUMNS = ["experiment", "mechanism", "M", "rep", "epsilon", "lambda", "test_error", "eps_accounted", "noise_norm"]


class _NullLog:
    def info(self, *args, **kwargs) -> None:
        pass

    warning = info


def _cfg() -> dict:
    cfg = copy.deepcopy(config.load(ROOT / "config" / "smoke.yaml"))
    cfg["voting"].update({"M_grid": [5, 10], "eps_grid": [0.5, 5.0], "reps": 2, "lambda": None,
                          "lambda_grid": [0.01, 0.1, 1.0], "tune_draws": 3})
    return cfg


@pytest.fixture(scope="module")
def default_rows(synthetic_dir):
    cfg = _cfg()
    return cfg, results.to_frame(train.table_rows(cfg, "kddcup99", synthetic_dir, _NullLog()), plan.EXTRA_COLUMNS)


def test_default_is_private_and_the_oracle_rows_are_todays(default_rows):
    cfg, frame = default_rows
    assert selection.protocols(cfg) == ["private", "oracle"]
    main = plan.main_rows(frame)
    assert set(main.loc[np.isfinite(main["epsilon"]), "selection"]) == {"private"}
    oracle = frame[frame["experiment"].isin([selection.FINAL_RUN, plan.SWEEP])]
    oracle = oracle.assign(experiment=oracle["experiment"].replace({selection.FINAL_RUN: plan.MAIN}))
    ours = oracle[COLUMNS].sort_values(COLUMNS[:6]).reset_index(drop=True)
    ours = pd.read_csv(pd.io.common.StringIO(ours.to_csv(index=False)))
    pd.testing.assert_frame_equal(ours, pd.read_csv(TODAY))


def test_every_private_row_is_end_to_end_private_at_its_target(default_rows):
    cfg, frame = default_rows
    s = cfg["voting"]["selection"]
    shape, share = s["trials"]["shape"], s["final_share"]
    private = plan.main_rows(frame)
    private = private[private["selection"] == "private"]
    assert len(private) and set(private["lambda"]) <= set(cfg["voting"]["lambda_grid"])
    assert (private["eps_end_to_end"] <= private["epsilon"] * (1 + 1e-12)).all()
    assert (private["delta_end_to_end"] == 0).all()
    # the release alone: its own calibration, at the final share (β·Δ = ε_f)
    np.testing.assert_allclose(private["eps_accounted"], share * private["epsilon"], rtol=1e-12)
    np.testing.assert_allclose(private["beta"] * private["sensitivity"], private["eps_accounted"], rtol=1e-9)
    # independent: basic composition of the selection's pure bound (2 + η)ε_t and the release
    total = (2 + shape) * private["eps_trial"] + private["beta"] * private["sensitivity"]
    assert (total <= private["epsilon"] * (1 + 1e-9)).all()
    # the pure bound is the λ → ∞ limit of dp-accounting's implementation of the theorem
    for eps_t in private["eps_trial"].unique():
        curve = rdp_acc._compute_rdp_repeat_and_select(ps.ORDERS, ps.pure_dp_rdp(eps_t), s["trials"]["mean"], shape)
        assert curve[-1] == pytest.approx((2 + shape) * eps_t, abs=2e-3)


def test_verdicts_are_given_under_both_readings(default_rows):
    """The claims engine evaluates every voting claim under both readings (end-to-end: the private
    main rows; final run: the oracle rows), and the report compares the two from its verdicts."""
    cfg, frame = default_rows
    tables = {"kddcup99": frame}
    obs = voting_claims.observations(tables)
    assert set(obs["reading"]) == {"end_to_end", "final_run"}
    declared = voting_claims.claims(cfg)
    verdicts = claims_engine.verdicts(declared, claims_engine.evaluate(
        declared, claims_engine.Inputs(obs, voting_claims.baselines(tables))))
    assert set(verdicts["reading"]) == {"end_to_end", "final_run"}
    changes = vr.reading_changes(verdicts)
    assert set(changes["claim_id"]) >= {"V1", "V2"} and changes["changed"].dtype == bool
    text = vr.reading_sentence(tables, verdicts)
    assert "end-to-end privacy" in text and f"{int(changes['changed'].sum())} of {len(changes)}" in text


def test_lemma6_is_drawn_at_the_final_share(default_rows):
    cfg, frame = default_rows
    v = cfg["voting"]
    rows = plan.main_rows(frame)
    soft = rows[(rows["mechanism"] == "hamm_soft") & rows["lemma6_bound"].notna()]
    if soft.empty:
        pytest.skip("no binary Lemma 6 rows in this table")
    r = soft.iloc[0]
    eps_f = selection.budget(cfg, r["epsilon"])["eps_final"]
    assert eps_f < r["epsilon"]
    assert r["lemma6_bound"] == pytest.approx(bounds.b6_lemma6(r["p"], r["lambda"], r["M"], eps_f, v["delta_p"]),
                                              rel=1e-9)


@pytest.mark.parametrize("table", ["kddcup99", "kddcup99_multiclass"])
def test_protocols_sharing_their_partitions_give_the_same_table_to_the_last_bit(synthetic_dir, monkeypatch, table):
    # issue 36: the papers' reading reuses the local classifiers and global ERMs the private
    # protocol solved (train._partition); a table built with every partition solved anew is the same
    cfg = _cfg()
    assert len(selection.protocols(cfg)) == 2
    shared = results.to_frame(train.table_rows(cfg, table, synthetic_dir, _NullLog()), plan.EXTRA_COLUMNS)
    built = []
    original = train._partition

    def anew(solved, key, *args):
        built.append(key)
        return original(None, key, *args)

    monkeypatch.setattr(train, "_partition", anew)
    fresh = results.to_frame(train.table_rows(cfg, table, synthetic_dir, _NullLog()), plan.EXTRA_COLUMNS)
    # every partition is asked for once per protocol: each protocol shares half of them
    assert len(built) == 2 * len(set(built))
    pd.testing.assert_frame_equal(shared.drop(columns="seconds"), fresh.drop(columns="seconds"))
