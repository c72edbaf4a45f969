"""The voting study's work estimate at planning (issue 58; :mod:`mpdp.pipeline.planning_cost`).

Per table, protocol, feasible M and repetition the job fits the parties' local classifiers on the
private pool (about n·p·K per fit, whatever M) once per λ of the selection and releases every ε:
``protocols × |M feasible| × reps × n·p·K × (|λ grid| + |ε grid|)`` units. Calibrated on the
full config's measured job CPU times (docs/studies/voting.md "Cost": Adult 112 s, Bank 57 s,
KDDCup99 179 s, its 5-class table 520 s: 2 to 3.4·10⁻⁸ s per unit), all under the fixed split.
A split per repetition (issue 60, ``split.per_repetition``) adds the selection's tuning partition
and the pooled minimisers of every repetition after the first: ``(reps − 1) × n·p·K × |λ grid|
× (|M feasible| + 1)`` units (docs/studies/voting.md "Cost of a split per repetition").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from mpdp.data import splits
from mpdp.studies.interface import CostTerm, SizeLike, work_shape
from mpdp.studies.voting import plan, selection

#: CPU seconds per unit (module docstring; the measured 3.4·10⁻⁸ rounded up)
SECONDS_PER_UNIT = 5e-8
#: classes of a multiclass table (KDDCup99's five, spec M13)
CLASSES = 5


def cost(cfg: Mapping[str, Any], available: Sequence[str], sizes: Mapping[str, SizeLike]) -> list[CostTerm]:
    """Every table's fits and releases (module docstring)."""
    v = cfg["voting"]
    units = memory = 0.0
    for table in plan.tables(cfg, available):
        dataset, multi = plan.dataset_of(table)
        n_train, p = work_shape(dataset, sizes.get(dataset))
        n_total = n_train / (1 - float(cfg["split"]["test_frac"]))
        n_aux = math.ceil(v["aux_frac"] * n_total)
        n_private = n_train - n_aux - math.ceil(v["val_frac"] * n_total)
        Ms = plan.feasible_M(v["M_grid"], n_private, v["min_party_size"])
        K = CLASSES if multi else 1
        units += (len(selection.protocols(cfg)) * len(Ms) * int(v["reps"]) * n_private * p * K
                  * (len(v["lambda_grid"]) + len(v["eps_grid"])))
        if splits.per_repetition(cfg):  # each repetition's own tuning partitions and pooled minimisers
            units += (int(v["reps"]) - 1) * n_private * p * K * len(v["lambda_grid"]) * (len(Ms) + 1)
        memory = max(memory, max(Ms, default=0) * n_aux * K * 8.0)  # the parties' votes on the auxiliary pool
    return [CostTerm("voting fits and releases", units * SECONDS_PER_UNIT,
                     {"voting.reps": v["reps"], "voting.lambda_grid": len(v["lambda_grid"]),
                      "voting.eps_grid": len(v["eps_grid"])}, memory, "voting.M_grid")]
