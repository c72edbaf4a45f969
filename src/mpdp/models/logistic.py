"""L2-regularised logistic regression, float64 reference implementation (spec §0.2, M1a).

Labels are ``y ∈ {−1, +1}`` (spec §0.1). The objective is

    L(θ) = Σ_i w_i ℓ(θ; x_i, y_i) + (λ/2)‖θ‖²,   ℓ(θ; x, y) = log(1 + exp(−y θᵀx)),

with weights ``w_i = 1/n`` by default, so that ``L`` is the spec's ``L_D`` (mean loss plus
regulariser). Other weights express the other objectives of the spec, e.g. ``w_i = 1/(m n_j)``
for the simple-average objective ``F`` of M4.2 / bounds.md B3.

``theta`` may be one parameter vector ``(p,)`` or ``K`` of them as the columns of a
``(p, K)`` matrix; :func:`loss`, :func:`gradient` and :func:`accuracy` then return one
value per column. The fast batched float32 trainer is :func:`mpdp.engine.gd.noisy_gd`; this
module is the reference it is tested against, and it provides θ* (M1a) and the Hessian at θ*
needed by the quadratic-model prediction bounds.md B1‴.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from mpdp.errors import MpdpError

#: L-BFGS settings of spec M1a.
LBFGS_GTOL = 1e-10
LBFGS_MAXITER = 10_000
#: Largest accepted ``max_i |∂L/∂θ_i|`` at the returned optimum. L-BFGS-B may stop with a
#: line-search failure once the objective no longer decreases in float64; the result is
#: accepted only if its gradient is this small (about 1e−9 relative accuracy of θ* for λ ≥ 1e−3).
OPTIMUM_GRAD_TOL = 1e-8


class OptimumNotConvergedError(MpdpError):
    """:func:`solve_optimum` did not reach a small gradient norm (spec M1a)."""


def _prepare(
    theta: np.ndarray | None,
    X: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray | None,
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray, np.ndarray]:
    """Validate and convert the inputs to float64; default weights are ``1/n``."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array (n, p), got shape {X.shape}")
    n, p = X.shape
    y = np.asarray(y, dtype=np.float64)
    if y.shape != (n,):
        raise ValueError(f"y must have shape ({n},), got {y.shape}")
    if not np.all(np.abs(y) == 1.0):
        raise ValueError("labels y must be in {-1, +1} (spec §0.1)")
    if weights is None:
        w = np.full(n, 1.0 / n) if n > 0 else np.zeros(0)
    else:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (n,):
            raise ValueError(f"weights must have shape ({n},), got {w.shape}")
    if theta is not None:
        theta = np.asarray(theta, dtype=np.float64)
        if theta.ndim not in (1, 2) or theta.shape[0] != p:
            raise ValueError(f"theta must have shape ({p},) or ({p}, K), got {theta.shape}")
    return theta, X, y, w


def _label_column(y: np.ndarray, w: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, ...]:
    """``y`` and ``w`` shaped to broadcast against ``X @ theta``."""
    if theta.ndim == 2:
        return y[:, None], w[:, None]
    return y, w


def loss(
    theta: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    lam: float,
    weights: np.ndarray | None = None,
) -> float | np.ndarray:
    """Objective ``Σ_i w_i log(1 + exp(−y_i θᵀx_i)) + (λ/2)‖θ‖²`` (spec §0.2).

    Returns a float for ``theta`` of shape ``(p,)`` and an array ``(K,)`` for ``(p, K)``.
    Computed with ``logaddexp``, so it is finite for any finite margin.
    """
    theta, X, y, w = _prepare(theta, X, y, weights)
    yy, ww = _label_column(y, w, theta)
    margins = yy * (X @ theta)
    value = np.sum(ww * np.logaddexp(0.0, -margins), axis=0)
    value = value + 0.5 * lam * np.sum(theta * theta, axis=0)
    return float(value) if theta.ndim == 1 else value


def gradient(
    theta: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    lam: float,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Gradient ``Σ_i w_i (−y_i σ(−y_i θᵀx_i)) x_i + λθ`` (spec §0.2), same shape as ``theta``."""
    theta, X, y, w = _prepare(theta, X, y, weights)
    yy, ww = _label_column(y, w, theta)
    coef = -yy * ww * expit(-yy * (X @ theta))
    return X.T @ coef + lam * theta


def hessian(
    theta: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    lam: float,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Hessian ``Σ_i w_i σ(θᵀx_i) σ(−θᵀx_i) x_i x_iᵀ + λI`` (spec §0.2), shape ``(p, p)``.

    ``theta`` must be a single vector ``(p,)``; bounds.md B1‴ evaluates it at θ*.
    """
    theta, X, y, w = _prepare(theta, X, y, weights)
    if theta.ndim != 1:
        raise ValueError(f"hessian needs a single parameter vector (p,), got {theta.shape}")
    margins = X @ theta
    curvature = w * expit(margins) * expit(-margins)
    H = X.T @ (curvature[:, None] * X)
    H = 0.5 * (H + H.T)
    H[np.diag_indices_from(H)] += lam
    return H


def solve_optimum(
    X: np.ndarray,
    y: np.ndarray,
    lam: float,
    weights: np.ndarray | None = None,
    theta0: np.ndarray | None = None,
) -> np.ndarray:
    """The minimiser θ* of :func:`loss` (spec M1a).

    L-BFGS (``scipy.optimize.minimize``, method L-BFGS-B without bounds) with the analytic
    gradient, ``gtol = 1e−10``, ``maxiter = 10⁴``, warm-started at ``theta0`` (default 0).
    The relative-decrease test ``ftol`` is switched off so that ``gtol`` is what stops the
    solver. Raises :class:`OptimumNotConvergedError` unless the returned point has
    ``max_i |∂L/∂θ_i| ≤ 1e−8`` (e.g. when ``λ = 0`` and the data are separable).
    """
    _, X, y, w = _prepare(None, X, y, weights)
    p = X.shape[1]
    x0 = np.zeros(p) if theta0 is None else np.asarray(theta0, dtype=np.float64)
    if x0.shape != (p,):
        raise ValueError(f"theta0 must have shape ({p},), got {x0.shape}")

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        margins = y * (X @ theta)
        value = w @ np.logaddexp(0.0, -margins) + 0.5 * lam * (theta @ theta)
        grad = X.T @ (-y * w * expit(-margins)) + lam * theta
        return float(value), grad

    result = _lbfgs(objective, x0)
    _check_converged(result, float(np.max(np.abs(objective(result.x)[1]))) if p else 0.0)
    return result.x


def _lbfgs(objective: Callable[[np.ndarray], tuple[float, np.ndarray]], x0: np.ndarray) -> Any:
    """``scipy.optimize.minimize`` with the L-BFGS settings of spec M1a."""
    return minimize(objective, x0, jac=True, method="L-BFGS-B",
                    options={"gtol": LBFGS_GTOL, "ftol": 0.0, "maxiter": LBFGS_MAXITER})


def _check_converged(result: Any, grad_norm: float) -> None:
    if not np.all(np.isfinite(result.x)) or grad_norm > OPTIMUM_GRAD_TOL:
        raise OptimumNotConvergedError(
            f"L-BFGS did not converge to θ* (spec M1a): max |gradient| = {grad_norm:.3e} "
            f"> {OPTIMUM_GRAD_TOL:.0e} after {result.nit} iterations ({result.message}). "
            "Check that λ > 0 or that the data are not linearly separable."
        )


class _Lockstep:
    """Objective evaluations of K concurrent L-BFGS runs, gathered into matrix products.

    Each run calls :meth:`evaluate` from its own thread and waits; once every run that has not
    finished is waiting, the last one to arrive evaluates them with two products over the rows
    (one pass over ``X`` for all columns instead of one per column) and wakes the others. The
    products always hold all ``K`` columns (a finished run's column keeps its last point), so
    each run's objective is the same function of its own point in every round: a matrix
    product's rounding may depend on its width, and an objective whose rounding changed between
    line-search steps would stop L-BFGS early. Results are reproducible.
    """

    def __init__(self, X: np.ndarray, y: np.ndarray, lam: float, W: np.ndarray,
                 theta0: np.ndarray) -> None:
        self.X, self.y, self.lam, self.Wt = X, y, lam, np.ascontiguousarray(W.T)
        self.Xt = np.ascontiguousarray(X.T)  # Θᵀ Xᵀ with a contiguous Xᵀ: 1.6× faster
        self.cond = threading.Condition()
        self.active = W.shape[1]
        self.points = np.array(theta0, dtype=np.float64)  # (p, K): each run's latest point
        self.pending: set[int] = set()
        self.results: dict[int, Any] = {}
        self.neg_y = -y
        self.buffers: tuple[np.ndarray, ...] = ()
        self.nonnegative = np.empty(0, dtype=bool)

    def _work(self, K: int) -> tuple[np.ndarray, ...]:
        """Four ``(K, n)`` float64 work arrays, kept between evaluations: a fresh array of this
        size per temporary would be mapped and page-faulted anew in every round."""
        shape = (K, self.X.shape[0])
        if not self.buffers or self.buffers[0].shape != shape:
            self.buffers = tuple(np.empty(shape) for _ in range(4))
            self.nonnegative = np.empty(shape, dtype=bool)
        return self.buffers

    def values(self, Theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Objective values ``(K,)`` and gradients ``(p, K)`` at the ``(p, K)`` points ``Theta``.

        Laid out as ``(K, n)`` so that each value is a pairwise sum along a contiguous row:
        L-BFGS near θ* compares values that differ by ~1e−13 relative, which a running sum
        over the rows of an ``(n, K)`` array (error growing with n) would not resolve.
        """
        margins, e, losses, coef = self._work(Theta.shape[1])
        np.matmul(Theta.T, self.Xt, out=margins)
        margins *= self.y
        # one exp for both terms: with e = exp(−|m|), log(1 + e^{−m}) = max(−m, 0) + log1p(e)
        # and 1/(1 + e^m) = (e if m ≥ 0 else 1)/(1 + e): np.logaddexp(0, −m) and expit(−m)
        np.abs(margins, out=e)
        np.negative(e, out=e)
        np.exp(e, out=e)
        np.negative(margins, out=losses)
        np.maximum(losses, 0.0, out=losses)
        np.log1p(e, out=coef)
        losses += coef
        np.greater_equal(margins, 0.0, out=self.nonnegative)
        np.copyto(coef, 1.0)
        np.copyto(coef, e, where=self.nonnegative)
        e += 1.0
        coef /= e
        losses *= self.Wt
        value = np.sum(losses, axis=1) + 0.5 * self.lam * np.sum(Theta * Theta, axis=0)
        coef *= self.Wt
        coef *= self.neg_y
        grad = (coef @ self.X).T + self.lam * Theta
        return value, grad

    def _run_batch(self) -> None:
        if self.pending and len(self.pending) == self.active:
            cols = sorted(self.pending)
            try:
                value, grad = self.values(self.points)
                for k in cols:
                    self.results[k] = (float(value[k]), grad[:, k].copy())
            except Exception as exc:  # every waiting run raises it, none waits forever
                self.results.update(dict.fromkeys(cols, exc))
            self.pending.clear()
            self.cond.notify_all()

    def evaluate(self, k: int, theta: np.ndarray) -> tuple[float, np.ndarray]:
        with self.cond:
            self.points[:, k] = theta
            self.pending.add(k)
            self._run_batch()
            while k not in self.results:
                self.cond.wait()
            result = self.results.pop(k)
        if isinstance(result, Exception):
            raise result
        return result

    def finish(self) -> None:
        with self.cond:
            self.active -= 1
            self._run_batch()


def solve_optima(
    X: np.ndarray,
    y: np.ndarray,
    lam: float,
    weights: np.ndarray,
    theta0: np.ndarray,
) -> np.ndarray:
    """The minimisers of :func:`loss` for ``K`` weight vectors at once, as ``(p, K)``.

    Column ``k`` is :func:`solve_optimum` ``(X, y, lam, weights[:, k], theta0[:, k])``: its own
    L-BFGS run with the settings of spec M1a and the same convergence check. The runs go in
    lockstep (one thread each, :class:`_Lockstep`), so that an iteration of all of them reads
    ``X`` twice instead of twice per run: on data larger than the cache the solves are
    memory-bound, and this makes K of them cost little more than one. Rows with weight 0 do not
    count, so one matrix serves problems on different subsets of its rows.

    Raises:
        OptimumNotConvergedError: if any run ends with ``max_i |∂L/∂θ_i| > 1e−8``.
    """
    _, X, y, _ = _prepare(None, X, y, None)
    W = np.asarray(weights, dtype=np.float64)
    theta0 = np.asarray(theta0, dtype=np.float64)
    n, p = X.shape
    if W.ndim != 2 or W.shape[0] != n or theta0.shape != (p, W.shape[1]):
        raise ValueError(f"weights must be ({n}, K) and theta0 ({p}, K), got {W.shape} and {theta0.shape}")
    K = W.shape[1]
    lockstep = _Lockstep(X, y, lam, W, theta0)
    results: list[Any] = [None] * K
    errors: list[BaseException] = []

    def run(k: int) -> None:
        try:
            results[k] = _lbfgs(lambda theta: lockstep.evaluate(k, theta), theta0[:, k])
        except BaseException as exc:  # re-raised in the caller's thread below
            errors.append(exc)
        finally:
            lockstep.finish()

    threads = [threading.Thread(target=run, args=(k,), name=f"lbfgs-{k}") for k in range(K)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    Theta = np.stack([r.x for r in results], axis=1) if K else np.zeros((p, 0))
    if K:
        _, grad = lockstep.values(Theta)
        for k, result in enumerate(results):
            _check_converged(result, float(np.max(np.abs(grad[:, k]))) if p else 0.0)
    return Theta


def accuracy(theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> float | np.ndarray:
    """Fraction of points with ``sign(θᵀx) = y``, ``sign(0) := +1`` (spec experiments.md E0).

    Returns a float for ``theta`` of shape ``(p,)`` and an array ``(K,)`` for ``(p, K)``.
    """
    theta, X, y, _ = _prepare(theta, X, y, None)
    predictions = np.where(X @ theta >= 0.0, 1.0, -1.0)
    yy = y[:, None] if theta.ndim == 2 else y
    value = np.mean(predictions == yy, axis=0)
    return float(value) if theta.ndim == 1 else value
