"""The WD-DP study's work estimate at planning (issue 58; spec E8's 4·n·p flops per run-step):
its training runs and its cross-validation, counted per job without listing a run
(:func:`mpdp.studies.wddp.plan.job_run_count`), so that ``wddp.T: 1e6`` or ``wddp.reps: 100000``
stop at planning in well under a second (:mod:`mpdp.pipeline.planning_cost`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mpdp.data import splits
from mpdp.studies.interface import CostTerm, SizeLike, work_shape
from mpdp.studies.wddp import plan

#: flops per CPU second of a training job: perf/README.md measured 74 GFLOP/s per core in whole
#: jobs (loading, evaluation and the optimum included); a little below, for other CPUs
FLOPS_PER_SECOND = 5e10
#: bytes per run and feature a training job holds at once (θ, gradient, noise and the best
#: iterate, float64 at most)
BYTES_PER_RUN_FEATURE = 4 * 8


def _cv_rows(cfg: Mapping[str, Any], n: int) -> float:
    """Rows one cross-validation column passes per step, times the columns per run: a fold's
    training part (n (1 − 1/F)) under the fixed split; under a split per repetition (issue 60) R
    selections of that cost each (one pooled block per selection; docs/studies/wddp.md)."""
    w = cfg["wddp"]
    selections = int(w["reps"]) if splits.per_repetition(cfg) else 1
    return selections * n * (1 - 1 / w["cv"]["folds"])


def cost(cfg: Mapping[str, Any], available: Sequence[str], sizes: Mapping[str, SizeLike]) -> list[CostTerm]:
    """The training runs and the cross-validation of every available data set."""
    w = cfg["wddp"]
    T, reps = int(w["T"]), int(w["reps"])
    train_flops = cv_flops = memory = 0.0
    for ds in (d for d in cfg["datasets"] if d in available):
        n, p = work_shape(ds, sizes.get(ds))
        for job in plan.jobs(dict(cfg), ds):
            runs, flops = plan.job_workload(dict(cfg), job, n, p)
            train_flops += flops
            memory = max(memory, runs * p * BYTES_PER_RUN_FEATURE)
        if w["eta"] is None:
            cv_flops += plan.cv_run_count(dict(cfg), ds) * 4.0 * T * p * _cv_rows(cfg, n)
    terms = [CostTerm("WD-DP training runs", train_flops / FLOPS_PER_SECOND, {"wddp.T": T, "wddp.reps": reps},
                      memory, "wddp.reps")]
    if cv_flops:
        terms.append(CostTerm("WD-DP cross-validation", cv_flops / FLOPS_PER_SECOND,
                              {"wddp.T": T, "wddp.cv.seeds": w["cv"]["seeds"], "wddp.cv.folds": w["cv"]["folds"]}))
    return terms
