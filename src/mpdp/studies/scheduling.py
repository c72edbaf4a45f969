"""Snakemake priorities across the studies: the critical path first (issue 36; spec
experiments.md E8, "the full replication on a small machine").

Snakemake starts, among the jobs whose inputs exist, those of highest ``priority`` first. The
WD-DP study already orders its own jobs by their work in GFLOP
(:func:`mpdp.studies.wddp.plan.job_priority`, :func:`~mpdp.studies.wddp.plan.setup_priority`).
The other studies each have a few *long single jobs*, which cannot be split across cores and
which, started late, leave every core but one idle at the end of a build. They are therefore
placed above every WD-DP job, in longest-processing-time order as measured on the full config
(``perf/bench_pipeline.py``, idle 2-core AMD EPYC Zen 5, 2026-11-26, job wall times): KDDCup99's
5-class voting table (748 s), the benchmark's ADMM group jobs (472 / 396 / 366 s for KDDCup99 /
Adult / Bank: larger data set first), the ADMM study's topology jobs (355 s ring, 349 s complete),
the binary voting tables (KDDCup99's 295 s; larger data set first), then the audit's table (the
longest job of the smoke profile); every other job keeps priority 0 and fills the cores at the
end. Snakemake does not pass a priority on to the jobs a job waits for, so a data set's fetch and
preparation get the highest priority of their readers (:func:`data_priority`), and so do the
benchmark's selection budgets, which every benchmark job reads (:func:`benchmark_budgets_priority`,
issue 45). Only the order of
jobs changes, never an output.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mpdp.studies.benchmark import registry
from mpdp.studies.wddp import plan as wddp_plan

#: tiers of the long single jobs above the WD-DP setup, longest first (issue 36's timings)
TIERS = {"voting_multiclass": 5, "benchmark_admm": 4, "admm_job": 3, "voting": 2, "audit": 1}
#: room for the ordering inside a tier (data sets, topologies)
TIER_WIDTH = 100
#: the benchmark's job group that runs the ADMM-family mechanisms (registry job_group)
BENCHMARK_ADMM_GROUP = "admm"
#: ADMM topologies, most messages per iteration first (every node a neighbour of every other)
TOPOLOGY_ORDER = ("complete", "ring")


def wddp_ceiling(cfg: Mapping[str, Any], available: Sequence[str]) -> int:
    """One above the highest priority of any WD-DP job (setup jobs gate the most work)."""
    prios = [wddp_plan.setup_priority(dict(cfg), ds) for ds in available]
    return max(prios, default=0) + 1


def _size_rank(dataset: str) -> int:
    """0 for the largest paper data set (n·p of :data:`~mpdp.studies.wddp.plan.PAPER_SHAPES`)."""
    sizes = sorted(wddp_plan.PAPER_SHAPES, key=lambda ds: -wddp_plan.PAPER_SHAPES[ds][0] * wddp_plan.PAPER_SHAPES[ds][1])
    return sizes.index(dataset) if dataset in sizes else len(sizes)


def _tier(cfg: Mapping[str, Any], available: Sequence[str], tier: str, rank: int) -> int:
    return wddp_ceiling(cfg, available) + TIERS[tier] * TIER_WIDTH + (TIER_WIDTH - 1 - min(rank, TIER_WIDTH - 1))


def admm_priority(cfg: Mapping[str, Any], available: Sequence[str], topology: str) -> int:
    """Priority of the ADMM study's job of ``topology`` (rule ``admm_job``)."""
    rank = TOPOLOGY_ORDER.index(topology) if topology in TOPOLOGY_ORDER else len(TOPOLOGY_ORDER)
    return _tier(cfg, available, "admm_job", rank)


def voting_priority(cfg: Mapping[str, Any], available: Sequence[str], dataset: str, multiclass: bool) -> int:
    """Priority of a voting table's job (rule ``voting_train``): the multiclass tables (softmax
    over every class: the study's longest jobs) first, then the binary ones, larger data set first."""
    return _tier(cfg, available, "voting_multiclass" if multiclass else "voting", _size_rank(dataset))


def audit_priority(cfg: Mapping[str, Any], available: Sequence[str]) -> int:
    """Priority of the audit's one table job (rule ``audit_table``)."""
    return _tier(cfg, available, "audit", 0)


def benchmark_priority(cfg: Mapping[str, Any], available: Sequence[str], dataset: str, group: str) -> int:
    """Priority of a benchmark job (rule ``benchmark_job``): the ADMM group's jobs are raised,
    larger data sets first; the other groups keep 0."""
    if group != BENCHMARK_ADMM_GROUP:
        return 0
    return _tier(cfg, available, "benchmark_admm", _size_rank(dataset))


def benchmark_budgets_priority(cfg: Mapping[str, Any], available: Sequence[str]) -> int:
    """Priority of the benchmark's selection budgets (rule ``benchmark_budgets``), which every
    benchmark job waits for: the highest priority of those jobs (Snakemake does not pass it on)."""
    datasets = [ds for ds in cfg["benchmark"].get("datasets", ()) if ds in available]
    return max((benchmark_priority(cfg, available, ds, g) for ds in datasets for g in registry.job_groups(cfg)),
               default=0)


def data_priority(cfg: Mapping[str, Any], available: Sequence[str], dataset: str) -> int:
    """Priority of a data set's fetch and preparation (rules ``fetch_raw``, ``prepare`` and
    ``prepare_multiclass``; its partitions, which only WD-DP reads, take WD-DP's setup priority):
    the highest priority of the jobs that read it. Snakemake does
    not pass a job's priority on to the jobs it waits for, so without this a long single job
    waits for its data behind every WD-DP job of higher priority (measured on the full config,
    issue 36: KDDCup99's 5-class voting table, 12.5 min, started 12 min into the build, after
    Adult's WD-DP training, because KDDCup99's fetch had priority 0)."""
    prios = [0]
    if dataset in cfg.get("datasets", ()):
        prios.append(wddp_plan.setup_priority(dict(cfg), dataset))
    admm = cfg.get("admm")
    if admm and admm.get("dataset") == dataset:
        prios += [admm_priority(cfg, available, t) for t in admm.get("topologies", TOPOLOGY_ORDER)]
    voting = cfg.get("voting")
    if voting and dataset in voting.get("multiclass_datasets", ()):
        prios.append(voting_priority(cfg, available, dataset, multiclass=True))
    bench = cfg.get("benchmark")
    if bench and dataset in bench.get("datasets", ()):
        prios += [benchmark_priority(cfg, available, dataset, g) for g in registry.job_groups(cfg)]
    return max(prios)
