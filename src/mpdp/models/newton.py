"""Batched Newton-CG for L2-regularised logistic subproblems with extra quadratic and linear terms.

Many optimisation-based mechanisms (objective perturbation, ADMM primal steps, spec mechanisms.md
M7–M10) need the *exact* minimiser of, for each run ``k`` of a batch sharing one design matrix
``X`` (n × d) and labels ``y ∈ {−1, +1}ⁿ``,

    F_k(θ) = s_k Σ_i w_i l(y_i θᵀx_i) + (q_k / 2) ‖θ‖² + b_kᵀ θ,     l(z) = log(1 + e^{−z}),

with a per-run data scale ``s_k ≥ 0``, optional record weights ``w_i ≥ 0``, a per-run quadratic
coefficient ``q_k > 0`` (strong convexity) and a per-run linear term ``b_k ∈ R^d``. The runs are the
columns of a parameter matrix Θ (d × K): margins, gradients and Hessian-vector products are
matrix products ``X Θ`` and ``Xᵀ R`` over all unconverged columns at once (BLAS-3).

:func:`solve` runs an inexact Newton method: each Newton direction solves
``H_k p_k = −g_k`` by conjugate gradients (Hessian-vector products only; ``H_k = s_k Xᵀ D_k X +
q_k I`` with ``D_k = diag(w_i σ(z_ik) σ(−z_ik))``), with the forcing tolerance
``min(0.5, √‖g_k‖) ‖g_k‖`` (superlinear convergence), followed by a backtracking step per column on
the merit ½‖∇F‖² (:func:`_backtrack`). Columns stop individually once ``‖g_k‖₂ ≤ gtol``; the default ``gtol = 1e−9``
in float64 is what objective perturbation needs (spec M9 "Exactness"). Warm starts (``init``)
make a few Newton steps enough when consecutive problems are close (ADMM iterations).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from mpdp.errors import MpdpError

#: default stopping tolerance on the Euclidean gradient norm of every column (spec M8/M9)
GTOL = 1e-9


class NewtonNotConvergedError(MpdpError):
    """Some columns did not reach the gradient-norm tolerance within the iteration budget."""


@dataclass(frozen=True)
class NewtonResult:
    """Minimisers (d × K), their gradient norms (K,) and Newton iterations per column (K,)."""

    theta: np.ndarray
    grad_norm: np.ndarray
    iterations: np.ndarray
    hessian_products: int  # CG matrix products performed (all columns together), for benchmarks
    flops: float = 0.0  # flops of the matrix products performed (stacked solver only), for benchmarks


def _as_column_vector(value: float | np.ndarray, k: int, name: str) -> np.ndarray:
    arr = np.broadcast_to(np.asarray(value, dtype=np.float64), (k,)).copy()
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    return arr


def objective(
    X: np.ndarray,
    y: np.ndarray,
    theta: np.ndarray,
    scale: float | np.ndarray,
    quad: float | np.ndarray,
    lin: np.ndarray | None = None,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """F_k(θ_k) of every column (module docstring), shape (K,)."""
    theta = np.asarray(theta, dtype=np.float64)
    k = theta.shape[1]
    w = np.ones(X.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    z = y[:, None] * (X @ theta)
    data = w @ np.logaddexp(0.0, -z)
    value = _as_column_vector(scale, k, "scale") * data + 0.5 * _as_column_vector(quad, k, "quad") * (
        theta * theta
    ).sum(axis=0)
    if lin is not None:
        value = value + (lin * theta).sum(axis=0)
    return value


def gradient(
    X: np.ndarray,
    y: np.ndarray,
    theta: np.ndarray,
    scale: float | np.ndarray,
    quad: float | np.ndarray,
    lin: np.ndarray | None = None,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """∇F_k(θ_k) of every column, shape (d, K) (the KKT residual of a returned minimiser)."""
    theta = np.asarray(theta, dtype=np.float64)
    k = theta.shape[1]
    w = np.ones(X.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    z = y[:, None] * (X @ theta)
    r = -(y * w)[:, None] * expit(-z)
    grad = (X.T @ r) * _as_column_vector(scale, k, "scale") + _as_column_vector(quad, k, "quad") * theta
    if lin is not None:
        grad = grad + lin
    return grad


def solve(
    X: np.ndarray,
    y: np.ndarray,
    scale: float | np.ndarray,
    quad: float | np.ndarray,
    lin: np.ndarray | None = None,
    init: np.ndarray | None = None,
    weights: np.ndarray | None = None,
    gtol: float = GTOL,
    max_newton: int = 50,
    max_cg: int | None = None,
) -> NewtonResult:
    """Minimise F_k for every column k at once (module docstring).

    Args:
        X: design matrix (n × d), float64.
        y: labels in {−1, +1}, shape (n,).
        scale: data scale s_k ≥ 0, scalar or (K,).
        quad: quadratic coefficient q_k > 0, scalar or (K,).
        lin: linear terms b (d × K) or None (zero).
        init: warm start (d × K); default zeros. At least one of ``lin``/``init`` fixes K.
        weights: record weights w (n,) or None (all 1).
        gtol: stop a column when ‖∇F_k‖₂ ≤ gtol.
        max_newton: Newton iterations per column before giving up.
        max_cg: CG iterations per Newton step (default d + 10).

    Raises:
        NewtonNotConvergedError: a column's gradient norm is still above ``gtol``.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n, d = X.shape
    if y.shape != (n,):
        raise ValueError(f"y must have shape ({n},), got {y.shape}")
    if lin is None and init is None:
        raise ValueError("give lin or init (they fix the number of columns K)")
    k = (lin if lin is not None else init).shape[1]
    theta = np.zeros((d, k)) if init is None else np.array(init, dtype=np.float64, copy=True)
    b = np.zeros((d, k)) if lin is None else np.asarray(lin, dtype=np.float64)
    if theta.shape != (d, k) or b.shape != (d, k):
        raise ValueError(f"init and lin must have shape ({d}, {k})")
    s = _as_column_vector(scale, k, "scale")
    q = _as_column_vector(quad, k, "quad")
    if np.any(s < 0) or np.any(q <= 0):
        raise ValueError("scale must be >= 0 and quad > 0 (strong convexity)")
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    yw = y * w
    max_cg = d + 10 if max_cg is None else max_cg

    iterations = np.zeros(k, dtype=np.int64)
    grad_norm = np.full(k, np.inf)
    products = 0
    active = np.arange(k)
    th = theta
    z = y[:, None] * (X @ th)
    g, sig = _grad(X, yw, z, th, s, q, b)
    gn = np.linalg.norm(g, axis=0)
    while True:
        grad_norm[active] = gn
        theta[:, active] = th
        keep = gn > gtol
        if not keep.any():
            active = active[:0]
            break
        if iterations[active[keep]].max() >= max_newton:
            active = active[keep]
            break
        if not keep.all():
            active, th, z, g, gn = active[keep], th[:, keep], z[:, keep], g[:, keep], gn[keep]
            sig, s, q, b = sig[:, keep], s[keep], q[keep], b[:, keep]
        curv = sig  # σ(−z) of the current margins, from the gradient that accepted them
        curv *= 1.0 - sig
        curv *= w[:, None] * s  # s_k w_i σ(z)σ(−z)
        step, used = _cg(X, curv, q, -g, np.minimum(0.5, np.sqrt(gn)) * gn, max_cg)
        products += used
        th, z, g, gn, sig = _backtrack(X, y, yw, th, z, g, gn, step, s, q, b)
        iterations[active] += 1
    if active.size:
        worst = float(grad_norm[active].max())
        raise NewtonNotConvergedError(
            f"Newton-CG: {active.size} of {k} subproblems still have gradient norm up to "
            f"{worst:.3e} > {gtol:.0e} after {max_newton} iterations"
        )
    return NewtonResult(theta, grad_norm, iterations, products)


def _grad(
    X: np.ndarray, yw: np.ndarray, z: np.ndarray, th: np.ndarray, s: np.ndarray, q: np.ndarray,
    b: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """∇F at margins ``z = y ∘ Xθ`` (one matrix product) and σ(−z), which the next Newton
    step's curvature σ(z)σ(−z) reuses (one ``expit`` pass per iteration instead of two)."""
    sig = expit(-z)
    g = X.T @ (sig * -yw[:, None])
    g *= s
    g += q * th
    g += b
    return g, sig


def _backtrack(
    X: np.ndarray, y: np.ndarray, yw: np.ndarray, th: np.ndarray, z: np.ndarray, g: np.ndarray,
    gn: np.ndarray, step: np.ndarray, s: np.ndarray, q: np.ndarray, b: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Full Newton step, halved per column until ‖∇F‖ decreases (merit ½‖∇F‖²).

    The inexact Newton direction p (CG residual ≤ ½‖g‖) is a descent direction of ½‖∇F‖²
    (its derivative along p is gᵀHp = −‖g‖² + gᵀr < 0), so backtracking terminates; the new
    gradient is the one the next iteration needs anyway, so an accepted full step costs nothing
    extra. The margins are updated, not recomputed: z ← z + t y ∘ (X p).
    """
    dz = y[:, None] * (X @ step)
    t = np.ones(th.shape[1])
    new_th, new_z = th + step, z + dz
    new_g, new_sig = _grad(X, yw, new_z, new_th, s, q, b)
    new_gn = np.linalg.norm(new_g, axis=0)
    bad = np.flatnonzero(new_gn > (1.0 - 1e-4 * t) * gn)
    for _ in range(30):
        if bad.size == 0:
            break
        t[bad] *= 0.5
        tb = t[bad]
        new_th[:, bad] = th[:, bad] + tb * step[:, bad]
        new_z[:, bad] = z[:, bad] + tb * dz[:, bad]
        new_g[:, bad], new_sig[:, bad] = _grad(X, yw, new_z[:, bad], new_th[:, bad], s[bad], q[bad], b[:, bad])
        new_gn[bad] = np.linalg.norm(new_g[:, bad], axis=0)
        bad = bad[new_gn[bad] > (1.0 - 1e-4 * t[bad]) * gn[bad]]
    return new_th, new_z, new_g, new_gn, new_sig


def _cg(
    X: np.ndarray, curv: np.ndarray, q: np.ndarray, rhs: np.ndarray, tol: np.ndarray, max_iter: int
) -> tuple[np.ndarray, int]:
    """Solve H_k p_k = rhs_k for all columns by CG (H_k v = Xᵀ(curv_k ∘ X v) + q_k v)."""
    p_sol = np.zeros_like(rhs)
    r = rhs.copy()
    direction = r.copy()
    rr = (r * r).sum(axis=0)
    live = np.sqrt(rr) > tol
    used = 0
    idx, curv_live = None, curv
    for _ in range(max_iter):
        if not live.any():
            break
        now = np.flatnonzero(live)
        if idx is None or now.size != idx.size:  # gather the live columns' curvature once per change
            idx = now
            curv_live = curv if idx.size == curv.shape[1] else curv[:, idx]
        dv = direction[:, idx]
        hd = X.T @ (curv_live * (X @ dv)) + q[idx] * dv
        used += 1
        step = rr[idx] / (dv * hd).sum(axis=0)
        p_sol[:, idx] += step * dv
        r[:, idx] -= step * hd
        rr_new = (r[:, idx] * r[:, idx]).sum(axis=0)
        direction[:, idx] = r[:, idx] + (rr_new / rr[idx]) * dv
        rr[idx] = rr_new
        live[idx] = np.sqrt(rr_new) > tol[idx]
    return p_sol, used
