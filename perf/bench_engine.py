"""Throughput benchmark of the batched noisy-GD engine (spec experiments.md E8).

Measures, on the machine it runs on:

(a) dense float32 GEMM throughput for the two products of one engine step,
    ``Z = X Θ`` (n×p · p×K) and ``G = Xᵀ S`` (p×n · n×K), for K in ``--gemm-k``;
(b) :func:`mpdp.engine.noisy_gd` on an Adult-sized problem with ``--k`` columns;
(c) one-run-at-a-time NumPy loops (matrix–vector products, one run after another) on the
    same problem: (c1) the float64 reference gradient :func:`mpdp.models.logistic.gradient`,
    (c2) a tuned float32 loop doing the engine's arithmetic with two GEMVs per step;

and prints the ratios and the projected wall time of ``--runs`` runs of ``--T`` steps on an
``--n`` × ``--p`` problem. One run-step is counted as ``4 n p`` flops (two products of
``2 n p`` each). All measurements are interleaved in ``--repeats`` rounds and the best of
each is kept. Run ``python perf/bench_engine.py --help``.

With ``--full`` it instead measures the whole training stage against its arithmetic (issue 12):
the dense-GEMM peak on Adult's rows (one thread per process, alone and with N processes at
once), then ``snakemake --cores N train`` with every training rule forced to rerun (data
preparation done beforehand, untimed); it sums the flops the jobs record (results column
``flops``, ``arithmetic_flops`` of the η tables) and prints the measured wall time, the bound
``flops / (N × peak with N busy cores)`` and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from mpdp.engine import path as engine_path
from mpdp.engine.gd import Block, noisy_gd
from mpdp.models.logistic import gradient

ADULT_N, ADULT_P = 36_177, 105
DEFAULT_DATA = Path("data/processed/adult/X_train.npy")


#: A timed workload: a callable and the amount of work one call does (flops or run-steps).
Workload = tuple[Callable[[], object], float]


def best_rates(workloads: dict[str, Workload], repeats: int) -> dict[str, float]:
    """Best work-per-second of each workload over ``repeats`` interleaved rounds.

    Every workload is warmed up once, then timed once per round, in turn. Interleaving spreads
    the slowdowns caused by other processes on a shared machine over all measurements, so that
    their ratios stay meaningful.
    """
    for fn, _ in workloads.values():
        fn()
    best = dict.fromkeys(workloads, 0.0)
    for _ in range(repeats):
        for name, (fn, work) in workloads.items():
            start = time.perf_counter()
            fn()
            best[name] = max(best[name], work / (time.perf_counter() - start))
    return best


def load_problem(path: Path, min_rows: int, seed: int) -> tuple[np.ndarray, np.ndarray, str]:
    """Adult training rows (float32) and labels ±1, or a random problem of Adult's size.

    The file is used only if it has at least ``min_rows`` rows (a CI-sized subsample would not
    measure the workload).
    """
    rng = np.random.default_rng(seed)
    note = f"{path} not found"
    if path.is_file():
        X = np.load(path).astype(np.float32)
        y_path = path.with_name("y_train.npy")
        if X.shape[0] < min_rows:
            note = f"{path} has only {X.shape[0]} rows < --min-rows {min_rows}"
        elif y_path.is_file():
            y = np.where(np.load(y_path) > 0, 1.0, -1.0)
            return np.ascontiguousarray(X), y, f"{path} and {y_path}"
        else:
            y = np.where(rng.random(X.shape[0]) < 0.5, 1.0, -1.0)
            return np.ascontiguousarray(X), y, f"{path} with RANDOM labels ({y_path} not found)"
    X = rng.standard_normal((ADULT_N, ADULT_P))
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)
    X = np.ascontiguousarray(X, dtype=np.float32)
    y = np.where(rng.random(ADULT_N) < 0.5, 1.0, -1.0)
    return X, y, f"SYNTHETIC random problem of Adult's size, ||x||<=1 ({note})"


def gemm_workload(X: np.ndarray, K: int, steps: int, rng: np.random.Generator) -> Workload:
    """``steps`` pairs ``X Θ``, ``Xᵀ S`` in float32 with preallocated outputs; work in flops."""
    n, p = X.shape
    theta = rng.standard_normal((p, K), dtype=np.float32)
    Z = np.empty((n, K), dtype=np.float32)
    G = np.empty((p, K), dtype=np.float32)

    def pairs() -> None:
        for _ in range(steps):
            np.matmul(X, theta, out=Z)
            np.matmul(X.T, Z, out=G)

    return pairs, 4.0 * n * p * K * steps


def engine_workload(X: np.ndarray, y: np.ndarray, K: int, steps: int) -> Workload:
    """:func:`noisy_gd` with ``K`` columns on one block for ``steps`` steps; work in run-steps."""
    n, p = X.shape
    block = Block(X, y, np.full(n, 1.0 / n, dtype=np.float32), np.arange(K))
    seeds = np.random.SeedSequence(0).spawn(K)
    theta0 = np.zeros((p, K))
    eta, sigma = np.full(K, 0.5), np.full(K, 0.01)

    def run() -> None:
        noisy_gd([block], theta0, eta, 1e-3, sigma, seeds, steps)

    return run, float(K * steps)


def reference_loop_workload(X: np.ndarray, y: np.ndarray, runs: int, steps: int) -> Workload:
    """One run at a time with the float64 reference gradient; work in run-steps."""
    X64 = np.asarray(X, dtype=np.float64)
    p = X64.shape[1]
    eta, lam, sigma = 0.5, 1e-3, 0.01
    seeds = np.random.SeedSequence(0).spawn(runs)

    def run_all() -> None:
        for seed in seeds:
            generator = np.random.Generator(np.random.PCG64(seed))
            theta = np.zeros(p)
            for _ in range(steps):
                noise = generator.standard_normal(p)
                theta = theta - eta * (gradient(theta, X64, y, lam) + sigma * noise)

    return run_all, float(runs * steps)


def tuned_loop_workload(X: np.ndarray, y: np.ndarray, runs: int, steps: int) -> Workload:
    """One run at a time in float32 with the engine's arithmetic; work in run-steps."""
    n, p = X.shape
    yx = np.ascontiguousarray(y[:, None] * X, dtype=np.float32)
    neg_w = np.float32(-1.0 / n)
    eta, lam, sigma = np.float32(0.5), np.float32(1e-3), np.float32(0.01)
    seeds = np.random.SeedSequence(0).spawn(runs)

    def run_all() -> None:
        for seed in seeds:
            generator = np.random.Generator(np.random.PCG64(seed))
            theta = np.zeros(p, dtype=np.float32)
            for _ in range(steps):
                with np.errstate(over="ignore"):
                    coef = neg_w / (1.0 + np.exp(yx @ theta))
                grad = yx.T @ coef
                noise = generator.standard_normal(p).astype(np.float32)
                theta = (1 - eta * lam) * theta - eta * grad - eta * sigma * noise

    return run_all, float(runs * steps)


def cpu_name() -> str:
    """CPU model from /proc/cpuinfo where available, and the number of logical CPUs."""
    name = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    return f"{name}, {os.cpu_count()} logical CPUs"


def format_seconds(seconds: float) -> str:
    """Seconds as ``s``, ``min`` or ``h``."""
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.2f} h"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="X_train.npy of Adult")
    parser.add_argument(
        "--min-rows", type=int, default=30_000, help="smallest data file used (default 30000)"
    )
    parser.add_argument("--k", type=int, default=64, help="engine columns (default 64)")
    parser.add_argument(
        "--gemm-k", type=int, nargs="+", default=[16, 64, 256], help="K values for (a)"
    )
    parser.add_argument(
        "--steps", type=int, default=30, help="steps per timing of (a) and (b) (default 30)"
    )
    parser.add_argument("--loop-runs", type=int, default=4, help="runs timed in (c) (default 4)")
    parser.add_argument(
        "--loop-steps", type=int, default=30, help="steps per run in (c) (default 30)"
    )
    parser.add_argument(
        "--repeats", type=int, default=5, help="interleaved timing rounds; best kept (default 5)"
    )
    parser.add_argument("--threads", type=int, default=None, help="BLAS threads (default: as is)")
    parser.add_argument("--runs", type=int, default=8000, help="runs to project (E8: ~8000)")
    parser.add_argument("--T", type=int, default=1000, help="steps per projected run")
    parser.add_argument("--n", type=int, default=ADULT_N, help="rows of the projected problem")
    parser.add_argument("--p", type=int, default=ADULT_P, help="features of the projected problem")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--config", type=Path, default=None,
        help="project the training grid of this config (e.g. config/config.yaml) instead of --runs",
    )
    parser.add_argument("--jobs", type=int, default=2, help="parallel Snakemake jobs (default 2)")
    parser.add_argument(
        "--full", action="store_true",
        help="time `snakemake --cores N train` in the current directory against the GEMM bound",
    )
    parser.add_argument("--cores", type=int, default=os.cpu_count(), help="--full: Snakemake cores")
    parser.add_argument(
        "--configfile", type=Path, default=None,
        help="--full: Snakemake --configfile (default: the workflow's config/config.yaml)",
    )
    parser.add_argument(
        "--target", type=float, default=1.5, help="--full: ratio to the bound to meet (default 1.5)"
    )
    args = parser.parse_args()
    if args.full:
        full_pipeline(args)
        return

    with threadpool_limits(limits=args.threads, user_api="blas"):
        print(f"machine: {cpu_name()}; BLAS: {blas_description()}; {engine_path.describe_training()}")
        rng = np.random.default_rng(args.seed)
        X, y, origin = load_problem(args.data, args.min_rows, args.seed)
        n, p = X.shape
        flops_per_run_step = 4 * n * p
        print(f"problem: {origin}; n={n}, p={p}")

        gemm_k = sorted(set(args.gemm_k) | {args.k})
        loop_names = ("(c1) float64 reference gradient", "(c2) float32, engine arithmetic")
        workloads = {f"gemm K={K}": gemm_workload(X, K, args.steps, rng) for K in gemm_k}
        workloads["engine"] = engine_workload(X, y, args.k, args.steps)
        workloads[loop_names[0]] = reference_loop_workload(X, y, args.loop_runs, args.loop_steps)
        workloads[loop_names[1]] = tuned_loop_workload(X, y, args.loop_runs, args.loop_steps)
        rates = best_rates(workloads, args.repeats)

    print(f"\n(a) dense float32 GEMM, {args.steps} x (X·Θ + Xᵀ·S), best of {args.repeats}")
    gemm = {K: rates[f"gemm K={K}"] / 1e9 for K in gemm_k}
    for K, rate in gemm.items():
        print(f"    K={K:5d}: {rate:8.1f} GFLOP/s")
    gemm_peak, gemm_at_k = max(gemm.values()), gemm[args.k]

    engine = rates["engine"]
    engine_gflops = engine * flops_per_run_step / 1e9
    print(f"\n(b) engine noisy_gd, float32, K={args.k}, {args.steps} steps")
    print(f"    {engine:10.1f} run-steps/s   {engine_gflops:8.1f} GFLOP/s")

    print(f"\n(c) one run at a time (GEMV loops), {args.loop_runs} runs x {args.loop_steps} steps")
    loops = {name: rates[name] for name in loop_names}
    for name, rate in loops.items():
        print(
            f"    {name}: {rate:10.1f} run-steps/s  {rate * flops_per_run_step / 1e9:8.1f} GFLOP/s"
        )

    rows = [
        (f"engine vs {name[:4]} loop, per run", f"{engine / rate:.1f}x")
        for name, rate in loops.items()
    ]
    rows += [
        (f"engine vs GEMM at K={args.k}", f"{engine_gflops / gemm_at_k:.1%}"),
        ("engine vs GEMM peak (best K)", f"{engine_gflops / gemm_peak:.1%}"),
    ]
    print("\nratios")
    for label, value in rows:
        print(f"    {label:<34s} {value:>8s}")

    if args.config is not None:
        total_flops, label = grid_projection(args.config)
    else:
        total_flops = args.runs * args.T * 4 * args.n * args.p
        label = f"{args.runs} runs x T={args.T} on n={args.n}, p={args.p}"
    print(
        f"\nprojection: {label} ({total_flops / 1e12:.1f} TFLOP, 4np flops per run-step), "
        f"{args.jobs} jobs in parallel at the measured per-process throughput"
    )
    total_flops /= max(1, args.jobs)
    projections = [
        ("at the engine's throughput", engine_gflops * 1e9),
        ("at the GEMM peak (lower bound)", gemm_peak * 1e9),
    ] + [
        (f"one at a time, {name[:4]} loop", rate * flops_per_run_step)
        for name, rate in loops.items()
    ]
    for label, flops_per_second in projections:
        print(f"    {label:<34s} {format_seconds(total_flops / flops_per_second):>8s}")


#: the rules of the training stage that ``--full`` forces to rerun (workflow/rules/train.smk)
TRAINING_RULES = ("optimum", "learning_rates", "train_job", "collect_results")
#: GEMM widths K of the peak in ``--full`` (the engine's blocks have 1–500 columns)
PEAK_K = (64, 128, 256, 512)


def full_pipeline(args: argparse.Namespace) -> None:
    """Wall time of ``snakemake --cores N train`` against ``flops / (N × GEMM peak)``, the peak
    measured with N single-threaded processes at once (:func:`gemm_peak`), before and after the
    timed run, the higher of the two (:func:`measure_peak`).

    Runs in the current directory (a checkout with the raw data or ``MPDP_DATA_MIRROR``). The
    process re-executes itself once with the environment of the pipeline's jobs
    (:func:`mpdp.pipeline.runner.job_environment`: one BLAS thread, the OpenBLAS kernel they use), so
    the peak is measured with the kernels the jobs run.
    """
    from mpdp.pipeline.runner import job_environment

    env = {**os.environ, **job_environment()}
    if any(os.environ.get(k) != v for k, v in job_environment().items()):
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    snakemake = [sys.executable, "-m", "snakemake", "--cores", str(args.cores), "train"]
    if args.configfile is not None:
        snakemake += ["--configfile", str(args.configfile)]
    print(f"machine: {cpu_name()}; BLAS: {blas_description()}; {args.cores} cores used; "
          f"{engine_path.describe_training()}")
    print("preparing data and partitions (untimed): " + " ".join(snakemake[2:]) + " --omit-from "
          + " ".join(TRAINING_RULES[:2]), flush=True)
    run_snakemake([*snakemake, "--omit-from", *TRAINING_RULES[:2], "--quiet", "rules"], env)
    X, _, origin = load_problem(args.data, args.min_rows, args.seed)
    print(f"\npeak: dense float32 GEMM pairs (X·Θ, Xᵀ·S) on {origin}, one thread per process, "
          f"best of {args.repeats}, before and after the timed run (the higher counts)")
    before = measure_peak(X, args, "before")

    timed = [*snakemake, "--forcerun", *TRAINING_RULES, "--quiet", "rules"]
    print("timed: " + " ".join(timed[2:]), flush=True)
    since, start = time.time(), time.perf_counter()
    run_snakemake(timed, env)
    wall = time.perf_counter() - start
    after = measure_peak(X, args, "after")
    peak_alone, peak = max(before[0], after[0]), max(before[1], after[1])

    flops, cpu = training_work(Path("."), since)
    bound = flops / (args.cores * peak)
    print(f"\narithmetic: {flops / 1e12:.1f} TFLOP (the engine's products, 4 n_b p per column and "
          f"step, CV included)")
    for stage, seconds in cpu.items():
        print(f"    {stage:<16s} {seconds / 60:7.1f} core-min (Snakemake job benchmarks)")
    job_rate = flops / sum(cpu.values())
    print(f"    flops per second of job time: {job_rate / 1e9:.1f} GFLOP/s per core "
          f"({job_rate / peak:.0%} of the peak; loading, evaluation and the optimum included)")
    ratio = wall / bound
    print(f"\nmeasured: {format_seconds(wall)} wall (snakemake --cores {args.cores} train)")
    print(f"bound:    {format_seconds(bound)} = {flops / 1e12:.1f} TFLOP / ({args.cores} cores x "
          f"{peak / 1e9:.1f} GFLOP/s, the GEMM peak with every core busy)")
    print(f"ratio:    {ratio:.2f} (target <= {args.target}: {'met' if ratio <= args.target else 'NOT met'})")
    strict = flops / (args.cores * peak_alone)
    print(f"          {wall / strict:.2f} against the one-core-alone peak ({peak_alone / 1e9:.1f} GFLOP/s "
          f"x {args.cores}: {format_seconds(strict)})")
    print(f"\nprovenance of the timed rows: {training_provenance(Path('.'))}")


def measure_peak(X: np.ndarray, args: argparse.Namespace, when: str) -> tuple[float, float]:
    """The GEMM-pair peak per core, one process alone and ``args.cores`` at once (best K of
    :data:`PEAK_K`, :func:`gemm_peak`), printed per K. ``--full`` measures it before and after
    the timed run and uses the higher: on a shared or virtual machine one measurement may come
    out a few per cent low, which would loosen the bound."""
    alone = gemm_peak(X, args.steps, args.repeats, args.seed, processes=1)
    together = gemm_peak(X, args.steps, args.repeats, args.seed, processes=args.cores)
    for K in PEAK_K:
        print(f"    {when:<6s} K={K:4d}: {alone[K] / 1e9:6.1f} GFLOP/s on one core alone, "
              f"{together[K] / 1e9:6.1f} per core with {args.cores} processes at once", flush=True)
    return max(alone.values()), max(together.values())


def gemm_peak(X: np.ndarray, steps: int, repeats: int, seed: int, processes: int) -> dict[int, float]:
    """Best dense-GEMM-pair flops per second per process for each K of :data:`PEAK_K`.

    ``processes`` single-threaded processes time the same products at the same moments (a
    barrier before every timing), as the pipeline's jobs run side by side on all cores: the
    cores share the last-level cache and the memory bandwidth. Returns the mean over the
    processes of each round's rate, the best round per K.
    """
    import multiprocessing

    context = multiprocessing.get_context("fork")
    barrier, queue = context.Barrier(processes), context.Queue()
    workers = [context.Process(target=_gemm_worker, args=(X, steps, repeats, seed + i, barrier, queue))
               for i in range(processes)]
    for worker in workers:
        worker.start()
    rounds = [queue.get() for _ in workers]
    for worker in workers:
        worker.join()
    return {K: max(float(np.mean([r[K][i] for r in rounds])) for i in range(repeats)) for K in PEAK_K}


def _gemm_worker(X: np.ndarray, steps: int, repeats: int, seed: int, barrier: object, queue: object) -> None:
    """One process of :func:`gemm_peak`: every round's rate per K, in flops per second."""
    rng = np.random.default_rng(seed)
    rates: dict[int, list[float]] = {K: [] for K in PEAK_K}
    with threadpool_limits(limits=1, user_api="blas"):
        loads = {K: gemm_workload(X, K, steps, rng) for K in PEAK_K}
        for fn, _ in loads.values():
            fn()
        for _ in range(repeats):
            for K, (fn, work) in loads.items():
                barrier.wait()
                start = time.perf_counter()
                fn()
                rates[K].append(work / (time.perf_counter() - start))
    queue.put(rates)


def run_snakemake(command: list[str], env: dict[str, str]) -> None:
    """Run Snakemake; on failure exit with its status and a one-line message (no traceback)."""
    status = subprocess.run(command, env=env).returncode
    if status != 0:
        sys.exit(f"bench_engine --full: `{' '.join(command[2:])}` failed with exit status {status}; "
                 "see Snakemake's output above")


def training_work(root: Path, since: float) -> tuple[float, dict[str, float]]:
    """Flops recorded by the training stage and the wall seconds of its jobs, by rule.

    Flops: the ``flops`` column of ``data/results/wddp/<data set>.parquet`` and the
    ``arithmetic_flops`` of ``data/results/wddp/eta/<data set>.json``. Seconds: column ``s``
    of the Snakemake benchmark files ``data/benchmarks/<rule>/...tsv`` written after ``since``
    (a Unix time; older files belong to earlier runs). Jobs are single-threaded, so these are
    core-seconds.
    """
    import pandas as pd

    results = root / "data" / "results" / "wddp"
    flops = sum(float(pd.read_parquet(p, columns=["flops"])["flops"].sum())
                for p in sorted(results.glob("*.parquet")))
    flops += sum(float(json.loads(p.read_text()).get("arithmetic_flops", 0.0))
                 for p in sorted((results / "eta").glob("*.json")))
    cpu = {}
    for rule, folder in (("optimum", "optimum"), ("learning_rates", "learning_rates"),
                         ("train_job", "train")):
        files = [f for f in sorted((root / "data" / "benchmarks" / folder).rglob("*.tsv"))
                 if f.stat().st_mtime >= since]
        cpu[rule] = sum(float(pd.read_csv(f, sep="\t")["s"].sum()) for f in files)
    return flops, cpu


def training_provenance(root: Path) -> str:
    """How the training stage computed its rows: the provenance columns (engine path,
    instruction set, layout rule, noise source) of ``data/results/wddp/<data set>.parquet``,
    counted and explained (:func:`mpdp.report.provenance.engine_paths`)."""
    import pandas as pd

    from mpdp.report.provenance import engine_paths, engine_sentence

    tables = {path.stem: pd.read_parquet(path)
              for path in sorted((root / "data" / "results" / "wddp").glob("*.parquet"))}
    paths = engine_paths(tables)
    lines = [f"    {row.table:<14s} {row.engine_path} / {row.isa} / {row.layout_rule} / "
             f"{row.noise_source}: {row.rows} rows" for row in paths.itertuples()]
    return "\n".join([engine_sentence(paths), *lines])


def blas_description() -> str:
    """The BLAS libraries loaded, their versions, threads and kernels."""
    return ", ".join(
        f"{info['internal_api']} {info.get('version')} ({info['num_threads']} threads, "
        f"{info.get('architecture')})"
        for info in threadpool_info()
        if info["user_api"] == "blas"
    )


def grid_projection(config_path: Path) -> tuple[float, str]:
    """Flops of a config's whole training grid (CV included), data shapes from the cards."""
    from mpdp import config as mpdp_config
    from mpdp.studies.wddp.plan import PAPER_SHAPES, grid_workload

    cfg = mpdp_config.load(config_path)
    shapes = dict(PAPER_SHAPES)
    for ds in shapes:
        card = Path("data/processed") / ds / "card.json"
        if card.exists() and cfg["max_records"] is None:
            info = json.loads(card.read_text())
            shapes[ds] = (info["n_train"], info["n_features"])
    work = grid_workload(cfg, shapes)
    return work["flops"], f"grid of {config_path} ({work['runs']:.0f} runs)"


if __name__ == "__main__":
    main()
