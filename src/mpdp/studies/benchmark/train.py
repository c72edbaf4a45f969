"""Training jobs of the benchmark (spec E10): one job per (data set, job group), then a collect.

A job dispatches (:func:`run_job`) to its family's runner or to an added mechanism's; each runner
is a module of its own and reuses its study's engine, no mechanism being re-implemented:

- :mod:`.gradient_runner` (M2, M3.1, M3.2, M4.1, M4.2): :func:`mpdp.mechanisms.gradient_batch.train_batch`;
- :mod:`.output_runner` (M1a reference, M5, M6a, M6b, M11, M12): the voting study's minimisers and
  votes, N-L2 noise per ε;
- :mod:`.admm_runner` (M9, M10): :func:`mpdp.mechanisms.admm.run_groups`;
- :mod:`.batch_runner`: any :class:`~mpdp.studies.benchmark.interface.BatchMechanism` (DP-SGD).

Every runner follows the common protocol of :mod:`.runner`: per configured selection protocol of
:mod:`.selection` (:func:`.runner.each_protocol`), the knob is chosen (:func:`.runner.select`) —
``private``: random stopping, accounted end to end in every row (record-level mechanisms select
once per ε at the reference cell and retrain; party-level ones select per cell and repetition on
the released partition with the validation records held out of every party, and release the
selected trial); ``public``: on a split removed from the pool; ``oracle``: the papers'
non-private selection, its cost excluded (``eps_end_to_end`` = ∞) — then the grid is trained.

Results: one row per (mechanism, ε, m, u, rep) in the common schema plus
:data:`mpdp.studies.benchmark.schema.EXTRA_COLUMNS`. ``optimal_gap`` = L_D(θ) − L_D(θ*) on the
whole private pool with the run's λ (θ* of M1a, :func:`mpdp.models.logistic.solve_optimum`).

The split (issue 60, :mod:`mpdp.data.splits`): with ``split.per_repetition`` each repetition's
row is trained, selected and referenced on its own private pool and scored on its own test
records (:mod:`.plan`); the design is stated in the job's log and in the ``split`` field of the
hyper-parameter records (:func:`mpdp.data.splits.describe`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from mpdp import io, results
from mpdp.data import splits
from mpdp.errors import ConfigError, InputDataError
from mpdp.studies.benchmark import budgets, plan, registry, runner, selection
from mpdp.studies.benchmark.admm_runner import run_admm
from mpdp.studies.benchmark.batch_runner import run_batch_mechanism
from mpdp.studies.benchmark.builtin import FamilyMechanism
from mpdp.studies.benchmark.gradient_runner import run_gradient
from mpdp.studies.benchmark.interface import BatchMechanism
from mpdp.studies.benchmark.output_runner import run_output
from mpdp.studies.benchmark.schema import EXTRA_COLUMNS

#: the papers' three training families and the function that trains all of a family's configured
#: mechanisms in one job
FAMILY_RUNNERS = {"gradient": run_gradient, "output": run_output, "admm": run_admm}


def run_job(cfg: Mapping[str, Any], dataset: str, data: plan.BenchmarkData | plan.Repetitions,
            ids: Sequence[str], log: logging.Logger) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Train the mechanisms ``ids`` of one job (one family, or one added mechanism): a family of the
    papers by its runner, a :class:`~.interface.BatchMechanism` by the common protocol
    (:func:`run_batch_mechanism`), any other mechanism by its own ``train_job`` hook (on the one
    shared split only)."""
    mech = registry.get(ids[0])
    if isinstance(mech, FamilyMechanism):
        return FAMILY_RUNNERS[mech.job](cfg, dataset, data, log, ids=ids)
    if isinstance(mech, BatchMechanism):
        return run_batch_mechanism(cfg, dataset, data, mech, log)
    reps = runner.repetitions(cfg, data)
    if not reps.shared:
        raise ConfigError(f"config key 'split.per_repetition' = true: benchmark mechanism {mech.id!r} trains its own "
                          f"job (Mechanism.train_job) on one split; make it a BatchMechanism (docs/extending.md) or "
                          f"set split.per_repetition: false")
    return mech.train_job(cfg, dataset, reps.rep(0), ids, log)


def family_job(cfg: Mapping[str, Any], dataset: str, group: str, processed_dir: Path, budgets_file: Path,
               out: Path, hparams_out: Path, log: logging.Logger) -> None:
    """One Snakemake job: every mechanism of ``group`` on every cell of ``dataset``, the private
    selection's budgets read from rule ``benchmark_budgets``'s ``budgets_file`` (:mod:`.budgets`)."""
    log.info("%d selection budgets from %s", budgets.install(cfg, budgets_file), budgets_file)
    data = plan.load_data(cfg, dataset, processed_dir)
    view = data.rep(0)
    kept, skipped = plan.cells(cfg, data.n)
    log.info("%s: split: %s", dataset, splits.describe(cfg))
    log.info("%s: %d private records (of %d before the cap), %d auxiliary, p = %d%s; cells %s",
             dataset, data.n, view.n_available, len(view.X_aux), data.p,
             "" if data.shared else f", in each of {data.reps} repetitions", kept)
    for reason in skipped:
        log.info("%s: cell skipped: %s", dataset, reason)
    if not kept:
        raise InputDataError(f"benchmark: no (m, u) cell of benchmark.m_grid x benchmark.u_grid leaves "
                             f">= benchmark.min_party_size records per party in the {data.n} private "
                             f"records of {dataset}; lower m_grid, u_grid or min_party_size")
    groups = registry.job_groups(cfg)
    if group not in groups:
        raise InputDataError(f"benchmark: no configured mechanism trains in job {group!r} "
                             f"(benchmark.mechanisms gives jobs {sorted(groups)})")
    ids = groups[group]
    rows, hp = run_job(cfg, dataset, data, ids, log)
    frame = results.to_frame(rows, EXTRA_COLUMNS)
    results.write(frame, out, EXTRA_COLUMNS)
    io.write_json({"group": group, "mechanisms": hp, "skipped_cells": skipped,
                   "n_private": data.n, "n_private_before_cap": view.n_available,
                   "n_aux": len(view.X_aux), "split": splits.describe(cfg),
                   "split_per_repetition": not data.shared}, hparams_out)


def collect(dataset: str, cfg: Mapping[str, Any], parts: Sequence[Path], hparams: Sequence[Path],
            out: Path, hparams_out: Path) -> None:
    """Concatenate a data set's job parts into its table and one hyper-parameter record."""
    frame = pd.concat([results.read(p, EXTRA_COLUMNS) for p in parts], ignore_index=True)
    order = {m.id: i for i, m in enumerate(registry.configured(cfg))}
    porder = {p: i for i, p in enumerate(selection.protocols(cfg))}
    frame = (frame.assign(_o=frame["mechanism"].map(order), _p=frame["selection"].map(porder))
             .sort_values(["_p", "_o", "epsilon", "m", "u", "rep"], kind="stable").drop(columns=["_o", "_p"]))
    results.write(frame.reset_index(drop=True), out, EXTRA_COLUMNS)
    records = [io.read_json(h, "benchmark hyper-parameter file") for h in hparams]
    by_protocol: dict[str, dict[str, Any]] = {}
    for r in records:
        for protocol, mechs in r["mechanisms"].items():
            by_protocol.setdefault(protocol, {}).update(mechs)
    m_ref, u_ref, eps_ref = plan.reference_cell(cfg)
    s = cfg["benchmark"]["selection"]
    io.write_json({
        "dataset": dataset, "protocol": runner.PROTOCOL, "selection": s["protocol"],
        "protocols": {p: selection.LABELS[p] for p in selection.protocols(cfg)},
        "privacy_cost_of_selection": {p: ("included (end-to-end)" if p != "oracle" else "excluded")
                                      for p in selection.protocols(cfg)},
        "trials": dict(s["trials"]), "final_share": s["final_share"], "score_clip": s["score_clip"],
        "reference_cell": {"m": m_ref, "u": u_ref, "epsilon": eps_ref},
        "val_frac": cfg["benchmark"]["val_frac"], "tune_seeds": cfg["benchmark"]["tune_seeds"],
        "mechanisms": by_protocol,
        "skipped_cells": records[0]["skipped_cells"] if records else [],
        "n_private": records[0]["n_private"] if records else None,
        "n_private_before_cap": records[0]["n_private_before_cap"] if records else None,
        "n_aux": records[0]["n_aux"] if records else None,
        "split": records[0].get("split") if records else None,
        "split_per_repetition": records[0].get("split_per_repetition", False) if records else False,
    }, hparams_out)
