"""The least-squares study's work estimate at planning (issue 58; :mod:`mpdp.pipeline.planning_cost`).

SSP (:func:`mpdp.studies.ls.experiment.ssp_rows`): every (z₂ option, ε, t, noise model) draws
``ls.draws`` d × d systems at once: per draw each party's d² noise entries, an eigenvalue check
and a solve (about 2d³) and a fixed overhead, and ``draws × d² × 8`` bytes per array (five of
them live at once). SGD (:func:`~mpdp.studies.ls.experiment.sgd_rows`, LS-2 and LS-3): per
noise option n² steps of K = (|ε| + 1) × ``ls.sgd.reps`` runs at once, a Python step each (about
20 µs) plus K·d updates, and the K × n² record schedules (int32). The unit costs are set so that
the full config comes to about its measured 31 CPU s (docs/studies/least-squares.md "Cost": the
two SGD experiments most of it, LS-1 about 2 s).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mpdp.studies.interface import CostTerm, SizeLike

#: CPU seconds per element operation of a batched SSP draw
SSP_SECONDS_PER_OP = 2e-8
#: fixed element operations per SSP draw (the batched calls' per-draw overhead)
SSP_OVERHEAD_OPS = 50
#: SSP arrays of ``draws × d × d`` float64 live at once
SSP_ARRAYS = 5
#: CPU seconds of one SGD step's Python loop, and per run-coordinate update
SGD_STEP_SECONDS, SGD_UPDATE_SECONDS = 2e-5, 2e-8
#: records of the bundled diabetes set (LS-3)
DIABETES_RECORDS, DIABETES_FEATURES = 442, 10


def shape(ls: Mapping[str, Any], experiment: str) -> tuple[int, int, str]:
    """(n, d, the key that sets n) of an experiment's data (:func:`mpdp.studies.ls.experiment.load_data`)."""
    sec = ls[experiment]
    if experiment == "ls_1":
        return int(sec["n"]), 1, "ls.ls_1.n"
    if experiment == "ls_2":
        return int(sec["n"]), int(sec["d"]), "ls.ls_2.n"
    cap = sec.get("max_records")
    return min(DIABETES_RECORDS, int(cap) if cap is not None else DIABETES_RECORDS), DIABETES_FEATURES, \
        "ls.ls_3.max_records"


def cost(cfg: Mapping[str, Any], available: Sequence[str], sizes: Mapping[str, SizeLike]) -> list[CostTerm]:
    """SSP draws and SGD steps of every experiment (module docstring)."""
    ls = cfg.get("ls")
    if not ls:
        return []
    draws, eps = int(ls["draws"]), len(ls["eps_grid"])
    terms = []
    for experiment in ("ls_1", "ls_2", "ls_3"):
        n, d, n_key = shape(ls, experiment)
        sec = ls[experiment]
        z2 = 2 if experiment == "ls_1" and sec["sigma2_zero"] else 1
        parties = sum(int(t) if model == "independent" else 1
                      for t in ls["t_grid"] for model in sec["noise_models"])
        ops = z2 * eps * draws * (parties * d * d + len(ls["t_grid"]) * len(sec["noise_models"])
                                  * (2 * d ** 3 + SSP_OVERHEAD_OPS))
        terms.append(CostTerm(f"least-squares {experiment} SSP draws", ops * SSP_SECONDS_PER_OP,
                              {"ls.draws": draws}, SSP_ARRAYS * draws * d * d * 8.0, "ls.draws"))
        if experiment == "ls_1":
            continue
        runs = (eps + 1) * int(ls["sgd"]["reps"])
        steps = n * n
        seconds = len(ls["sgd"]["options"]) * steps * (SGD_STEP_SECONDS + runs * d * SGD_UPDATE_SECONDS)
        terms.append(CostTerm(f"least-squares {experiment} SGD steps", seconds,
                              {n_key: steps, "ls.sgd.reps": ls["sgd"]["reps"]}, runs * steps * 4.0, n_key))
    return terms
