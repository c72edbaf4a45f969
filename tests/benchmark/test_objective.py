"""Objective perturbation (docs/objective_perturbation.md OP1–OP3): calibration, noise law, solves, rows."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest
from scipy import stats

from mpdp.mechanisms import objective_perturbation as op
from mpdp.models import logistic
from mpdp.privacy.private_selection import pure_dp_rdp
from mpdp.studies.benchmark import batch_runner, registry, selection
from mpdp.studies.benchmark.interface import Run

LOG = logging.getLogger("test")
C = 0.25


@pytest.mark.parametrize(("eps", "n", "lam"), [(1.0, 4000, 1e-3), (0.1, 4000, 1e-3), (0.3, 559, 1e-3),
                                                (10.0, 50, 1e-4), (0.05, 100, 1.0)])
def test_calibration_is_cms11_algorithm_2_and_its_epsilon_is_the_target(eps, n, lam):
    cal = op.calibrate(eps, n, lam)
    direct = eps - math.log(1 + 2 * C / (n * lam) + C**2 / (n * lam) ** 2)  # step 1 as printed
    assert direct == pytest.approx(eps - 2 * math.log(1 + C / (n * lam)))  # spec M7's form
    if direct > 0:
        assert cal.extra_reg == 0 and cal.eps_noise == pytest.approx(direct)
    else:
        assert cal.extra_reg == pytest.approx(C / (n * math.expm1(eps / 4)) - lam) and cal.eps_noise == eps / 2
        assert (1 + C / (n * cal.quad)) ** 2 == pytest.approx(math.exp(eps / 2))  # Jacobian factor = e^{ε/2}
    assert cal.beta == cal.eps_noise / 2
    # the ε the noise gives, by the proof's two factors: e^{β·2} (noise) and (1 + c/(n(λ+Δ)))² (Jacobian)
    assert 2 * cal.beta + 2 * math.log(1 + C / (n * cal.quad)) == pytest.approx(eps, rel=1e-12)
    assert op.epsilon_given(n, cal.quad, cal.beta) == pytest.approx(eps, rel=1e-12)


def test_bad_parameters_are_one_line_errors():
    for args in ((0.0, 10, 1.0), (math.inf, 10, 1.0), (1.0, 0, 1.0), (1.0, 10, 0.0)):
        with pytest.raises(ValueError, match="objective perturbation"):
            op.calibrate(*args)


def test_noise_norm_is_gamma_d_two_over_eps_prime_and_direction_uniform():
    gen = np.random.default_rng(0)
    d, beta = 5, 0.3
    draws = np.stack([op.draw_noise(gen, beta, d) for _ in range(4000)])
    norms = np.linalg.norm(draws, axis=1)
    assert stats.kstest(norms, stats.gamma(a=d, scale=1 / beta).cdf).pvalue > 1e-3
    assert np.abs(draws.mean(axis=0)).max() < 5 * norms.mean() / np.sqrt(d * 4000)


def _problem(n: int = 300, d: int = 4, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    gen = np.random.default_rng(seed)
    X = gen.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    y = np.where(X @ np.arange(1.0, d + 1) + 0.5 * gen.normal(size=n) >= 0, 1.0, -1.0)
    return X, y


def test_solve_is_the_exact_minimiser_of_the_perturbed_objective():
    X, y = _problem()
    gen = np.random.default_rng(2)
    noise = gen.normal(size=(X.shape[1], 6)) * 5
    quad = np.array([1e-3, 1e-2, 0.1, 1e-3, 1e-2, 0.1])
    theta = op.solve(X, y, quad, noise)
    _, grad = op.objective(theta, X, y, quad, noise)
    assert np.linalg.norm(grad, axis=0).max() <= 1e-9
    # zero noise: the project's θ* (spec M1a)
    zero = op.solve(X, y, np.array([1e-2]), np.zeros((X.shape[1], 1)))[:, 0]
    np.testing.assert_allclose(zero, logistic.solve_optimum(X, y, 1e-2), atol=1e-7)


def _runs(mech, eps: float, lam: float, sizes, seeds) -> list[Run]:
    led = mech.ledger({}, eps, np.asarray(sizes), lam, 4)
    return [Run(eps, lam, s, led, np.random.default_rng([7, s])) for s in seeds]


def test_central_release_is_reproducible_and_pools_the_parties():
    X, y = _problem()
    mech = registry.get("objpert")
    parties = [np.arange(0, 100), np.arange(100, 300)]
    a = mech.train_batch({}, X, y, parties, _runs(mech, 1.0, 1e-2, [100, 200], range(3)))
    b = mech.train_batch({}, X, y, [np.arange(300)], _runs(mech, 1.0, 1e-2, [300], range(3)))
    np.testing.assert_array_equal(a, b)
    gen = np.random.default_rng([7, 0])
    cal = op.calibrate(1.0, 300, 1e-2)
    expect = op.solve(X, y, np.array([cal.quad]), op.draw_noise(gen, cal.beta, 4)[:, None])[:, 0]
    np.testing.assert_allclose(a[:, 0], expect, rtol=0, atol=1e-12)  # one column vs three: BLAS rounding


def test_party_release_is_the_average_of_each_partys_own_perturbed_minimiser():
    X, y = _problem()
    mech = registry.get("objpert_avg")
    parties = [np.arange(0, 60), np.arange(60, 300)]
    led = mech.ledger({}, 0.5, np.array([60, 240]), 1e-2, 4)
    assert led.scope == "worst_party" and led.eps_total == pytest.approx(0.5, rel=1e-12)
    cals = [op.calibrate(0.5, 60, 1e-2), op.calibrate(0.5, 240, 1e-2)]
    assert led.betas == tuple(c.beta for c in cals) and led.extra_regs == tuple(c.extra_reg for c in cals)
    assert led.beta == cals[0].beta  # the smallest party's
    out = mech.train_batch({}, X, y, parties, _runs(mech, 0.5, 1e-2, [60, 240], [0]))[:, 0]
    gen = np.random.default_rng([7, 0])
    noise = [op.draw_noise(gen, c.beta, 4) for c in cals]
    each = [op.solve(X[p], y[p], np.array([c.quad]), b[:, None])[:, 0] for p, c, b in zip(parties, cals, noise,
                                                                                          strict=True)]
    np.testing.assert_allclose(out, (each[0] + each[1]) / 2, rtol=0, atol=1e-12)


def test_private_selection_charges_one_pure_release(bench_cfg):
    for mech_id in ("objpert", "objpert_avg"):
        np.testing.assert_array_equal(registry.get(mech_id).rdp_curve(bench_cfg, 0.7), pure_dp_rdp(0.7))
        bud = selection.budget(bench_cfg, mech_id, 4.0)
        assert bud.eps_end_to_end <= 4.0 * (1 + 1e-9)


@pytest.mark.parametrize("mech_id", ["objpert", "objpert_avg"])
def test_benchmark_rows_are_accounted_pure_epsilon(bench_cfg, bench_data, mech_id):
    rows, hp = batch_runner.run_batch_mechanism(bench_cfg, "synthetic", bench_data, registry.get(mech_id), LOG)
    b = bench_cfg["benchmark"]
    assert {r["mechanism"] for r in rows} == {mech_id}
    assert len(rows) == 2 * len(b["eps_grid"]) * len(b["m_grid"]) * len(b["u_grid"]) * b["reps"]
    for r in rows:
        share = b["selection"]["final_share"] if r["selection"] == "private" else 1.0
        assert r["eps_total"] == pytest.approx(share * r["epsilon"], rel=1e-12)
        assert r["delta_total"] == 0 and r["accountant"] == "pure" and r["family"] == "objective"
        assert r["privacy_unit"] == "record" and 0 <= r["accuracy"] <= 1 and r["optimal_gap"] >= -1e-9
        if r["selection"] == "private":
            assert r["eps_end_to_end"] <= r["epsilon"] * (1 + 1e-9)
    assert set(hp) == {"private", "oracle"}
