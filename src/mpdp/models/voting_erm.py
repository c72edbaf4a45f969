"""Exact models of the voting and output-perturbation mechanisms (spec M5, M6, M11–M13, B.3).

The parties' local classifiers, their hard and soft votes on shared rows, and the (soft-target)
regularised ERM minimisers that the output-perturbation mechanisms perturb, for binary labels
(±1, logistic) and class codes (softmax), solved exactly in batches
(:mod:`mpdp.models.batched_erm`). Shared by the voting study (:mod:`mpdp.studies.voting.train`)
and the cross-paper benchmark's output family; noise is added by
:mod:`mpdp.mechanisms.output_perturbation`. Model shapes: binary ``W`` (..., d), multiclass
``W`` (..., d, K).
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_expit, logsumexp

from mpdp.models.batched_erm import (
    fit_logistic_batch,
    fit_softmax_batch,
    predict_binary,
    predict_class,
    stack_problems,
)


def targets(labels: np.ndarray, n_classes: int) -> np.ndarray:
    """Hard labels as soft targets: (y + 1)/2 (binary ±1) or one-hot rows (multiclass codes)."""
    if n_classes == 2:
        return (labels.astype(float) + 1.0) / 2.0
    return np.eye(n_classes)[labels]


def fit(X: np.ndarray, c: np.ndarray, t: np.ndarray, lam: float, n_classes: int,
        init: np.ndarray | None = None) -> np.ndarray:
    """Exact batched minimisers of the (soft-target) logistic or softmax objectives.

    ``init`` is a warm start (e.g. the pooled model for the local ones): it saves Newton
    iterations and does not change the (unique) minimiser.
    """
    if n_classes == 2:
        return fit_logistic_batch(X, c, t, lam, init=init)
    return fit_softmax_batch(X, c, t, lam, init=init)


def predict(W: np.ndarray, X: np.ndarray, n_classes: int) -> np.ndarray:
    """Labels (±1 or class codes) of models ``W`` on rows ``X``: shape ``(*W.shape[:-1 or -2], n)``."""
    return predict_binary(W, X) if n_classes == 2 else predict_class(W, X)


def objective(W: np.ndarray, X: np.ndarray, t: np.ndarray, lam: float, n_classes: int) -> np.ndarray:
    """Mean (soft-target) loss on shared rows ``X`` plus (λ/2)‖w‖², for a stack of models ``W``.

    Binary: spec M12 eq. (14)/(19); multiclass: the (55) form of B.3 (I-14).
    """
    if n_classes == 2:
        z = W @ X.T
        data = -(t * log_expit(z) + (1.0 - t) * log_expit(-z)).mean(axis=-1)
        return data + 0.5 * lam * np.sum(W * W, axis=-1)
    Z = np.matmul(X, W)
    data = (logsumexp(Z, axis=-1) - np.einsum("nk,...nk->...n", t, Z)).mean(axis=-1)
    return data + 0.5 * lam * np.sum(W * W, axis=(-2, -1))


def vote_targets(preds: np.ndarray, n_classes: int,
                 tie_rng: np.random.Generator | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(majority-vote targets, soft-vote targets) from local predictions ``preds`` of shape (M, N).

    Binary (M11, M12): v = sign(Σ_j h_j) with ties → +1, α = fraction voting +1.
    Multiclass (M13): v = argmax of the vote counts (ties → smallest class), α^k = count_k/M.
    ``tie_rng`` (spec E7 #23's alternative, ``voting.tie_break: random``): a tie goes to one of
    the tied classes uniformly at random instead, from ``tie_rng`` drawn for every record, tied
    or not, so the draws do not depend on which records tie (binary: ``random(N)``, a coin per
    record; multiclass: ``random((N, K))``, the tied class with the smallest key wins).
    """
    M = preds.shape[0]
    if n_classes == 2:
        alpha = (preds == 1).mean(axis=0)
        total = preds.sum(axis=0)
        vote = np.where(total >= 0, 1.0, 0.0)
        if tie_rng is not None:
            coin = tie_rng.random(preds.shape[1])
            vote = np.where(total == 0, (coin < 0.5).astype(float), vote)
        return vote, alpha
    counts = np.stack([(preds == k).sum(axis=0) for k in range(n_classes)], axis=1)
    if tie_rng is None:
        winner = np.argmax(counts, axis=1)
    else:  # uniform among the tied maxima: the tied class whose uniform key is smallest
        keys = tie_rng.random(counts.shape)
        winner = np.argmin(np.where(counts == counts.max(axis=1, keepdims=True), keys, np.inf), axis=1)
    return np.eye(n_classes)[winner], counts / M


def error(pred: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Error rate of predictions (last axis = records)."""
    return (pred != labels).mean(axis=-1)


def local_models(X: np.ndarray, labels: np.ndarray, parts: list[np.ndarray], lam: float, n_classes: int,
                 init: np.ndarray | None = None) -> np.ndarray:
    """The M local classifiers of the parties ``parts`` (row indices of ``X``), exact, one batched
    Newton solve: shape (M, d[, K]) (spec M11–M13 step 1; M5, M6 the parties' own minimisers)."""
    t = targets(labels, n_classes)
    Xs, c, T = stack_problems([X[p] for p in parts], [t[p] for p in parts], dedup=True)
    return fit(Xs, c, T, lam, n_classes, init)


def global_models(X: np.ndarray, soft_targets: list[np.ndarray], lam: float, n_classes: int,
                  init: np.ndarray | None = None) -> np.ndarray:
    """Minimisers of the (soft-label) ERM on the shared rows ``X`` for each target, one batch."""
    Xs, c, T = stack_problems([X] * len(soft_targets), soft_targets, dedup=True)
    return fit(Xs, c, T, lam, n_classes, init)
