"""The ADMM family of the benchmark (M9 DVP, M10 PVP; spec E10): :func:`mpdp.mechanisms.admm.run_groups`
on the m parties as nodes of a ring, columns = mechanisms × ε, every repetition (and every tuning
seed) of a cell advancing together; knob: the penalty η. The family's call into the mechanism is the
single :func:`mpdp.mechanisms.admm.run_groups` call of :func:`_admm_batch`. Split per repetition
(issue 60): each repetition's graph holds its own records' rows of the pool and its own penalties;
the graphs still advance together.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mpdp.mechanisms import admm as zz
from mpdp.studies.benchmark import calibration as calib
from mpdp.studies.benchmark import plan, registry, runner


def _admm_run_alpha(mech: str, alpha: float, rho: float, P: int, penalty: float, topology: str) -> float:
    """The α a DVP/PVP column runs with: PVP's is lowered to the hidden-state bound (spec I-20)."""
    return calib.pvp_bound_alpha(alpha, rho, P, penalty, topology) if mech == "pvp" else alpha


def _admm_batch(cfg: Mapping[str, Any], dataset: str, X: np.ndarray, y: np.ndarray, m: int, u: int,
                graphs: Sequence[tuple[list[np.ndarray], int, Sequence[tuple[str, float, float]]]],
                tag: str, noise: bool = True, noise_tag: str = "") -> list[tuple[np.ndarray, zz.BatchResult,
                                                                                 list[calib.Ledger]]]:
    """DVP/PVP runs on the parties as ring nodes, for every (parties, repetition, settings) of ``graphs``.

    ``settings`` = (mechanism, ε, penalty) per run. All graphs advance together
    (:func:`mpdp.mechanisms.admm.run_groups`: one stacked exact solve per iteration for all their
    nodes); each run draws its noise from its own stream, so its result is that of a batch of
    its own. ρ = λ·C^R·m so that CR-ERM's minimiser is θ*(λ) for equal node sizes (spec M8:
    J/(C^R m) = L_D). Returns per graph the node average of the final released iterates
    (p, K), the batch result and the ledgers.
    """
    b, a = cfg["benchmark"], cfg["benchmark"]["admm"]
    rho = float(b["lambda"]) * a["C_R"] * m

    def rng_for(run: zz.ADMMRun) -> np.random.Generator:
        return plan.stream(cfg, noise_tag or tag, "admm_noise", dataset, run.mechanism, m, u, float(run.alpha),
                           float(run.penalty), run.rep)

    groups, all_ledgers = [], []
    for parts, rep, settings in graphs:
        ledgers = [calib.admm_ledger(eps, a["T"], b["delta"], a["accountant"]) for _, eps, _ in settings]
        runs = [zz.ADMMRun(mech, rho, float(pen), _admm_run_alpha(mech, led.alpha_step, rho, m, float(pen),
                                                                   a["topology"]), rep)
                for (mech, _, pen), led in zip(settings, ledgers, strict=True)]
        nodes = [(np.ascontiguousarray(X[idx]), y[idx]) for idx in parts]
        groups.append(zz.Group(nodes, a["topology"], runs, rng_for, lambda rel: {}, [a["T"]]))
        all_ledgers.append(ledgers)
    results = zz.run_groups(groups, a["T"], a["C_R"], noise=noise)
    return [(np.mean(np.stack(res.released), axis=0), res, ledgers)
            for res, ledgers in zip(results, all_ledgers, strict=True)]


def run_admm(cfg: Mapping[str, Any], dataset: str, data: plan.BenchmarkData | plan.Repetitions,
             log: logging.Logger, noise: bool = True, ids: Sequence[str] | None = None
             ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Select the ADMM penalty by each configured protocol, then run DVP/PVP (``ids``) on the grid."""
    mechs = tuple(ids if ids is not None else registry.job_groups(cfg)["admm"])
    reps = runner.repetitions(cfg, data)
    return runner.each_protocol(cfg, dataset, reps, lambda tuns: _run_admm(cfg, dataset, reps, log, noise, mechs, tuns))


def _run_admm(cfg: Mapping[str, Any], dataset: str, data: plan.Repetitions, log: logging.Logger,
              noise: bool, mechs: Sequence[str], tuns: list[runner.Tuning]
              ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    b, a = cfg["benchmark"], cfg["benchmark"]["admm"]
    m_ref, u_ref, _ = plan.reference_cell(cfg)
    cands = [float(x) for x in a["penalty_candidates"]]

    def thetas_for(tun: runner.Tuning) -> runner.ThetaFn:
        def thetas(ms: Sequence[str], eps: float, seeds: int, needed: set[tuple[int, int]] | None
                   ) -> dict[str, np.ndarray]:
            part = plan.partitions(cfg, tun.label, len(tun.y_fit), m_ref, u_ref, seeds, "tune")
            out = {mech: np.zeros((len(cands), seeds, data.p)) for mech in ms}
            graphs = [(part.party_indices(s), s, [(mech, eps, c) for mech in ms for i, c in enumerate(cands)
                                                  if needed is None or (i, s) in needed]) for s in range(seeds)]
            graphs = [g for g in graphs if g[2]]
            batches = (_admm_batch(cfg, tun.label, tun.X_fit, tun.y_fit, m_ref, u_ref, graphs, "tune", noise)
                       if graphs else [])
            for (_, s, settings), (theta, _, _) in zip(graphs, batches, strict=True):
                for k, (mech, _, c) in enumerate(settings):
                    out[mech][cands.index(c), s] = theta[:, k]
            return out
        return thetas

    lam = float(b["lambda"])

    def cell(grid: runner.Grid, m: int, u: int) -> list[dict[str, Any]]:
        data = grid.data
        part = plan.partitions(cfg, dataset, data.n, m, u, b["reps"], "grid", data.partition_rows())
        settings = [[(mech, grid.eps_run[mech][float(eps)], grid.chosen[rep][mech][float(eps)]) for mech in mechs
                     for eps in b["eps_grid"]] for rep in range(b["reps"])]
        targets = [float(eps) for _ in mechs for eps in b["eps_grid"]]
        cell_rows = []
        batches = _admm_batch(cfg, dataset, data.X, data.y, m, u,
                              [(part.party_indices(rep), rep, settings[rep]) for rep in range(b["reps"])],
                              "grid", noise, grid.noise_tag)
        for rep, (theta, res, ledgers) in enumerate(batches):
            out = runner.outcome(grid.opt[rep], theta, lam)
            sizes = calib.size_summary(part.sizes[rep])
            for k, ((mech, _, pen), led, eps) in enumerate(zip(settings[rep], ledgers, targets, strict=True)):
                # PVP: the sensitivity its noise is calibrated to, Δ_p/(1 − r) (spec I-20)
                sens = float(res.sensitivity[k]) / (1.0 - calib.pvp_hidden_gain_max(
                    float(b["lambda"]) * a["C_R"] * m, m, pen, a["topology"]) if mech == "pvp" else 1.0)
                led = calib.Ledger(led.accountant, sens, math.nan, float(res.zeta[k]),
                                   led.alpha_step, led.eps_total, led.delta_total, led.scope)
                cell_rows.append({**grid.base[rep], **sizes, **runner.mech_row(mech, led, eps), "mode": "decentralised",
                                  **runner.selection_fields(cfg, grid.protocol, mech, eps, led),
                                  "partition": plan.fingerprint(part, rep),
                                  "m": m, "u": float(u), "rep": rep, "T": a["T"], "lambda": lam,
                                  "dtype": "float64", "hparam": "admm_penalty", "hparam_value": pen,
                                  **{key: float(v[k]) for key, v in out.items()}})
        return cell_rows

    return runner.select_then_grid(cfg, dataset, tuns, data, log, "admm", mechs, "admm_penalty", cands, thetas_for,
                                   cell)
