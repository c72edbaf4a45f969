"""Work of the cross-paper benchmark per stage, fixed split vs a split per repetition (issue 60).

Counts (never times) what a config's benchmark jobs compute, by the same rules as the code
(:mod:`mpdp.studies.benchmark`): per data set and family, the evaluated runs of the grid, the
selection's runs and the record passes they make (runs × the records of their block, so one
step of one column over one record is one unit; multiply by T for a family's total), the exact
solves of θ*(λ) and the data draws, once with ``split.per_repetition: false`` and once with
``true``, and prints the ratio after/before. Data set sizes: the papers' training sizes
(:func:`mpdp.studies.interface.work_shape`) unless ``--n-train ds=n`` is given.

    .venv/bin/python perf/count_benchmark_split.py
    .venv/bin/python perf/count_benchmark_split.py --config config/smoke.yaml --n-train adult=2000

Rules counted (docs/benchmark.md "A split per repetition"): the fixed split selects once per job
and protocol, a split per repetition once per repetition (the knob of repetition r is chosen on
its own private pool); the party-level private path (Hamm, parameter averaging) selects per
(cell, repetition) in both; θ*(λ) is solved once per λ and protocol for the fixed split, once
per repetition otherwise; a gradient job's centralised and per-round columns of a cell share one
block over the union of the repetitions' used records (fixed split: the two-group design's
leftovers differ per repetition) or one block per repetition (split per repetition: its own used
records only). Expected trial counts E[K] stand for the private protocol's drawn K.
"""

from __future__ import annotations

import argparse
import copy
import math
from pathlib import Path
from typing import Any

import numpy as np

from mpdp import config
from mpdp.data.partition import two_group_sizes
from mpdp.studies.benchmark import cost, plan, registry, selection
from mpdp.studies.interface import work_shape

ROOT = Path(__file__).resolve().parents[1]


def count(cfg: dict[str, Any], dataset: str, n_train: int) -> dict[tuple[str, str], float]:
    """(job group, stage) -> work units of one data set's benchmark jobs under ``cfg`` (module docstring).

    A unit is one record of one training (a gradient or ADMM column, a DP-SGD or objective
    perturbation run, an output job's set of local models for one partition and λ) per step of its
    family: the stages of one group are comparable, two groups' are not.
    """
    b = cfg["benchmark"]
    per_rep = bool(cfg["split"]["per_repetition"])
    R, S, n_eps = int(b["reps"]), int(b["tune_seeds"]), len(b["eps_grid"])
    C = len(b["gradient"]["eta_candidates"])  # every mechanism's candidates (the same budget)
    n = cost.private_pool(cfg, n_train)
    n_val = int(np.ceil(round(b["val_frac"] * n, 9)))
    m_ref, u_ref, _ = plan.reference_cell(cfg)
    sel_rows = int(two_group_sizes(n - n_val, m_ref, u_ref).sum())  # a selection training's records
    mean_k = float(b["selection"]["trials"]["mean"])
    selections = R if per_rep else 1
    out: dict[tuple[str, str], float] = {}

    def add(group: str, stage: str, units: float) -> None:
        out[(group, stage)] = out.get((group, stage), 0.0) + units

    groups = registry.job_groups(cfg)
    for protocol in selection.protocols(cfg):
        grid_n = n - n_val if protocol == "public" else n
        cells = plan.cells(cfg, grid_n)[0]
        for group, ids in groups.items():
            mechs = [registry.get(i) for i in ids if registry.get(i).family != "reference"]
            party = [m for m in mechs if protocol == "private" and selection.releases_selected_trial(m.id)]
            record = [m for m in mechs if m not in party]
            add(group, "theta* solves", selections)  # θ*(λ) of the grid's λ, per protocol
            for m, u in cells:
                n_eff = int(two_group_sizes(grid_n, m, u).sum())
                if group == "output":
                    add(group, "grid", R * n_eff * (1 if record else 0))  # one model set per (rep, λ)
                    add(group, "grid", R * len(party) * n_eps * mean_k * 0)  # trials reuse the cached models
                    add(group, "grid", R * C * n_eff * (1 if party else 0))  # party path: up to C λ per rep
                else:
                    add(group, "grid", len(record) * n_eps * R * _block_rows(cfg, group, n_eff, grid_n, m, u,
                                                                              per_rep))
            if not record:
                continue
            if protocol == "private":
                trainings = n_eps * mean_k * len(record)  # K trials per (mechanism, ε)
            else:
                trainings = C * S * (1 if group == "output" else len(record))  # one model set serves the family
            add(group, "selection", selections * trainings * sel_rows)
    return out


def _block_rows(cfg: dict[str, Any], group: str, n_eff: int, n: int, m: int, u: int, per_rep: bool) -> float:
    """Records one run passes over per step: its own ``n_eff`` but in the fixed split's shared
    gradient block (the union of every repetition's used records)."""
    if group != "gradient" or per_rep or n_eff == n:
        return float(n_eff)
    part = plan.partitions(cfg, "count", n, m, u, int(cfg["benchmark"]["reps"]), "grid")
    return float(len(np.unique(part.order)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default=str(ROOT / "config" / "config.yaml"))
    parser.add_argument("--n-train", action="append", default=[], help="ds=n: training records of ds")
    args = parser.parse_args()
    cfg = config.load(args.config)
    sizes = dict(item.split("=") for item in args.n_train)
    before, after = copy.deepcopy(cfg), copy.deepcopy(cfg)
    before["split"]["per_repetition"], after["split"]["per_repetition"] = False, True
    totals: dict[tuple[str, str], list[float]] = {}
    print(f"{'data set':<14}{'group':<13}{'stage':<16}{'fixed':>16}{'per repetition':>16}{'ratio':>9}")
    for ds in cfg["benchmark"]["datasets"]:
        n_train = int(sizes[ds]) if ds in sizes else work_shape(ds, None)[0]
        a, z = count(before, ds, n_train), count(after, ds, n_train)
        for (group, stage), units in a.items():
            totals.setdefault((group, stage), [0.0, 0.0])
            totals[(group, stage)][0] += units
            totals[(group, stage)][1] += z[(group, stage)]
        for group in dict.fromkeys(g for g, _ in a):
            keys = [k for k in a if k[0] == group]
            for key in keys:
                print(f"{ds:<14}{group:<13}{key[1]:<16}{a[key]:>16.6g}{z[key]:>16.6g}{_ratio(a[key], z[key]):>9}")
            work = [sum(d[k] for k in keys if k[1] != "theta* solves") for d in (a, z)]
            print(f"{ds:<14}{group:<13}{'training, all':<16}{work[0]:>16.6g}{work[1]:>16.6g}{_ratio(*work):>9}")
    for group in dict.fromkeys(g for g, _ in totals):
        keys = [k for k in totals if k[0] == group]
        work = [sum(totals[k][i] for k in keys if k[1] != "theta* solves") for i in (0, 1)]
        print(f"{'all':<14}{group:<13}{'training, all':<16}{work[0]:>16.6g}{work[1]:>16.6g}{_ratio(*work):>9}")


def _ratio(a: float, z: float) -> str:
    return "—" if a == 0 else f"{z / a:.4f}" if math.isfinite(z / a) else "∞"


if __name__ == "__main__":
    main()
