"""Job plan of the full grid, results rows, and cross-validation (spec E3, E8)."""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from training_helpers import make_run as _run

from mpdp import config, mechanisms, results
from mpdp.data.partition import PartitionSet
from mpdp.mechanisms.gradient_batch import train_batch
from mpdp.models import logistic
from mpdp.pipeline import rule_keys
from mpdp.studies.wddp import plan
from mpdp.studies.wddp.cv import cross_validate, cv_settings, eta_lookup, one_se_choice
from mpdp.studies.wddp.evaluate import (
    compute_optimum,
    lambda_sensitivity,
    rep_references,
    result_rows,
)
from mpdp.studies.wddp.plan import cv_run_count

ROOT = Path(__file__).resolve().parents[2]


def test_full_grid_is_a_few_dozen_coarse_jobs():
    # one job per (data set, ε-sweep m), the centralised one, and one per u-sweep setting
    cfg = config.load(ROOT / "config" / "config.yaml")
    jobs = [j for ds in cfg["datasets"] for j in plan.jobs(cfg, ds)]
    w = cfg["wddp"]
    assert len(jobs) == len(cfg["datasets"]) * (1 + len(w["m_grid"]) + len(w["u_settings"]))
    assert len({(j.dataset, j.job_id) for j in jobs}) == len(jobs)
    for job in jobs:
        assert plan.parse_job_id(job.dataset, job.job_id) == job


def test_job_priority_starts_the_longest_jobs_first():
    # Snakemake schedules ready jobs by priority: the u-sweep jobs (every u of the grid, about
    # twice an ε-sweep job's work) must start before the ε-sweep jobs with parties, those
    # before the central one, and a larger data set first
    cfg = config.load(ROOT / "config" / "config.yaml")
    prio = {(ds, j.job_id): plan.job_priority(cfg, ds, j.job_id)
            for ds in ("adult", "breast_cancer") for j in plan.jobs(cfg, ds)}
    shortest_u = min(v for (ds, j), v in prio.items() if ds == "adult" and j.startswith("u_"))
    assert max(v for (ds, j), v in prio.items() if ds == "adult" and j.startswith("eps_m")) < shortest_u
    assert prio[("adult", "eps_central")] < min(
        v for (ds, j), v in prio.items() if ds == "adult" and j.startswith("eps_m"))
    assert max(v for (ds, _), v in prio.items() if ds == "breast_cancer") < min(
        v for (ds, _), v in prio.items() if ds == "adult")
    n, p = plan.PAPER_SHAPES["adult"]
    total = sum(plan.job_workload(cfg, j, n, p)[1] for j in plan.jobs(cfg, "adult"))
    assert prio[("adult", "eps_m8")] == int(plan.job_workload(cfg, plan.parse_job_id("adult", "eps_m8"), n, p)[1] / 1e9)
    assert total == pytest.approx(sum(prio[k] for k in prio if k[0] == "adult") * 1e9, rel=1e-3)



def test_setup_jobs_come_before_every_training_job():
    # θ* and CV gate all of a data set's training jobs: their priority is that whole work, so a
    # CV is never left for last (every core but one idle while it runs, issue 12)
    cfg = config.load(ROOT / "config" / "config.yaml")
    job_prio = {ds: [plan.job_priority(cfg, ds, j.job_id) for j in plan.jobs(cfg, ds)]
                for ds in ("adult", "bank", "kddcup99")}
    setup = {ds: plan.setup_priority(cfg, ds) for ds in job_prio}
    assert min(setup.values()) > max(max(v) for v in job_prio.values())
    n, p = plan.PAPER_SHAPES["bank"]
    w = cfg["wddp"]

    def jobs_flops(c):
        return sum(plan.job_workload(c, j, n, p)[1] for j in plan.jobs(c, "bank"))

    cv_flops = cv_run_count(cfg) * 4.0 * w["T"] * n * p * (1 - 1 / w["cv"]["folds"])
    assert setup["bank"] == int((jobs_flops(cfg) + cv_flops) / 1e9)
    fixed = {**cfg, "wddp": {**w, "eta": 0.1}}  # no CV: only the jobs' work
    assert plan.setup_priority(fixed, "bank") == int(jobs_flops(fixed) / 1e9)


def test_runs_of_a_job_cover_the_grid():
    cfg = config.load(ROOT / "config" / "config.yaml")
    etas = {k: (0.1, "config") for k in plan.method_keys(cfg)}
    w = cfg["wddp"]
    eps_job = plan.runs_for_job(cfg, plan.parse_job_id("adult", "eps_m8"), etas)
    assert w["equal_privacy"]  # the -eq reading: + exact_per_party (literal mode)
    per_mode = {"local_then_aggregate": len(w["accountants"]) + 1, "per_round": 1}
    assert len(eps_job) == len(w["eps_grid"]) * 2 * sum(per_mode[m] for m in w["modes"]) * w["reps"]
    assert {r.accountant for r in eps_job if r.mode == "per_round"} == {w["accountants"][0]}
    assert {r.accountant for r in eps_job if r.mode == "local_then_aggregate"} == {
        *w["accountants"], "exact_per_party"
    }
    cfg_paper = {**cfg, "wddp": {**w, "equal_privacy": False}}
    paper_job = plan.runs_for_job(cfg_paper, plan.parse_job_id("adult", "eps_m8"), etas)
    assert "exact_per_party" not in {r.accountant for r in paper_job}
    central = plan.runs_for_job(cfg, plan.parse_job_id("adult", "eps_central"), etas)
    assert {r.mechanism for r in central} == {"wyx", "nonprivate"} and all(r.m is None for r in central)
    reference = [r for r in central if r.mechanism == "nonprivate"]
    assert len(reference) == w["reps"] and all(r.accountant == "none" for r in reference)
    u_job = plan.runs_for_job(cfg, plan.parse_job_id("adult", "u_m16_e0.05"), etas)
    assert {r.epsilon for r in u_job if r.mechanism != "nonprivate"} == {0.05}
    # one job per u-sweep setting: the same runs for every u of the grid
    assert {r.u for r in u_job} == set(w["u_grid"]["adult"])
    per_u = {u: sorted((r.mechanism, r.mode, r.accountant, r.rep) for r in u_job if r.u == u)
             for u in w["u_grid"]["adult"]}
    assert len({tuple(v) for v in per_u.values()}) == 1 and len(u_job) == len(per_u) * len(per_u[3])


def test_results_rows_have_nonnegative_gap_and_schema(problem):
    X, y = problem
    Xte, yte = X[:60], y[:60]
    gen = np.random.default_rng(1)
    order = np.stack([gen.permutation(len(y))[:200] for _ in range(2)])
    part = PartitionSet(order=order, sizes=np.tile([50, 150], (2, 1)))
    runs = [_run(mechanism=mech, mode=mode, m=2, u=3, rep=rep, epsilon=eps, experiment="u_sweep")
            for mech in ("wddp", "jayaraman") for mode in ("per_round", "local_then_aggregate")
            for rep in (0, 1) for eps in (0.5, 13.0)]
    theta0 = {r: np.zeros(X.shape[1]) for r in (0, 1)}
    batch = train_batch(runs, X, y, part, theta0, root_seed=0, dtype="float64", dedup=True)
    opt = compute_optimum(X, y, runs[0].lam)
    refs = rep_references(X, y, part, theta0, runs[0].lam, opt, need_simple_average=True)
    rows = result_rows(runs, batch.calibrations, batch.thetas, batch.theta0, X, y, Xte, yte,
                       part, refs, opt, "float64", 0.0, batch.flops)
    frame = results.to_frame(rows)
    assert (frame["optimal_gap"] >= -1e-9).all()
    # engine arithmetic, 4 n_b p flops per column and step: a local run's party columns cover
    # its repetition's 200 records; the per-round columns share one block over the union of
    # both repetitions' records (zero weight on the other repetition's)
    per_step = 4.0 * X.shape[1] * runs[0].T
    local = frame["mode"] == "local_then_aggregate"
    assert frame.loc[local, "flops"].eq(per_step * 200).all()
    assert frame.loc[~local, "flops"].eq(per_step * np.unique(order).size).all()
    assert frame["n"].eq(200).all() and frame["n_min"].eq(50).all()
    assert frame["size_ratio"].eq(2.0).all()  # (1+u)/2 for the two-group design
    jay = frame[frame["mechanism"] == "jayaraman"]
    assert (jay["aggregation_bias"] > 0).all()  # uneven sizes: simple average is biased (B3)
    assert frame.loc[frame["mechanism"] == "wddp", "aggregation_bias"].isna().all()
    # the retained rows' optimum is the reference of the gap
    ref = refs[0]
    np.testing.assert_allclose(
        logistic.gradient(ref.theta_star, X[ref.rows], y[ref.rows], runs[0].lam), 0, atol=1e-8)
    # B3's simple-average reference, solved on its own: θ_F* of the 1/(m n_j) weights
    w_F = mechanisms.JAYARAMAN.record_weights(part.sizes[0])
    theta_F = logistic.solve_optimum(X[ref.rows], y[ref.rows], runs[0].lam, weights=w_F)
    bias = logistic.loss(theta_F, X[ref.rows], y[ref.rows], runs[0].lam) - ref.loss_star
    assert ref.simple_average.bias_floor == pytest.approx(bias, rel=1e-6, abs=1e-12)
    assert ref.simple_average.sqnorm == pytest.approx(np.sum((theta_F - ref.theta_star) ** 2), rel=1e-4)


def test_cross_validation_pools_twins_and_follows_the_one_se_rule(problem):
    X, y = problem
    cfg = config.load(ROOT / "config" / "smoke.yaml")
    cfg["wddp"].update(T=20, eta=None, eta_grid=[0.05, 0.3, 1.0])
    cfg["wddp"]["cv"].update(folds=2, seeds=2, ref_m=2)
    table = cross_validate(cfg, "toy", X, y)
    etas = eta_lookup(table)
    assert set(etas) >= set(plan.method_keys(cfg))
    assert all(eta in (0.05, 0.3, 1.0) and src == "cv" for eta, src in etas.values())
    # per-round WD-DP shares WYX's selection (spec M3.2): one CV, pooled seeds
    assert etas[("wddp", "per_round")] == etas[("wyx", "central")]
    scores = pd.DataFrame(table["scores"])
    assert not ((scores["mechanism"] == "wddp") & (scores["mode"] == "per_round")).any()
    n = scores.set_index(["mechanism", "mode"])["n"]
    assert (n.loc[("wyx", "central")] == 2 * 2 * 2).all()  # folds × seeds × 2 members
    assert (n.loc[("jayaraman", "per_round")] == 2 * 2).all()
    # the chosen η: the smallest whose mean is within one SE of the best (independent check)
    for c in table["chosen"]:
        rep = c["selected_as"].split("/")
        g = scores[(scores["mechanism"] == rep[0]) & (scores["mode"] == rep[1])
                   & (scores["accountant"] == c["accountant"])]
        se = g["std_accuracy"] / np.sqrt(g["n"])
        best = g["mean_accuracy"].idxmax()
        ok = g["mean_accuracy"] >= g.loc[best, "mean_accuracy"] - se[best] - 1e-12
        assert c["eta"] == g.loc[ok, "eta"].min()
    with pytest.raises(KeyError):
        etas[("nonprivate", "central")]


def test_one_se_rule_prefers_the_smaller_eta_within_one_se():
    scores = pd.DataFrame({"eta": [0.01, 0.1, 1.0], "mean": [0.75, 0.79, 0.80], "se": [0.01, 0.01, 0.02]})
    assert one_se_choice(scores)["eta"] == 0.1  # 0.79 ≥ 0.80 − 0.02; 0.75 is not
    scores.loc[2, "se"] = 0.005
    assert one_se_choice(scores)["eta"] == 1.0


def test_per_accountant_selection_covers_every_trained_accountant(problem):
    X, y = problem
    cfg = config.load(ROOT / "config" / "smoke.yaml")
    cfg["wddp"].update(T=10, eta=None, eta_grid=[0.05, 1.0])
    cfg["wddp"]["cv"].update(folds=2, seeds=1, ref_m=2, per_accountant=True)
    table = cross_validate(cfg, "toy", X, y)
    etas = eta_lookup(table)
    for mech, mode in plan.method_keys(cfg):
        for acc in plan.accountants_for(cfg, mech, mode):
            assert (mech, mode, acc) in etas
    runs = plan.runs_for_job(cfg, plan.parse_job_id("toy", "eps_m8"), etas)
    for r in runs:
        assert r.eta == etas[(r.mechanism, r.mode, r.accountant)][0]
    assert cv_run_count(cfg) == sum(row["n"] for row in table["scores"])


def test_lambda_sensitivity_matches_our_optimum_without_warnings(problem):
    # scikit-learn (independent) against spec M1a's L-BFGS, λ = 0 included (C = ∞); a third of
    # the rows repeated, which lambda_sensitivity merges (weights = counts): same objective
    X, y = problem
    X, y = np.vstack([X, X[: len(y) // 3]]), np.concatenate([y, y[: len(y) // 3]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = lambda_sensitivity(X, y, X, y, lambdas=(1e-2, 0.0))
    for row in rows:
        theta = logistic.solve_optimum(X, y, row["lambda"])
        assert row["converged"]
        assert row["theta_norm"] == pytest.approx(np.linalg.norm(theta), rel=1e-4)
        assert row["test_accuracy"] == pytest.approx(logistic.accuracy(theta, X, y), abs=1 / len(y))


def test_shared_noise_has_no_per_party_equal_privacy_runs():
    # spec I-1 / E7 #2: exact_per_party gives each party a σ of its own, which shared noise has not;
    # the multiverse's noise_sharing universe failed at its first CV job before (issue 38)
    from mpdp.studies.wddp.checks import wddp_figure_warnings

    cfg = config.load(ROOT / "config" / "config.yaml")
    assert cfg["wddp"]["equal_privacy"]
    assert "exact_per_party" in plan.accountants_for(cfg, "wddp", "local_then_aggregate")
    assert not any("noise_sharing" in w for w in wddp_figure_warnings(cfg))
    cfg["wddp"]["noise_sharing"] = "shared"
    for mech, mode in plan.method_keys(cfg):
        assert "exact_per_party" not in plan.accountants_for(cfg, mech, mode)
    assert "exact" in plan.accountants_for(cfg, "wyx", "central")  # the reading's centralised runs stay
    assert any("noise_sharing: shared" in w for w in wddp_figure_warnings(cfg))


def test_cv_per_setting_selects_eta_per_training_setting(problem):
    """E7 #15's alternative (cv.scope: per_setting): one selection per (m, ε) and (m, ε, u) beside the
    reference one; every training run takes its own setting's η, and the default scope none."""
    X, y = problem
    cfg = config.load(ROOT / "config" / "smoke.yaml")
    cfg["wddp"].update(T=10, eta=None, eta_grid=[0.01, 1.0], m_grid=[2], eps_grid=[0.05, 1.0],
                       u_settings=[{"m": 4, "eps": 0.5}], u_grid={"toy": [1, 3]})
    cfg["wddp"]["cv"].update(folds=2, seeds=1, ref_m=2, per_accountant=False)
    reference = cross_validate(cfg, "toy", X, y)
    assert "chosen_per_setting" not in reference
    cfg["wddp"]["cv"]["scope"] = "per_setting"
    # the CV job sees only the keys rule learning_rates declares (an undeclared read fails)
    declared = rule_keys.keys_for("learning_rates", cfg)
    assert "wddp.u_grid" in declared and "wddp.small_group_frac" in declared
    table = cross_validate(config.restrict(cfg, declared, owner="rule 'learning_rates'"), "toy", X, y)
    assert table["chosen"] == reference["chosen"]  # the reference selection, bit for bit
    settings = {tuple(c["setting"]) for c in table["chosen_per_setting"]}
    assert settings == set(cv_settings(cfg, "toy")) == {
        ("eps_sweep", None, 0.05, None), ("eps_sweep", None, 1.0, None), ("eps_sweep", 2, 0.05, None),
        ("eps_sweep", 2, 1.0, None), ("u_sweep", 4, 0.5, 1), ("u_sweep", 4, 0.5, 3)}
    central = [c for c in table["chosen_per_setting"] if c["setting"][1] is None]
    assert {(c["mechanism"], c["mode"]) for c in central} == {("wyx", "central"), ("wddp", "per_round")}
    etas = eta_lookup(table)
    chosen = {(c["mechanism"], c["mode"], tuple(c["setting"])): c["eta"] for c in table["chosen_per_setting"]}
    differs = False
    for job_id in ("eps_central", "eps_m2"):
        for r in plan.runs_for_job(cfg, plan.parse_job_id("toy", job_id), etas):
            if r.mechanism == "nonprivate":
                continue
            want = chosen[(r.mechanism, r.mode, ("eps_sweep", r.m, r.epsilon, None))]
            assert r.eta == want and r.eta_source == "cv_per_setting"
            differs |= want != etas[(r.mechanism, r.mode)][0]
    for job in plan.jobs(cfg, "toy"):
        if job.experiment == "u_sweep":
            for r in plan.runs_for_job(cfg, job, etas):
                if r.mechanism != "nonprivate":
                    assert r.eta == chosen[(r.mechanism, r.mode, ("u_sweep", job.m, r.epsilon, r.u))]
    assert differs, "no setting chose another η than the reference: the test cannot tell the scopes apart"
    every = sum(row["n"] for row in table["scores"])
    wyx = sum(row["n"] for row in table["scores"] if row["mechanism"] == "wyx")
    # the reference, 4 settings with parties (2 ε × m = 2, 2 u), 2 centralised ones (the WYX group only)
    assert cv_run_count(cfg, "toy") == every + 4 * every + 2 * wyx
