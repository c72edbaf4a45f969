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


def _former_solve(X, y, scale, quad, lin, weights):
    """The iteration as written before the curvature reused the gradient's σ(−z) and CG gathered
    its live columns once per change (issue 45): σ recomputed from the margins, every CG step
    gathering ``curv[:, live]``. Written out here as the reference of the bit-identity test."""
    from scipy.special import expit

    def grad(z, th, s, q, b):
        r = expit(-z)
        r *= -(y * weights)[:, None]
        g = X.T @ r
        g *= s
        g += q * th
        return g + b

    k = lin.shape[1]
    theta, th, s, q, b = np.zeros((X.shape[1], k)), np.zeros((X.shape[1], k)), scale.copy(), quad.copy(), lin
    active = np.arange(k)
    z = y[:, None] * (X @ th)
    g = grad(z, th, s, q, b)
    gn = np.linalg.norm(g, axis=0)
    while True:
        theta[:, active] = th
        keep = gn > newton.GTOL
        if not keep.any():
            return theta
        active, th, z, g, gn, s, q, b = active[keep], th[:, keep], z[:, keep], g[:, keep], gn[keep], s[keep], \
            q[keep], b[:, keep]
        curv = expit(-z)
        curv *= 1.0 - curv
        curv *= weights[:, None] * s
        tol = np.minimum(0.5, np.sqrt(gn)) * gn
        p_sol, r = np.zeros_like(g), -g
        direction, rr = r.copy(), (r * r).sum(axis=0)
        live = np.sqrt(rr) > tol
        for _ in range(X.shape[1] + 10):
            if not live.any():
                break
            idx = np.flatnonzero(live)
            dv = direction[:, idx]
            hd = X.T @ (curv[:, idx] * (X @ dv)) + q[idx] * dv
            step = rr[idx] / (dv * hd).sum(axis=0)
            p_sol[:, idx] += step * dv
            r[:, idx] -= step * hd
            rr_new = (r[:, idx] * r[:, idx]).sum(axis=0)
            direction[:, idx] = r[:, idx] + (rr_new / rr[idx]) * dv
            rr[idx] = rr_new
            live[idx] = np.sqrt(rr_new) > tol[idx]
        dz = y[:, None] * (X @ p_sol)
        t = np.ones(th.shape[1])
        new_th, new_z = th + p_sol, z + dz
        new_g = grad(new_z, new_th, s, q, b)
        new_gn = np.linalg.norm(new_g, axis=0)
        bad = np.flatnonzero(new_gn > (1.0 - 1e-4 * t) * gn)
        while bad.size:
            t[bad] *= 0.5
            new_th[:, bad] = th[:, bad] + t[bad] * p_sol[:, bad]
            new_z[:, bad] = z[:, bad] + t[bad] * dz[:, bad]
            new_g[:, bad] = grad(new_z[:, bad], new_th[:, bad], s[bad], q[bad], b[:, bad])
            new_gn[bad] = np.linalg.norm(new_g[:, bad], axis=0)
            bad = bad[new_gn[bad] > (1.0 - 1e-4 * t[bad]) * gn[bad]]
        th, z, g, gn = new_th, new_z, new_g, new_gn


def test_same_bits_as_the_former_iteration():
    """Reusing the accepted gradient's σ(−z) for the curvature and gathering CG's live columns once
    per change leave every operation's operands as they were: the minimisers are equal to the last
    bit, with record weights, columns stopping at different iterations and backtracking steps."""
    X, y, scale, quad, lin = _problem(seed=4, k=7)
    lin = lin * np.array([0.1, 1, 3, 10, 30, 100, 300])  # far-off minimisers: damped steps, late stops
    w = np.random.default_rng(5).uniform(0, 2, len(y))
    res = newton.solve(X, y, scale, quad, lin, weights=w)
    assert len(set(res.iterations.tolist())) >= 2  # columns stop at different iterations
    np.testing.assert_array_equal(res.theta, _former_solve(X, y, scale, quad, lin, w))
