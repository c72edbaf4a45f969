"""Tests of the float64 logistic-regression reference (spec §0.2, M1a)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from mpdp.models import logistic
from mpdp.models.logistic import (
    OptimumNotConvergedError,
    accuracy,
    gradient,
    hessian,
    loss,
    solve_optima,
    solve_optimum,
)


def make_problem(n: int, p: int, seed: int, scale: float = 2.0) -> tuple[np.ndarray, np.ndarray]:
    """Rows with ‖x‖ ≤ 1 and a constant intercept column (spec E1.3), labels from a logit model."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, p - 1))
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    X = np.hstack([Z, np.ones((n, 1))]) / np.sqrt(2.0)
    truth = scale * rng.standard_normal(p)
    y = np.where(rng.random(n) < 1.0 / (1.0 + np.exp(-X @ truth)), 1.0, -1.0)
    return X, y


def test_loss_matches_definition_and_is_stable() -> None:
    X, y = make_problem(50, 4, seed=0)
    rng = np.random.default_rng(1)
    theta = rng.standard_normal(4)
    w = rng.random(50)
    expected = np.sum(w * np.log1p(np.exp(-y * (X @ theta)))) + 0.05 * 0.5 * theta @ theta
    assert loss(theta, X, y, 0.05, w) == pytest.approx(expected, rel=1e-12)
    # Default weights 1/n give the mean loss L_D.
    assert loss(theta, X, y, 0.0) == pytest.approx(np.mean(np.log1p(np.exp(-y * (X @ theta)))))
    # Huge margins: log(1 + e^{-m}) ≈ -m for m ≪ 0, 0 for m ≫ 0, never inf.
    big = 1e4 * X[0] / (X[0] @ X[0])
    values = [loss(big, X[:1], np.array([s]), 0.0) for s in (1.0, -1.0)]
    assert values[0] == pytest.approx(0.0, abs=1e-300)
    assert values[1] == pytest.approx(1e4)


def test_matrix_theta_gives_one_value_per_column() -> None:
    X, y = make_problem(60, 5, seed=2)
    Theta = np.random.default_rng(3).standard_normal((5, 3))
    np.testing.assert_allclose(
        loss(Theta, X, y, 0.1), [loss(Theta[:, k], X, y, 0.1) for k in range(3)], rtol=1e-13
    )
    np.testing.assert_allclose(
        gradient(Theta, X, y, 0.1),
        np.stack([gradient(Theta[:, k], X, y, 0.1) for k in range(3)], axis=1),
        rtol=1e-13,
    )
    np.testing.assert_array_equal(
        accuracy(Theta, X, y), [accuracy(Theta[:, k], X, y) for k in range(3)]
    )


def test_gradient_matches_finite_differences() -> None:
    X, y = make_problem(80, 6, seed=4)
    rng = np.random.default_rng(5)
    theta, w, lam, h = rng.standard_normal(6), rng.random(80), 0.3, 1e-6
    numeric = np.array(
        [
            (loss(theta + h * e, X, y, lam, w) - loss(theta - h * e, X, y, lam, w)) / (2 * h)
            for e in np.eye(6)
        ]
    )
    np.testing.assert_allclose(gradient(theta, X, y, lam, w), numeric, atol=1e-8)


def test_hessian_matches_finite_differences_of_gradient() -> None:
    X, y = make_problem(80, 6, seed=6)
    rng = np.random.default_rng(7)
    theta, w, lam, h = rng.standard_normal(6), rng.random(80), 0.2, 1e-6
    numeric = np.stack(
        [
            (gradient(theta + h * e, X, y, lam, w) - gradient(theta - h * e, X, y, lam, w))
            / (2 * h)
            for e in np.eye(6)
        ],
        axis=1,
    )
    H = hessian(theta, X, y, lam, w)
    np.testing.assert_array_equal(H, H.T)
    np.testing.assert_allclose(H, numeric, atol=1e-8)
    assert np.linalg.eigvalsh(H).min() >= lam - 1e-12


def test_solve_optimum_agrees_with_scikit_learn() -> None:
    n, lam = 300, 1e-2
    X, y = make_problem(n, 6, seed=8)
    theta_star = solve_optimum(X, y, lam)
    assert np.max(np.abs(gradient(theta_star, X, y, lam))) <= 1e-8
    reference = LogisticRegression(
        C=1.0 / (n * lam), fit_intercept=False, tol=1e-14, max_iter=100_000
    ).fit(X, (y > 0).astype(int))
    np.testing.assert_allclose(theta_star, reference.coef_[0], atol=1e-6)


def test_solve_optimum_weights_and_warm_start() -> None:
    X, y = make_problem(120, 5, seed=9)
    w = np.random.default_rng(10).random(120)
    theta_star = solve_optimum(X, y, 0.05, weights=w)
    assert np.max(np.abs(gradient(theta_star, X, y, 0.05, w))) <= 1e-8
    warm = solve_optimum(X, y, 0.05, weights=w, theta0=theta_star + 0.1)
    np.testing.assert_allclose(warm, theta_star, atol=1e-8)


def test_solve_optimum_raises_when_not_converged(monkeypatch: pytest.MonkeyPatch) -> None:
    X, y = make_problem(200, 6, seed=12)
    monkeypatch.setattr(logistic, "LBFGS_MAXITER", 2)
    with pytest.raises(OptimumNotConvergedError, match="M1a"):
        solve_optimum(X, y, 1e-3)


def test_solve_optima_solves_each_weighted_subset_problem() -> None:
    # issue 12: K L-BFGS runs in lockstep on one matrix; column k must be the optimum of
    # problem k alone (its rows only: zero weights drop rows), as solve_optimum finds it
    X, y = make_problem(400, 6, seed=13)
    rng = np.random.default_rng(14)
    K, lam = 5, 1e-2
    W = np.zeros((400, K))
    for k in range(K):
        rows = rng.choice(400, size=250 + 30 * k, replace=False)
        W[rows, k] = rng.random(rows.size) / rows.size
    starts = rng.standard_normal((6, K))
    Theta = solve_optima(X, y, lam, W, starts)
    for k in range(K):
        rows = W[:, k] > 0
        assert np.max(np.abs(gradient(Theta[:, k], X[rows], y[rows], lam, W[rows, k]))) <= 1e-8
        alone = solve_optimum(X[rows], y[rows], lam, weights=W[rows, k], theta0=starts[:, k])
        np.testing.assert_allclose(Theta[:, k], alone, atol=1e-6)
    np.testing.assert_array_equal(solve_optima(X, y, lam, W, starts), Theta)  # reproducible


def test_solve_optima_raises_when_a_run_does_not_converge(monkeypatch: pytest.MonkeyPatch) -> None:
    X, y = make_problem(200, 6, seed=15)
    W = np.full((200, 3), 1 / 200)
    monkeypatch.setattr(logistic, "LBFGS_MAXITER", 2)
    with pytest.raises(OptimumNotConvergedError, match="M1a"):
        solve_optima(X, y, 1e-3, W, np.zeros((6, 3)))


def test_solve_optima_passes_an_evaluation_error_to_every_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # a failing batched evaluation must reach the caller, not leave runs waiting forever
    X, y = make_problem(50, 3, seed=16)

    def broken(self, Theta):
        raise FloatingPointError("broken evaluation")

    monkeypatch.setattr(logistic._Lockstep, "values", broken)
    with pytest.raises(FloatingPointError, match="broken evaluation"):
        solve_optima(X, y, 1e-2, np.full((50, 4), 0.02), np.zeros((3, 4)))


def test_accuracy_uses_sign_zero_plus_one() -> None:
    X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    y = np.array([1.0, 1.0, -1.0])
    assert accuracy(np.zeros(2), X, y) == pytest.approx(2 / 3)
    assert accuracy(np.array([1.0, 0.0]), X, y) == 1.0


def test_labels_must_be_plus_minus_one() -> None:
    X, y = make_problem(10, 3, seed=11)
    with pytest.raises(ValueError, match="-1, \\+1"):
        loss(np.zeros(3), X, (y > 0).astype(float), 0.1)
