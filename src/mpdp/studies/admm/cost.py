"""The ADMM study's work estimate at planning (issue 58; :mod:`mpdp.pipeline.planning_cost`) and its exact
run counts (issue 60, item 3).

Per topology the job runs, in every case (:mod:`mpdp.studies.admm.cases`: the fixed split's one case, or
one per repetition under ``split.per_repetition``), the tuning candidates (non-private ADMM once per η, DVP
and PVP ``tune_draws × tune_reps`` times per η), then DVP and PVP at every α for the case's repetitions,
non-private ADMM once and at most two non-private references (:mod:`mpdp.studies.admm.train`); each run is
``T`` iterations of P node solves over the n × p training records: ``runs × T × n × p`` units, the same per
run under either design (every case has the same node sizes). Calibrated on the full config's measured
10.1 CPU-min per topology job of the fixed design (docs/studies/admm.md: 346 runs, T = 100, Adult
36 177 × 105: 4.6·10⁻⁹ s per unit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mpdp.data import splits
from mpdp.studies.admm.footing import PRIVATE
from mpdp.studies.interface import CostTerm, SizeLike, work_shape

#: CPU seconds per unit (module docstring; the measured 4.6·10⁻⁹ rounded up)
SECONDS_PER_UNIT = 1e-8


@dataclass(frozen=True)
class Counts:
    """The work of one topology job, counted exactly (upper bounds where the footing decides: a case has one
    reference run under the shared footing, two under per-method footing)."""

    cases: int  # groups of every batch: 1 (fixed split) or reps (per repetition)
    tuning_runs: int
    evaluated_runs: int  # at most (two references per case)
    optimum_solves: int  # centralised L(θ*) solves (one per case: ρ is fixed)
    T: int
    P: int

    @property
    def runs(self) -> int:
        return self.tuning_runs + self.evaluated_runs

    @property
    def node_solves(self) -> int:
        """Exact node subproblem solves (one per run, node and iteration)."""
        return self.runs * self.T * self.P


def counts(cfg: Mapping[str, Any]) -> Counts:
    """The exact work of one topology job under the config's split design (module docstring)."""
    a = cfg["admm"]
    reps, n_alpha = int(a["reps"]), len(a["alpha_grid"])
    cases = reps if splits.per_repetition(cfg) else 1
    tuning = len(a["penalty_grid"]) * (1 + len(PRIVATE) * int(a["tune_draws"]) * int(a["tune_reps"]))
    # every case: the private runs of its repetitions, non-private ADMM once, ≤ one reference per mechanism
    evaluated = len(PRIVATE) * n_alpha * reps + cases * (1 + len(PRIVATE))
    return Counts(cases, cases * tuning, evaluated, cases, int(a["T"]), int(a["P"]))


def cost(cfg: Mapping[str, Any], available: Sequence[str], sizes: Mapping[str, SizeLike]) -> list[CostTerm]:
    """The tuning and the evaluated runs of every topology (module docstring)."""
    a = cfg.get("admm")
    if not a or a["dataset"] not in available:
        return []
    n, p = work_shape(a["dataset"], sizes.get(a["dataset"]))
    runs = len(a["topologies"]) * counts(cfg).runs
    return [CostTerm("ADMM runs", runs * int(a["T"]) * n * p * SECONDS_PER_UNIT,
                     {"admm.T": a["T"], "admm.reps": a["reps"], "admm.penalty_grid": len(a["penalty_grid"]),
                      "admm.tune_draws": a["tune_draws"]})]
