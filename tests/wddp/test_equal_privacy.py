"""The equal-privacy reading, the shared-noise refusal and the per-round WD-DP ≡ WYX identity
(issue 11; spec I-1, §0.5, M3.1, M3.2)."""

import dataclasses
import math

import numpy as np
import pytest
from scipy import optimize, stats
from training_helpers import make_run as _run

from mpdp import mechanisms
from mpdp.data.partition import PartitionSet
from mpdp.mechanisms.gradient_batch import train_batch
from mpdp.models import logistic
from mpdp.privacy.calibration import PrivacyParameterError, per_party_noise_std
from mpdp.privacy.ledger import worst_party_epsilon
from mpdp.seeding import seed_sequence
from mpdp.studies.wddp import plan
from mpdp.studies.wddp.evaluate import compute_optimum, rep_references, result_rows

EPS, DELTA, T, G = 0.5, 1e-3, 60, 1.0


def _agm_sigma(eps: float, delta: float) -> float:
    """Analytic Gaussian mechanism σ for sensitivity 1 (Balle & Wang 2018, Thm 8), by brentq.

    Independent of dp-accounting: δ(σ) = Φ(1/(2σ) − εσ) − e^ε Φ(−1/(2σ) − εσ) is decreasing
    in σ; solve δ(σ) = δ.
    """

    def gap(s: float) -> float:
        return stats.norm.cdf(0.5 / s - eps * s) - math.exp(eps) * stats.norm.cdf(-0.5 / s - eps * s) - delta

    return optimize.brentq(gap, 1e-3, 1e3, xtol=1e-14)


def _partition(n: int, sizes: list[int], reps: int = 1, seed: int = 0) -> PartitionSet:
    gen = np.random.default_rng(seed)
    order = np.stack([gen.permutation(n)[: sum(sizes)] for _ in range(reps)])
    return PartitionSet(order=order, sizes=np.tile(np.array(sizes), (reps, 1)))


def test_per_party_std_is_the_exact_std_of_each_party():
    sizes = np.array([10, 30, 60])
    sigmas = per_party_noise_std("exact_per_party", EPS, DELTA, T, G, sizes)
    expected = math.sqrt(T) * _agm_sigma(EPS, DELTA) * 2 * G / sizes
    np.testing.assert_allclose(sigmas, expected, rtol=1e-8)


@pytest.mark.parametrize("mechanism", [mechanisms.WDDP, mechanisms.JAYARAMAN])
def test_literal_mode_calibrated_per_party_gives_the_target_epsilon(mechanism):
    sizes = np.array([10, 30, 60])
    run = _run(mechanism=mechanism.id, mode="local_then_aggregate", accountant="exact_per_party", m=3)
    cal = mechanism.calibrate(run, sizes)
    assert cal.eps_accounted_scope == "worst_party"
    assert cal.eps_accounted == pytest.approx(EPS, rel=1e-6)
    expected = math.sqrt(T) * _agm_sigma(EPS, DELTA) * 2 * G / sizes
    np.testing.assert_allclose(cal.party_sigmas, expected, rtol=1e-8)
    assert cal.sigma == pytest.approx(expected[0]) and cal.n_eff == 10
    # the paper's reading (σ for the total n) is far above the target for the same sizes
    paper = mechanism.calibrate(dataclasses.replace(run, accountant="exact"), sizes)
    assert paper.eps_accounted > 1.5 * EPS


def test_worst_party_epsilon_takes_the_smallest_multiplier():
    sizes = np.array([10, 100])
    # party 1 has the larger σ/Δ unless its σ is 10× smaller: then both are equal
    eps_one = worst_party_epsilon(1.0, G, sizes, T, DELTA)
    eps_two = worst_party_epsilon(np.array([1.0, 0.1]), G, sizes, T, DELTA)
    assert eps_one == pytest.approx(eps_two)
    assert worst_party_epsilon(np.array([1.0, 0.05]), G, sizes, T, DELTA) > eps_one


def test_per_party_accountant_is_refused_outside_the_literal_mode():
    with pytest.raises(PrivacyParameterError, match="literal mode"):
        mechanisms.WDDP.calibrate(_run(mechanism="wddp", mode="per_round", accountant="exact_per_party"), [10, 20])
    shared = _run(mechanism="wddp", mode="local_then_aggregate", accountant="exact_per_party",
                  noise_sharing="shared")
    with pytest.raises(PrivacyParameterError, match="independent noise"):
        mechanisms.WDDP.calibrate(shared, [10, 20])


def test_shared_noise_is_not_given_a_worst_party_epsilon():
    run = _run(mechanism="wddp", mode="local_then_aggregate", m=2, noise_sharing="shared")
    cal = mechanisms.WDDP.calibrate(run, np.array([10, 90]))
    assert cal.eps_accounted_scope == "unaccounted" and math.isnan(cal.eps_accounted)
    indep = mechanisms.WDDP.calibrate(dataclasses.replace(run, noise_sharing="independent"), [10, 90])
    assert indep.eps_accounted_scope == "worst_party" and indep.eps_accounted > 0


def test_per_party_noise_is_used_by_the_trainer(problem):
    """Each party's column runs noisy GD with its own σ_j (independent recursion in numpy)."""
    X, y = problem
    part = _partition(len(y), [40, 80, 120])
    run = _run(mechanism="wddp", mode="local_then_aggregate", accountant="exact_per_party", m=3,
               T=20, eta=0.5, epsilon=2.0)
    theta0 = np.full(X.shape[1], 0.01)
    out = train_batch([run], X, y, part, {0: theta0}, root_seed=3, dtype="float64", dedup=False)
    sigmas = out.calibrations[0].party_sigmas
    final = []
    for j, rows in enumerate(part.party_indices(0)):
        gen = np.random.Generator(np.random.PCG64(seed_sequence(3, *run.noise_key(j))))
        noise = gen.standard_normal((run.T, X.shape[1]))
        theta = theta0.copy()
        for t in range(run.T):
            grad = logistic.gradient(theta, X[rows], y[rows], run.lam)
            theta = theta - run.eta * (grad + sigmas[j] * noise[t])
        final.append(theta)
    expected = np.stack(final, axis=1) @ (part.sizes[0] / part.sizes[0].sum())
    np.testing.assert_allclose(out.thetas[:, 0], expected, atol=1e-10)


def test_per_round_wddp_and_wyx_tables_are_identical(problem):
    """Same noise stream (plan.noise_twin) and η: the results rows coincide (spec M3.2)."""
    X, y = problem
    Xte, yte = X[:60], y[:60]
    part = _partition(len(y), [30, 50, 70, 90], reps=2)
    pooled = PartitionSet(order=part.order, sizes=part.sizes.sum(axis=1, keepdims=True))
    wd = [_run(mechanism="wddp", mode="per_round", m=4, rep=r, accountant=a,
               noise_as=plan.noise_twin("wddp", "per_round", "eps_sweep", 4))
          for r in (0, 1) for a in ("ma16", "exact")]
    wyx = [_run(mechanism="wyx", mode="central", rep=r, accountant=a) for r in (0, 1) for a in ("ma16", "exact")]
    assert [r.noise_key() for r in wd] == [r.noise_key() for r in wyx]
    theta0 = {r: np.full(X.shape[1], 0.01 * (r + 1)) for r in (0, 1)}
    opt = compute_optimum(X, y, wd[0].lam)
    tables = []
    for runs, partition in ((wd, part), (wyx, pooled)):  # separate batches, as in separate jobs
        out = train_batch(runs, X, y, partition, theta0, root_seed=5, dtype="float64", dedup=True)
        refs = rep_references(X, y, partition, theta0, runs[0].lam, opt, need_simple_average=False)
        tables.append(result_rows(runs, out.calibrations, out.thetas, out.theta0, X, y, Xte, yte,
                                  partition, refs, opt, "float64", 0.0, out.flops))
    for a, b in zip(*tables, strict=True):
        for key in ("sigma", "eps_accounted", "accuracy", "optimal_gap", "train_loss", "bound_gap"):
            assert a[key] == pytest.approx(b[key], rel=1e-9, abs=1e-12), key
    # without the shared stream the two differ (the test is not vacuous)
    alone = dataclasses.replace(wd[0], noise_as=None)
    assert alone.noise_key() != wyx[0].noise_key()
