"""Models of the pipeline (spec mechanisms.md §0.2).

Only L2-regularised logistic regression is needed: :mod:`mpdp.models.logistic` is its
float64 reference implementation (loss, gradient, Hessian, the non-private optimum θ* of
M1a and test accuracy). The fast batched trainer lives in :mod:`mpdp.engine`.
:mod:`mpdp.models.batched_erm` solves many small exact (soft-target) logistic and softmax
ERMs with *different* data each (parties × repetitions) by batched Newton (voting study).
"""

from mpdp.models.logistic import (
    OptimumNotConvergedError,
    accuracy,
    gradient,
    hessian,
    loss,
    solve_optimum,
)

__all__ = [
    "OptimumNotConvergedError",
    "accuracy",
    "gradient",
    "hessian",
    "loss",
    "solve_optimum",
]
