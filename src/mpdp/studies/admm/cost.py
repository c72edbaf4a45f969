"""The ADMM study's work estimate at planning (issue 58; :mod:`mpdp.pipeline.planning_cost`).

Per topology the job runs the tuning candidates (non-private ADMM once per η, DVP and PVP
``tune_draws × tune_reps`` times per η), then DVP and PVP at every α ``reps`` times plus the
non-private runs (:mod:`mpdp.studies.admm.train`), each ``T`` iterations over the n × p training
records: ``runs × T × n × p`` units. Calibrated on the full config's measured 10.1 CPU-min per
topology job (docs/studies/admm.md: 346 runs, T = 100, Adult 36 177 × 105: 4.6·10⁻⁹ s per unit).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mpdp.studies.admm.footing import PRIVATE
from mpdp.studies.interface import CostTerm, SizeLike, work_shape

#: CPU seconds per unit (module docstring; the measured 4.6·10⁻⁹ rounded up)
SECONDS_PER_UNIT = 1e-8


def cost(cfg: Mapping[str, Any], available: Sequence[str], sizes: Mapping[str, SizeLike]) -> list[CostTerm]:
    """The tuning and the evaluated runs of every topology (module docstring)."""
    a = cfg.get("admm")
    if not a or a["dataset"] not in available:
        return []
    n, p = work_shape(a["dataset"], sizes.get(a["dataset"]))
    etas = len(a["penalty_grid"])
    tuning = etas * (1 + len(PRIVATE) * int(a["tune_draws"]) * int(a["tune_reps"]))
    evaluated = len(PRIVATE) * len(a["alpha_grid"]) * int(a["reps"]) + 1 + len(PRIVATE)
    runs = len(a["topologies"]) * (tuning + evaluated)
    return [CostTerm("ADMM runs", runs * int(a["T"]) * n * p * SECONDS_PER_UNIT,
                     {"admm.T": a["T"], "admm.reps": a["reps"], "admm.penalty_grid": etas,
                      "admm.tune_draws": a["tune_draws"]})]
