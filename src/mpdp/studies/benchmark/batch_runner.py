"""Added mechanisms of the benchmark (:class:`~mpdp.studies.benchmark.interface.BatchMechanism`, e.g.
DP-SGD; spec E10): the common protocol around the mechanism's own ``train_batch``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mpdp.errors import ConfigError
from mpdp.seeding import rng
from mpdp.studies.benchmark import calibration as calib
from mpdp.studies.benchmark import plan, runner
from mpdp.studies.benchmark.interface import BatchMechanism, Run


def run_batch_mechanism(cfg: Mapping[str, Any], dataset: str, data: plan.BenchmarkData | plan.Repetitions,
                        mech: BatchMechanism, log: logging.Logger) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The whole job of a :class:`~mpdp.studies.benchmark.interface.BatchMechanism` (spec E10).

    Selection by each configured protocol (:mod:`.selection`; the candidates on the tuning fit
    records at the reference cell, tuning streams only); then every cell, repetition and ε of the
    grid, one :meth:`train_batch` call per (cell, repetition) on the same partitions as every other
    mechanism, each run with its own noise stream. A split per repetition (issue 60): each
    repetition's knob selected on its own private pool, its parties' rows those of its own records.
    """
    cands = [float(c) for c in mech.candidates(cfg)]
    budget = len(cfg["benchmark"]["gradient"]["eta_candidates"])
    if len(cands) != budget:
        raise ConfigError(f"benchmark mechanism {mech.id!r} has {len(cands)} candidates of {mech.hparam}; every "
                          f"mechanism gets the same selection budget, {budget} (benchmark.gradient.eta_candidates)")
    reps = runner.repetitions(cfg, data)
    return runner.each_protocol(cfg, dataset, reps,
                                lambda tuns: _run_batch_mechanism(cfg, dataset, reps, mech, log, cands, tuns))


def _run_batch_mechanism(cfg: Mapping[str, Any], dataset: str, data: plan.Repetitions, mech: BatchMechanism,
                         log: logging.Logger, cands: list[float], tuns: list[runner.Tuning]
                         ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    b = cfg["benchmark"]
    m_ref, u_ref, _ = plan.reference_cell(cfg)

    def runs_for(tag: str, sizes: np.ndarray, m: int, u: int, rep: int,
                 settings: Sequence[tuple[float, float]], noise_tag: str = "", label: str = "") -> list[Run]:
        keys = [plan.stream_key(noise_tag or tag, "noise", label or dataset, mech.id, m, u, float(eps), float(h), rep)
                for eps, h in settings]
        return [Run(float(eps), float(h), rep, mech.ledger(cfg, float(eps), sizes, float(h), data.p),
                    rng(cfg["root_seed"], *key), key) for (eps, h), key in zip(settings, keys, strict=True)]

    def thetas_for(tun: runner.Tuning) -> runner.ThetaFn:
        def thetas(ms: Sequence[str], eps: float, seeds: int, needed: set[tuple[int, int]] | None
                   ) -> dict[str, np.ndarray]:
            part = plan.partitions(cfg, tun.label, len(tun.y_fit), m_ref, u_ref, seeds, "tune")
            out = np.zeros((len(cands), seeds, data.p))
            for s in range(seeds):
                idx = [i for i in range(len(cands)) if needed is None or (i, s) in needed]
                runs = runs_for("tune", part.sizes[s], m_ref, u_ref, s, [(eps, cands[i]) for i in idx],
                                label=tun.label)
                out[idx, s] = mech.train_batch(cfg, tun.X_fit, tun.y_fit, part.party_indices(s), runs).T
            return {mech.id: out}
        return thetas

    grid_eps = [float(e) for e in b["eps_grid"]]

    def cell(grid: runner.Grid, m: int, u: int) -> list[dict[str, Any]]:
        eps_run, gdata = grid.eps_run, grid.data
        part = plan.partitions(cfg, dataset, gdata.n, m, u, b["reps"], "grid", gdata.partition_rows())
        cell_rows = []
        for rep in range(b["reps"]):
            chosen_by = grid.chosen[rep]
            for chosen in sorted(set(chosen_by[mech.id].values())):
                eps_list = [e for e in grid_eps if chosen_by[mech.id][e] == chosen]
                runs = runs_for("grid", part.sizes[rep], m, u, rep, [(eps_run[mech.id][e], chosen) for e in eps_list],
                                grid.noise_tag)
                lam = mech.lam(cfg, chosen)
                out = runner.outcome(grid.opt[rep], mech.train_batch(cfg, gdata.X, gdata.y, part.party_indices(rep), runs),
                                     lam)
                common = {**grid.base[rep], **calib.size_summary(part.sizes[rep]), "mode": mech.family, "m": m,
                          "u": float(u), "rep": rep, "partition": plan.fingerprint(part, rep), "T": 0,
                          "dtype": "float64", "lambda": lam, "hparam": mech.hparam, "hparam_value": chosen,
                          **mech.row_fields(cfg, chosen)}
                for k, (run, eps) in enumerate(zip(runs, eps_list, strict=True)):
                    cell_rows.append({**common, **runner.mech_row(mech.id, run.ledger, eps),
                                      **runner.selection_fields(cfg, grid.protocol, mech.id, eps, run.ledger),
                                      **{key: float(v[k]) for key, v in out.items()}})
        return cell_rows

    return runner.select_then_grid(cfg, dataset, tuns, data, log, mech.id, [mech.id], mech.hparam, cands, thetas_for,
                                   cell)
