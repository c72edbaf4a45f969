"""The gradient family of the benchmark (M2, M3.1, M3.2, M4.1, M4.2; spec E10): one
:func:`mpdp.mechanisms.gradient_batch.train_batch` engine batch per cell, all per-round/central columns
sharing one block over the private pool with per-column record weights; literal runs one block per
(repetition, party). Columns = mechanisms × ε × repetitions; knob: the step size η.

Split per repetition (issue 60): the batch indexes the pool (:class:`.plan.Repetitions`), each
repetition's partition holding its own records' pool rows, and its pooled columns share one block
per repetition (``pooled_by_rep``), so a column's pooled block holds its own repetition's records
only: the work per column is that of the fixed split.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mpdp.data.partition import PartitionSet
from mpdp.mechanisms.gradient_batch import initial_point, train_batch
from mpdp.studies.benchmark import calibration as calib
from mpdp.studies.benchmark import plan, registry, runner


def _initial_point(cfg: Mapping[str, Any], dataset: str, rep: int, p: int, tag: str) -> np.ndarray:
    """θ₀ of a gradient run: the WD-DP study's draw for evaluated runs, a tuning stream's for the selection."""
    std = cfg["benchmark"]["gradient"]["init_std"]
    if tag == "tune":
        return plan.stream(cfg, tag, "init", dataset, rep).normal(0.0, std, size=p)
    return initial_point(cfg["root_seed"], f"benchmark:{dataset}", rep, p, std)


def _gradient_batch(cfg: Mapping[str, Any], dataset: str, X: np.ndarray, y: np.ndarray, m: int,
                    u: int, settings: Sequence[tuple[str, float, float]] | Sequence[Sequence[tuple[str, float, float]]],
                    reps: int, tag: str, noise_scale: float = 1.0, experiment: str = "",
                    rows: Sequence[np.ndarray] | None = None, n: int | None = None
                    ) -> tuple[list[tuple[str, float, float, int]], np.ndarray, list[calib.Ledger], PartitionSet,
                               np.ndarray]:
    """Train settings (mechanism, ε, η) × reps on one cell's partitions, one engine batch.

    ``settings``: one list for every repetition, or one list per repetition (a split per
    repetition: each its own knobs). Columns in setting-major order (a setting, its repetitions);
    all central/per-round columns share one block over the rows, one per repetition when ``rows``
    (per repetition, the rows of ``X`` of its ``n`` records: :class:`.plan.Repetitions`) is given.
    Returns the run keys, final parameters, ledgers, partition and each run's engine flops.
    """
    b, g = cfg["benchmark"], cfg["benchmark"]["gradient"]
    part = plan.partitions(cfg, dataset, len(y) if n is None else n, m, u, reps, tag, rows)
    if settings and isinstance(settings[0][0], str):  # one list for every repetition
        settings = [settings] * reps
    keys, runs = [], []
    for i in range(len(settings[0])):
        for rep in range(reps):
            mech, eps, eta = settings[rep][i]
            keys.append((mech, eps, eta, rep))
            runs.append(calib.gradient_runspec(mech, dataset, eps, b["delta"], g["T"], eta,
                                               b["lambda"], b["G"], m, u, rep,
                                               experiment=f"benchmark_{experiment or tag}"))
    theta0 = {rep: _initial_point(cfg, dataset, rep, X.shape[1], tag) for rep in range(reps)}
    res = train_batch(runs, X, y, part, theta0, cfg["root_seed"], dtype=g["dtype"], dedup=True,
                      noise_scale=noise_scale, tuning=tag == "tune", pooled_by_rep=rows is not None)
    ledgers = [calib.gradient_ledger(r, part.sizes[r.rep]) for r in runs]
    return keys, res.thetas, ledgers, part, res.flops



def run_gradient(cfg: Mapping[str, Any], dataset: str, data: plan.BenchmarkData | plan.Repetitions,
                 log: logging.Logger, noise_scale: float = 1.0, ids: Sequence[str] | None = None
                 ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Select η by each configured protocol (:mod:`.selection`), then train the gradient
    mechanisms ``ids`` on the grid."""
    mechs = tuple(ids if ids is not None else registry.job_groups(cfg)["gradient"])
    reps = runner.repetitions(cfg, data)
    return runner.each_protocol(cfg, dataset, reps,
                                lambda tuns: _run_gradient(cfg, dataset, reps, log, noise_scale, mechs, tuns))


def _run_gradient(cfg: Mapping[str, Any], dataset: str, data: plan.Repetitions, log: logging.Logger,
                  noise_scale: float, mechs: Sequence[str], tuns: list[runner.Tuning]
                  ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    b, g = cfg["benchmark"], cfg["benchmark"]["gradient"]
    m_ref, u_ref, _ = plan.reference_cell(cfg)
    cands = [float(e) for e in g["eta_candidates"]]

    def thetas_for(tun: runner.Tuning) -> runner.ThetaFn:
        def thetas(ms: Sequence[str], eps: float, seeds: int, needed: set[tuple[int, int]] | None
                   ) -> dict[str, np.ndarray]:  # one engine batch crosses candidates × seeds: ``needed`` unused
            keys, th, _, _, _ = _gradient_batch(cfg, tun.label, tun.X_fit, tun.y_fit, m_ref, u_ref,
                                                [(mech, eps, e) for mech in ms for e in cands], seeds, "tune",
                                                noise_scale)
            out = {mech: np.zeros((len(cands), seeds, th.shape[0])) for mech in ms}
            for col, (mech, _, eta, seed) in enumerate(keys):
                out[mech][cands.index(eta), seed] = th[:, col]
            return out
        return thetas

    def cell(grid: runner.Grid, m: int, u: int) -> list[dict[str, Any]]:
        data, reps = grid.data, b["reps"]
        settings = [[(mech, grid.eps_run[mech][float(e)], grid.chosen[r][mech][float(e)]) for mech in mechs
                     for e in b["eps_grid"]] for r in range(reps)]
        target = {(mech, grid.eps_run[mech][float(e)]): float(e) for mech in mechs for e in b["eps_grid"]}
        keys, theta, ledgers, part, flops = _gradient_batch(cfg, dataset, data.X, data.y, m, u,
                                                            settings[0] if data.shared else settings, reps, "grid",
                                                            noise_scale, grid.noise_tag, data.partition_rows(),
                                                            data.n)
        col_reps = [r for _, _, _, r in keys]
        out = runner.outcome_by_rep(grid, theta, col_reps, b["lambda"])
        theta0 = np.stack([initial_point(cfg["root_seed"], f"benchmark:{dataset}", r, data.p, g["init_std"])
                           for r in col_reps], axis=1)
        if data.shared:
            init = grid.opt[0].loss(theta0, b["lambda"])
        else:
            init = np.array([float(grid.opt[r].loss(theta0[:, [i]], b["lambda"])[0]) for i, r in enumerate(col_reps)])
        rows = []
        for i, ((mech, eps_f, eta, rep), led) in enumerate(zip(keys, ledgers, strict=True)):
            eps = target[(mech, eps_f)]
            rows.append({**grid.base[rep], **runner.mech_row(mech, led, eps), **calib.size_summary(part.sizes[rep]),
                         **runner.selection_fields(cfg, grid.protocol, mech, eps, led),
                         "partition": plan.fingerprint(part, rep),
                         "mode": calib.GRADIENT[mech][1], "m": m, "u": float(u), "rep": rep,
                         "eta": eta, "eta_source": "tuned", "T": g["T"], "lambda": b["lambda"],
                         "dtype": g["dtype"], "hparam": "eta", "hparam_value": eta,
                         "init_loss": float(init[i]), "flops": float(flops[i]),
                         **{k: float(v[i]) for k, v in out.items()}})
        return rows

    return runner.select_then_grid(cfg, dataset, tuns, data, log, "gradient", mechs, "eta", cands, thetas_for, cell)
