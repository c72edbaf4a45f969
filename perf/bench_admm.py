"""Throughput of the batched ADMM/DVP/PVP simulation (mpdp.mechanisms.admm + mpdp.models.newton).

Measures CPU time (``time.process_time``, so other processes on a shared machine inflate it
less than wall time) per *node-solve*: one exact primal step (gradient norm ≤ 1e−9) of one run
at one node. Three ways:

(a) batched: ``--k`` runs (DVP and PVP over the α grid) as the columns of one Newton-CG batch;
(b) one run at a time with the same Newton-CG solver (K = 1);
(c) one run at a time with the spec M8 solver, scipy L-BFGS warm-started, gtol = 1e−9.

It then projects the CPU time of the whole E4 experiment of a config (tuning included) from
(a) and the number of node-solves the plan needs, and the wall time on ``--cores`` cores
(one Snakemake job per topology).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from threadpoolctl import threadpool_limits

from mpdp import config
from mpdp.mechanisms import admm as zz
from mpdp.studies.admm import cost
from mpdp.studies.admm.cases import load_data

ROOT = Path(__file__).resolve().parents[1]


def node_solves(cfg: dict) -> int:
    """Node-solves of the E4 plan of ``cfg`` (the η grid at ``tune_alpha``, ``tune_draws`` ×
    ``tune_reps`` per private candidate, and the final runs with at most two references, per case:
    one, or one per repetition under ``split.per_repetition``; :func:`mpdp.studies.admm.cost.counts`)."""
    return cost.counts(cfg).node_solves * len(cfg["admm"]["topologies"])


def _runs(k: int, alphas: list[float]) -> list[zz.ADMMRun]:
    return [zz.ADMMRun(("dvp", "pvp")[i % 2], 1e-3, 0.1, alphas[(i // 2) % len(alphas)], i) for i in range(k)]


def batched(nodes, runs, iters: int) -> float:  # noqa: ANN001
    start = time.process_time()
    zz.run_batch(nodes, "ring", runs, iters, lambda r: np.random.default_rng(r.rep), lambda rel: {}, [iters])
    return (time.process_time() - start) / (len(runs) * iters * len(nodes))


def lbfgs_loop(nodes, solves: int, seed: int = 0) -> float:  # noqa: ANN001
    """CPU seconds per node subproblem solved by L-BFGS (spec M8 solver), DVP-like linear terms."""
    rng = np.random.default_rng(seed)
    X, y = nodes[0]
    B, d = X.shape
    q = 1e-3 / len(nodes) + 2 * 0.1 * 2
    start = time.process_time()
    f0 = np.zeros(d)
    for _ in range(solves):
        b = rng.normal(size=d) * 0.05

        def fun(f, b=b):
            z = y * (X @ f)
            return (np.logaddexp(0, -z).sum() / B + 0.5 * q * f @ f + b @ f,
                    X.T @ (-y / (1 + np.exp(z))) / B + q * f + b)

        f0 = minimize(fun, f0, jac=True, method="L-BFGS-B",
                      options={"gtol": 1e-9, "ftol": 0.0, "maxiter": 10_000}).x
    return (time.process_time() - start) / solves


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", type=Path, default=ROOT / "config" / "config.yaml")
    parser.add_argument("--processed", type=Path, default=ROOT / "data" / "processed" / "adult")
    parser.add_argument("--k", type=int, default=280, help="columns of the batch in (a)")
    parser.add_argument("--iters", type=int, default=4, help="ADMM iterations timed")
    parser.add_argument("--loop-runs", type=int, default=4, help="runs timed one at a time in (b)")
    parser.add_argument("--lbfgs-solves", type=int, default=20, help="subproblems timed in (c)")
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    cfg = config.load(args.config)
    data = load_data(cfg, args.processed)
    alphas = [float(x) for x in cfg["admm"]["alpha_grid"]]
    with threadpool_limits(1):
        a = batched(data.nodes, _runs(args.k, alphas), args.iters)
        b = batched(data.nodes, _runs(args.loop_runs, alphas)[:1], args.iters)
        c = lbfgs_loop(data.nodes, args.lbfgs_solves)
    n, d = data.nodes[0][0].shape
    print(f"Adult nodes: P = {len(data.nodes)}, B_p = {n}, d = {d}; CPU seconds per node-solve (gtol 1e-9):")
    print(f"  (a) batched Newton-CG, K = {args.k}: {a * 1e3:8.2f} ms")
    print(f"  (b) Newton-CG one run at a time:   {b * 1e3:8.2f} ms   (a is {b / a:5.1f}x faster)")
    print(f"  (c) L-BFGS one run at a time:      {c * 1e3:8.2f} ms   (a is {c / a:5.1f}x faster)")
    solves = node_solves(cfg)
    cpu = solves * a
    jobs = len(cfg["admm"]["topologies"])
    wall = cpu / min(args.cores, jobs)
    print(f"E4 plan of {args.config.name}: {solves:,} node-solves -> {cpu / 60:.1f} CPU min at (a); "
          f"about {wall / 60:.1f} min wall on {args.cores} cores ({jobs} jobs), tuning included "
          f"(one-run-at-a-time L-BFGS: {solves * c / 60 / min(args.cores, jobs):.0f} min)")
    if not math.isfinite(cpu):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
