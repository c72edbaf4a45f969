"""λ chosen with the noise in the loop (spec E5 [REC]): tuning streams apart from the reported ones."""

from __future__ import annotations

import copy
import logging
import math

import numpy as np
import pandas as pd
import pytest

from mpdp import results
from mpdp.mechanisms import output_perturbation as op
from mpdp.seeding import assert_disjoint, is_tuning_key
from mpdp.studies.voting import figures, plan, train
from tests.voting.conftest import unit_rows

LOG = logging.getLogger("test_voting_lambda")
EPS = [30.0, 300.0]  # party level, M = 10, d = 12: where the noise decides λ


@pytest.fixture(scope="module")
def linear_task() -> train.Task:
    """A binary task with a linear rule and 5 % label noise; large validation and test sets."""
    gen = np.random.default_rng(3)
    d = 12
    w_true = gen.normal(size=d)

    def data(n):
        X = unit_rows(gen, n, d)
        y = np.where(X @ w_true >= 0, 1, -1).astype(np.int8)
        return X, np.where(gen.random(n) < 0.05, -y, y).astype(np.int8)

    (Xa, ya), (Xp, yp), (Xt, yt), (Xv, yv) = data(400), data(1000), data(3000), data(2000)
    return train.Task(Xa, ya, Xp, yp, Xt, yt, 2, Xv, yv)


@pytest.fixture
def tuned_cfg(voting_cfg) -> dict:
    cfg = copy.deepcopy(voting_cfg)
    cfg["voting"].update({"lambda": None, "lambda_grid": [1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0],
                          "eps_grid": EPS, "tune_draws": 20})
    return cfg


def test_noise_in_the_loop_picks_a_larger_lambda_at_small_eps_and_it_pays(linear_task, tuned_cfg):
    M = 10
    choice = train.select_lambdas(tuned_cfg, "adult", linear_task, M, train.Pooled(linear_task),
                                  plan.Streams(0), LOG)
    for mech in train.mechanisms(2):
        assert choice[(mech, EPS[0])][0] >= choice[(mech, math.inf)][0], mech
        assert {src for (m, _), (_, src) in choice.items() if m == mech} == {"tuned"}
    for mech in ("hamm_soft", "param_avg"):  # more noise, larger λ; the noise-free choice is the smallest
        assert choice[(mech, EPS[0])][0] > choice[(mech, EPS[1])][0] > choice[(mech, math.inf)][0], mech
    # on fresh draws and the test set, the tuned λ beats the noise-free validation's λ at small ε
    models = train.Partition(linear_task, plan.party_split(len(linear_task.X_priv), M, 7, "adult", 0),
                             1e-3, train.Pooled(linear_task))
    gen = np.random.default_rng(99)
    for mech in ("hamm_soft", "param_avg"):
        for eps in EPS:
            errs = {}
            for lam in (choice[(mech, eps)][0], choice[(mech, math.inf)][0]):
                w = models.released(mech, lam)
                cal = models.calibrate(tuned_cfg, mech, eps, w, lam, M)
                W_p = w + np.stack([op.draw_noise(gen, cal, w.shape) for _ in range(200)])
                errs[lam] = train.error(train.predict(W_p, linear_task.X_test, 2), linear_task.y_test).mean()
            tuned, noise_free = errs[choice[(mech, eps)][0]], errs[choice[(mech, math.inf)][0]]
            assert tuned < noise_free - 0.05, (mech, eps, errs)


def test_fixed_lambda_skips_the_selection(linear_task, voting_cfg):
    streams = plan.Streams(0)
    choice = train.select_lambdas(voting_cfg, "adult", linear_task, 10, train.Pooled(linear_task), streams, LOG)
    assert choice[("hamm_soft", 0.5)] == (0.05, "config") and choice[("param_avg", 0.5)] == (1e-3, "local")
    assert not streams.tuning and not streams.evaluated


def _rows(cfg, data_dir, table="kddcup99") -> tuple[pd.DataFrame, plan.Streams]:
    streams = plan.Streams(cfg["root_seed"])
    frame = results.to_frame(train.table_rows(cfg, table, data_dir, LOG, streams), plan.EXTRA_COLUMNS)
    return frame, streams


@pytest.mark.parametrize("table", ["kddcup99", "kddcup99_multiclass"])
def test_tuning_keys_are_disjoint_from_the_evaluated_ones(synthetic_dir, tuned_cfg, table):
    cfg = copy.deepcopy(tuned_cfg)
    cfg["voting"].update({"M_grid": [5], "reps": 2, "tune_draws": 2, "lambda_grid": [1e-2, 1.0]})
    frame, streams = _rows(cfg, synthetic_dir, table)
    assert_disjoint(streams.tuning, streams.evaluated)
    assert all(is_tuning_key(k) for k in streams.tuning) and streams.tuning
    # every reported repetition's partition and noise are among the evaluated keys
    for rep in range(2):
        assert plan.partition_key("kddcup99", 5, rep) in streams.evaluated
        assert ("voting", "noise", table, "hamm_soft", 5, EPS[0], rep) in streams.evaluated  # oracle rows
        assert ("voting", "noise_private", table, "hamm_soft", 5, EPS[0], rep) in streams.evaluated  # private
    # the selection alone (either protocol, each repetition's on its own task: a split per
    # repetition) draws from tuning streams only, none of which a repetition uses
    for rep in range(2):
        task, _ = train.load_task(synthetic_dir, table, cfg, rep)
        for protocol in ("private", "oracle"):
            selection = plan.Streams(cfg["root_seed"])
            train.select_lambdas(cfg, table, task, 5, train.Pooled(task), selection, LOG, protocol=protocol, rep=rep)
            assert not selection.evaluated and selection.tuning <= streams.tuning
            assert_disjoint(selection.tuning, streams.evaluated)
            # keyed by the repetition: its selection is its own
            assert all(any(k[i:i + 2] == ("repetition", rep) for i in range(len(k))) for k in selection.tuning)
    # a selection that reused a repetition's stream is caught
    with pytest.raises(ValueError, match="evaluated repetitions draw from tuning streams"):
        assert_disjoint(streams.tuning, streams.evaluated | {next(iter(streams.tuning))})
    private = plan.main_rows(frame)
    private = private[private["privacy_unit"] != "none"]
    assert set(private["lambda_source"]) == {"private"} and private["lambda"].isin([1e-2, 1.0]).all()
    oracle = frame[(frame["experiment"] == "voting_final_run") & (frame["privacy_unit"] != "none")]
    assert set(oracle["lambda_source"]) == {"tuned"} and len(oracle) == len(private)


def test_evaluated_draws_do_not_depend_on_the_tuning(synthetic_dir, tuned_cfg):
    # more tuning draws change the selection's streams only: wherever the chosen λ agrees, the
    # reported repetitions see exactly the same partition, noise and test error
    cfg = copy.deepcopy(tuned_cfg)
    cfg["voting"].update({"M_grid": [5], "reps": 2, "lambda_grid": [1e-2, 1.0]})
    a, b = copy.deepcopy(cfg), copy.deepcopy(cfg)
    a["voting"]["tune_draws"], b["voting"]["tune_draws"] = 2, 5
    fa, sa = _rows(a, synthetic_dir)
    fb, sb = _rows(b, synthetic_dir)
    assert sa.evaluated == sb.evaluated and sa.tuning == sb.tuning
    keys = ["experiment", "mechanism", "M", "epsilon", "rep", "lambda"]
    both = fa.merge(fb, on=keys, suffixes=("_a", "_b"))
    assert len(both) >= len(plan.sweep_rows(fa))  # the sweep rows at least (every λ of the grid)
    np.testing.assert_array_equal(both["noise_norm_a"], both["noise_norm_b"])
    np.testing.assert_array_equal(both["test_error_a"], both["test_error_b"])


def test_lambda_figure_builds_with_curves_majority_line_and_chosen_lambda(synthetic_dir, tuned_cfg, tmp_path):
    cfg = copy.deepcopy(tuned_cfg)
    cfg["voting"].update({"M_grid": [5, 10], "h1_M": 5, "reps": 2, "tune_draws": 2, "lambda_grid": [1e-2, 1.0, 10.0],
                          "lambda_sweep_eps": EPS})
    tables = {t: _rows(cfg, synthetic_dir, t)[0] for t in ("kddcup99", "kddcup99_multiclass")}
    sweep = plan.sweep_rows(tables["kddcup99"])
    # the sweep: every λ of the grid x ε of lambda_sweep_eps x 3 methods x repetitions, at M = h1_M only
    assert set(sweep["M"]) == {5} and set(sweep["lambda"]) == {1e-2, 1.0, 10.0}
    assert len(sweep) == 3 * 2 * len(plan.SWEEP_MECHANISMS) * 2 and set(sweep["lambda_source"]) == {"sweep"}
    assert not plan.sweep_rows(tables["kddcup99"]).index.isin(plan.main_rows(tables["kddcup99"]).index).any()
    fig = figures.lambda_tradeoff(tables, cfg)
    axes = fig.axes
    assert len(axes) == 2 * 2  # tables x ε
    for i, ax in enumerate(axes):  # row-major: kddcup99, then kddcup99_multiclass
        # the mean over repetitions of each repetition's own majority-class error (issue 60)
        expected = tables[sorted(tables)[i // 2]].groupby("rep")["majority_error"].first().mean()
        majority = [ln for ln in ax.get_lines() if ln.get_label().startswith("majority class")]
        assert len(majority) == 1 and majority[0].get_ydata()[0] == pytest.approx(expected)
        curves = [ln for ln in ax.get_lines() if ln.get_label() in figures.LABELS.values()
                  or ln.get_label() in figures.MULTICLASS_LABELS.values()]
        assert len(curves) == len(plan.SWEEP_MECHANISMS)
        assert any(ln.get_label().startswith("λ chosen") for ln in ax.get_lines())
    figures.render("hamm_lambda", tables, cfg, tmp_path / "l.png", tmp_path / "l.pdf")
    assert (tmp_path / "l.png").stat().st_size > 5_000
    assert "hamm_lambda" in figures.FIGURE_IDS and figures.figure_tables("hamm_lambda", list(tables)) == list(tables)
