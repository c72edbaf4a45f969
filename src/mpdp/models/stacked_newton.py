"""Newton-CG for many problems with *their own* design matrices at once (spec M8–M10, issue 45).

:func:`mpdp.models.newton.solve` minimises, for the columns k of one parameter matrix sharing a
design matrix X,

    F_k(θ) = s_k Σ_i w_i l(y_i θᵀx_i) + (q_k / 2) ‖θ‖² + b_kᵀ θ.

ADMM's primal steps (:mod:`mpdp.mechanisms.admm`) need this for every node of every graph of a
batch: P nodes per graph, each with its own rows, and the benchmark's cells run one graph per
repetition (its own partition). Called node by node, the small node blocks (tens to a few
thousand rows) spend their time in NumPy's per-call overhead, not in arithmetic. Here S
problems (X_s, y_s) with K columns each are solved together: the rows are padded with
zero-weight rows to a common length per *bucket* of problems of similar size
(:class:`Stack`), and every margin, gradient and Hessian-vector product is one stacked matrix
product ``X (S, n, d) @ Θ (S, d, K)`` (BLAS-3 per problem, one call for all).

The iteration of every column is :func:`mpdp.models.newton.solve`'s (same Newton direction by CG
with forcing tolerance ``min(0.5, √‖g‖)‖g‖``, same backtracking on ½‖∇F‖², same stopping test
``‖∇F‖₂ ≤ gtol``); a column that has stopped is frozen, not recomputed. Finished columns are
packed out of the working arrays (:class:`_Packing`) once they are half of them, so
columns that need more iterations do not drag finished ones along. Only the order of
floating-point sums differs from the column-by-column solver, so both return minimisers within
``gtol/q`` of the exact one (strong convexity); tests/admm/test_stacked_newton.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from mpdp.models.newton import GTOL, NewtonNotConvergedError, NewtonResult

#: problems whose row counts differ by at most this factor share a padded bucket
BUCKET_RATIO = 1.25
#: repack the working arrays when fewer than this share of their slots is still active
REPACK_BELOW = 0.5


@dataclass(frozen=True)
class _Bucket:
    index: np.ndarray  # (S_b,) positions of its problems in the stack
    X: np.ndarray  # (S_b, n_b, d), zero rows as padding
    y: np.ndarray  # (S_b, n_b), labels ±1 (1 on padding)
    w: np.ndarray  # (S_b, n_b), record weights (0 on padding)


@dataclass(frozen=True)
class Stack:
    """S problems (X_s, y_s), padded into buckets of similar row counts; built once, solved often."""

    buckets: tuple[_Bucket, ...]
    size: int  # S
    d: int

    @classmethod
    def of(cls, problems: Sequence[tuple[np.ndarray, np.ndarray]], ratio: float = BUCKET_RATIO) -> Stack:
        """Problems sorted by row count, cut into buckets whose largest is ≤ ``ratio`` × smallest."""
        if not problems:
            raise ValueError("a stack needs at least one problem")
        d = problems[0][0].shape[1]
        sizes = np.array([len(y) for _, y in problems])
        for X, y in problems:
            if X.ndim != 2 or X.shape != (len(y), d):
                raise ValueError(f"every problem needs X of shape (n_s, {d}) and y of shape (n_s,)")
        order = np.argsort(sizes, kind="stable")
        buckets, start = [], 0
        while start < len(order):
            stop = start + 1
            while stop < len(order) and sizes[order[stop]] <= ratio * max(sizes[order[start]], 1):
                stop += 1
            index = order[start:stop]
            n = int(sizes[index].max())
            X = np.zeros((len(index), n, d))
            y = np.ones((len(index), n))
            w = np.zeros((len(index), n))
            for i, s in enumerate(index):
                Xs, ys = problems[s]
                X[i, : len(ys)] = Xs
                y[i, : len(ys)] = ys
                w[i, : len(ys)] = 1.0
            buckets.append(_Bucket(index, X, y, w))
            start = stop
        return cls(tuple(buckets), len(problems), d)


def solve(
    stack: Stack,
    scale: np.ndarray,
    quad: np.ndarray,
    lin: np.ndarray,
    init: np.ndarray | None = None,
    gtol: float = GTOL,
    max_newton: int = 50,
    max_cg: int | None = None,
) -> NewtonResult:
    """Minimise F_sk for every problem s and column k (module docstring).

    Args:
        stack: the problems' rows (:meth:`Stack.of`).
        scale: data scales s_sk ≥ 0, (S, K).
        quad: quadratic coefficients q_sk > 0, (S, K).
        lin: linear terms b_sk, (S, d, K).
        init: warm start (S, d, K); default zeros.

    Returns:
        :class:`~mpdp.models.newton.NewtonResult` with ``theta`` (S, d, K), ``grad_norm`` and
        ``iterations`` (S, K).

    Raises:
        NewtonNotConvergedError: a column's gradient norm is still above ``gtol``.
    """
    S, d = stack.size, stack.d
    lin = np.asarray(lin, dtype=np.float64)
    if lin.ndim != 3 or lin.shape[:2] != (S, d):
        raise ValueError(f"lin must have shape ({S}, {d}, K), got {lin.shape}")
    K = lin.shape[2]
    scale = np.broadcast_to(np.asarray(scale, dtype=np.float64), (S, K))
    quad = np.broadcast_to(np.asarray(quad, dtype=np.float64), (S, K))
    if not (np.all(np.isfinite(scale)) and np.all(np.isfinite(quad)) and np.all(np.isfinite(lin))):
        raise ValueError("scale, quad and lin must be finite")
    if np.any(scale < 0) or np.any(quad <= 0):
        raise ValueError("scale must be >= 0 and quad > 0 (strong convexity)")
    theta = np.zeros((S, d, K)) if init is None else np.array(init, dtype=np.float64, copy=True)
    if theta.shape != (S, d, K):
        raise ValueError(f"init must have shape ({S}, {d}, {K})")
    max_cg = d + 10 if max_cg is None else max_cg
    grad_norm = np.full((S, K), np.inf)
    iterations = np.zeros((S, K), dtype=np.int64)
    products, flops = 0, 0.0
    for b in stack.buckets:
        th, gn, its, used, work = _solve_bucket(b, scale[b.index], quad[b.index], lin[b.index], theta[b.index],
                                                gtol, max_newton, max_cg)
        theta[b.index], grad_norm[b.index], iterations[b.index] = th, gn, its
        products += used
        flops += work
    bad = grad_norm > gtol
    if bad.any():
        raise NewtonNotConvergedError(
            f"Newton-CG: {int(bad.sum())} of {bad.size} subproblems still have gradient norm up to "
            f"{float(grad_norm[bad].max()):.3e} > {gtol:.0e} after {max_newton} iterations"
        )
    return NewtonResult(theta, grad_norm, iterations, products, flops)


class _Packing:
    """Where the slots (S′, K′) of the working arrays live in the full (S, K) layout.

    ``rows`` are the problems kept, ``cols[i]`` the columns of problem ``rows[i]`` in slot order
    (active ones first); ``valid`` marks the slots that hold a column still being worked on
    (a problem with fewer active columns than K′ fills its last slots with finished ones, frozen).
    """

    def __init__(self, rows: np.ndarray, cols: np.ndarray, valid: np.ndarray) -> None:
        self.rows, self.cols, self.valid = rows, cols, valid

    @classmethod
    def full(cls, S: int, K: int) -> _Packing:
        return cls(np.arange(S), np.tile(np.arange(K), (S, 1)), np.ones((S, K), dtype=bool))

    @staticmethod
    def select(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, slot order, valid) of the working slots where ``mask`` (S′, K′) holds."""
        rows = np.flatnonzero(mask.any(axis=1))
        sub = mask[rows]
        width = int(sub.sum(axis=1).max())
        order = np.argsort(~sub, axis=1, kind="stable")[:, :width]
        return rows, order, np.take_along_axis(sub, order, axis=1)

    def narrow(self, rows: np.ndarray, order: np.ndarray, valid: np.ndarray) -> _Packing:
        return _Packing(self.rows[rows], np.take_along_axis(self.cols[rows], order, axis=1), valid)


def _take(a: np.ndarray, rows: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Working slots of ``a`` (S′, …, K′) after :meth:`_Packing.select` (whole columns copied)."""
    picked = np.moveaxis(a, -1, 1)[rows[:, None], order]  # (S″, K″, …)
    return np.ascontiguousarray(np.moveaxis(picked, 1, -1))


def _put(full: np.ndarray, pack: _Packing, work: np.ndarray) -> None:
    """Write the valid working slots ``work`` back into ``full`` (S, …, K)."""
    rows = np.broadcast_to(pack.rows[:, None], pack.cols.shape)
    np.moveaxis(full, -1, 1)[rows[pack.valid], pack.cols[pack.valid]] = np.moveaxis(work, -1, 1)[pack.valid]


def _product(A: np.ndarray, B: np.ndarray, flops: list[float]) -> np.ndarray:
    """``A @ B`` per problem (one stacked BLAS-3 call), its flops added to ``flops[0]``."""
    flops[0] += 2.0 * A.shape[0] * A.shape[1] * A.shape[2] * B.shape[2]
    return np.matmul(A, B)


def _grad(X: np.ndarray, yw: np.ndarray, z: np.ndarray, th: np.ndarray, s: np.ndarray, q: np.ndarray,
          b: np.ndarray, flops: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """∇F at margins ``z = y ∘ Xθ``, (S, d, K), and σ(−z) for the next curvature
    (:func:`mpdp.models.newton._grad`, stacked)."""
    sig = expit(-z)
    g = _product(X.transpose(0, 2, 1), sig * -yw[:, :, None], flops)
    g *= s[:, None, :]
    g += q[:, None, :] * th
    g += b
    return g, sig


def _solve_bucket(bk: _Bucket, s: np.ndarray, q: np.ndarray, b: np.ndarray, theta: np.ndarray, gtol: float,
                  max_newton: int, max_cg: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, float]:
    S, K = s.shape
    theta = theta.copy()
    grad_norm = np.full((S, K), np.inf)
    iterations = np.zeros((S, K), dtype=np.int64)
    pack = _Packing.full(S, K)
    X, y, w = bk.X, bk.y, bk.w
    th, ss, qq, bb = theta, s, q, b
    flops = [0.0]
    z = y[:, :, None] * _product(X, th, flops)
    g, sig = _grad(X, y * w, z, th, ss, qq, bb, flops)
    gn = np.linalg.norm(g, axis=1)
    its = np.zeros((S, K), dtype=np.int64)
    products = 0
    while True:
        _put(theta, pack, th)
        _put(grad_norm, pack, gn)
        _put(iterations, pack, its)
        act = pack.valid & (gn > gtol)
        if not act.any() or its[act].max() >= max_newton:
            break
        if act.sum() < REPACK_BELOW * act.size:
            rows, order, valid = _Packing.select(act)
            pack = pack.narrow(rows, order, valid)
            X, y, w = X[rows], y[rows], w[rows]
            th, z, g, gn, its, sig = (_take(a, rows, order) for a in (th, z, g, gn, its, sig))
            ss, qq, bb = (_take(a, rows, order) for a in (ss, qq, bb))
            act = valid
        curv = sig  # σ(−z) of the current margins, from the gradient that accepted them
        curv *= 1.0 - sig
        curv *= w[:, :, None] * ss[:, None, :]
        step, used = _cg(X, curv, qq, -g, np.minimum(0.5, np.sqrt(gn)) * gn, act, max_cg, flops)
        products += used
        th, z, g, gn, sig = _backtrack(X, y, y * w, th, z, g, gn, step, ss, qq, bb, act, flops)
        its = its + act
    return theta, grad_norm, iterations, products, flops[0]


def _backtrack(X: np.ndarray, y: np.ndarray, yw: np.ndarray, th: np.ndarray, z: np.ndarray, g: np.ndarray,
               gn: np.ndarray, step: np.ndarray, s: np.ndarray, q: np.ndarray, b: np.ndarray, act: np.ndarray,
               flops: list[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`mpdp.models.newton._backtrack` per active slot; the others keep their values."""
    dz = y[:, :, None] * _product(X, step, flops)
    t = np.ones(gn.shape)
    new_th, new_z = th + step, z + dz
    new_g, new_sig = _grad(X, yw, new_z, new_th, s, q, b, flops)
    new_gn = np.linalg.norm(new_g, axis=1)
    bad = act & (new_gn > (1.0 - 1e-4 * t) * gn)
    for _ in range(30):
        if not bad.any():
            break
        t = np.where(bad, 0.5 * t, t)
        rows = np.flatnonzero(bad.any(axis=1))
        tb = t[rows][:, None, :]
        cand_th = th[rows] + tb * step[rows]
        cand_z = z[rows] + tb * dz[rows]
        cand_g, cand_sig = _grad(X[rows], yw[rows], cand_z, cand_th, s[rows], q[rows], b[rows], flops)
        cand_gn = np.linalg.norm(cand_g, axis=1)
        sel = bad[rows]
        sel3 = sel[:, None, :]
        new_th[rows] = np.where(sel3, cand_th, new_th[rows])
        new_z[rows] = np.where(sel3, cand_z, new_z[rows])
        new_g[rows] = np.where(sel3, cand_g, new_g[rows])
        new_sig[rows] = np.where(sel3, cand_sig, new_sig[rows])
        new_gn[rows] = np.where(sel, cand_gn, new_gn[rows])
        bad = bad & (new_gn > (1.0 - 1e-4 * t) * gn)
    if act.all():
        return new_th, new_z, new_g, new_gn, new_sig
    keep = ~act
    keep3 = keep[:, None, :]
    return (np.where(keep3, th, new_th), np.where(keep3, z, new_z), np.where(keep3, g, new_g),
            np.where(keep, gn, new_gn), new_sig)


def _cg(X: np.ndarray, curv: np.ndarray, q: np.ndarray, rhs: np.ndarray, tol: np.ndarray, live: np.ndarray,
        max_iter: int, flops: list[float]) -> tuple[np.ndarray, int]:
    """:func:`mpdp.models.newton._cg` for the ``live`` slots (H v = Xᵀ(curv ∘ X v) + q v); the others get 0."""
    p_sol = np.zeros_like(rhs)
    r = np.where(live[:, None, :], rhs, 0.0)
    rr = (r * r).sum(axis=1)
    live = live & (np.sqrt(rr) > tol)
    pack = _Packing.full(*live.shape)
    Xw, cw, qw, tw = X, curv, q, tol
    pw, rw, dw, rrw, lw = p_sol, r, r.copy(), rr, live
    used = 0
    for _ in range(max_iter):
        if not lw.any():
            break
        if lw.sum() < REPACK_BELOW * lw.size:
            _put(p_sol, pack, pw)
            rows, order, valid = _Packing.select(lw)
            pack = pack.narrow(rows, order, valid)
            Xw = Xw[rows]
            cw, qw, tw, pw, rw, dw, rrw = (_take(a, rows, order) for a in (cw, qw, tw, pw, rw, dw, rrw))
            lw = valid
        hd = _product(Xw.transpose(0, 2, 1), cw * _product(Xw, dw, flops), flops) + qw[:, None, :] * dw
        used += 1
        denom = (dw * hd).sum(axis=1)
        # every slot live is the common case: no masking needed
        step = rrw / denom if lw.all() else np.where(lw, rrw / np.where(lw, denom, 1.0), 0.0)
        pw += step[:, None, :] * dw
        rw -= step[:, None, :] * hd
        rr_new = (rw * rw).sum(axis=1)
        if lw.all():
            dw *= (rr_new / rrw)[:, None, :]
            dw += rw
            rrw = rr_new
        else:
            beta = np.where(lw, rr_new / np.where(lw, rrw, 1.0), 0.0)
            dw = np.where(lw[:, None, :], rw + beta[:, None, :] * dw, dw)
            rrw = np.where(lw, rr_new, rrw)
        lw = lw & (np.sqrt(rr_new) > tw)
    _put(p_sol, pack, pw)
    return p_sol, used
