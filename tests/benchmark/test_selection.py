"""Selection protocols of the benchmark (issue 34): end-to-end privacy of every private row, checked by
an independent accountant; the oracle rows are today's; the planted un-noised selection is refuted."""

from __future__ import annotations

import logging
import math
from pathlib import Path

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
from mpdp.studies.benchmark import registry, selection, train
from mpdp.studies.benchmark.schema import EXTRA_COLUMNS

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
    oracle = frame[frame["selection"] == "oracle"].sort_values(TODAY_COLUMNS[:5]).reset_index(drop=True)
    today = pd.read_csv(TODAY)
    ours = pd.read_csv(pd.io.common.StringIO(oracle[TODAY_COLUMNS].to_csv(index=False)))
    pd.testing.assert_frame_equal(ours, today)
    assert np.isinf(oracle["eps_end_to_end"]).all()


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
    if row["family"] in ("output", "voting"):
        train, final = eps_t, float(row["eps_accounted"])
        trial = np.maximum(np.minimum(train, ps.ORDERS * train**2 / 2), score)
        final_curve = np.minimum(final, ps.ORDERS * final**2 / 2)
    elif row["family"] == "admm":
        T = int(row["T"])
        a_t = calib.admm_alpha(eps_t, T, delta, b["admm"]["accountant"])
        trial = np.maximum(T * np.minimum(a_t, ps.ORDERS * a_t**2 / 2), score)
        a_f = float(row["alpha_step"])
        final_curve = T * np.minimum(a_f, ps.ORDERS * a_f**2 / 2)
    else:  # literal gradient and DP-SGD: the module's curve, the library's theorem and conversion
        trial = selection.trial_curve(cfg, row["mechanism"], eps_t)
        final_curve = selection.run_curve(cfg, row["mechanism"], float(row["eps_accounted"]))
    sel = rdp_acc._compute_rdp_repeat_and_select(ps.ORDERS, trial, mean, shape)
    eps, _ = rdp_acc.compute_epsilon(ps.ORDERS, sel + final_curve, delta)
    return float(eps)


def test_every_private_row_is_end_to_end_private_at_its_target(default_run):
    """eps_end_to_end ≤ ε in every private row, and an independent accountant agrees."""
    cfg, frame, _ = default_run
    private = frame[(frame["selection"] == "private") & (frame["family"] != "reference")]
    assert len(private) and private["mechanism"].nunique() == len(registry.configured(cfg)) - 1
    assert (private["eps_end_to_end"] <= private["epsilon"] * (1 + 1e-9)).all()
    assert (private["delta_end_to_end"] == cfg["benchmark"]["delta"]).all()
    share = cfg["benchmark"]["selection"]["final_share"]
    np.testing.assert_allclose(private["eps_accounted"], share * private["epsilon"], rtol=1e-3)
    assert (private["eps_selection"] < private["epsilon"]).all() and (private["eps_trial"] > 0).all()
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
