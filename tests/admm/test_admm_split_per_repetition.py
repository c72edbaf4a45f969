"""The ADMM study's split per repetition (issue 60 items 1, 2, 4; spec E1.2 as amended, E4).

(a) The fixed split reproduces the study as it was before issue 60 bit for bit (its job written out below
from the former ``train_job``); (b) per repetition, every repetition's nodes are its own training records,
its MER its own test records, its η tuning, references and L(θ*) its own training records only.
"""

from __future__ import annotations

import logging
import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from mpdp import config, seeding
from mpdp.data import splits
from mpdp.data.prepare import Processed, stratified_split
from mpdp.mechanisms import admm as zz
from mpdp.pipeline import rule_keys
from mpdp.studies.admm import cases, claims, cost, report, train
from mpdp.studies.admm.cases import StudyData

LOG = logging.getLogger("test")


def _cfg(per_repetition: bool, **admm):
    cfg = config.load("config/smoke.yaml")
    cfg["admm"] = {**cfg["admm"], "T": 3, "reps": 3, "alpha_grid": [0.3, 3.0], "penalty_grid": [0.03, 0.3],
                   "tune_draws": 2, "f4_iterations": [1, 3], **admm}
    cfg["split"] = {**cfg["split"], "per_repetition": per_repetition}
    return cfg


def _processed(n: int = 320, d: int = 4, seed: int = 3) -> Processed:
    gen = np.random.default_rng(seed)
    X = gen.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(gen.random(n) < 1 / (1 + np.exp(-X @ (3 * gen.normal(size=d)))), 1, -1).astype(np.int8)
    tr, te = stratified_split(y, 0.2, seeding.rng(0, "split", "adult"))
    return Processed(X[tr], y[tr], X[te], y[te], {"dataset": "adult", "n_train": len(tr), "n_test": len(te)})


def _former_job(cfg, data: Processed, topology: str):
    """The job of the fixed split as ``train_job`` ran it before issue 60 (one node split of the prepared
    training arrays, one batch per phase, the former stream keys), from the unchanged primitives."""
    a = cfg["admm"]
    root, T, C_R, own = cfg["root_seed"], a["T"], a["C_R"], a["own_unperturbed_in_dual"]
    X, y = np.asarray(data.X_train, dtype=np.float64), np.asarray(data.y_train, dtype=np.float64)
    perm = seeding.rng(root, "admm_split", a["dataset"], a["P"]).permutation(len(y))
    B = len(y) // a["P"]
    nodes = [(np.ascontiguousarray(X[perm[p * B:(p + 1) * B]]), y[perm[p * B:(p + 1) * B]].astype(np.float64))
             for p in range(a["P"])]
    study = StudyData(nodes, np.asarray(data.X_test, dtype=np.float64), np.asarray(data.y_test, dtype=np.float64),
                      len(y))

    def key(run):
        return ("admm_noise", topology, run.mechanism, float(run.alpha), float(run.rho), float(run.penalty),
                int(run.rep))

    runs = train.tuning_runs(cfg)
    res = zz.run_batch(nodes, topology, runs, T, lambda r: seeding.rng(root, *seeding.tuning_key(*key(r))),
                       lambda rel: {"train_loss": train.data_loss(nodes, rel, C_R)}, [T], C_R)
    losses = pd.DataFrame({"mechanism": [r.mechanism for r in runs], "rho": [r.rho for r in runs],
                           "penalty": [r.penalty for r in runs], "rep": [r.rep for r in runs],
                           "draw": [r.rep // a["tune_reps"] for r in runs], "loss": res.metrics["train_loss"][-1]})
    choices = train.choose(cfg, losses, topology, LOG)
    evaluated = []
    for mech in zz.MECHANISMS:
        alphas = [math.nan] if mech == "admm" else [float(x) for x in a["alpha_grid"]]
        c = choices[mech]
        evaluated += [train.Evaluated(zz.ADMMRun(mech, c["rho"], c["penalty"], al, rep, own), mech, "", c["footing"])
                      for al in alphas for rep in range(1 if mech == "admm" else a["reps"])]
    settings: dict = {}
    for mech in ("dvp", "pvp"):
        settings.setdefault((choices[mech]["rho"], choices[mech]["penalty"]), []).append(mech)
    evaluated += [train.Evaluated(zz.ADMMRun("admm", rho, eta, math.nan, 0, own), train.REFERENCE, "+".join(m),
                                  choices[m[0]]["footing"]) for (rho, eta), m in settings.items()]
    runs = [e.run for e in evaluated]
    res = zz.run_batch(nodes, topology, runs, T, lambda r: seeding.rng(root, *key(r)),
                       lambda rel: {"train_loss": train.data_loss(nodes, rel, C_R),
                                    "mer": train.mer(study.X_test, study.y_test, rel)},
                       list(range(a["record_every"], T + 1, a["record_every"])), C_R)
    optimum = {rho: train.centralised_optimum(study, rho, C_R)[1] for rho in sorted({r.rho for r in runs})}
    return train.result_rows(cfg, study, topology, runs, res, optimum, choices, 0.0, labels=evaluated), choices


@pytest.mark.parametrize("topology", ["ring", "complete"])
def test_the_fixed_split_reproduces_the_former_job_bit_for_bit(topology):
    cfg, data = _cfg(False), _processed()
    frame, record = train.run_job(cfg, data, topology, LOG)
    former, choices = _former_job(cfg, data, topology)
    assert frame.drop(columns="seconds").equals(former.drop(columns="seconds"))  # every value, every dtype
    assert record == choices  # the tuning record as before: the choices per mechanism
    assert len(cases.cases(cfg, data)) == 1


def _job(per_repetition: bool, data: Processed, **admm):
    cfg = _cfg(per_repetition, **admm)
    return cfg, *train.run_job(cfg, data, "ring", LOG)


def test_each_repetition_has_its_own_nodes_and_test_records():
    cfg, data = _cfg(True), _processed()
    pool = splits.Pool.of(data)
    groups = cases.cases(cfg, data)
    assert [c.reps for c in groups] == [(0,), (1,), (2,)] and [c.split_rep for c in groups] == [0, 1, 2]
    B = pool.n_train // cfg["admm"]["P"]
    for c in groups:
        tr, te = pool.indices(c.split_rep, cfg)
        rows = np.concatenate(c.data.node_rows)
        assert [len(r) for r in c.data.node_rows] == [B] * cfg["admm"]["P"]
        assert len(np.unique(rows)) == len(rows) and np.isin(rows, tr).all()  # r's training records only
        np.testing.assert_array_equal(c.data.test_rows, te)
        np.testing.assert_array_equal(c.data.X_test, pool.X[te])
        for (X, y), r in zip(c.data.nodes, c.data.node_rows, strict=True):
            np.testing.assert_array_equal(X, pool.X[r])
            np.testing.assert_array_equal(y, pool.y[r])
    assert not np.array_equal(groups[0].data.test_rows, groups[1].data.test_rows)
    # each repetition's node split is its own draw, not the same positions within its records
    pos = [np.searchsorted(pool.indices(c.split_rep, cfg)[0], c.data.node_rows[0]) for c in groups[:2]]
    assert not np.array_equal(pos[0], pos[1])


def _perturbed(data: Processed, pool_rows: np.ndarray) -> Processed:
    """``data`` with the features of the given pool rows changed (labels kept, so every split is kept)."""
    X = np.concatenate([data.X_train, data.X_test])
    gen = np.random.default_rng(9)
    X[pool_rows] = -X[pool_rows] + 0.3 * gen.normal(size=(len(pool_rows), X.shape[1]))
    X[pool_rows] /= np.linalg.norm(X[pool_rows], axis=1, keepdims=True)
    n = data.X_train.shape[0]
    return Processed(X[:n], data.y_train, X[n:], data.y_test, data.card)


def test_a_repetition_reads_no_record_outside_its_own_training_part_but_its_test_records():
    """Changing records outside repetition 0's training part (its test records that are no other
    repetition's) changes none of repetition 0's training losses, tuning, references or L(θ*), only its MER;
    the other repetitions, which train on those records, change."""
    data = _processed()
    cfg, frame, record = _job(True, data)
    pool = splits.Pool.of(data)
    # repetition 0's test records that are no other repetition's: only repetition 0's MER may read them
    only0 = np.setdiff1d(pool.indices(0, cfg)[1], np.union1d(pool.indices(1, cfg)[1], pool.indices(2, cfg)[1]))
    assert len(only0) > 20
    _, moved, moved_record = _job(True, _perturbed(data, only0))
    key = ["mechanism", "alpha", "rep", "iteration"]
    a, b = (f.sort_values(key, kind="stable").reset_index(drop=True) for f in (frame, moved))
    rep0 = a["rep"] == 0
    train_cols = ["train_loss", "optimal_loss", "admm_penalty", "tuning_loss", "noise_norm", "footing"]
    assert a.loc[rep0, train_cols].equals(b.loc[rep0, train_cols])
    assert record["repetitions"][0] == moved_record["repetitions"][0]  # its η tuning: every candidate's loss
    assert not np.allclose(a.loc[rep0, "mer"], b.loc[rep0, "mer"])
    assert not np.allclose(a.loc[~rep0, "train_loss"], b.loc[~rep0, "train_loss"])
    assert record["split"] == splits.describe(cfg)


def test_every_repetitions_references_are_its_own():
    """Non-private ADMM and the references run in every repetition on its own nodes; each repetition's L(θ*)
    is an independent solve on its own training records; Z5 is net of the repetition's own reference."""
    data = _processed()
    cfg, frame, record = _job(True, data)
    a = cfg["admm"]
    groups = cases.cases(cfg, data)
    for c in groups:
        r = c.split_rep
        one = frame[frame["rep"] == r]
        assert {"admm", "admm_ref", "dvp", "pvp"} == set(one["mechanism"])
        choice = record["repetitions"][r]["choices"]
        assert set(one.loc[one["mechanism"] == "admm", "admm_penalty"]) == {choice["admm"]["penalty"]}
        assert set(one.loc[one["mechanism"] == "admm_ref", "admm_penalty"]) == {choice["dvp"]["penalty"],
                                                                               choice["pvp"]["penalty"]}
        X = np.concatenate([x for x, _ in c.data.nodes])
        y = np.concatenate([yy for _, yy in c.data.nodes])
        w = a["C_R"] / len(c.data.nodes[0][1])

        def objective(f, X=X, y=y, w=w):
            z = y * (X @ f)
            return (w * np.logaddexp(0, -z).sum() + 0.5 * a["rho"] * f @ f,
                    X.T @ (-w * y / (1 + np.exp(z))) + a["rho"] * f)

        f = minimize(objective, np.zeros(X.shape[1]), jac=True, method="BFGS", options={"gtol": 1e-11}).x
        independent = w * np.logaddexp(0, -y * (X @ f)).sum()
        assert one["optimal_loss"].nunique() == 1
        assert one["optimal_loss"].iloc[0] == pytest.approx(independent, rel=1e-8)
    assert frame.groupby("rep")["optimal_loss"].first().nunique() == len(groups)
    # Z5: each repetition net of its own reference, not of the references' mean
    ref = claims.reference(frame)
    assert set(ref["rep"]) == {0, 1, 2}
    drift = claims.observations(frame, cfg).query("metric == 'g_drift'").set_index(["rep", "cell"])["value"]
    dvp = frame[frame["mechanism"] == "dvp"].set_index(["rep", "alpha", "iteration"])["train_loss"]
    own = ref.set_index(["rep", "iteration"])["train_loss"]
    for r in range(3):
        want = math.log(dvp[(r, 3.0, 3)] / own[(r, 3)]) - math.log(dvp[(r, 3.0, 1)] / own[(r, 1)])
        assert drift[(r, "ring: α=3")] == pytest.approx(want, rel=1e-12)
    assert report.per_repetition(frame) and "3 repetitions" in report.footing_sentence(frame)


def test_the_job_declares_the_split_keys_it_reads():
    """The job reads the split design (rule_config would refuse an undeclared key); the restricted config
    runs, and a change of split.seed or split.per_repetition reruns it (its settings param)."""
    cfg = config.validate(_cfg(True))
    declared = rule_keys.keys_for("admm_job", cfg)
    assert {"split.per_repetition", "split.seed", "split.test_frac"} <= set(declared)
    restricted = rule_keys.rule_config(cfg, "admm_job")
    assert len(cases.cases(restricted, _processed())) == cfg["admm"]["reps"]


def test_the_work_is_counted_exactly_per_design():
    """The runs, node solves and optimum solves of one topology job, fixed split vs per repetition, on the
    full config (docs/studies/admm.md, "A split per repetition")."""
    full = config.load("config/config.yaml")
    per = cost.counts(full)
    full["split"] = {**full["split"], "per_repetition": False}
    fixed = cost.counts(full)
    assert (fixed.tuning_runs, fixed.evaluated_runs, fixed.optimum_solves) == (63, 283, 1)
    assert (per.tuning_runs, per.evaluated_runs, per.optimum_solves) == (1260, 340, 20)
    assert (fixed.node_solves, per.node_solves) == (173_000, 800_000)
    # the counted runs are the runs a job makes (the smoke-sized job above: per repetition at most two refs)
    data = _processed()
    for per_repetition in (False, True):
        cfg, frame, _ = _job(per_repetition, data)
        made = frame.drop_duplicates(["mechanism", "alpha", "rep", "admm_penalty"])
        counted = cost.counts(cfg)
        assert counted.evaluated_runs - counted.cases <= len(made) <= counted.evaluated_runs


def _rows(spec):
    """A minimal table: {(mechanism, rep): (η, [train_loss per iteration], optimal_loss)} on the ring."""
    return pd.DataFrame([{"topology": "ring", "mechanism": m, "rep": r, "alpha": np.nan if "admm" in m else 1.0,
                          "iteration": t + 1, "train_loss": loss, "mer": 0.2, "rho": 5e-3, "admm_penalty": eta,
                          "optimal_loss": opt, "reference_for": "dvp+pvp" if m == "admm_ref" else "",
                          "footing": "shared"}
                         for (m, r), (eta, losses, opt) in spec.items() for t, loss in enumerate(losses)])


def test_claims_judge_each_repetitions_reference_against_its_own_optimum():
    """Per repetition each reference has its own L(θ*): the unconverged check takes each against its own and
    flags the worst; the footing note compares DVP's and PVP's knobs within each repetition."""
    cfg = _cfg(True)
    spec = {("dvp", 0): (0.1, [3.0, 2.0], 1.0), ("dvp", 1): (0.1, [3.0, 2.0], 2.0),
            ("pvp", 0): (0.1, [3.0, 2.0], 1.0), ("pvp", 1): (0.3, [3.0, 2.0], 2.0),
            ("admm_ref", 0): (0.1, [1.5, 1.0], 1.0), ("admm_ref", 1): (0.1, [2.5, 2.02], 2.0)}
    bad = claims.unusable(_rows(spec), cfg)
    assert len(bad) == 1 and bad["effect"].iloc[0] == pytest.approx(math.log1p(0.01))
    assert "worst of its 2 repetitions" in bad["note"].iloc[0]
    assert claims.unusable(_rows({**spec, ("admm_ref", 1): (0.1, [2.5, 2.0], 2.0)}), cfg).empty
    assert "in 1 of 2 repetitions" in claims.footing_note(_rows(spec), cfg)
    # the same knobs over all repetitions, but never the same within one: not equal footing
    swapped = {**spec, ("dvp", 0): (0.3, [3.0, 2.0], 1.0)}
    assert "not on equal footing" in claims.footing_note(_rows(swapped), cfg)
