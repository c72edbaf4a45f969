"""Gradient-perturbation mechanisms on the batch trainer (spec M2, M3.1, M3.2, M4)."""

import dataclasses

import numpy as np
import pytest
from training_helpers import make_run as _run

from mpdp import mechanisms
from mpdp.data.partition import PartitionSet
from mpdp.engine import gd as engine
from mpdp.mechanisms import RunSpec
from mpdp.mechanisms.gradient_batch import train_batch
from mpdp.privacy.calibration import noise_std
from mpdp.privacy.ledger import accounted_epsilon


def _partition(n: int, sizes: list[int], reps: int = 1, seed: int = 0) -> PartitionSet:
    gen = np.random.default_rng(seed)
    order = np.stack([gen.permutation(n)[: sum(sizes)] for _ in range(reps)])
    return PartitionSet(order=order, sizes=np.tile(np.array(sizes), (reps, 1)))


def _train(runs, X, y, part, dtype="float64"):
    theta0 = {r: np.full(X.shape[1], 0.01 * (r + 1)) for r in range(part.sizes.shape[0])}
    return train_batch(runs, X, y, part, theta0, root_seed=7, dtype=dtype, dedup=False)


@pytest.fixture
def same_noise(monkeypatch):
    """Give every run the noise stream of its repetition and party only."""
    monkeypatch.setattr(RunSpec, "noise_key", lambda self, party=None: ("noise", self.rep, party))


def test_calibration_uses_effective_size():
    sizes = np.array([10, 30, 60])
    wd = mechanisms.WDDP.calibrate(_run(mechanism="wddp", mode="per_round"), sizes)
    ja = mechanisms.JAYARAMAN.calibrate(_run(mechanism="jayaraman", mode="per_round"), sizes)
    assert wd.sigma == pytest.approx(noise_std("ma16", 0.5, 1e-3, 60, 2.0 / 100))
    assert ja.sigma == pytest.approx(noise_std("ma16", 0.5, 1e-3, 60, 2.0 / (3 * 10)))
    assert ja.sigma / wd.sigma == pytest.approx(100 / 30)  # spec B9 ratio n/(m n_(1))
    assert wd.eps_accounted == pytest.approx(accounted_epsilon(wd.sigma, 2.0 / 100, 60, 1e-3))
    assert wd.eps_accounted <= 0.5


def test_literal_mode_ledger_reports_worst_party():
    sizes = np.array([10, 90])
    cal = mechanisms.WDDP.calibrate(_run(mechanism="wddp", mode="local_then_aggregate"), sizes)
    assert cal.eps_accounted_scope == "worst_party"
    assert cal.eps_accounted == pytest.approx(accounted_epsilon(cal.sigma, 2.0 / 10, 60, 1e-3))
    assert cal.eps_accounted > 0.5  # spec I-1: only (eps n/n_(1), delta)


def test_per_round_wddp_equals_wyx_with_same_noise(problem, same_noise):
    X, y = problem
    part = _partition(len(y), [30, 50, 70, 90])
    runs = [_run(), _run(mechanism="wddp", mode="per_round", m=4)]
    out = _train(runs, X, y, part)
    np.testing.assert_allclose(out.thetas[:, 0], out.thetas[:, 1], atol=1e-12)
    assert out.calibrations[0].sigma == pytest.approx(out.calibrations[1].sigma)


@pytest.mark.parametrize("mode", ["per_round", "local_then_aggregate"])
def test_weighted_and_simple_average_coincide_for_equal_sizes(problem, same_noise, mode):
    X, y = problem
    part = _partition(len(y), [60, 60, 60, 60])
    runs = [_run(mechanism="wddp", mode=mode, m=4), _run(mechanism="jayaraman", mode=mode, m=4)]
    out = _train(runs, X, y, part)
    np.testing.assert_allclose(out.thetas[:, 0], out.thetas[:, 1], atol=1e-12)


def test_uneven_sizes_separate_the_averages(problem, same_noise):
    X, y = problem
    part = _partition(len(y), [20, 40, 60, 120])
    runs = [_run(mechanism="wddp", mode="per_round", m=4, epsilon=13.0),
            _run(mechanism="jayaraman", mode="per_round", m=4, epsilon=13.0)]
    out = _train(runs, X, y, part)
    assert np.abs(out.thetas[:, 0] - out.thetas[:, 1]).max() > 1e-3


def test_run_alone_equals_run_in_batch(problem):
    X, y = problem
    part = _partition(len(y), [40, 80, 120], reps=2)
    target = _run(mechanism="wddp", mode="local_then_aggregate", m=3, rep=1)
    others = [
        _run(mechanism="jayaraman", mode="per_round", m=3, rep=0),
        _run(mechanism="wddp", mode="per_round", m=3, rep=1, epsilon=0.1),
        dataclasses.replace(target, epsilon=0.2),
        dataclasses.replace(target, rep=0),
    ]
    alone = _train([target], X, y, part).thetas[:, 0]
    batch = _train(others[:2] + [target] + others[2:], X, y, part).thetas[:, 2]
    np.testing.assert_allclose(alone, batch, atol=1e-10)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_restructured_blocks_equal_runs_trained_one_by_one(problem, small_tiles, dtype):
    # issue 12: every run sharing a partition trains in one batch (both mechanisms, every
    # accountant reading and ε of a repetition share each party block; all per-round runs
    # share the pooled block), tiled, in both layouts; each must equal the run trained alone
    X, y = problem
    part = _partition(len(y), [40, 80, 110], reps=2, seed=3)
    runs = [
        _run(mechanism=mech, mode=mode, accountant=acc, m=3, rep=rep, epsilon=eps, experiment="u_sweep")
        for mech in ("wddp", "jayaraman")
        for mode, accountants in (("local_then_aggregate", ("ma16", "exact", "exact_per_party")),
                                  ("per_round", ("ma16", "exact")))
        for acc in accountants for eps in (0.5, 4.0) for rep in (0, 1)
    ]
    batch = train_batch(runs, X, y, part, {0: np.full(6, 0.01), 1: np.full(6, -0.02)}, root_seed=7,
                        dtype=dtype, dedup=True)
    # party blocks: 6 readings x 2 epsilons = 12 columns (transposed layout); pooled: 16 columns
    assert sum(r.mode == "per_round" for r in runs) > engine.TRANSPOSED_MAX_COLUMNS
    tol = 1e-12 if dtype == "float64" else 2e-5
    for k, run in enumerate(runs):
        alone = train_batch([run], X, y, part, {run.rep: np.full(6, 0.01 if run.rep == 0 else -0.02)},
                            root_seed=7, dtype=dtype, dedup=True)
        scale = max(1.0, np.abs(alone.thetas).max())
        np.testing.assert_allclose(batch.thetas[:, k], alone.thetas[:, 0], rtol=0, atol=tol * scale)
        assert batch.flops[k] == alone.flops[0] or run.mode == "per_round"


def test_shared_noise_makes_parties_draw_the_same_noise():
    run = _run(mechanism="wddp", mode="local_then_aggregate", m=2, noise_sharing="shared")
    assert run.noise_key(0) == run.noise_key(1)
    indep = dataclasses.replace(run, noise_sharing="independent")
    assert indep.noise_key(0) != indep.noise_key(1)
    assert run.noise_key(0) != dataclasses.replace(run, mechanism="jayaraman").noise_key(0)


def test_nonprivate_reference_has_no_noise_and_no_guarantee(problem):
    X, y = problem
    part = _partition(len(y), [len(y)])
    runs = [_run(mechanism="nonprivate", accountant="none", epsilon=float("inf"), T=400, eta=1.0, lam=0.1)]
    out = _train(runs, X, y, part)
    assert out.calibrations[0].sigma == 0 and out.calibrations[0].eps_accounted == float("inf")
    from mpdp.models import logistic

    np.testing.assert_allclose(out.thetas[:, 0], logistic.solve_optimum(X, y, 0.1), atol=1e-6)
