"""Benchmark training on a synthetic data set: one row per key, ε at the target, noise off."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from mpdp import results
from mpdp.models import logistic
from mpdp.studies.benchmark import (
    admm_runner,
    gradient_runner,
    output_runner,
    plan,
    registry,
    selection,
    train,
)
from mpdp.studies.benchmark.schema import EXTRA_COLUMNS

LOG = logging.getLogger("test")
KEY = ["mechanism", "epsilon", "m", "u", "rep"]


@pytest.fixture()
def all_rows(bench_cfg, bench_data):
    rows, hp = [], {}
    for ids in registry.job_groups(bench_cfg).values():
        r, h = train.run_job(bench_cfg, "synthetic", bench_data, ids, LOG)
        rows += r
        for protocol, mechs in h.items():
            hp.setdefault(protocol, {}).update(mechs)
    return results.to_frame(rows, EXTRA_COLUMNS), hp


def test_every_mechanism_one_row_per_key_at_the_target(all_rows, bench_cfg):
    frame, hp = all_rows
    b = bench_cfg["benchmark"]
    assert set(frame["mechanism"]) == {m.id for m in registry.BUILTIN}
    assert not frame.duplicated([*KEY, "selection"]).any()
    n_cells = len(b["m_grid"]) * len(b["u_grid"])
    protocols = selection.protocols(bench_cfg)
    assert protocols == ["private", "oracle"]
    assert len(frame) == len(protocols) * len(registry.BUILTIN) * len(b["eps_grid"]) * n_cells * b["reps"]
    private = frame[frame["mechanism"] != "nonprivate"]
    # the final run's accounted ε: the common target (oracle), its final share (private); never above
    # (party level, private: the released trial's ε_t = ε/(2 + η), the pure limit of the selection)
    party_trial = (private["selection"] == "private") & (private["privacy_unit"] == "party")
    share = np.where(party_trial, 1.0 / (2.0 + b["selection"]["trials"]["shape"]),
                     np.where(private["selection"] == "private", b["selection"]["final_share"], 1.0))
    np.testing.assert_allclose(private["eps_total"], share * private["epsilon"], rtol=1e-3)
    assert (private["eps_total"] <= share * private["epsilon"] * (1 + 1e-9)).all()
    gauss = private["family"] == "gradient"
    assert (private.loc[gauss, "delta_total"] == b["delta"]).all()
    assert (private.loc[private["family"] == "admm", "delta_total"] == b["delta"]).all()
    assert (private.loc[private["family"].isin(["output", "voting"]), "delta_total"] == 0).all()
    assert (private.loc[gauss, "sigma"] > 0).all()
    # the non-private reference is θ* itself
    ref = frame[frame["mechanism"] == "nonprivate"]
    assert (ref["optimal_gap"] == 0).all() and np.isinf(ref["eps_total"]).all()
    assert (frame["optimal_gap"] >= -1e-7).all() and frame["accuracy"].between(0, 1).all()
    # paired repetitions: every mechanism of a (m, u, rep) sees the same partition sizes
    # (the private party-level rows: their own partition of the pool less the validation records)
    own = (frame["selection"] == "private") & (frame["privacy_unit"] == "party")
    for rows in (frame[~own], frame[own]):
        sizes = rows.groupby(["m", "u", "rep"])[["n", "n_min", "n_max", "partition"]].nunique()
        assert (sizes == 1).all().all()
    assert frame[~own].groupby(["m", "u"])["partition"].nunique().eq(b["reps"]).all()  # reps differ
    # one selection budget: the same candidates × seeds for every tuned mechanism
    budgets = {len(v["candidates"]) * v["seeds"] for k, v in hp["oracle"].items() if k != "nonprivate"}
    assert budgets == {2}
    assert frame.loc[frame["mechanism"] == "hamm_soft", "public_data"].all()
    assert set(frame.loc[frame["mechanism"] == "hamm_vote", "privacy_unit"]) == {"party"}


def test_results_are_reproducible(bench_cfg, bench_data):
    a, _ = output_runner.run_output(bench_cfg, "synthetic", bench_data, LOG)
    b, _ = output_runner.run_output(bench_cfg, "synthetic", bench_data, LOG)
    assert [r["accuracy"] for r in a] == [r["accuracy"] for r in b]
    assert [r.get("noise_norm") for r in a] == [r.get("noise_norm") for r in b]


def _gd(X, y, w, eta, lam, T, theta0):
    """Independent plain gradient descent on Σ_i w_i ℓ_i + (λ/2)‖θ‖² (float64)."""
    theta = theta0.copy()
    for _ in range(T):
        s = -y / (1.0 + np.exp(y * (X @ theta)))
        theta = theta - eta * (X.T @ (w * s) + lam * theta)
    return theta


def test_gradient_noise_off_is_plain_gradient_descent(bench_cfg, bench_data):
    cfg = bench_cfg
    cfg["benchmark"]["gradient"]["dtype"] = "float64"
    b, g = cfg["benchmark"], cfg["benchmark"]["gradient"]
    eta, m, u = 1.0, 4, 3
    settings = [("wyx", 1.0, eta), ("wddp_literal", 1.0, eta), ("jayaraman_per_round", 1.0, eta)]
    keys, thetas, _, _, _ = gradient_runner._gradient_batch(cfg, "synthetic", bench_data.X, bench_data.y, m, u,
                                                   settings, 1, "grid", noise_scale=0.0)
    part = plan.partitions(cfg, "synthetic", bench_data.n, m, u, 1, "grid")
    parties = part.party_indices(0)
    theta0 = gradient_runner.initial_point(cfg["root_seed"], "benchmark:synthetic", 0, bench_data.p, g["init_std"])
    X, y, lam, T = bench_data.X, bench_data.y, b["lambda"], g["T"]
    rows = np.concatenate(parties)
    pooled = _gd(X[rows], y[rows], np.full(len(rows), 1 / len(rows)), eta, lam, T, theta0)
    local = sum(len(p) / len(rows) * _gd(X[p], y[p], np.full(len(p), 1 / len(p)), eta, lam, T, theta0)
                for p in parties)
    simple = _gd(X[rows], y[rows], np.concatenate([np.full(len(p), 1 / (m * len(p))) for p in parties]),
                 eta, lam, T, theta0)
    np.testing.assert_allclose(thetas[:, 0], pooled, atol=1e-9)
    np.testing.assert_allclose(thetas[:, 1], local, atol=1e-9)
    np.testing.assert_allclose(thetas[:, 2], simple, atol=1e-9)


def test_output_noise_off_is_the_average_of_exact_local_minimisers(bench_cfg, bench_data):
    lam, m, u = 0.05, 4, 3
    part = plan.partitions(bench_cfg, "synthetic", bench_data.n, m, u, 1, "grid")
    parties = part.party_indices(0)
    models = output_runner._output_models(bench_data, bench_data.X, bench_data.y, parties, lam)
    theta, led, norm = output_runner._output_release(bench_cfg, "synthetic", "jayaraman_output",
                                             models["jayaraman_output"], 1.0, lam, m, u,
                                             int(part.sizes[0].min()), 0, "grid", noise=False)
    # independent: scikit-learn's L2 logistic regression, C = 1/(n_j λ), no separate intercept
    local = [LogisticRegression(C=1 / (len(p) * lam), fit_intercept=False, tol=1e-12, max_iter=10_000)
             .fit(bench_data.X[p], bench_data.y[p]).coef_[0] for p in parties]
    np.testing.assert_allclose(theta, np.mean(local, axis=0), atol=1e-5)
    assert norm == 0.0
    noisy, _, norm = output_runner._output_release(bench_cfg, "synthetic", "jayaraman_output",
                                           models["jayaraman_output"], 1.0, lam, m, u,
                                           int(part.sizes[0].min()), 0, "grid")
    assert norm > 0 and not np.allclose(noisy, theta)


def test_admm_noise_off_converges_to_the_pooled_optimum(bench_cfg, bench_data):
    cfg = bench_cfg
    cfg["benchmark"]["lambda"] = 0.1
    cfg["benchmark"]["admm"]["T"] = 150
    m, u = 2, 1
    part = plan.partitions(cfg, "synthetic", bench_data.n, m, u, 1, "grid")
    [(theta, res, _)] = admm_runner._admm_batch(cfg, "synthetic", bench_data.X, bench_data.y, m, u,
                                          [(part.party_indices(0), 0, [("dvp", 1.0, 1.0), ("pvp", 1.0, 1.0)])],
                                          "grid", noise=False)
    rows = np.concatenate(part.party_indices(0))
    star = logistic.solve_optimum(bench_data.X[rows], bench_data.y[rows], 0.1)
    np.testing.assert_allclose(theta, np.stack([star, star], axis=1), atol=1e-4)
    [(noisy, _, _)] = admm_runner._admm_batch(cfg, "synthetic", bench_data.X, bench_data.y, m, u,
                                        [(part.party_indices(0), 0, [("dvp", 1.0, 1.0)])], "grid")
    assert np.abs(noisy[:, 0] - star).max() > 1e-3


def test_cells_too_small_are_skipped_with_a_reason(bench_cfg):
    bench_cfg["benchmark"].update({"m_grid": [2, 32], "u_grid": [1, 9], "min_party_size": 20})
    kept, skipped = plan.cells(bench_cfg, 400)
    assert kept == [(2, 1), (2, 9)]  # 32 parties of 400 records: 12 or 2 records in the small ones
    assert len(skipped) == 2 and all("min_party_size" in s for s in skipped)


def test_unequal_selection_budgets_are_a_config_error(bench_cfg):
    from mpdp import config
    from mpdp.errors import ConfigError

    raw = dict(bench_cfg)
    raw["benchmark"]["admm"]["penalty_candidates"] = [0.1, 1.0, 10.0]
    with pytest.raises(ConfigError, match="same selection budget"):
        config.validate(raw)


def test_table_paths_function_lists_configured_available_tables(bench_cfg):
    paths = plan.table_paths_function(bench_cfg, ["adult", "breast_cancer"])
    assert paths() == ["data/results/benchmark/breast_cancer.parquet"]
    other = {k: v for k, v in bench_cfg.items() if k != "benchmark"}
    assert paths(other) == []
    bench_cfg["benchmark"]["datasets"] = ["adult", "bank", "breast_cancer"]
    assert paths(bench_cfg) == ["data/results/benchmark/adult.parquet",
                                "data/results/benchmark/breast_cancer.parquet"]
