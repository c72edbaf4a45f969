"""Exact batched ERM (mpdp.models.batched_erm) against scikit-learn and per-problem solves."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from mpdp.models import batched_erm
from mpdp.models.batched_erm import (
    fit_logistic_batch,
    fit_softmax_batch,
    logistic_gradient,
    softmax_gradient,
    stack_problems,
)
from tests.voting.conftest import unit_rows


def test_soft_label_erm_equals_weighted_sklearn_on_duplicated_data():
    # spec M12: soft-label ERM == weighted LR on each row duplicated with labels +1 (weight α), -1 (1 - α)
    gen = np.random.default_rng(1)
    n, d, lam = 150, 5, 0.02
    X = unit_rows(gen, n, d)
    alpha = gen.integers(0, 11, n) / 10
    W = fit_logistic_batch(*stack_problems([X], [alpha]), lam)[0]
    Xd = np.vstack([X, X])
    yd = np.r_[np.ones(n), -np.ones(n)]
    sw = np.r_[alpha, 1 - alpha]
    sk = LogisticRegression(C=1 / (lam * n), fit_intercept=False, tol=1e-12, max_iter=100_000)
    sk.fit(Xd, yd, sample_weight=sw)
    np.testing.assert_allclose(W, sk.coef_[0], atol=2e-6)


def test_softmax_soft_labels_equal_weighted_multinomial_sklearn():
    # spec M13 B.3, (55): soft-target softmax == multinomial LR on K weighted copies of each row
    gen = np.random.default_rng(2)
    n, d, K, lam = 120, 4, 3, 0.05
    X = unit_rows(gen, n, d)
    counts = gen.multinomial(7, np.ones(K) / K, size=n)
    T = counts / 7
    W = fit_softmax_batch(*stack_problems([X], [T]), lam)[0]
    Xd = np.vstack([X] * K)
    yd = np.repeat(np.arange(K), n)
    sw = T.T.reshape(-1)
    sk = LogisticRegression(C=1 / (lam * n), fit_intercept=False, tol=1e-12, max_iter=100_000)
    sk.fit(Xd, yd, sample_weight=sw)
    # sklearn's multinomial parameters are identifiable only up to a shift when lam=0; with lam>0 they match
    np.testing.assert_allclose(W, sk.coef_.T, atol=2e-6)


@pytest.mark.parametrize("multi", [False, True])
def test_batched_solves_equal_single_solves_and_are_stationary(multi):
    gen = np.random.default_rng(3)
    sizes, d, K, lam = [17, 40, 25], 5, 3, 1e-3
    blocks = [unit_rows(gen, n, d) for n in sizes]
    targets = [np.eye(K)[gen.integers(0, K, n)] if multi else gen.integers(0, 2, n).astype(float) for n in sizes]
    fit = fit_softmax_batch if multi else fit_logistic_batch
    grad = softmax_gradient if multi else logistic_gradient
    X, c, t = stack_problems(blocks, targets)
    W = fit(X, c, t, lam)
    g = grad(W, X, c, t, lam)
    assert np.abs(g).max() < 1e-9
    for b in range(len(sizes)):
        single = fit(*stack_problems([blocks[b]], [targets[b]]), lam)[0]
        np.testing.assert_allclose(W[b], single, atol=1e-9)


def test_backtrack_takes_the_full_step_where_the_objective_cannot_resolve_the_decrease():
    """Near the minimum the decrease gᵀ·step (here 1e-20) is below the rounding of J: an Armijo
    test that sees J(W − step) a rounding error above J(W) must not shrink the step to nothing (the KDDCup99
    5-class solve stalled at a gradient norm of 1.5e-10 that way)."""
    W = np.array([[1.0, -2.0]])
    step = np.array([[1e-10, 0.0]])
    g = np.array([[1e-10, 0.0]])

    def rounded_objective(V):  # J(W) = 0.5; every other point "worse" by the rounding of a long sum
        return np.where(np.all(V == W, axis=1), 0.5, 0.5 + 1e-14)

    np.testing.assert_array_equal(batched_erm._backtrack(rounded_objective, W, step, g), W - step)


def test_backtrack_still_rejects_a_resolvable_increase():
    """A step whose predicted decrease J can resolve is halved while J does not fall enough."""
    W = np.array([[0.0]])
    g = np.array([[-1.0]])
    step = np.array([[-4.0]])  # overshoots the minimum of J(w) = (w − 1)²/2 at 1: J(4) > J(0)
    new = batched_erm._backtrack(lambda V: 0.5 * (V[:, 0] - 1.0) ** 2, W, step, g)
    assert 0.0 < new[0, 0] <= 2.0


def test_merged_duplicates_are_numpy_uniques_rows_in_its_order():
    """The lexsort merge returns exactly ``np.unique(axis=0)``'s rows, first occurrences and counts
    (so the stacked problems, hence every solve, are the same as before the faster merge)."""
    gen = np.random.default_rng(7)
    x = gen.integers(0, 3, size=(300, 6)) / 2.0  # few distinct values: many duplicates, ties in every column
    x[::7, 0] = -0.0  # -0.0 equals 0.0 for both
    x[:, 3] = 0.5  # a constant column (left out of the sort keys)
    t = np.eye(4)[gen.integers(0, 4, 300)]
    xm, tm, w = batched_erm._merge_duplicates(x, t)
    _, first, counts = np.unique(np.hstack([x, t]), axis=0, return_index=True, return_counts=True)
    np.testing.assert_array_equal(xm, x[first])
    np.testing.assert_array_equal(tm, t[first])
    np.testing.assert_array_equal(w, counts / len(x))
    assert len(xm) < len(x)
    xs, ts, ws = batched_erm._merge_duplicates(np.ones((5, 3)), np.zeros(5))  # one row, five times
    assert xs.shape == (1, 3) and ts.shape == (1,)
    np.testing.assert_array_equal(ws, [1.0])


def test_predict_class_is_each_models_argmax_with_ties_to_the_smallest_class():
    gen = np.random.default_rng(8)
    X = gen.normal(size=(50, 4))
    X[:5] = 0.0  # all scores 0: a tie, resolved to class 0
    W = gen.normal(size=(3, 2, 4, 5))
    W[0, 0, :, 3] = W[0, 0, :, 1]  # two equal classes: class 1 wins their ties
    pred = batched_erm.predict_class(W, X)
    assert pred.shape == (3, 2, 50) and pred.flags.c_contiguous
    for i in range(3):
        for j in range(2):
            scores = np.array([[X[n] @ W[i, j, :, k] for k in range(5)] for n in range(50)])
            np.testing.assert_array_equal(pred[i, j], scores.argmax(axis=1))
    assert not np.any(pred[0, 0] == 3) and np.all(pred[:, :, :5] == 0)
    np.testing.assert_array_equal(batched_erm.predict_class(W[1, 1], X), pred[1, 1])
