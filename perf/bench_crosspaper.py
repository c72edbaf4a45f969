"""Per-family cost of the cross-paper benchmark (spec E10) and a projection of the full grid.

For each prepared data set given, runs every job group (gradient, output, ADMM) of the
benchmark with the config's knobs but ``--reps`` repetitions (default 1) instead of R, and
measures CPU time (``time.process_time``: other processes on a shared machine inflate it less
than wall time) and wall time. Training cost is linear in the number of repetitions (each
repetition adds columns or batches of the same size; the selection at the reference cell is
done once for the fixed split, once per repetition with ``split.per_repetition``, issue 60), so the
projection of a job is ``tuning + (measured − tuning) · R / reps`` (fixed split) or
``measured · R / reps`` (split per repetition); the
full-grid CPU total is the sum over jobs and the wall time on ``--cores`` cores the larger of
total/cores and the longest job (one Snakemake job per data set and group).

    .venv/bin/python perf/bench_crosspaper.py adult bank
    .venv/bin/python perf/bench_crosspaper.py --config config/config.yaml --reps 2 adult

The data sets must be prepared (``snakemake data/processed/<ds>/card.json``).
"""

from __future__ import annotations

import argparse
import copy
import logging
import time
from pathlib import Path

from mpdp import config
from mpdp.studies.benchmark import plan, train

ROOT = Path(__file__).resolve().parents[1]


class _TuningTimer(logging.Handler):
    """Reads the selection time a job logs ("selected ... in X s", :func:`mpdp.studies.benchmark.runner.select_then_grid`)."""

    def __init__(self) -> None:
        super().__init__()
        self.seconds = 0.0

    def emit(self, record: logging.LogRecord) -> None:
        msg = record.getMessage()
        if " selected " in msg and " in " in msg:
            self.seconds += float(msg.rsplit(" in ", 1)[1].split(" s")[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("datasets", nargs="+")
    parser.add_argument("--config", default=str(ROOT / "config" / "config.yaml"))
    parser.add_argument("--reps", type=int, default=1, help="repetitions measured (projected to R)")
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    cfg = config.load(args.config)
    R = cfg["benchmark"]["reps"]
    small = copy.deepcopy(cfg)
    small["benchmark"]["reps"] = args.reps
    jobs: list[tuple[str, str, float, float]] = []
    print(f"{'data set':<14}{'group':<10}{'cpu s':>9}{'wall s':>9}{'tuning s':>10}{'cpu s at R=' + str(R):>16}")
    for ds in args.datasets:
        data = plan.load_data(small, ds, ROOT / "data" / "processed" / ds)
        for group, runner in train.FAMILY_RUNNERS.items():
            log = logging.getLogger(f"bench.{ds}.{group}")
            log.setLevel(logging.INFO)
            timer = _TuningTimer()
            log.addHandler(timer)
            cpu, wall = time.process_time(), time.perf_counter()
            runner(small, ds, data, log)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            tuning = 0.0 if not data.shared else min(timer.seconds, wall)  # per repetition: scales with R
            projected = tuning * cpu / wall + (cpu - tuning * cpu / wall) * R / args.reps
            jobs.append((ds, group, cpu, projected))
            print(f"{ds:<14}{group:<10}{cpu:>9.1f}{wall:>9.1f}{tuning:>10.1f}{projected:>16.1f}")
    total = sum(j[3] for j in jobs)
    longest = max(j[3] for j in jobs)
    print(f"projected full grid: {total:.0f} CPU s; wall on {args.cores} cores >= "
          f"{max(total / args.cores, longest):.0f} s (longest job {longest:.0f} s)")


if __name__ == "__main__":
    main()
