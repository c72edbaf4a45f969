"""The WD-DP study under a split per repetition (issue 60): each repetition's partition, θ*,
references, η selection and metrics come from its own training and test records, and the fixed
split reproduces the outputs of before issue 60 bit for bit."""

from __future__ import annotations

import copy
import logging
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mpdp import config, io, results
from mpdp.data import partition as P
from mpdp.data import splits
from mpdp.data.prepare import load as load_processed
from mpdp.data.prepare import stratified_split
from mpdp.errors import InputDataError
from mpdp.mechanisms.gradient_batch import initial_point, train_batch
from mpdp.models import logistic
from mpdp.seeding import rng
from mpdp.studies.wddp import cv, plan
from mpdp.studies.wddp.evaluate import (
    compute_optimum,
    lambda_sensitivity,
    rep_references,
    result_rows,
)
from mpdp.studies.wddp.job import (
    check_partition,
    cv_selections,
    load_optimum,
    train_job,
    trivial_partition,
    write_etas,
    write_optimum,
)

ROOT = Path(__file__).resolve().parents[2]
LOG = logging.getLogger("test")
DS = "adult"  # a registered id (job ids, u grid); the records are synthetic


def _pool_arrays(seed: int = 3, n: int = 200, p: int = 6) -> tuple[np.ndarray, np.ndarray]:
    gen = np.random.default_rng(seed)
    Z = gen.normal(size=(n, p - 1))
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    X = np.hstack([Z, np.ones((n, 1))]) / np.sqrt(2.0)
    X[10:20] = X[0:10]  # duplicated records (the engine merges them)
    y = np.where(X @ (gen.normal(size=p) * 3) + 0.3 * gen.normal(size=n) > 0, 1, -1).astype(np.int8)
    return X, y


def _write_processed(root: Path, X: np.ndarray, y: np.ndarray) -> Path:
    """A prepared data set (card and arrays) of the records X, y, its fixed split stratified."""
    train, test = stratified_split(y, 0.2, rng(0, "split-fixture"))
    root.mkdir(parents=True, exist_ok=True)
    for name, a in (("X_train", X[train]), ("y_train", y[train]), ("X_test", X[test]), ("y_test", y[test])):
        np.save(root / f"{name}.npy", a)
    io.write_json({"dataset": DS, "n_train": len(train), "n_test": len(test), "n_features": X.shape[1]},
                  root / "card.json")
    return root


def _cfg(per_repetition: bool, cv_eta: bool = False, reps: int = 2) -> dict:
    cfg = config.load(ROOT / "config" / "smoke.yaml")
    cfg["split"]["per_repetition"] = per_repetition
    w = cfg["wddp"]
    w.update(T=15, reps=reps, eps_grid=[0.25], m_grid=[2], u_settings=[{"m": 2, "eps": 0.1}],
             eta=None if cv_eta else 0.1, eta_grid=[0.05, 0.5])
    w["u_grid"][DS] = [1, 3]
    w["cv"].update(folds=2, seeds=1, ref_m=2)
    return cfg


def _partitions(cfg: dict, processed: Path, out: Path, rows: bool) -> None:
    """The partition files as the partition rule writes them (``rows``: within each repetition's
    training records of the pool, issue 60; else on 0..n_train-1 as before)."""
    w = cfg["wddp"]
    pool = splits.Pool.of(load_processed(processed))
    train = [pool.indices(r, cfg)[0] for r in range(w["reps"])] if rows else None
    for exp in ("eps_sweep", "u_sweep"):
        sets = {(m, u): P.make_partitions(pool.n_train, "random" if exp == "eps_sweep" else "two_group", m, u,
                                          w["reps"], cfg["root_seed"], DS, w["tau_frac"], w["leftover"],
                                          w["small_group_frac"], rows=train)
                for m, u in plan.partition_settings(cfg, DS, exp)}
        P.save_partitions(out / f"{exp}.npz", sets)


def _build(cfg: dict, processed: Path, out: Path) -> dict[str, pd.DataFrame]:
    """θ*, η table, partitions and every training job of the data set, as the workflow runs them."""
    out.mkdir(parents=True, exist_ok=True)
    write_optimum(cfg, processed, out / "optimum.npz", LOG)
    write_etas(cfg, processed, out / "eta.json", LOG)
    _partitions(cfg, processed, out, rows=True)
    tables = {}
    for job in plan.jobs(cfg, DS):
        part = None if job.m is None else out / f"{job.experiment}.npz"
        train_job(cfg, DS, job.job_id, processed, part, out / "optimum.npz", out / "eta.json",
                  out / f"{job.job_id}.parquet", LOG)
        tables[job.job_id] = results.read(out / f"{job.job_id}.parquet")
    return tables


def _old_job(cfg: dict, processed: Path, out: Path, job_id: str) -> pd.DataFrame:
    """A training job computed as before issue 60: the fixed split's arrays X_train/X_test."""
    w = cfg["wddp"]
    data = load_processed(processed)
    X, y = np.asarray(data.X_train, dtype=np.float64), np.asarray(data.y_train, dtype=np.float64)
    Xte, yte = np.asarray(data.X_test, dtype=np.float64), np.asarray(data.y_test, dtype=np.float64)
    job = plan.parse_job_id(DS, job_id)
    runs = plan.runs_for_job(cfg, job, cv.eta_lookup(io.read_json(out / "eta.json")))
    opt = load_optimum(out / "optimum.npz")
    theta0 = {r: initial_point(cfg["root_seed"], DS, r, X.shape[1], w["init_std"]) for r in range(w["reps"])}
    frames = []
    for u in plan.job_unevenness(cfg, job):
        batch_runs = [r for r in runs if r.u == u]
        part = (trivial_partition(X.shape[0], w["reps"]) if job.m is None
                else P.load_partition(out / f"{job.experiment}.npz", job.m, u))
        batch = train_batch(batch_runs, X, y, part, theta0, cfg["root_seed"], w["dtype"], w["dedup"])
        refs = rep_references(X, y, part, theta0, w["lambda"], opt,
                              need_simple_average=any(r.mechanism == "jayaraman" for r in batch_runs))
        frames.append(results.to_frame(result_rows(batch_runs, batch.calibrations, batch.thetas, batch.theta0,
                                                   X, y, Xte, yte, part, refs, opt, w["dtype"], 0.0,
                                                   batch.flops)))
    return results.conform(pd.concat(frames, ignore_index=True))


@pytest.fixture(scope="module")
def processed(tmp_path_factory) -> Path:
    return _write_processed(tmp_path_factory.mktemp("pool") / "processed", *_pool_arrays())


def test_the_fixed_split_reproduces_the_outputs_of_before_issue_60(processed, tmp_path):
    """Fixed split: θ* file, CV η table and every job's rows equal those computed on X_train /
    X_test as before (bit for bit; also checked against main's code before the merge)."""
    cfg = _cfg(per_repetition=False, cv_eta=True)
    data = load_processed(processed)
    X, y = np.asarray(data.X_train, dtype=np.float64), np.asarray(data.y_train, dtype=np.float64)
    Xte, yte = np.asarray(data.X_test, dtype=np.float64), np.asarray(data.y_test, dtype=np.float64)
    out = tmp_path / "fixed"
    out.mkdir()
    write_optimum(cfg, processed, out / "optimum.npz", LOG)
    stored = io.load_npz(out / "optimum.npz")
    opt = compute_optimum(X, y, cfg["wddp"]["lambda"])
    sens = lambda_sensitivity(X, y, Xte, yte)
    assert set(stored) == {"theta", "loss", "eigval", "eigvec", "test_accuracy", "majority_rate", "lambda_grid",
                           "lambda_test_accuracy", "lambda_theta_norm", "lambda_converged"}
    assert np.array_equal(stored["theta"], opt.theta) and float(stored["loss"]) == opt.loss
    assert np.array_equal(stored["eigvec"], opt.hessian_eigenvectors)
    assert float(stored["test_accuracy"]) == float(logistic.accuracy(opt.theta, Xte, yte))
    assert np.array_equal(stored["lambda_test_accuracy"], [r["test_accuracy"] for r in sens])
    write_etas(cfg, processed, out / "eta.json", LOG)
    assert io.read_json(out / "eta.json") == cv.cross_validate(cfg, DS, X, y)
    _partitions(cfg, processed, out, rows=True)
    for job in plan.jobs(cfg, DS):
        part = None if job.m is None else out / f"{job.experiment}.npz"
        train_job(cfg, DS, job.job_id, processed, part, out / "optimum.npz", out / "eta.json",
                  out / f"{job.job_id}.parquet", LOG)
        new = results.read(out / f"{job.job_id}.parquet").drop(columns="seconds")
        old = _old_job(cfg, processed, out, job.job_id).drop(columns="seconds")
        pd.testing.assert_frame_equal(new, old, check_exact=True)


@pytest.fixture(scope="module")
def per_rep(processed, tmp_path_factory) -> tuple[dict, dict[str, pd.DataFrame], Path]:
    cfg = _cfg(per_repetition=True)
    out = tmp_path_factory.mktemp("per_rep")
    return cfg, _build(cfg, processed, out), out


def test_each_repetition_is_scored_on_its_test_records_against_its_own_theta_star(processed, per_rep):
    cfg, tables, out = per_rep
    lam = cfg["wddp"]["lambda"]
    pool = splits.Pool.of(load_processed(processed))
    stored = io.load_npz(out / "optimum.npz")
    assert stored["theta"].shape == (2, pool.X.shape[1]) and int(stored["lambda_rep"]) == 0
    table = pd.concat(tables.values(), ignore_index=True)
    accuracies = []
    for rep in range(2):
        split = pool.repetition(rep, cfg)
        yr, yt = split.y_train.astype(float), split.y_test.astype(float)
        opt = compute_optimum(split.X_train, yr, lam)  # an independent solve on pool[train_r]
        np.testing.assert_array_equal(stored["theta"][rep], opt.theta)
        acc = float(logistic.accuracy(opt.theta, split.X_test, yt))
        accuracies.append(acc)
        rows = table[table["rep"] == rep]
        full = rows[(rows["experiment"] == "eps_sweep")]  # every training record of the repetition
        assert (full["n"] == len(split.train)).all()
        assert (full["optimal_loss"] == opt.loss).all()
        assert (rows["optimal_accuracy"][full.index] == acc).all()
        assert (rows["majority_rate"] == max(np.mean(yt > 0), np.mean(yt <= 0))).all()
        # the two-group design drops records: its reference is solved on the retained records of r
        u_rows = rows[(rows["experiment"] == "u_sweep") & (rows["u"] == 3)]
        part = P.load_partition(out / "u_sweep.npz", 2, 3)
        kept = part.order[rep]
        assert np.isin(kept, split.train).all()
        star = compute_optimum(pool.X[kept], pool.y[kept].astype(float), lam)
        np.testing.assert_allclose(u_rows["optimal_loss"], star.loss, rtol=1e-7)
    assert accuracies[0] != accuracies[1] or not np.array_equal(stored["theta"][0], stored["theta"][1])
    # wrong file for the design: one line, no training on another split's records
    with pytest.raises(InputDataError, match="other split design"):
        train_job(_cfg(per_repetition=False), DS, "eps_central", processed, None, out / "optimum.npz",
                  out / "eta.json", out / "x.parquet", LOG)


def test_a_repetitions_test_records_never_enter_its_training_or_selection(processed, tmp_path):
    """With one repetition, replacing the features of its test records changes nothing but the
    test accuracies: not θ*, not the η selection (CV), not a trained θ's training loss."""
    cfg = _cfg(per_repetition=True, cv_eta=True, reps=1)
    X, y = _pool_arrays()
    pool = splits.Pool.of(load_processed(processed))
    test = pool.indices(0, cfg)[1]
    # the same pool with other features on repetition 0's test records (labels kept: the split
    # is drawn on the labels of every record)
    X_pool, y_pool = pool.X.copy(), pool.y
    gen = np.random.default_rng(9)
    X_pool[test, :-1] = gen.normal(size=(len(test), X.shape[1] - 1)) / 3
    n_train = pool.n_train
    other = tmp_path / "other" / "processed"
    other.mkdir(parents=True)
    for name, a in (("X_train", X_pool[:n_train]), ("y_train", y_pool[:n_train]), ("X_test", X_pool[n_train:]),
                    ("y_test", y_pool[n_train:])):
        np.save(other / f"{name}.npy", a)
    io.write_json(io.read_json(processed / "card.json"), other / "card.json")
    clean = _build(cfg, processed, tmp_path / "clean")
    changed = _build(cfg, other, tmp_path / "changed")
    assert io.read_json(tmp_path / "clean" / "eta.json") == io.read_json(tmp_path / "changed" / "eta.json")
    a, b = io.load_npz(tmp_path / "clean" / "optimum.npz"), io.load_npz(tmp_path / "changed" / "optimum.npz")
    assert np.array_equal(a["theta"], b["theta"])
    same = ["train_loss", "optimal_loss", "init_loss", "optimal_gap", "bound_gap", "predicted_gap", "sigma"]
    differs = False
    for job_id, frame in clean.items():
        pd.testing.assert_frame_equal(frame[same], changed[job_id][same], check_exact=True)
        differs |= not frame["accuracy"].equals(changed[job_id]["accuracy"])
    assert differs  # the test records were read: for the accuracies


def test_eta_is_selected_per_repetition_in_one_batch_per_fold(processed, monkeypatch):
    """CV per repetition: every group's η chosen for each repetition; the repetitions' runs are more
    columns of the same calls (calls = folds, columns × R), each selection reading only its
    repetition's training records; the runs of repetition r use η_r."""
    calls: list[int] = []
    real = cv.train_batch

    def counting(runs, *args, **kw):
        calls.append(len(runs))
        return real(runs, *args, **kw)

    monkeypatch.setattr(cv, "train_batch", counting)
    tables = {}
    for per_repetition in (False, True):
        cfg = _cfg(per_repetition=per_repetition, cv_eta=True)
        pool = splits.Pool.of(load_processed(processed))
        calls.clear()
        tables[per_repetition] = cv.cross_validate(cfg, DS, pool.X, pool.y.astype(float),
                                                   train_rows=cv_selections(cfg, pool))
        tables[per_repetition, "calls"] = list(calls)
    folds = cfg["wddp"]["cv"]["folds"]
    assert len(tables[False, "calls"]) == len(tables[True, "calls"]) == folds
    assert [2 * k for k in tables[False, "calls"]] == tables[True, "calls"]
    chosen = pd.DataFrame(tables[True]["chosen"])
    fixed = pd.DataFrame(tables[False]["chosen"])
    assert "rep" not in fixed and sorted(chosen["rep"].unique()) == [0, 1]
    assert len(chosen) == 2 * len(fixed)
    assert tables[True]["reference"]["per_repetition"] and "per_repetition" not in tables[False]["reference"]
    # the runs of repetition r use η_r
    table = copy.deepcopy(tables[True])
    for c in table["chosen"]:
        c["eta"] = 0.05 if c["rep"] == 0 else 0.5
    runs = plan.runs_for_job(cfg, plan.parse_job_id(DS, "eps_m2"), cv.eta_lookup(table))
    assert {(r.rep, r.eta) for r in runs} == {(0, 0.05), (1, 0.5)}
    ref = plan.runs_for_job(cfg, plan.parse_job_id(DS, "eps_central"), cv.eta_lookup(table))
    assert {(r.rep, r.eta) for r in ref if r.mechanism == "wyx"} == {(0, 0.05), (1, 0.5)}
    with pytest.raises(KeyError, match="repetition 2"):
        plan.runs_for_job({**cfg, "wddp": {**cfg["wddp"], "reps": 3}}, plan.parse_job_id(DS, "eps_m2"),
                          cv.eta_lookup(table))


def test_a_partition_of_another_split_is_refused(processed):
    cfg = _cfg(per_repetition=True)
    pool = splits.Pool.of(load_processed(processed))
    train = [pool.indices(r, cfg)[0] for r in range(2)]
    own = P.make_partitions(pool.n_train, "random", 2, None, 2, 0, DS, rows=train)
    check_partition(own, train, "x")
    old = P.make_partitions(pool.n_train, "random", 2, None, 2, 0, DS)  # on 0..n_train-1
    with pytest.raises(InputDataError, match="outside its training records"):
        check_partition(old, train, "x")
    central = trivial_partition(train)
    assert all(np.array_equal(central.order[r], train[r]) for r in range(2))


def test_the_report_averages_the_per_repetition_references_and_selections(per_rep, processed, tmp_path):
    """Consumers of the θ* file and the η table: one number per data set is the mean over the
    repetitions (accuracy range), the CV curves are averaged over them, every repetition's
    choice is listed, the λ sensitivity names its split; the claims' majority baseline is the
    median over runs."""
    from mpdp.studies.wddp import claims
    from mpdp.studies.wddp import report as wr
    from mpdp.studies.wddp.tuning_report import eta_edge_warnings

    cfg, tables, out = per_rep
    layout = tmp_path / "wddp"
    (layout / "optimum").mkdir(parents=True)
    (layout / "eta").mkdir()
    table = results.conform(pd.concat(tables.values(), ignore_index=True))
    results.write(table, layout / f"{DS}.parquet")
    (layout / "optimum" / f"{DS}.npz").write_bytes((out / "optimum.npz").read_bytes())
    cv_cfg = _cfg(per_repetition=True, cv_eta=True)
    pool = splits.Pool.of(load_processed(processed))
    eta_table = cv.cross_validate(cv_cfg, DS, pool.X, pool.y.astype(float), train_rows=cv_selections(cv_cfg, pool))
    io.write_json(eta_table, layout / "eta" / f"{DS}.json")
    paths = {DS: str(layout / f"{DS}.parquet")}
    stored = io.load_npz(out / "optimum.npz")
    rng_row = wr.accuracy_range({DS: table}, paths).iloc[0]
    assert rng_row["majority-class rate (test)"] == pytest.approx(float(np.mean(stored["majority_rate"])))
    assert rng_row["θ* test accuracy"] == pytest.approx(float(np.mean(stored["test_accuracy"])))
    assert set(wr.lambda_sensitivity_table(paths)["split"]) == {"repetition 0"}
    scores, chosen = wr.cv_scores(paths)
    per = pd.DataFrame(eta_table["scores"])
    one = per[(per["mechanism"] == "wyx") & (per["eta"] == 0.05)]
    row = scores[(scores["mechanism"] == "wyx") & (scores["eta"] == 0.05)].iloc[0]
    assert row["mean_accuracy"] == pytest.approx(one["mean_accuracy"].mean())
    assert row["se"] == pytest.approx(np.sqrt((one["se"] ** 2).sum()) / 2)
    assert len(scores) == len(per) // 2 and sorted(chosen["rep"].unique()) == [0, 1]
    assert "repetition" in wr.cv_choice_table(chosen)
    from mpdp.studies.wddp.figures import cv_curves_figure
    fig = cv_curves_figure(scores.assign(dataset=DS), chosen)  # one curve per group, every repetition's pick
    assert all(len(line.get_xdata()) == len(cv_cfg["wddp"]["eta_grid"]) for ax in fig.axes for line in ax.lines
               if len(line.get_xdata()) > 1)
    assert eta_edge_warnings(chosen, cv_cfg["wddp"]["eta_grid"])["setting"].str.contains("repetition 1").any()
    majority = claims.baselines(table)
    assert majority.loc[majority["cell"] == "*", "value"].iloc[0] == table["majority_rate"].median()
