"""The voting study under a split per repetition (issue 60; docs/studies/voting.md).

(a) the fixed split (``split.per_repetition: false``) reproduces the tables recorded before the
change to the last bit; (b) under a split per repetition each repetition draws its pools within
its own training records, solves its references on them, is scored on its own test records, and
no record outside its training part reaches its training or its λ selection (a poisoning test);
(c) the work counts of both designs (docs: "Cost of a split per repetition").
"""

from __future__ import annotations

import copy
import math
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import optimize

from mpdp import config, results
from mpdp.data import splits
from mpdp.data.prepare import load
from mpdp.io import save_npy
from mpdp.studies.voting import plan, train

ROOT = Path(__file__).resolve().parents[2]
#: both tables of :func:`_cfg` under the fixed split, recorded on commit ea2dd5c (before issue 60),
#: on the 900/300 synthetic set (conftest ``fixed_split_dir``); every column but ``seconds``
RECORDED = Path(__file__).parent / "data" / "fixed_split_tables_ea2dd5c.csv.gz"
TABLES = ("kddcup99", "kddcup99_multiclass")
#: the columns of a row that read its repetition's test records (every other one must not)
READS_TEST = ["test_error", "accuracy", "heldout_risk", "thm4_bound", "majority_error"]


class _NullLog:
    def info(self, *args, **kwargs) -> None:
        pass

    warning = info


def _cfg(per_repetition: bool = True, **voting) -> dict:
    cfg = copy.deepcopy(config.load(ROOT / "config" / "smoke.yaml"))
    cfg["split"]["per_repetition"] = per_repetition
    cfg["voting"].update({"M_grid": [5, 10], "eps_grid": [0.5, 5.0], "reps": 2, "lambda": None,
                          "lambda_grid": [0.01, 0.1, 1.0], "tune_draws": 3, **voting})
    return cfg


def _frame(cfg, data, table, work=None) -> pd.DataFrame:
    return results.to_frame(train.table_rows(cfg, table, data, _NullLog(), work=work), plan.EXTRA_COLUMNS)


def _csv(frame: pd.DataFrame) -> pd.DataFrame:
    return pd.read_csv(pd.io.common.StringIO(frame.to_csv(index=False)))


def test_the_fixed_split_reproduces_the_recorded_tables_to_the_last_bit(fixed_split_dir):
    cfg = _cfg(per_repetition=False)
    ours = pd.concat([_frame(cfg, fixed_split_dir, t).assign(table=t) for t in TABLES], ignore_index=True)
    pd.testing.assert_frame_equal(_csv(ours.drop(columns="seconds")), pd.read_csv(RECORDED), check_exact=True)


def test_each_repetition_draws_its_pools_within_its_own_training_records(synthetic_dir):
    cfg = _cfg()
    pool, K, _ = train.load_pool(synthetic_dir, "kddcup99_multiclass")
    tasks = [train.repetition_task(pool, K, cfg, rep) for rep in range(3)]
    for rep, task in enumerate(tasks):
        tr, te = pool.indices(rep, cfg)
        aux, val, priv, test = (task.rows[k] for k in ("aux", "val", "priv", "test"))
        np.testing.assert_array_equal(test, te)
        np.testing.assert_array_equal(np.sort(np.concatenate([aux, val, priv])), tr)  # a partition of train_r
        assert len(np.intersect1d(aux, val)) == len(np.intersect1d(aux, priv)) == len(np.intersect1d(val, priv)) == 0
        for X, y, rows in ((task.X_aux, task.y_aux, aux), (task.X_val, task.y_val, val),
                           (task.X_priv, task.y_priv, priv), (task.X_test, task.y_test, test)):
            np.testing.assert_array_equal(X, pool.X[rows])
            np.testing.assert_array_equal(y, pool.classes[rows])  # the 5-class codes (Pool.of with classes)
        assert (len(aux), len(val), len(priv), len(test)) == (len(tasks[0].rows["aux"]), len(tasks[0].rows["val"]),
                                                             len(tasks[0].rows["priv"]), pool.n_test)
    # each repetition its own records: another split, other pools
    assert not np.array_equal(tasks[0].rows["test"], tasks[1].rows["test"])
    assert not np.array_equal(tasks[0].rows["val"], tasks[1].rows["val"])
    # the fixed split: the prepared split and one draw of the pools for every repetition
    fixed = _cfg(per_repetition=False)
    data = load(synthetic_dir)
    aux, val, priv = plan.aux_split(pool.n_train, pool.n, fixed["voting"]["aux_frac"], fixed["root_seed"],
                                    "kddcup99", fixed["voting"]["val_frac"])
    for rep in range(2):
        task = train.repetition_task(pool, K, fixed, rep)
        np.testing.assert_array_equal(task.X_priv, np.asarray(data.X_train)[priv])
        np.testing.assert_array_equal(task.X_val, np.asarray(data.X_train)[val])
        np.testing.assert_array_equal(task.X_test, np.asarray(data.X_test))


def _pooled_logistic(X: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    """Independent minimiser of mean log(1 + exp(−y x·w)) + (λ/2)‖w‖² (scipy, not the study's Newton)."""
    def f(w):
        z = -y * (X @ w)
        return np.mean(np.logaddexp(0.0, z)) + 0.5 * lam * w @ w, \
            X.T @ (-y * 0.5 * (1.0 + np.tanh(z / 2))) / len(y) + lam * w
    return optimize.minimize(f, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B",
                             options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10_000}).x


def test_each_repetitions_references_are_its_own_records(synthetic_dir, monkeypatch):
    """The pooled reference of repetition r (control ``pooled_lr``, B5's J*, the warm starts) is the
    minimiser on r's private records, scored on r's test records; the majority class is r's
    private pool's, on r's test records."""
    cfg = _cfg(M_grid=[5], eps_grid=[1.0], lambda_grid=[0.01, 1.0], tune_draws=1, reps=3,
               selection={**_cfg()["voting"]["selection"], "final_run_reading": False})
    built = []

    class Recorded(train.Pooled):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            built.append(self)

    monkeypatch.setattr(train, "Pooled", Recorded)
    frame = plan.main_rows(_frame(cfg, synthetic_dir, "kddcup99"))
    pool, _, _ = train.load_pool(synthetic_dir, "kddcup99")
    lam = cfg["voting"]["lambda_local"]
    errors = []
    assert len(built) == 3  # one pooled reference per repetition
    for rep in range(3):
        tr, te = pool.indices(rep, cfg)
        priv = train.repetition_task(pool, 2, cfg, rep).rows["priv"]
        assert np.isin(priv, tr).all()
        w = _pooled_logistic(pool.X[priv], pool.y[priv].astype(float), lam)
        np.testing.assert_allclose(built[rep].model(lam), w, atol=1e-6)
        expected = np.mean(np.where(pool.X[te] @ w >= 0, 1, -1) != pool.y[te])
        got = frame[(frame["rep"] == rep) & (frame["mechanism"] == "pooled_lr")]["test_error"]
        assert len(got) == 1 and float(got.iloc[0]) == expected
        errors.append(float(got.iloc[0]))
        values, counts = np.unique(pool.y[priv], return_counts=True)
        majority = np.mean(pool.y[te] != values[np.argmax(counts)])
        assert (frame.loc[frame["rep"] == rep, "majority_error"] == majority).all()
    assert len(set(errors)) > 1  # three repetitions, three test sets


def _poisoned(src: Path, dst: Path, rows: np.ndarray, n_train: int) -> Path:
    """A copy of a prepared set with the features (and 5-class codes) of the pool rows ``rows``
    replaced; the binary labels, on which a split draws, are kept."""
    shutil.copytree(src, dst)
    gen = np.random.default_rng(7)
    for part, idx in (("train", rows[rows < n_train]), ("test", rows[rows >= n_train] - n_train)):
        X = np.load(dst / f"X_{part}.npy")
        X[idx] = gen.normal(size=(len(idx), X.shape[1])) / np.sqrt(X.shape[1])
        save_npy(dst / f"X_{part}.npy", X)
        c = np.load(dst / f"y_class_{part}.npy")
        c[idx] = (c[idx] + 1) % (int(c.max()) + 1)
        save_npy(dst / f"y_class_{part}.npy", c)
    return dst


@pytest.mark.parametrize("table", TABLES)
def test_a_repetition_reads_no_record_outside_its_training_part(synthetic_dir, tmp_path, table):
    """Poisoning every record outside repetition 0's training part (its test records: the pool is
    train ∪ test) changes none of repetition 0's columns but those scored on its test records:
    neither its training, nor its references, nor either protocol's λ selection read them."""
    cfg = _cfg(M_grid=[5], eps_grid=[0.5, 5.0], lambda_grid=[0.01, 1.0], tune_draws=2)
    pool, _, _ = train.load_pool(synthetic_dir, table)
    test0 = pool.indices(0, cfg)[1]
    bad = _poisoned(synthetic_dir, tmp_path / "poisoned", test0, pool.n_train)
    clean, dirty = _frame(cfg, synthetic_dir, table), _frame(cfg, bad, table)
    keep = [c for c in clean.columns if c not in READS_TEST + ["seconds"]]
    rep0 = clean["rep"] == 0
    pd.testing.assert_frame_equal(clean.loc[rep0, keep], dirty.loc[rep0, keep], check_exact=True)
    assert (clean.loc[rep0, "test_error"] != dirty.loc[rep0, "test_error"]).any()  # the poison is there
    # repetition 1 trains on some of repetition 0's test records: its training columns move
    trained = ["risk_gap", "excess_risk"]
    assert not clean.loc[~rep0, trained].equals(dirty.loc[~rep0, trained])


def test_the_selection_runs_per_repetition_and_the_work_counts(synthetic_dir):
    """Oracle protocol (its evaluation count is deterministic): the fixed split selects once per M,
    |mechanisms|·|grid|·(|ε|·tune_draws + 1) validation evaluations per M; a split per repetition
    once per (M, repetition): exactly reps times as many. The pooled minimisers: one pool, or one per
    repetition (reps times as many solves)."""
    over = {"selection": {**_cfg()["voting"]["selection"], "protocol": "oracle"}, "reps": 3}
    counts = {}
    for own in (False, True):
        cfg = _cfg(per_repetition=own, **over)
        work: Counter[str] = Counter()
        frame = plan.main_rows(_frame(cfg, synthetic_dir, "kddcup99", work))
        counts[own] = work
        tuned = frame[frame["lambda_source"] == "tuned"]
        per_rep = tuned.groupby(["M", "mechanism", "epsilon"])["lambda"].nunique()
        if not own:
            assert (per_rep == 1).all()  # one λ per (M, ε, method) for every repetition
    v = _cfg(**over)["voting"]
    G, E, D, R = len(v["lambda_grid"]), len(v["eps_grid"]), v["tune_draws"], v["reps"]
    per_M = len(train.mechanisms(2)) * G * (E * D + 1)
    assert counts[False]["validation_evaluations"] == len(v["M_grid"]) * per_M
    assert counts[True]["validation_evaluations"] == R * counts[False]["validation_evaluations"]
    lam_loc_in_grid = math.isclose(min(abs(math.log(g / v["lambda_local"])) for g in v["lambda_grid"]), 0.0)
    assert counts[False]["pooled_solves"] == G + (not lam_loc_in_grid)
    assert counts[True]["pooled_solves"] == R * counts[False]["pooled_solves"]
    assert counts[True]["local_fits"] > counts[False]["local_fits"]  # each repetition's tuning partitions


def test_describe_is_logged_with_the_work(synthetic_dir, caplog):
    import logging

    cfg = _cfg(M_grid=[5], eps_grid=[1.0], reps=1, **{"lambda": 0.05})
    with caplog.at_level(logging.INFO):
        train.table_rows(cfg, "kddcup99", synthetic_dir, logging.getLogger("voting_split_test"))
    assert splits.describe(cfg) in caplog.text and "local_fits" in caplog.text
