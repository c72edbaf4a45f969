"""The cross-paper benchmark's work estimate at planning (issue 58; :mod:`mpdp.pipeline.planning_cost`).

Per data set every configured mechanism trains ``cells × |ε| × reps`` evaluated runs and
``candidates × tune_seeds × |ε|`` selection runs, under every protocol whose rows the job writes,
on the private pool of n records (after the auxiliary pool and ``max_train_records``) with p
features: ``runs × steps × n × p`` units, with a mechanism's steps its family's iterations
(gradient and ADMM: their ``T``; DP-SGD: the candidates' mean q·T; the output and voting
families: :data:`SOLVER_ITERATIONS` of their solver) and a unit cost per family set from the full
config's measured job CPU seconds (docs/benchmark.md "Time of the full grid": ADMM 621, output
and voting 135, DP-SGD 160, gradient 28, over 4 data sets), each rounded up. The private
selection's budgets cost about 20 CPU s per ε (docs/benchmark.md), :data:`BUDGET_SECONDS`. With
a split per repetition (issue 60, ``split.per_repetition``) every repetition runs its own selection:
the selection runs are counted ``reps`` times (docs/benchmark.md "A split per repetition").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from mpdp.data import splits
from mpdp.errors import ConfigError
from mpdp.studies.benchmark import plan, registry, selection
from mpdp.studies.interface import CostTerm, SizeLike, work_shape

#: CPU seconds per unit by job group (module docstring; the measured 5·10⁻¹¹, 2.4·10⁻⁹, 8·10⁻⁹
#: and 3·10⁻¹⁰ rounded up); a mechanism of its own job counts as an output one
SECONDS_PER_UNIT = {"gradient": 1e-10, "admm": 5e-9, "dpsgd": 2e-8, "output": 1e-9}
#: iterations of the output and voting families' solver (the unit of their steps)
SOLVER_ITERATIONS = 50
#: CPU seconds of the private selection's budgets per ε (docs/benchmark.md: about 20)
BUDGET_SECONDS = 25.0


def private_pool(cfg: Mapping[str, Any], n_train: int) -> int:
    """Records of the private pool (:func:`mpdp.studies.benchmark.plan.split_pools`) of ``n_train``."""
    b = cfg["benchmark"]
    n = n_train - math.ceil(round(b["aux_frac"] * n_train, 9))
    return n if b["max_train_records"] is None else min(n, int(b["max_train_records"]))


def steps(cfg: Mapping[str, Any], group: str) -> tuple[float, str]:
    """(iterations of one run, the key that sets them) of a job group."""
    b = cfg["benchmark"]
    if group == "gradient":
        return float(b["gradient"]["T"]), "benchmark.gradient.T"
    if group == "admm":
        return float(b["admm"]["T"]), "benchmark.admm.T"
    if group == "dpsgd":
        cands = b["dpsgd"]["candidates"]
        return sum(float(c["q"]) * int(c["T"]) for c in cands) / len(cands), "benchmark.dpsgd.candidates"
    return float(SOLVER_ITERATIONS), "benchmark.reps"


def cost(cfg: Mapping[str, Any], available: Sequence[str], sizes: Mapping[str, SizeLike]) -> list[CostTerm]:
    """Every job group's runs on every data set, and the selection's budgets (module docstring)."""
    b = cfg.get("benchmark")
    if not b or not plan.datasets(cfg, available):
        return []
    eps, reps = len(b["eps_grid"]), int(b["reps"])
    candidates = len(b["gradient"]["eta_candidates"])
    per_cell = len(selection.protocols(cfg))
    selections = reps if splits.per_repetition(cfg) else 1  # one selection per repetition's split
    try:
        mechanisms = registry.configured(cfg)
    except ConfigError:  # named by the budget check (mpdp.pipeline.planning_budgets.check_benchmark)
        return []
    by_group: dict[str, list[str]] = {}
    for mech in mechanisms:
        by_group.setdefault(mech.job_group, []).append(mech.id)
    units = dict.fromkeys(by_group, 0.0)
    for ds in plan.datasets(cfg, available):
        n_train, p = work_shape(ds, sizes.get(ds))
        n = private_pool(cfg, n_train)
        cells = len(plan.cells(cfg, n)[0])
        runs = per_cell * (cells * eps * reps + selections * candidates * int(b["tune_seeds"]) * eps)
        for group, ids in by_group.items():
            units[group] += len(ids) * runs * steps(cfg, group)[0] * n * p
    terms = []
    for group, total in units.items():
        count, key = steps(cfg, group)
        rate = SECONDS_PER_UNIT.get(group, SECONDS_PER_UNIT["output"])
        factors = {"benchmark.reps": reps, key: count} if key != "benchmark.reps" else {"benchmark.reps": reps}
        terms.append(CostTerm(f"benchmark {group} runs", total * rate, factors))
    if b["selection"]["protocol"] == "private":
        terms.append(CostTerm("benchmark selection budgets", BUDGET_SECONDS * (eps + 1), {"benchmark.eps_grid": eps}))
    return terms
