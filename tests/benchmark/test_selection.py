"""Selection protocols of the benchmark (issue 34): end-to-end privacy of every private row, checked by
an independent accountant; the oracle rows are today's; the planted un-noised selection is refuted."""

from __future__ import annotations

import logging
import math
from pathlib import Path
from unittest import mock

import dp_accounting
import numpy as np
import pandas as pd
import pytest
from dp_accounting.rdp import RdpAccountant
from dp_accounting.rdp import rdp_privacy_accountant as rdp_acc
from scipy import stats

from mpdp import results
from mpdp.errors import ConfigError
from mpdp.pipeline import planning_budgets
from mpdp.privacy import private_selection as ps
from mpdp.privacy.calibration import noise_multiplier
from mpdp.studies.benchmark import calibration as calib
from mpdp.studies.benchmark import (
    output_runner,
    plan,
    ranking,
    registry,
    runner,
    section,
    selection,
    train,
)
from mpdp.studies.benchmark import report as xr
from mpdp.studies.benchmark.schema import EXTRA_COLUMNS
from mpdp.studies.benchmark.tables import headline_rows

LOG = logging.getLogger("test")
#: the oracle rows of this module's config recorded on commit d2dc779 (before the protocols existed)
TODAY = Path(__file__).parent / "data" / "oracle_rows_d2dc779.csv"
TODAY_COLUMNS = ["mechanism", "epsilon", "m", "u", "rep", "hparam_value", "accuracy", "test_logloss", "eps_total",
                 "partition"]


@pytest.fixture(scope="module")
def default_run(bench_data, make_small_cfg):
    """Every job of the small config under the default protocols (private, then oracle)."""
    cfg = make_small_cfg()
    rows, hp = [], {}
    for ids in registry.job_groups(cfg).values():
        r, h = train.run_job(cfg, "synthetic", bench_data, ids, LOG)
        rows += r
        for protocol, mechs in h.items():
            hp.setdefault(protocol, {}).update(mechs)
    return cfg, results.to_frame(rows, EXTRA_COLUMNS), hp


def test_default_protocol_is_private_with_the_oracle_reading(default_run):
    cfg, frame, _ = default_run
    assert cfg["benchmark"]["selection"]["protocol"] == "private"
    assert selection.protocols(cfg) == ["private", "oracle"]
    assert set(frame["selection"]) == {"private", "oracle"}
    sizes = frame.groupby("selection").size()
    assert sizes["private"] == sizes["oracle"]


def test_oracle_rows_reproduce_the_tables_before_the_protocols(default_run):
    _, frame, _ = default_run
    today = pd.read_csv(TODAY)
    oracle = frame[(frame["selection"] == "oracle") & frame["mechanism"].isin(set(today["mechanism"]))]
    oracle = oracle.sort_values(TODAY_COLUMNS[:5]).reset_index(drop=True)  # mechanisms added since: not recorded
    ours = pd.read_csv(pd.io.common.StringIO(oracle[TODAY_COLUMNS].to_csv(index=False)))
    pd.testing.assert_frame_equal(ours, today)
    assert np.isinf(oracle["eps_end_to_end"]).all()


def _pure(eps: float) -> np.ndarray:
    """A pure ε-DP release's RDP curve by dp-accounting: binary randomised response (replace-one)."""
    return np.array([rdp_acc._randomized_response_rdp_replace_one(2.0 / (1.0 + math.exp(eps)), 2, float(a))
                     for a in ps.ORDERS])


def _independent_epsilon(row: pd.Series, cfg: dict) -> float:
    """The row's end-to-end ε recomputed by dp-accounting (see the module docstring of .selection)."""
    b, s = cfg["benchmark"], cfg["benchmark"]["selection"]
    delta, shape, mean = float(b["delta"]), float(s["trials"]["shape"]), float(s["trials"]["mean"])
    eps_t = float(row["eps_trial"])
    if row["mechanism"] in calib.GRADIENT and row["mode"] != "local_then_aggregate":
        # trial: T Gaussian steps of multiplier √T·z(ε_t) (≡ one of multiplier z) ∨ the score's z(ε_t)
        z_t = noise_multiplier("exact", eps_t, delta, 1)
        acc = RdpAccountant(list(ps.ORDERS))
        acc.compose(dp_accounting.dp_event.RepeatAndSelectDpEvent(dp_accounting.GaussianDpEvent(z_t), mean, shape))
        # the final run from the noise it used: σ/Δ per step, T steps
        acc.compose(dp_accounting.GaussianDpEvent(row["sigma"] / row["sensitivity"]), int(row["T"]))
        return float(acc.get_epsilon(delta))
    score = ps.ORDERS / (2 * noise_multiplier("exact", eps_t, delta, 1) ** 2)
    if row["privacy_unit"] == "party":  # the selected trial released: public scores, no final run
        trial = _pure(eps_t)
        final_curve = np.zeros_like(ps.ORDERS)
    elif row["family"] in ("output", "voting", "objective"):  # one pure ε-DP release
        trial = np.maximum(_pure(eps_t), score)
        final_curve = _pure(float(row["eps_accounted"]))
    elif row["family"] == "admm":
        T = int(row["T"])
        trial = np.maximum(T * _pure(calib.admm_alpha(eps_t, T, delta, b["admm"]["accountant"])), score)
        final_curve = T * _pure(float(row["alpha_step"]))
    else:  # literal gradient and DP-SGD: the module's curve, the library's theorem and conversion
        trial = selection.trial_curve(cfg, row["mechanism"], eps_t)
        final_curve = selection.run_curve(cfg, row["mechanism"], float(row["eps_accounted"]))
    sel = rdp_acc._compute_rdp_repeat_and_select(ps.ORDERS, trial, mean, shape)
    eps, _ = rdp_acc.compute_epsilon(ps.ORDERS, sel + final_curve, delta)
    if row["privacy_unit"] == "party":  # pure trials: the theorem's pure limit may be tighter
        return min(float(eps), (2 + shape) * eps_t)
    return float(eps)


def test_every_private_row_is_end_to_end_private_at_its_target(default_run):
    """eps_end_to_end ≤ ε in every private row, and an independent accountant agrees."""
    cfg, frame, _ = default_run
    private = frame[(frame["selection"] == "private") & (frame["family"] != "reference")]
    assert len(private) and private["mechanism"].nunique() == len(registry.configured(cfg)) - 1
    assert (private["eps_end_to_end"] <= private["epsilon"] * (1 + 1e-9)).all()
    assert (private["delta_end_to_end"] == cfg["benchmark"]["delta"]).all()
    share = cfg["benchmark"]["selection"]["final_share"]
    record, party = private[private["privacy_unit"] == "record"], private[private["privacy_unit"] == "party"]
    np.testing.assert_allclose(record["eps_accounted"], share * record["epsilon"], rtol=1e-3)
    # party level: the released trial's own ε is ε_t, and the selection is the whole procedure
    np.testing.assert_allclose(party["eps_accounted"], party["eps_trial"], rtol=1e-12)
    assert (party["eps_selection"] == party["eps_end_to_end"]).all()
    assert (record["eps_selection"] < record["epsilon"]).all() and (private["eps_trial"] > 0).all()
    for _, row in private.drop_duplicates(["mechanism", "epsilon"]).iterrows():
        independent = _independent_epsilon(row, cfg)
        assert independent <= row["epsilon"] * (1 + 1e-6), (row["mechanism"], row["epsilon"], independent)
        assert independent == pytest.approx(row["eps_end_to_end"], rel=2e-3)


def test_hparams_record_the_protocol_the_trials_and_the_split(default_run):
    cfg, frame, hp = default_run
    rec = hp["private"]["wyx"]
    assert rec["selection"] == "private" and rec["final_share"] == cfg["benchmark"]["selection"]["final_share"]
    for eps in cfg["benchmark"]["eps_grid"]:
        e = rec["by_epsilon"][str(float(eps))]
        assert e["trials_drawn"] == len(e["candidates_tried"]) >= 1
        assert e["eps_end_to_end"] <= eps * (1 + 1e-9) and e["eps_final"] == pytest.approx(0.5 * eps)
        assert e["chosen"] == e["candidates_tried"][e["best_trial"]]
        rows = frame[(frame["selection"] == "private") & (frame["mechanism"] == "wyx") & (frame["epsilon"] == eps)]
        assert (rows["hparam_value"] == e["chosen"]).all()
    assert rec["trials_drawn"] == sum(v["trials_drawn"] for v in rec["by_epsilon"].values())
    assert hp["oracle"]["wyx"]["selection"] == "oracle"


def test_a_split_that_cannot_meet_the_target_stops_planning(make_small_cfg):
    cfg = make_small_cfg()
    cfg["benchmark"]["eps_grid"] = [0.005]
    cfg["benchmark"]["selection"]["trials"]["mean"] = 1000.0
    with pytest.raises(ConfigError, match=r"benchmark\.selection\.trials\.mean.*cannot meet ε = 0\.005") as err:
        planning_budgets.check_benchmark(cfg)  # planning's one check of selection budgets (issue 47)
    assert "\n" not in str(err.value)
    cfg["benchmark"]["selection"]["protocol"] = "oracle"
    planning_budgets.check_benchmark(cfg)  # nothing to meet


def test_public_protocol_removes_its_split_from_the_private_pool(bench_data, make_small_cfg):
    cfg = make_small_cfg()
    cfg["benchmark"]["selection"].update(protocol="public", final_run_reading=False)
    cfg["benchmark"]["mechanisms"] = ["wyx"]
    rows, hp = train.run_job(cfg, "synthetic", bench_data, ("wyx",), LOG)
    frame = results.to_frame(rows, EXTRA_COLUMNS)
    n_public = hp["public"]["wyx"]["n_public"]
    assert n_public == math.ceil(cfg["benchmark"]["val_frac"] * bench_data.n)
    assert (frame["n"] <= bench_data.n - n_public).all()
    assert (frame["eps_selection"] == 0).all()
    np.testing.assert_allclose(frame["eps_end_to_end"], frame["epsilon"], rtol=1e-3)


def _selected(shape: float, mean: float, eps_t: float, X: np.ndarray, y: np.ndarray, models: np.ndarray,
              gen: np.random.Generator, noise: bool, draws: int) -> np.ndarray:
    """How often the random-stopping selection of :mod:`.selection` outputs candidate 0."""
    cfg = {"benchmark": {"selection": {"trials": {"shape": shape, "mean": mean}}}}
    out = np.empty(draws, dtype=bool)
    for i in range(draws):
        trials = selection.draw_trials(gen, cfg, models.shape[1])
        scores = selection.noisy_scores(models[:, trials], X, y, 5.0, eps_t, 1e-5, gen, noise)
        out[i] = trials[int(np.argmin(scores))] == 0
    return out


@pytest.mark.parametrize(("noise", "refuted"), [(False, True), (True, False)])
def test_selection_on_unnoised_scores_is_refuted_by_the_accountant(noise, refuted):
    """Planted bug: the private protocol claimed, the scores not noised. On neighbouring validation sets
    (one label flipped) the winner flips, and the empirical lower bound on ε (Clopper–Pearson, 99 %)
    exceeds the accounted selection ε; the honest protocol's stays below it."""
    shape, mean, eps_t, delta = 1.0, 8.0, 0.05, 1e-5
    accounted = ps.rdp_to_epsilon(ps.repeat_and_select_rdp(ps.gaussian_rdp(noise_multiplier("exact", eps_t, delta, 1)),
                                                           shape, mean), delta)
    X = np.ones((51, 1))
    models = np.array([[1.0, -1.0]])  # candidate 0 wins when positives are the majority
    y = np.r_[np.ones(26), -np.ones(25)]
    y_neighbour = y.copy()
    y_neighbour[0] = -1.0
    draws = 4000
    gen = np.random.default_rng(3)
    p = _selected(shape, mean, eps_t, X, y, models, gen, noise, draws).sum()
    q = _selected(shape, mean, eps_t, X, y_neighbour, models, gen, noise, draws).sum()
    p_lo = stats.beta.ppf(0.005, p, draws - p + 1) if p > 0 else 0.0
    q_hi = stats.beta.ppf(0.995, q + 1, draws - q) if q < draws else 1.0
    eps_lower = math.log(max(p_lo - delta, 1e-300) / q_hi)
    assert (eps_lower > accounted) is refuted, (eps_lower, accounted)


def test_party_level_rows_are_private_per_party(default_run, bench_data):
    """Issue 43: every party-level row's eps_end_to_end is per party and ≤ its target. No party holds
    a validation record (they are held out, ``n_validation`` in the record); the
    trials ran on the row's own partition (the released model is the selected trial: its λ is a
    candidate and its noise norm the trial's); independent bound: the pure-DP limit of the theorem,
    (2 + η)ε_t per party (Papernot & Steinke 2022, Thm 2; 3ε_t at η = 1)."""
    cfg, frame, hp = default_run
    s = cfg["benchmark"]["selection"]
    rows = frame[(frame["selection"] == "private") & (frame["privacy_unit"] == "party")]
    assert set(rows["mechanism"]) == {"param_avg", "hamm_vote", "hamm_soft"}
    assert (rows["eps_end_to_end"] <= rows["epsilon"] * (1 + 1e-9)).all()
    assert (rows["eps_end_to_end"] <= (2 + s["trials"]["shape"]) * rows["eps_trial"] * (1 + 1e-9)).all()
    fit, val = plan.validation_split(bench_data.n, cfg, "synthetic")
    assert (rows["n"] <= len(fit)).all()
    for mech in rows["mechanism"].unique():
        rec = hp["private"][mech]
        assert rec["privacy_unit"] == "party" and rec["n_validation"] == len(val)
    for m, u in rows[["m", "u"]].drop_duplicates().itertuples(index=False):
        part = plan.partitions(cfg, "synthetic", len(fit), int(m), int(u), cfg["benchmark"]["reps"],
                                     "grid_party")
        cell = rows[(rows["m"] == m) & (rows["u"] == u)]
        assert set(cell["partition"]) == {plan.fingerprint(part, r) for r in range(cfg["benchmark"]["reps"])}
        # the parties index the held-out pool: every index is < len(fit), none is a validation record
        assert int(part.order.max()) < len(fit)
    record = frame[(frame["selection"] == "private") & (frame["privacy_unit"] == "record")]
    assert not set(rows["partition"]) & set(record["partition"])  # the record rows keep the whole pool


def test_every_row_states_its_guarantee_for_party_members_and_validation_records(default_run):
    """Issue 58: every row gives its guarantee for both kinds of individual it reads. Private rows:
    ``eps_validation_record`` ≤ the target at δ; for the party-level rows it is recomputed from the
    row's score noise (``score_multiplier``) by dp-accounting (``RepeatAndSelectDpEvent`` of the
    Gaussian score, its RDP accountant), and their party ε by the theorem's pure closed form
    (2 + η)ε_t; for the record-level rows a validation record is a pool record (= ``eps_end_to_end``).
    Oracle and reference rows: +inf (no guarantee), and they say why."""
    cfg, frame, _ = default_run
    b, s = cfg["benchmark"], cfg["benchmark"]["selection"]
    delta, shape, mean = float(b["delta"]), float(s["trials"]["shape"]), float(s["trials"]["mean"])
    private = frame[(frame["selection"] == "private") & (frame["family"] != "reference")]
    assert (private["eps_validation_record"] <= private["epsilon"] * (1 + 1e-9)).all()
    assert (private["delta_validation_record"] == delta).all()
    record, party = private[private["privacy_unit"] == "record"], private[private["privacy_unit"] == "party"]
    assert len(party) and (record["eps_validation_record"] == record["eps_end_to_end"]).all()
    assert set(record["validation_records"]) == {selection.VALIDATION["record"]}
    assert set(party["validation_records"]) == {selection.VALIDATION["party"]}
    for _, row in party.drop_duplicates(["mechanism", "epsilon"]).iterrows():
        acc = RdpAccountant(list(ps.ORDERS))
        acc.compose(dp_accounting.dp_event.RepeatAndSelectDpEvent(
            dp_accounting.GaussianDpEvent(float(row["score_multiplier"])), mean, shape))
        independent = float(acc.get_epsilon(delta))
        assert independent <= row["epsilon"] * (1 + 1e-6), (row["mechanism"], row["epsilon"], independent)
        assert independent == pytest.approx(row["eps_validation_record"], rel=2e-3)
        assert row["eps_end_to_end"] <= (2 + shape) * row["eps_trial"] * (1 + 1e-9) <= row["epsilon"] * (1 + 1e-9)
    for name in ("oracle",):
        rows = frame[frame["selection"] == name]
        assert np.isinf(rows["eps_validation_record"]).all() and np.isinf(rows["eps_end_to_end"]).all()
        assert set(rows["validation_records"]) == {selection.VALIDATION["oracle"]}
    refs = frame[(frame["selection"] == "private") & (frame["family"] == "reference")]
    assert np.isinf(refs["eps_validation_record"]).all()
    assert set(refs["validation_records"]) == {selection.VALIDATION["reference"]}


def test_party_level_scores_are_noised_for_one_validation_record(bench_data, make_small_cfg):
    """Issue 58: the party-level runner scores every trial with the shipped noisy scores at the
    budget's ε_s (Gaussian for one validation record, σ = clip/n_val · z(ε_s, δ)), noise on, on the
    validation records held out of every party; without it the selection reads them un-noised."""
    cfg = make_small_cfg()
    cfg["benchmark"]["selection"]["final_run_reading"] = False
    spy = mock.patch.object(selection, "noisy_scores", wraps=selection.noisy_scores)
    with spy as calls:
        output_runner.run_output(cfg, "synthetic", bench_data, LOG, ids=("hamm_soft",))
    _, val = plan.validation_split(bench_data.n, cfg, "synthetic")
    assert calls.call_count > 0
    for call in calls.call_args_list:
        _, X_val, y_val, clip, eps_s, delta, _, noise = call.args
        assert noise is True and len(y_val) == len(val) and clip == cfg["benchmark"]["selection"]["score_clip"]
        assert eps_s in {selection.budget(cfg, "hamm_soft", float(e)).eps_score for e in cfg["benchmark"]["eps_grid"]}
        assert delta == cfg["benchmark"]["delta"]


def test_party_level_selection_with_validation_in_the_parties_is_refused(bench_data, make_small_cfg):
    """A party-level mechanism must not reach the record-level selection (trials on the tuning
    partition, scores noised per record): the common selection refuses it in one line."""
    cfg = make_small_cfg()
    tun = runner.tuning_data(cfg, "synthetic", bench_data, "private")
    with pytest.raises(ConfigError, match="party-level mechanism") as err:
        runner.select(cfg, "synthetic", tun, ["hamm_soft"], "lambda", [0.01, 0.1], lambda *a: {})
    assert "\n" not in str(err.value)


def test_can_meet_says_whether_the_split_meets_the_target(make_small_cfg):
    cfg = make_small_cfg()
    assert selection.can_meet(cfg, "wyx", 1.0) and selection.can_meet(cfg, "hamm_soft", 1.0)
    cfg["benchmark"]["selection"]["final_share"] = 0.999
    assert not selection.can_meet(cfg, "wyx", 1.0)
    assert selection.can_meet(cfg, "hamm_soft", 1.0)  # party level: no final run, the share is unused


def test_slack_of_each_family_is_recorded_and_computed_from_its_curve(default_run):
    """Issue 43: every private (mechanism, ε) record carries its slack: ε_t/ε and the RDP curve's ε
    at δ of one run over that run's calibration target, recomputed here from the row's noise for the
    Gaussian family (dp-accounting) and from randomised response for the pure families."""
    cfg, frame, hp = default_run
    delta = cfg["benchmark"]["delta"]
    for mech, rec in hp["private"].items():
        if "by_epsilon" not in rec:
            continue
        for eps, e in rec["by_epsilon"].items():
            sl = e["slack"]
            assert sl["trial_share"] == pytest.approx(e["eps_trial"] / float(eps), rel=1e-12)
            if mech in ("wyx", "wddp_per_round", "jayaraman_per_round"):
                acc = RdpAccountant(list(ps.ORDERS))
                acc.compose(dp_accounting.GaussianDpEvent(noise_multiplier("exact", e["eps_final"], delta, 1)))
                assert sl["run_rdp_slack"] == pytest.approx(acc.get_epsilon(delta) / e["eps_final"], rel=1e-6)
                assert sl["run_rdp_slack"] > 1  # RDP's conversion is looser than the exact Gaussian
            elif registry.get(mech).family in ("output", "voting", "objective"):
                eps_rdp, _ = rdp_acc.compute_epsilon(ps.ORDERS, _pure(e["eps_final"]), delta)
                assert sl["run_rdp_slack"] == pytest.approx(eps_rdp / e["eps_final"], rel=1e-6)


def test_ranking_and_report_state_both_guarantees(default_run):
    """Issue 58: the ranking says, per cell and reading, what its ranked rows guarantee (units, the
    largest ε for a party member and for a validation record), and the report's footing line and
    reading sentence say it from the rows: ≤ ε for both in the end-to-end reading, none in the
    papers' convention."""
    _, frame, _ = default_run
    ranks = ranking.ranking_table(frame)
    e2e = ranks[ranks["privacy_reading"] == "end_to_end"]
    assert len(e2e) and (e2e["privacy_units"] == "party,record").all()
    assert (e2e["eps_end_to_end_max"] <= e2e["epsilon"] * (1 + 1e-9)).all()
    assert (e2e["eps_validation_record_max"] <= e2e["epsilon"] * (1 + 1e-9)).all()
    final = ranks[ranks["privacy_reading"] == "final_run"]
    assert np.isinf(final["eps_end_to_end_max"]).all() and np.isinf(final["eps_validation_record_max"]).all()
    bench = xr.Benchmark(headline_rows(frame), [], {}, ranks)
    footing = " ".join(xr.footing(bench, {}))
    units = footing.split(" — ", 1)[1].split("**Validation records**")[0]  # the rows' units by display name
    ids = set(bench.table["mechanism"])
    assert not any(f" {m}," in units or f" {m}." in units or f" {m};" in units for m in ids if "_" in m), units
    assert "at most the target for every individual it reads" in footing
    assert "and one validation record (largest ratio" in footing and "no finite ε" not in footing
    assert "declare it public" not in footing and "declared public" not in " ".join(xr.outside_accounting())
    assert "for one validation record (largest ratio" in xr.reading_sentence(bench)
    assert "validation split" in section.INTRO and "eps_validation_record" in section.INTRO
