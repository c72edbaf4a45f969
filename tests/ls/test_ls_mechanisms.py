"""Least-squares mechanisms (spec M14, M15; bounds.md B8 exact identity; E6 LS-3 unit checks)."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.linear_model import LinearRegression

from mpdp.mechanisms import least_squares as lsq
from mpdp.privacy.calibration import PrivacyParameterError
from mpdp.privacy.ledger import accounted_epsilon
from mpdp.studies.ls import data as ls_data


def _bounded(n=200, d=4, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    theta = scale * rng.normal(size=d)
    y = np.clip(X @ theta + 0.1 * rng.normal(size=n), -1, 1)
    return X, y


def _sklearn_ols(X, y):
    return LinearRegression(fit_intercept=False).fit(X, y).coef_


@pytest.mark.parametrize("dataset", ["random", "diabetes"])
def test_zero_noise_ssp_returns_ols_exactly(dataset):
    X, y = _bounded() if dataset == "random" else ls_data.diabetes()[1:3]
    gram, xty = lsq.sufficient_statistics(X, y)
    Z1, z2 = lsq.ssp_noise(np.random.default_rng(0), 5, 3, X.shape[1], 0.0, 0.0)
    theta, tau = lsq.ssp_solve(gram, xty, Z1, z2)
    np.testing.assert_allclose(theta, np.tile(_sklearn_ols(X, y), (3, 1)), rtol=1e-9, atol=1e-12)
    assert (tau == 0).all()
    assert lsq.excess_risk(theta, lsq.ols(X, y), gram) == pytest.approx(0.0, abs=1e-18)


def test_excess_identity_on_random_data():
    X, y = _bounded(n=150, d=5, seed=3)
    theta_star = lsq.ols(X, y)
    thetas = np.random.default_rng(1).normal(size=(20, 5))
    direct = lsq.sum_loss(thetas, X, y) - lsq.sum_loss(theta_star, X, y)
    np.testing.assert_allclose(lsq.excess_risk(thetas, theta_star, X.T @ X), direct, rtol=1e-9)


def test_batched_solve_equals_one_by_one_and_fallback_lifts_eigenvalue():
    X, y = _bounded(n=60, d=3, seed=2)
    gram, xty = lsq.sufficient_statistics(X, y)
    Z1, z2 = lsq.ssp_noise(np.random.default_rng(5), 2, 500, 3, 8.0, 8.0, symmetric=False)
    theta, tau = lsq.ssp_solve(gram, xty, Z1, z2, pd_floor=1e-6)
    assert (tau > 0).any() and (tau == 0).any()
    for k in range(0, 500, 37):
        C = gram + Z1[k] + tau[k] * np.eye(3)
        np.testing.assert_allclose(theta[k], np.linalg.solve(C, xty + z2[k]), rtol=1e-8)
        if tau[k] > 0:
            assert np.linalg.eigvalsh(0.5 * (C + C.T))[0] == pytest.approx(1e-6, abs=1e-9)


@pytest.mark.parametrize("model,factor", [("independent", lambda t: math.sqrt(t)), ("write_up", float)])
def test_noise_models_scale_as_sqrt_t_or_t(model, factor):
    t, sigma1, sigma2 = 4, 2.0, 3.0
    Z1, z2 = lsq.ssp_noise(np.random.default_rng(7), t, 40_000, 2, sigma1, sigma2, model, symmetric=True)
    assert np.allclose(Z1, np.swapaxes(Z1, 1, 2))  # symmetric noise matrices
    assert Z1[:, 0, 1].std() == pytest.approx(factor(t) * sigma1, rel=0.02)
    assert Z1[:, 1, 1].std() == pytest.approx(factor(t) * sigma1, rel=0.02)
    assert z2[:, 0].std() == pytest.approx(factor(t) * sigma2, rel=0.02)
    Z1n, _ = lsq.ssp_noise(np.random.default_rng(7), t, 10, 3, 1.0, 1.0, model, symmetric=False)
    assert not np.allclose(Z1n, np.swapaxes(Z1n, 1, 2))


def test_sensitivities_are_attained_bounds():
    assert lsq.ssp_sensitivities(1) == (1.0, 2.0)
    assert lsq.ssp_sensitivities(5) == (math.sqrt(2), 2.0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5000, 4))
    x /= np.maximum(1, np.linalg.norm(x, axis=1))[:, None]
    diffs = np.einsum("ki,kj->kij", x[::2], x[::2]) - np.einsum("ki,kj->kij", x[1::2], x[1::2])
    assert np.linalg.norm(diffs, axis=(1, 2)).max() <= math.sqrt(2) + 1e-12
    e1, e2 = np.eye(4)[0], np.eye(4)[1]  # orthogonal unit vectors attain √2
    assert np.linalg.norm(np.outer(e1, e1) - np.outer(e2, e2)) == pytest.approx(math.sqrt(2))


def test_ssp_calibration_and_ledger():
    noise = lsq.ssp_calibrate(0.5, 1e-5, 1, "classical")
    assert noise.sigma1 == pytest.approx(1.0 * math.sqrt(2 * math.log(2 / 5e-6)) / 0.25)
    assert noise.sigma2 == pytest.approx(2.0 * math.sqrt(2 * math.log(2 / 5e-6)) / 0.25)
    assert 0 < noise.eps_accounted < 0.5
    tight = lsq.ssp_calibrate(0.5, 1e-5, 10, "analytic")
    assert tight.eps_accounted < 0.5 and tight.sigma1 < lsq.ssp_calibrate(0.5, 1e-5, 10).sigma1
    with pytest.raises(PrivacyParameterError, match="epsilon < 1"):
        lsq.ssp_calibrate(2.5, 1e-5, 1, "classical")
    assert lsq.ssp_calibrate(0.5, 1e-5, 1, perturb_xty=False).eps_accounted == math.inf


def test_sgd_noise_formulas_and_ledger():
    n, R, eps, delta = 300, 2.0, 0.5, 1e-5
    L, ld = 2 * (R + 1), math.log(1 / delta)
    sigma = lsq.sgd_noise_std("permutation_zcdp", eps, delta, n, R)
    assert sigma == pytest.approx(math.sqrt(2 * n**3) * L / (math.sqrt(ld + eps) - math.sqrt(ld)), rel=1e-12)
    assert lsq.sgd_epsilon("permutation_zcdp", sigma, delta, n, R) <= eps
    exact = lsq.sgd_noise_std("permutation_zcdp", eps, delta, n, R, accountant="exact")
    assert exact < sigma
    assert accounted_epsilon(exact, 2 * n * L, n, delta) == pytest.approx(eps, rel=1e-6)
    bst = lsq.sgd_noise_std("bst_sampling", eps, delta, n, R)
    assert bst == pytest.approx(math.sqrt(32 * L**2 * n**2 * math.log(n / delta) * ld) / eps)
    assert lsq.sgd_epsilon("bst_sampling", bst, delta, n, R) < eps
    with pytest.raises(PrivacyParameterError):
        lsq.sgd_noise_std("shuffle", eps, delta, n, R)


def test_permutation_schedule_touches_every_record_n_times():
    sched = lsq.sgd_schedule(np.random.default_rng(0), "permutation_zcdp", 30)
    assert sched.shape == (900,) and (np.bincount(sched, minlength=30) == 30).all()
    assert lsq.sgd_schedule(np.random.default_rng(0), "bst_sampling", 30).max() < 30


def _constrained_optimum(X, y, R):
    gram, xty = lsq.sufficient_statistics(X, y)
    res = minimize(lambda th: th @ gram @ th - 2 * xty @ th, np.zeros(X.shape[1]),
                   jac=lambda th: 2 * gram @ th - 2 * xty,
                   constraints=[{"type": "ineq", "fun": lambda th: R**2 - th @ th}],
                   method="SLSQP", options={"ftol": 1e-14, "maxiter": 1000})
    return res.x


@pytest.mark.parametrize(
    "dataset,R,tol",
    [("random", 2.0, 0.02), ("random_outside", 0.5, 0.02), ("diabetes", 2.0, 0.05), ("diabetes", 3.0, 0.05)],
)
def test_zero_noise_sgd_converges_to_ols_within_the_ball(dataset, R, tol):
    """E6 LS-3: σ = 0 SGD reaches the minimiser over 𝒞 (θ* itself when ‖θ*‖ ≤ R): its loss gap to
    that minimiser is a small fraction of the optimal loss after the n² steps (the diabetes set is
    ill-conditioned, λ_min(XᵀX) ≈ 0.02, hence the looser tolerance)."""
    if dataset == "random":
        X, y = _bounded(n=80, d=3, seed=4, scale=0.7)
    elif dataset == "random_outside":  # ‖θ*‖ > R: the projection is active
        X, y = _bounded(n=80, d=3, seed=4, scale=0.7)
        assert np.linalg.norm(lsq.ols(X, y)) > 1.5 * R
    else:
        ds = ls_data.diabetes(max_records=120)
        X, y = ds.X, ds.y
    n = X.shape[0]
    theta_star = lsq.ols(X, y)
    target = theta_star if np.linalg.norm(theta_star) <= R else _constrained_optimum(X, y, R)
    sched = np.stack([lsq.sgd_schedule(np.random.default_rng(r), "permutation_zcdp", n) for r in range(2)])
    theta = lsq.noisy_sgd(X, y, np.zeros(2), sched, R, np.random.default_rng(0))
    assert (np.linalg.norm(theta, axis=1) <= R + 1e-12).all()
    gram = X.T @ X
    floor = lsq.excess_risk(target[None], theta_star, gram)[0]
    excess = lsq.excess_risk(theta, theta_star, gram)
    scale = lsq.sum_loss(theta_star, X, y) + floor
    assert np.all(excess - floor <= tol * scale), (excess, floor, scale)
    assert np.all(excess >= floor - 1e-9)  # nothing in the ball beats the constrained optimum
    if dataset.startswith("random"):
        np.testing.assert_allclose(theta, np.tile(target, (2, 1)), atol=0.05)


def test_noisy_sgd_rows_are_independent_runs_and_reproducible():
    X, y = _bounded(n=20, d=2, seed=1)
    sched = np.stack([lsq.sgd_schedule(np.random.default_rng(0), "bst_sampling", 20)] * 3)
    a = lsq.noisy_sgd(X, y, np.array([0.0, 50.0, 50.0]), sched, 2.0, np.random.default_rng(3))
    b = lsq.noisy_sgd(X, y, np.array([0.0, 50.0, 50.0]), sched, 2.0, np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a[1], a[2])  # same schedule, independent noise
