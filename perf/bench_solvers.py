"""Throughput of the exact solvers against the GEMM bound of their shapes (issue 45).

(a) ADMM's stacked Newton-CG (``mpdp.models.stacked_newton``): the node subproblems of one
    benchmark cell, ``--reps`` partitions of ``--rows`` records into ``--m`` parties, ``--k``
    columns each (the cell's mechanisms × ε), solved together from zero. Throughput in GFLOP/s of
    the matrix products it performed (padding and frozen slots included), against
(b) the same stacked products alone, ``X (S, n, d) @ Θ (S, d, K)`` and ``Xᵀ R``, best of
    ``--repeats``: the bound for any implementation that multiplies these shapes (with K = 1 it
    is a GEMV bound); and against
(c) the former path: the same subproblems one party at a time with ``mpdp.models.newton.solve``
    (all K columns of a party together, one call per party).
(d) The voting study's multiclass Newton (``mpdp.models.batched_erm.fit_softmax_batch``) on
    ``--softmax-problems`` problems of ``--softmax-rows`` rows, ``--softmax-d`` one-hot-like
    features and ``--classes`` classes (KDDCup99 5-class parties): time per problem, Newton
    iterations, and the flops of its Hessian blocks (``K(K+1)/2`` products of 2nd'² flops, d'
    the problem's non-zero features) plus its ``(d'K)³/3`` Cholesky-sized solve, against the
    GEMM throughput of one Hessian block and LAPACK's solve of that size.
(e) The voting study's class predictions (``mpdp.models.batched_erm.predict_class``): ``--models``
    local models of ``--softmax-d`` features and ``--classes`` classes labelling ``--aux-rows``
    auxiliary rows (the votes of a KDDCup99 5-class partition), against the one GEMM
    ``X (n, d) @ W (d, models·K)`` it performs and against NumPy's ``einsum`` (the former path).

CPU seconds (``time.process_time``) everywhere, one BLAS thread, best of ``--repeats``; the
machine is named on the first line. Data: the first ``--rows`` records of
``data/processed/adult/X_train.npy`` when present, else a random problem of Adult's width
(``SYNTHETIC``); throughput depends only on the shapes.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from bench_engine import blas_description, cpu_name
from threadpoolctl import threadpool_limits

from mpdp.models import batched_erm, newton, stacked_newton

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT / "data" / "processed" / "adult"


def best_cpu(fn: Callable[[], object], repeats: int) -> float:
    """Least CPU seconds of ``repeats`` calls (after one warm-up)."""
    fn()
    best = np.inf
    for _ in range(repeats):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def admm_problems(rows: int, m: int, reps: int, k: int, seed: int = 0):  # noqa: ANN201
    """The cell's node subproblems: (problems, scale, quad, lin) as one ADMM primal step poses them."""
    rng = np.random.default_rng(seed)
    if (ADULT / "X_train.npy").is_file() and len(np.load(ADULT / "y_train.npy")) >= rows:
        X, y = np.load(ADULT / "X_train.npy")[:rows].astype(np.float64), np.load(ADULT / "y_train.npy")[:rows]
        source = f"Adult's first {rows} records"
    else:
        X = rng.normal(size=(rows, 105))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        y = np.where(X @ rng.normal(size=105) > 0, 1.0, -1.0)
        source = f"SYNTHETIC ({ADULT / 'X_train.npy'} absent or short)"
    y = np.where(y > 0, 1.0, -1.0)
    problems = []
    for _ in range(reps):
        perm = rng.permutation(rows)
        problems += [(np.ascontiguousarray(X[idx]), y[idx]) for idx in np.array_split(perm, m)]
    S, d = len(problems), X.shape[1]
    sizes = np.array([len(yy) for _, yy in problems], dtype=float)
    penalty = rng.choice([0.01, 0.1, 1.0, 10.0], size=(S, k))
    rho = 1e-3 * m
    scale = np.broadcast_to((1.0 / sizes)[:, None], (S, k)).copy()
    quad = rho / m + 2 * penalty * 2  # κ_p on a ring
    lin = rng.normal(size=(S, d, k)) * (penalty / np.sqrt(d))[:, None, :]
    return problems, scale, quad, lin, source


def stacked_gemm_bound(stack: stacked_newton.Stack, k: int, repeats: int) -> float:
    """GFLOP/s of the pair ``X Θ``, ``Xᵀ R`` over the stack's buckets at width ``k``."""
    ops = []
    flops = 0.0
    for b in stack.buckets:
        S, n, d = b.X.shape
        theta, r = np.ones((S, d, k)), np.ones((S, n, k))
        ops.append((b.X, theta, r))
        flops += 4.0 * S * n * d * k

    def run() -> None:
        for X, theta, r in ops:
            np.matmul(X, theta)
            np.matmul(X.transpose(0, 2, 1), r)

    return flops / best_cpu(run, repeats) / 1e9


def softmax_problems(count: int, rows: int, d: int, classes: int, seed: int = 1):  # noqa: ANN201
    """One-hot-like problems (KDDCup99-shaped): 8 active features per row, hard class targets."""
    rng = np.random.default_rng(seed)
    X = np.zeros((count, rows, d))
    for b in range(count):
        for i in range(rows):
            X[b, i, rng.choice(d, 8, replace=False)] = 1.0 / np.sqrt(8)
    labels = rng.integers(0, classes, size=(count, rows))
    T = np.eye(classes)[labels]
    c = np.full((count, rows), 1.0 / rows)
    return X, c, T


def softmax_iterations(X: np.ndarray, c: np.ndarray, T: np.ndarray, lam: float) -> int:
    """Newton iterations the solver needs (the least budget it converges within)."""
    for its in range(1, batched_erm.MAX_ITER + 1):
        try:
            batched_erm.fit_softmax_batch(X, c, T, lam, max_iter=its)
            return its
        except batched_erm.NotConvergedError:
            continue
    raise SystemExit("softmax solve did not converge")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2800, help="records of the cell (benchmark cap × 0.7)")
    parser.add_argument("--m", type=int, nargs="+", default=[2, 8, 32], help="parties (nodes) per partition")
    parser.add_argument("--reps", type=int, default=10, help="partitions solved together")
    parser.add_argument("--k", type=int, default=10, help="columns per node (mechanisms × ε)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--softmax-problems", type=int, default=4)
    parser.add_argument("--softmax-rows", type=int, default=700)
    parser.add_argument("--softmax-d", type=int, default=120)
    parser.add_argument("--classes", type=int, default=5)
    parser.add_argument("--softmax-lambda", type=float, default=1e-3)
    parser.add_argument("--models", type=int, default=100, help="local models voting in (e)")
    parser.add_argument("--aux-rows", type=int, default=5600, help="auxiliary rows labelled in (e)")
    args = parser.parse_args()
    print(f"machine: {cpu_name()}; BLAS: {blas_description()}; one BLAS thread, CPU seconds, best of "
          f"{args.repeats}")
    with threadpool_limits(1):
        for m in args.m:
            problems, scale, quad, lin, source = admm_problems(args.rows, m, args.reps, args.k)
            stack = stacked_newton.Stack.of(problems)
            result: list[newton.NewtonResult] = []

            def stacked(stack=stack, scale=scale, quad=quad, lin=lin, result=result) -> None:
                result[:] = [stacked_newton.solve(stack, scale, quad, lin)]

            def per_party(problems=problems, scale=scale, quad=quad, lin=lin) -> None:
                for s, (X, y) in enumerate(problems):
                    newton.solve(X, y, scale[s], quad[s], lin[s])

            t_stacked = best_cpu(stacked, args.repeats)
            t_party = best_cpu(per_party, args.repeats)
            gflops = result[0].flops / t_stacked / 1e9
            bound = stacked_gemm_bound(stack, args.k, args.repeats)
            solves = len(problems) * args.k
            n = args.rows // m
            print(f"(a) ADMM stacked Newton-CG, {source}: m = {m} parties of ~{n} rows x d = {stack.d}, "
                  f"{args.reps} partitions, K = {args.k}: {t_stacked * 1e3:.1f} ms for {solves} node-solves "
                  f"({t_stacked / solves * 1e6:.1f} us each), {gflops:.1f} GFLOP/s")
            print(f"(b)   GEMM pair at these shapes: {bound:.1f} GFLOP/s -> solver at {gflops / bound:.0%} of it")
            print(f"(c)   one party at a time (newton.solve): {t_party * 1e3:.1f} ms "
                  f"({t_party / solves * 1e6:.1f} us per node-solve): stacked is {t_party / t_stacked:.1f}x faster")
        X, c, T = softmax_problems(args.softmax_problems, args.softmax_rows, args.softmax_d, args.classes)
        lam = args.softmax_lambda
        its = softmax_iterations(X, c, T, lam)
        t_soft = best_cpu(lambda: batched_erm.fit_softmax_batch(X, c, T, lam), args.repeats)
        dp = int(np.count_nonzero(np.any(X[0] != 0, axis=0)))
        K, n = args.classes, args.softmax_rows
        per_problem = its * (K * (K + 1) / 2 * 2 * n * dp * dp + (dp * K) ** 3 / 3)
        gflops = args.softmax_problems * per_problem / t_soft / 1e9
        A = np.ones((dp, n))
        block = best_cpu(lambda: A @ A.T, args.repeats)
        H = np.eye(dp * K) * 2 + 1e-3
        rhs = np.ones(dp * K)
        solve = best_cpu(lambda: np.linalg.solve(H, rhs), args.repeats)
        bound_time = its * (K * (K + 1) / 2 * block + solve)
        print(f"(d) voting softmax Newton: {args.softmax_problems} problems of {n} rows x d' = {dp}, "
              f"K = {K}, lambda = {lam:g}: {its} Newton iterations, {t_soft / args.softmax_problems * 1e3:.1f} ms "
              f"per problem, {gflops:.1f} GFLOP/s (Hessian blocks + solve)")
        print(f"(d)   bound: {K * (K + 1) // 2} GEMMs {dp}x{n}x{dp} ({2 * n * dp * dp / block / 1e9:.1f} GFLOP/s) and "
              f"one {dp * K}x{dp * K} solve per iteration = {bound_time * 1e3:.1f} ms per problem -> solver at "
              f"{bound_time / (t_soft / args.softmax_problems):.0%} of it")
        rng = np.random.default_rng(2)
        Xa = rng.normal(size=(args.aux_rows, args.softmax_d))
        W = rng.normal(size=(args.models, args.softmax_d, args.classes))
        flops = 2.0 * args.aux_rows * args.softmax_d * args.models * args.classes
        t_pred = best_cpu(lambda: batched_erm.predict_class(W, Xa), args.repeats)
        flat = np.ascontiguousarray(np.moveaxis(W, 1, 0).reshape(args.softmax_d, -1))
        t_gemm = best_cpu(lambda: Xa @ flat, args.repeats)
        t_einsum = best_cpu(lambda: np.argmax(np.einsum("nd,...dk->...nk", Xa, W), axis=-1), args.repeats)
        print(f"(e) voting predictions: {args.models} models x {args.classes} classes on {args.aux_rows} rows x "
              f"d = {args.softmax_d}: {t_pred * 1e3:.1f} ms ({flops / t_pred / 1e9:.1f} GFLOP/s); the GEMM alone "
              f"{t_gemm * 1e3:.1f} ms ({flops / t_gemm / 1e9:.1f} GFLOP/s) -> {t_gemm / t_pred:.0%} of the bound; "
              f"einsum (former path) {t_einsum * 1e3:.1f} ms ({t_einsum / t_pred:.1f}x slower)")


if __name__ == "__main__":
    main()
