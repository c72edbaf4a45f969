"""Batched Newton-CG (mpdp.models.newton): exact minimisers, checked against independent code."""

import numpy as np
import pytest
from scipy.optimize import minimize

from mpdp.models import logistic, newton


def _problem(seed=0, n=300, d=6, k=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)
    y = np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    scale = rng.uniform(0.5, 2.0, k) / n
    quad = rng.uniform(1e-3, 3.0, k)
    lin = rng.normal(size=(d, k))
    return X, y, scale, quad, lin


def test_kkt_residual_below_1e9_by_independent_gradient():
    X, y, scale, quad, lin = _problem()
    res = newton.solve(X, y, scale, quad, lin)
    assert res.grad_norm.max() <= 1e-9
    for k in range(lin.shape[1]):
        # mpdp.models.logistic: Σ w_i l + (λ/2)‖θ‖², with w_i = s_k and λ = q_k; plus b_k
        w = np.full(len(y), scale[k])
        g = logistic.gradient(res.theta[:, k], X, y, quad[k], weights=w) + lin[:, k]
        assert np.linalg.norm(g) <= 2e-9


def test_matches_scipy_lbfgs_and_columns_are_independent():
    X, y, scale, quad, lin = _problem(seed=1)
    res = newton.solve(X, y, scale, quad, lin)
    for k in range(lin.shape[1]):
        def f(th, k=k):
            z = y * (X @ th)
            val = scale[k] * np.logaddexp(0, -z).sum() + 0.5 * quad[k] * th @ th + lin[:, k] @ th
            grad = scale[k] * (X.T @ (-y / (1 + np.exp(z)))) + quad[k] * th + lin[:, k]
            return val, grad
        ref = minimize(f, np.zeros(X.shape[1]), jac=True, method="L-BFGS-B",
                       options={"gtol": 1e-12, "ftol": 0, "maxiter": 10_000}).x
        np.testing.assert_allclose(res.theta[:, k], ref, atol=1e-8)
        alone = newton.solve(X, y, scale[k], quad[k], lin[:, [k]])
        np.testing.assert_allclose(alone.theta[:, 0], res.theta[:, k], atol=1e-11)


def test_warm_start_needs_fewer_iterations_and_weights_work():
    X, y, scale, quad, lin = _problem(seed=2)
    cold = newton.solve(X, y, scale, quad, lin)
    warm = newton.solve(X, y, scale, quad, lin + 1e-3, init=cold.theta)
    assert warm.iterations.max() < cold.iterations.max()
    w = np.random.default_rng(3).uniform(0, 2, len(y))
    res = newton.solve(X, y, scale, quad, lin, weights=w)
    g = newton.gradient(X, y, res.theta, scale, quad, lin, weights=w)
    assert np.linalg.norm(g, axis=0).max() <= 1e-9


def test_bad_input_and_budget():
    X, y, scale, quad, lin = _problem()
    with pytest.raises(ValueError, match="quad"):
        newton.solve(X, y, scale, -quad, lin)
    with pytest.raises(newton.NewtonNotConvergedError, match="gradient norm"):
        newton.solve(X, y, scale, quad, 100 * lin, max_newton=1, gtol=1e-14)
