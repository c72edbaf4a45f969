"""The gradient family of the benchmark (M2, M3.1, M3.2, M4.1, M4.2; spec E10): one
:func:`mpdp.mechanisms.gradient_batch.train_batch` engine batch per cell, all per-round/central columns
sharing one block over the private pool with per-column record weights; literal runs one block per
(repetition, party). Columns = mechanisms × ε × repetitions; knob: the step size η.
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
                    u: int, settings: Sequence[tuple[str, float, float]], reps: int,
                    tag: str, noise_scale: float = 1.0, experiment: str = "") -> tuple[list[tuple[str, float, float, int]],
                                                                 np.ndarray, list[calib.Ledger],
                                                                 PartitionSet, np.ndarray]:
    """Train settings (mechanism, ε, η) × reps on one cell's partitions, one engine batch.

    Columns in that order; all central/per-round columns share one block over the rows.
    Returns the run keys, final parameters, ledgers, partition and each run's engine flops.
    """
    b, g = cfg["benchmark"], cfg["benchmark"]["gradient"]
    part = plan.partitions(cfg, dataset, len(y), m, u, reps, tag)
    keys, runs = [], []
    for mech, eps, eta in settings:
        for rep in range(reps):
            keys.append((mech, eps, eta, rep))
            runs.append(calib.gradient_runspec(mech, dataset, eps, b["delta"], g["T"], eta,
                                               b["lambda"], b["G"], m, u, rep,
                                               experiment=f"benchmark_{experiment or tag}"))
    theta0 = {rep: _initial_point(cfg, dataset, rep, X.shape[1], tag) for rep in range(reps)}
    res = train_batch(runs, X, y, part, theta0, cfg["root_seed"], dtype=g["dtype"], dedup=True,
                      noise_scale=noise_scale, tuning=tag == "tune")
    ledgers = [calib.gradient_ledger(r, part.sizes[r.rep]) for r in runs]
    return keys, res.thetas, ledgers, part, res.flops



def run_gradient(cfg: Mapping[str, Any], dataset: str, data: plan.BenchmarkData, log: logging.Logger,
                 noise_scale: float = 1.0, ids: Sequence[str] | None = None
                 ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Select η by each configured protocol (:mod:`.selection`), then train the gradient
    mechanisms ``ids`` on the grid."""
    mechs = tuple(ids if ids is not None else registry.job_groups(cfg)["gradient"])
    return runner.each_protocol(cfg, dataset, data, lambda tun: _run_gradient(cfg, dataset, data, log, noise_scale, mechs, tun))


def _run_gradient(cfg: Mapping[str, Any], dataset: str, data: plan.BenchmarkData, log: logging.Logger,
                  noise_scale: float, mechs: Sequence[str], tun: runner.Tuning) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    b, g = cfg["benchmark"], cfg["benchmark"]["gradient"]
    m_ref, u_ref, _ = plan.reference_cell(cfg)
    cands = [float(e) for e in g["eta_candidates"]]

    def thetas(ms: Sequence[str], eps: float, seeds: int, needed: set[tuple[int, int]] | None
               ) -> dict[str, np.ndarray]:  # one engine batch crosses candidates × seeds: ``needed`` unused
        keys, th, _, _, _ = _gradient_batch(cfg, dataset, tun.X_fit, tun.y_fit, m_ref, u_ref,
                                            [(mech, eps, e) for mech in ms for e in cands], seeds, "tune", noise_scale)
        out = {mech: np.zeros((len(cands), seeds, th.shape[0])) for mech in ms}
        for col, (mech, _, eta, seed) in enumerate(keys):
            out[mech][cands.index(eta), seed] = th[:, col]
        return out

    def cell(grid: runner.Grid, m: int, u: int) -> list[dict[str, Any]]:
        data, opt = grid.data, grid.opt
        settings = [(mech, grid.eps_run[mech][float(e)], grid.chosen[mech][float(e)]) for mech in mechs
                    for e in b["eps_grid"]]
        target = {(mech, grid.eps_run[mech][float(e)]): float(e) for mech in mechs for e in b["eps_grid"]}
        keys, theta, ledgers, part, flops = _gradient_batch(cfg, dataset, data.X, data.y, m, u, settings,
                                                            b["reps"], "grid", noise_scale, grid.noise_tag)
        out = runner.outcome(opt, theta, b["lambda"])
        init = opt.loss(np.stack([initial_point(cfg["root_seed"], f"benchmark:{dataset}", r, data.p,
                                                g["init_std"]) for _, _, _, r in keys], axis=1), b["lambda"])
        rows = []
        for i, ((mech, eps_f, eta, rep), led) in enumerate(zip(keys, ledgers, strict=True)):
            eps = target[(mech, eps_f)]
            rows.append({**grid.base, **runner.mech_row(mech, led, eps), **calib.size_summary(part.sizes[rep]),
                         **runner.selection_fields(cfg, grid.protocol, mech, eps, led),
                         "partition": plan.fingerprint(part, rep),
                         "mode": calib.GRADIENT[mech][1], "m": m, "u": float(u), "rep": rep,
                         "eta": eta, "eta_source": "tuned", "T": g["T"], "lambda": b["lambda"],
                         "dtype": g["dtype"], "hparam": "eta", "hparam_value": eta,
                         "init_loss": float(init[i]), "flops": float(flops[i]),
                         **{k: float(v[i]) for k, v in out.items()}})
        return rows

    return runner.select_then_grid(cfg, dataset, tun, log, "gradient", mechs, "eta", cands, thetas, cell)
