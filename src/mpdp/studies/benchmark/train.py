"""Training of the benchmark (spec E10): one job per (data set, job group), then a collect.

No mechanism is re-implemented; each family reuses its study's engine:

- ``gradient`` (M2, M3.1, M3.2, M4.1, M4.2): :func:`mpdp.studies.wddp.batch.train_batch`, i.e.
  :func:`mpdp.engine.noisy_gd` blocks — all per-round/central columns of a cell share one
  block over the private pool with per-column record weights; literal runs use one block per
  (repetition, party). Columns = mechanisms × ε × repetitions.
- ``output`` (M1a reference, M5, M6a, M6b, M11, M12): local exact minimisers, votes and global
  minimisers of :mod:`mpdp.studies.voting.train` once per (cell, repetition, λ); the ε grid only
  draws N-L2 noise (:mod:`mpdp.mechanisms.output_perturbation`).
- ``admm`` (M9, M10): :func:`mpdp.mechanisms.admm.run_batch` on the m parties as nodes of a
  ring, columns = mechanisms × ε.

Hyper-parameters (spec E10): every mechanism tunes **one** knob (gradient: step size η;
output/voting: λ; ADMM: the penalty η) over the same number of candidates and the same
``tune_seeds`` seeds, on a non-private validation split of the private pool at the reference
cell (m, u, ε) = ``benchmark.reference``; the best mean validation accuracy is frozen for
the grid. The selection's own privacy cost is excluded (recorded in the hparams json).

Results: one row per (mechanism, ε, m, u, rep) in the common schema plus
:data:`mpdp.studies.benchmark.schema.EXTRA_COLUMNS`. ``optimal_gap`` = L_D(θ) − L_D(θ*) on the
whole private pool with the run's λ (θ* of M1a, :func:`mpdp.models.logistic.solve_optimum`).
"""

from __future__ import annotations

import functools
import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mpdp import io, results
from mpdp.data.partition import PartitionSet
from mpdp.errors import ConfigError, InputDataError
from mpdp.mechanisms import admm as zz
from mpdp.mechanisms import output_perturbation as op
from mpdp.models import logistic
from mpdp.seeding import rng
from mpdp.studies.benchmark import calibration as calib
from mpdp.studies.benchmark import plan, registry, selection
from mpdp.studies.benchmark.builtin import FamilyMechanism
from mpdp.studies.benchmark.interface import BatchMechanism, Run
from mpdp.studies.benchmark.schema import EXTRA_COLUMNS
from mpdp.studies.voting import train as voting
from mpdp.studies.wddp.batch import initial_point, train_batch

PROTOCOL = (
    "one knob per mechanism (gradient: step size eta; output/voting: lambda; ADMM: penalty), "
    "the same candidates for every mechanism; selection protocols in mpdp.studies.benchmark.selection: "
    "private (random stopping, end-to-end accounted), public (a split removed from the private pool), "
    "oracle (non-private selection, the papers' convention)"
)


#: what the private protocol's trial record is (Papernot & Steinke 2022: the guarantee holds for the
#: chosen knob with K hidden; publishing K, or which candidates were tried, voids it)
DIAGNOSTIC = ("K (trials_drawn), candidates_tried and best_trial are recorded for the cost accounting of this "
              "replication only; they are not part of the private release: publishing them voids the "
              "random-stopping guarantee, which holds for the chosen knob with K hidden")


class Optimum:
    """θ*(λ) of the pooled private data (spec M1a), cached per λ, with L_D and test accuracy."""

    def __init__(self, data: plan.BenchmarkData) -> None:
        self.data = data

    @functools.cache  # noqa: B019 (one instance per job)
    def theta(self, lam: float) -> np.ndarray:
        return logistic.solve_optimum(self.data.X, self.data.y, lam)

    def loss(self, theta: np.ndarray, lam: float) -> np.ndarray:
        """L_D(θ) = mean logistic loss + (λ/2)‖θ‖² on the private pool, θ (p,) or (p, K)."""
        return np.asarray(logistic.loss(theta, self.data.X, self.data.y, lam))

    def optimal_loss(self, lam: float) -> float:
        return float(self.loss(self.theta(lam), lam))


def _base_row(cfg: Mapping[str, Any], dataset: str, data: plan.BenchmarkData) -> dict[str, Any]:
    b = cfg["benchmark"]
    y = data.y_test
    majority = max(np.mean(y == 1.0), np.mean(y == -1.0))
    return {"dataset": dataset, "experiment": "benchmark", "noise_sharing": "independent",
            "delta": float(b["delta"]), "G": float(b["G"]), "p": data.p, "synthetic": False,
            "majority_rate": float(majority)}


def _mech_row(mechanism: str, ledger: calib.Ledger, epsilon: float) -> dict[str, Any]:
    """What the mechanism declares (:mod:`.interface`) and its ledger, for one row."""
    spec = registry.get(mechanism)
    return {"mechanism": mechanism, "label": spec.label, "spec": spec.spec, "family": spec.family,
            "privacy_unit": spec.privacy_unit, "public_data": spec.public_data,
            "calibration": spec.calibration, "accountant": ledger.accountant,
            "epsilon": float(epsilon), "eps_claimed": float(epsilon),
            "eps_accounted": ledger.eps_total, "eps_accounted_scope": ledger.scope,
            "eps_total": ledger.eps_total, "delta_total": ledger.delta_total,
            "sensitivity": ledger.sensitivity, "sigma": ledger.sigma, "beta": ledger.beta,
            "alpha_step": ledger.alpha_step}


def _outcome(opt: Optimum, thetas: np.ndarray, lam: float) -> dict[str, np.ndarray]:
    """Accuracy, test log-loss, L_D, L_D(θ*), gap and θ*'s accuracy for the columns of ``thetas`` (p, K)."""
    data = opt.data
    train = opt.loss(thetas, lam)
    best = opt.optimal_loss(lam)
    return {"accuracy": np.asarray(logistic.accuracy(thetas, data.X_test, data.y_test)),
            "test_logloss": np.asarray(logistic.loss(thetas, data.X_test, data.y_test, 0.0)),
            "train_loss": train, "optimal_loss": np.full(thetas.shape[1], best),
            "optimal_gap": train - best,
            "optimal_accuracy": np.full(thetas.shape[1], logistic.accuracy(opt.theta(lam), data.X_test,
                                                                            data.y_test))}


def _choose(candidates: Sequence[float], scores: np.ndarray) -> float:
    """The candidate of best mean validation accuracy (ties: the first in config order)."""
    return float(candidates[int(np.argmax(scores))])


def _val_accuracy(thetas: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.asarray(logistic.accuracy(thetas, X, y))


@dataclass(frozen=True)
class Tuning:
    """The records a protocol tunes on and the data its grid trains on (:mod:`.selection`)."""

    protocol: str
    X_fit: np.ndarray
    y_fit: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray
    grid: plan.BenchmarkData
    n_public: int  # records removed from the private pool and declared public (``public`` only)


def tuning_data(cfg: Mapping[str, Any], dataset: str, data: plan.BenchmarkData, protocol: str) -> Tuning:
    """Split the private pool for ``protocol`` (:mod:`mpdp.studies.benchmark.selection`)."""
    fit, val = plan.validation_split(data.n, cfg, dataset)
    if protocol != "public":
        return Tuning(protocol, data.X[fit], data.y[fit], data.X[val], data.y[val], data, 0)
    pub_fit, pub_val = plan.validation_split(len(val), cfg, f"{dataset}:public")
    grid = plan.BenchmarkData(data.X[fit], data.y[fit], data.X_aux, data.X_test, data.y_test, data.n_available)
    return Tuning(protocol, data.X[val][pub_fit], data.y[val][pub_fit], data.X[val][pub_val],
                  data.y[val][pub_val], grid, len(val))


#: thetas(mechs, ε, seeds, needed) -> {mechanism: array (n_candidates, seeds, p)} on the tuning fit
#: records; ``needed`` (a set of (candidate index, seed), or None for all) lets a family skip the rest
ThetaFn = Callable[[Sequence[str], float, int, "set[tuple[int, int]] | None"], dict[str, np.ndarray]]


def select(cfg: Mapping[str, Any], dataset: str, tun: Tuning, mechs: Sequence[str], hparam: str,
           cands: Sequence[float], thetas: ThetaFn, noise: bool = True
           ) -> tuple[dict[str, dict[float, float]], dict[str, dict[float, float]], dict[str, Any]]:
    """Choose every mechanism's knob under ``tun.protocol``.

    Returns ``chosen[mech][ε]`` (the knob for target ε), ``eps_run[mech][ε]`` (the ε the final
    run is calibrated to) and the hparams record per mechanism (protocol, trials, budget split).
    """
    b = cfg["benchmark"]
    grid_eps = [float(e) for e in b["eps_grid"]]
    chosen: dict[str, dict[float, float]] = {}
    eps_run: dict[str, dict[float, float]] = {}
    hp: dict[str, Any] = {}
    if tun.protocol in ("oracle", "public"):
        _, _, eps_ref = plan.reference_cell(cfg)
        th = thetas(mechs, eps_ref, b["tune_seeds"], None)
        for mech in mechs:
            flat = th[mech].reshape(-1, th[mech].shape[-1]).T  # (p, n_cands·seeds)
            if tun.protocol == "oracle":
                score = _val_accuracy(flat, tun.X_val, tun.y_val).reshape(len(cands), -1).mean(axis=1)
                pick = _choose(cands, score)
            else:
                score = selection.validation_logloss(flat, tun.X_val, tun.y_val).reshape(len(cands), -1).mean(axis=1)
                pick = selection.choose_lowest(cands, score)
            chosen[mech] = {e: pick for e in grid_eps}
            eps_run[mech] = {e: e for e in grid_eps}
            key = "val_accuracy" if tun.protocol == "oracle" else "val_logloss"
            hp[mech] = {"hparam": hparam, "candidates": list(cands), "seeds": b["tune_seeds"], key: score.tolist(),
                        "chosen": pick, "selection": tun.protocol, "label": selection.LABELS[tun.protocol],
                        "n_public": tun.n_public, "trials_drawn": len(cands) * b["tune_seeds"]}
        return chosen, eps_run, hp
    s = b["selection"]
    for mech in mechs:
        chosen[mech], eps_run[mech], per_eps = {}, {}, {}
        for eps in grid_eps:
            bud = selection.budget(cfg, mech, eps)
            trials = selection.draw_trials(plan.stream(cfg, "tune", "selection", dataset, mech, eps), cfg, len(cands))
            th = thetas([mech], bud.eps_trial, len(trials), {(c, k) for k, c in enumerate(trials)})[mech]
            picked = np.stack([th[c, k] for k, c in enumerate(trials)], axis=1)
            scores = selection.noisy_scores(picked, tun.X_val, tun.y_val, float(s["score_clip"]), bud.eps_trial,
                                            bud.delta, plan.stream(cfg, "tune", "score_noise", dataset, mech, eps),
                                            noise)
            best = int(np.argmin(scores))
            chosen[mech][eps] = float(cands[trials[best]])
            eps_run[mech][eps] = bud.eps_final
            per_eps[str(eps)] = {**selection.budget_record(bud), "trials_drawn": len(trials),
                                 "candidates_tried": [float(cands[c]) for c in trials], "best_trial": best,
                                 "chosen": chosen[mech][eps]}
        hp[mech] = {"hparam": hparam, "candidates": list(cands), "selection": "private",
                    "diagnostic": DIAGNOSTIC,
                    "label": selection.LABELS["private"], "score": "clipped validation log-loss + Gaussian noise",
                    "score_clip": float(s["score_clip"]), "final_share": float(s["final_share"]),
                    "trials": dict(s["trials"]), "by_epsilon": per_eps,
                    "trials_drawn": int(sum(v["trials_drawn"] for v in per_eps.values()))}
    return chosen, eps_run, hp


def _selection_fields(cfg: Mapping[str, Any], protocol: str, mech: str, eps: float,
                      ledger: calib.Ledger) -> dict[str, Any]:
    bud = selection.budget(cfg, mech, eps) if protocol == "private" else None
    out = selection.budget_fields(bud, protocol, eps)
    if protocol == "public":
        out.update(eps_end_to_end=ledger.eps_total, delta_end_to_end=ledger.delta_total)
    return out


# ---------------------------------------------------------------------------------------------
# gradient family
# ---------------------------------------------------------------------------------------------


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


def each_protocol(cfg: Mapping[str, Any], dataset: str, data: plan.BenchmarkData,
                  run: Callable[[Tuning], tuple[list[dict[str, Any]], dict[str, Any]]]
                  ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``run`` once per configured selection protocol (:func:`.selection.protocols`) on that
    protocol's tuning data: every protocol's rows, and the selection records by protocol."""
    rows: list[dict[str, Any]] = []
    hps: dict[str, Any] = {}
    for protocol in selection.protocols(cfg):
        r, hps[protocol] = run(tuning_data(cfg, dataset, data, protocol))
        rows += r
    return rows, hps


def run_gradient(cfg: Mapping[str, Any], dataset: str, data: plan.BenchmarkData, log: logging.Logger,
                 noise_scale: float = 1.0, ids: Sequence[str] | None = None
                 ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Select η by each configured protocol (:mod:`.selection`), then train the gradient
    mechanisms ``ids`` on the grid."""
    mechs = tuple(ids if ids is not None else registry.job_groups(cfg)["gradient"])
    return each_protocol(cfg, dataset, data, lambda tun: _run_gradient(cfg, dataset, data, log, noise_scale, mechs, tun))


def _run_gradient(cfg: Mapping[str, Any], dataset: str, data: plan.BenchmarkData, log: logging.Logger,
                  noise_scale: float, mechs: Sequence[str], tun: Tuning) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    b, g = cfg["benchmark"], cfg["benchmark"]["gradient"]
    m_ref, u_ref, _ = plan.reference_cell(cfg)
    start = time.perf_counter()
    cands = [float(e) for e in g["eta_candidates"]]

    def thetas(ms: Sequence[str], eps: float, seeds: int, needed: set[tuple[int, int]] | None
               ) -> dict[str, np.ndarray]:  # one engine batch crosses candidates × seeds: ``needed`` unused
        keys, th, _, _, _ = _gradient_batch(cfg, dataset, tun.X_fit, tun.y_fit, m_ref, u_ref,
                                            [(mech, eps, e) for mech in ms for e in cands], seeds, "tune", noise_scale)
        out = {mech: np.zeros((len(cands), seeds, th.shape[0])) for mech in ms}
        for col, (mech, _, eta, seed) in enumerate(keys):
            out[mech][cands.index(eta), seed] = th[:, col]
        return out

    chosen, eps_run, hp = select(cfg, dataset, tun, mechs, "eta", cands, thetas)
    log.info("%s gradient (%s): selected eta in %.1f s", dataset, tun.protocol, time.perf_counter() - start)
    data = tun.grid
    experiment = "grid" if tun.protocol == "oracle" else f"grid_{tun.protocol}"
    opt = Optimum(data)
    base = _base_row(cfg, dataset, data)
    rows: list[dict[str, Any]] = []
    for m, u in plan.cells(cfg, data.n)[0]:
        start = time.perf_counter()
        settings = [(mech, eps_run[mech][float(e)], chosen[mech][float(e)]) for mech in mechs for e in b["eps_grid"]]
        target = {(mech, eps_run[mech][float(e)]): float(e) for mech in mechs for e in b["eps_grid"]}
        keys, theta, ledgers, part, flops = _gradient_batch(cfg, dataset, data.X, data.y, m, u, settings,
                                                            b["reps"], "grid", noise_scale, experiment)
        seconds = (time.perf_counter() - start) / theta.shape[1]
        out = _outcome(opt, theta, b["lambda"])
        init = opt.loss(np.stack([initial_point(cfg["root_seed"], f"benchmark:{dataset}", r, data.p,
                                                g["init_std"]) for _, _, _, r in keys], axis=1), b["lambda"])
        for i, ((mech, eps_f, eta, rep), led) in enumerate(zip(keys, ledgers, strict=True)):
            eps = target[(mech, eps_f)]
            rows.append({**base, **_mech_row(mech, led, eps), **calib.size_summary(part.sizes[rep]),
                         **_selection_fields(cfg, tun.protocol, mech, eps, led),
                         "partition": plan.fingerprint(part, rep),
                         "mode": calib.GRADIENT[mech][1], "m": m, "u": float(u), "rep": rep,
                         "eta": eta, "eta_source": "tuned", "T": g["T"], "lambda": b["lambda"],
                         "dtype": g["dtype"], "hparam": "eta", "hparam_value": eta,
                         "init_loss": float(init[i]), "seconds": seconds, "flops": float(flops[i]),
                         **{k: float(v[i]) for k, v in out.items()}})
        log.info("%s gradient (m=%d, u=%d): %d runs in %.1f s", dataset, m, u, theta.shape[1],
                 seconds * theta.shape[1])
    return rows, hp


# ---------------------------------------------------------------------------------------------
# output / voting family (+ the non-private reference θ*)
# ---------------------------------------------------------------------------------------------


def _output_models(data: plan.BenchmarkData, X: np.ndarray, y: np.ndarray, parts: list[np.ndarray],
                   lam: float) -> dict[str, np.ndarray]:
    """The exact pre-noise release of every output mechanism for one partition and λ."""
    task = voting.Task(data.X_aux, np.zeros(len(data.X_aux)), X, y, data.X_test, data.y_test, 2)
    W_loc = voting.local_models(task, parts, lam)
    vote_t, soft_t = voting.vote_targets(voting.predict(W_loc, data.X_aux, 2), 2)
    w_vote, w_soft = voting.global_models(data.X_aux, [vote_t, soft_t], lam, 2)
    w_avg = W_loc.mean(axis=0)
    return {"jayaraman_output": w_avg, "pathak": w_avg, "param_avg": w_avg,
            "hamm_vote": w_vote, "hamm_soft": w_soft}


def _output_release(cfg: Mapping[str, Any], dataset: str, mech: str, w: np.ndarray, eps: float,
                    lam: float, m: int, u: int, n_min: int, rep: int, tag: str,
                    noise: bool = True) -> tuple[np.ndarray, calib.Ledger, float]:
    """θ + η with η ~ N-L2(ε/Δ₂) (spec §0.4) from the run's own stream; the ledger; ‖η‖."""
    ledger, cal = calib.output_ledger(mech, eps, w.size, lam, m, n_min)
    gen = plan.stream(cfg, tag, "output_noise", dataset, mech, m, u, float(eps), rep)
    eta = op.draw_noise(gen, cal, w.shape) if noise else np.zeros_like(w)
    return w + eta, ledger, float(np.linalg.norm(eta))


def run_output(cfg: Mapping[str, Any], dataset: str, data: plan.BenchmarkData, log: logging.Logger,
               noise: bool = True, ids: Sequence[str] | None = None
               ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Select λ by each configured protocol, then release the output/voting mechanisms ``ids`` on the
    grid (a reference-family id among them adds the non-private θ* rows)."""
    ids = tuple(ids if ids is not None else registry.job_groups(cfg)["output"])
    return each_protocol(cfg, dataset, data, lambda tun: _run_output(cfg, dataset, data, log, noise, ids, tun))


def _run_output(cfg: Mapping[str, Any], dataset: str, data: plan.BenchmarkData, log: logging.Logger,
                noise: bool, ids: Sequence[str], tun: Tuning) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    b = cfg["benchmark"]
    refs = [m for m in ids if registry.get(m).family == "reference"]
    mechs = [m for m in ids if m not in refs]
    m_ref, u_ref, _ = plan.reference_cell(cfg)
    cands = [float(x) for x in b["output"]["lambda_candidates"]]
    start = time.perf_counter()

    def thetas(ms: Sequence[str], eps: float, seeds: int, needed: set[tuple[int, int]] | None
               ) -> dict[str, np.ndarray]:
        part = plan.partitions(cfg, dataset, len(tun.y_fit), m_ref, u_ref, seeds, "tune")
        out = {mech: np.zeros((len(cands), seeds, data.p)) for mech in ms}
        for s in range(seeds):
            parts = part.party_indices(s)
            for c, lam in enumerate(cands):
                if needed is not None and (c, s) not in needed:
                    continue
                models = _output_models(data, tun.X_fit, tun.y_fit, parts, lam)
                for mech in ms:
                    out[mech][c, s], _, _ = _output_release(cfg, dataset, mech, models[mech], eps, lam, m_ref, u_ref,
                                                            int(part.sizes[s].min()), s, "tune", noise)
        return out

    chosen, eps_run, hp = select(cfg, dataset, tun, mechs, "lambda", cands, thetas)
    for ref in refs:
        hp[ref] = {"hparam": "none", "candidates": [], "seeds": 0, "val_accuracy": [], "chosen": float(b["lambda"]),
                   "selection": "none (non-private reference)"}
    log.info("%s output (%s): selected lambda in %.1f s", dataset, tun.protocol, time.perf_counter() - start)
    data = tun.grid
    noise_tag = "grid" if tun.protocol == "oracle" else f"grid_{tun.protocol}"
    opt = Optimum(data)
    base = _base_row(cfg, dataset, data)
    rows: list[dict[str, Any]] = []
    lam_np = float(b["lambda"])
    np_out = _outcome(opt, opt.theta(lam_np)[:, None], lam_np)
    for m, u in plan.cells(cfg, data.n)[0]:
        start = time.perf_counter()
        part = plan.partitions(cfg, dataset, data.n, m, u, b["reps"], "grid")
        cell_rows = []
        for rep in range(b["reps"]):
            parts = part.party_indices(rep)
            sizes = calib.size_summary(part.sizes[rep])
            common = {**base, **sizes, "mode": "output_perturbation", "m": m, "u": float(u), "rep": rep,
                      "partition": plan.fingerprint(part, rep),
                      "T": 0, "dtype": "float64"}
            for ref, eps in ((ref, eps) for ref in refs for eps in b["eps_grid"]):
                cell_rows.append({**common, **_mech_row(ref, calib.NONPRIVATE, eps),
                                  **selection.budget_fields(None, tun.protocol, eps),
                                  "mode": "central", "lambda": lam_np, "hparam": "none",
                                  "hparam_value": math.nan, **{k: float(v[0]) for k, v in np_out.items()}})
            lams = sorted({lam for mech in mechs for lam in chosen[mech].values()})
            for lam in lams:
                models = _output_models(data, data.X, data.y, parts, lam)
                for mech in mechs:
                    released, info = [], []
                    for eps in (float(e) for e in b["eps_grid"] if chosen[mech][float(e)] == lam):
                        theta, led, norm = _output_release(cfg, dataset, mech, models[mech], eps_run[mech][eps], lam,
                                                           m, u, sizes["n_min"], rep, noise_tag, noise)
                        released.append(theta)
                        info.append((eps, led, norm))
                    if not released:
                        continue
                    out = _outcome(opt, np.stack(released, axis=1), lam)
                    for i, (eps, led, norm) in enumerate(info):
                        cell_rows.append({**common, **_mech_row(mech, led, eps), "lambda": lam,
                                          **_selection_fields(cfg, tun.protocol, mech, eps, led),
                                          "hparam": "lambda", "hparam_value": lam, "noise_norm": norm,
                                          **{k: float(v[i]) for k, v in out.items()}})
        seconds = (time.perf_counter() - start) / max(len(cell_rows), 1)
        rows += [{**r, "seconds": seconds} for r in cell_rows]
        log.info("%s output (m=%d, u=%d): %d rows in %.1f s", dataset, m, u, len(cell_rows),
                 seconds * len(cell_rows))
    return rows, hp


# ---------------------------------------------------------------------------------------------
# ADMM family
# ---------------------------------------------------------------------------------------------


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


def run_admm(cfg: Mapping[str, Any], dataset: str, data: plan.BenchmarkData, log: logging.Logger,
             noise: bool = True, ids: Sequence[str] | None = None
             ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Select the ADMM penalty by each configured protocol, then run DVP/PVP (``ids``) on the grid."""
    mechs = tuple(ids if ids is not None else registry.job_groups(cfg)["admm"])
    return each_protocol(cfg, dataset, data, lambda tun: _run_admm(cfg, dataset, data, log, noise, mechs, tun))


def _run_admm(cfg: Mapping[str, Any], dataset: str, data: plan.BenchmarkData, log: logging.Logger,
              noise: bool, mechs: Sequence[str], tun: Tuning) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    b, a = cfg["benchmark"], cfg["benchmark"]["admm"]
    m_ref, u_ref, _ = plan.reference_cell(cfg)
    cands = [float(x) for x in a["penalty_candidates"]]
    start = time.perf_counter()

    def thetas(ms: Sequence[str], eps: float, seeds: int, needed: set[tuple[int, int]] | None
               ) -> dict[str, np.ndarray]:
        part = plan.partitions(cfg, dataset, len(tun.y_fit), m_ref, u_ref, seeds, "tune")
        out = {mech: np.zeros((len(cands), seeds, data.p)) for mech in ms}
        graphs = [(part.party_indices(s), s, [(mech, eps, c) for mech in ms for i, c in enumerate(cands)
                                              if needed is None or (i, s) in needed]) for s in range(seeds)]
        graphs = [g for g in graphs if g[2]]
        batches = _admm_batch(cfg, dataset, tun.X_fit, tun.y_fit, m_ref, u_ref, graphs, "tune", noise) if graphs else []
        for (_, s, settings), (theta, _, _) in zip(graphs, batches, strict=True):
            for k, (mech, _, c) in enumerate(settings):
                out[mech][cands.index(c), s] = theta[:, k]
        return out

    chosen, eps_run, hp = select(cfg, dataset, tun, mechs, "admm_penalty", cands, thetas)
    log.info("%s admm (%s): selected penalty in %.1f s", dataset, tun.protocol, time.perf_counter() - start)
    data = tun.grid
    noise_tag = "grid" if tun.protocol == "oracle" else f"grid_{tun.protocol}"
    opt = Optimum(data)
    base = _base_row(cfg, dataset, data)
    lam = float(b["lambda"])
    rows: list[dict[str, Any]] = []
    for m, u in plan.cells(cfg, data.n)[0]:
        start = time.perf_counter()
        part = plan.partitions(cfg, dataset, data.n, m, u, b["reps"], "grid")
        settings = [(mech, eps_run[mech][float(eps)], chosen[mech][float(eps)]) for mech in mechs
                    for eps in b["eps_grid"]]
        targets = [float(eps) for _ in mechs for eps in b["eps_grid"]]
        cell_rows = []
        batches = _admm_batch(cfg, dataset, data.X, data.y, m, u,
                              [(part.party_indices(rep), rep, settings) for rep in range(b["reps"])],
                              "grid", noise, noise_tag)
        for rep, (theta, res, ledgers) in enumerate(batches):
            out = _outcome(opt, theta, lam)
            sizes = calib.size_summary(part.sizes[rep])
            for k, ((mech, _, pen), led, eps) in enumerate(zip(settings, ledgers, targets, strict=True)):
                # PVP: the sensitivity its noise is calibrated to, Δ_p/(1 − r) (spec I-20)
                sens = float(res.sensitivity[k]) / (1.0 - calib.pvp_hidden_gain_max(
                    float(b["lambda"]) * a["C_R"] * m, m, pen, a["topology"]) if mech == "pvp" else 1.0)
                led = calib.Ledger(led.accountant, sens, math.nan, float(res.zeta[k]),
                                   led.alpha_step, led.eps_total, led.delta_total, led.scope)
                cell_rows.append({**base, **sizes, **_mech_row(mech, led, eps), "mode": "decentralised",
                                  **_selection_fields(cfg, tun.protocol, mech, eps, led),
                                  "partition": plan.fingerprint(part, rep),
                                  "m": m, "u": float(u), "rep": rep, "T": a["T"], "lambda": lam,
                                  "dtype": "float64", "hparam": "admm_penalty", "hparam_value": pen,
                                  **{key: float(v[k]) for key, v in out.items()}})
        seconds = (time.perf_counter() - start) / max(len(cell_rows), 1)
        rows += [{**r, "seconds": seconds} for r in cell_rows]
        log.info("%s admm (m=%d, u=%d): %d runs in %.1f s", dataset, m, u, len(cell_rows),
                 seconds * len(cell_rows))
    return rows, hp


# ---------------------------------------------------------------------------------------------
# jobs
# ---------------------------------------------------------------------------------------------

def run_batch_mechanism(cfg: Mapping[str, Any], dataset: str, data: plan.BenchmarkData, mech: BatchMechanism,
                        log: logging.Logger) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The whole job of a :class:`~mpdp.studies.benchmark.interface.BatchMechanism` (spec E10).

    Selection by each configured protocol (:mod:`.selection`; the candidates on the tuning fit
    records at the reference cell, tuning streams only); then every cell, repetition and ε of the
    grid, one :meth:`train_batch` call per (cell, repetition) on the same partitions as every other
    mechanism, each run with its own noise stream.
    """
    cands = [float(c) for c in mech.candidates(cfg)]
    budget = len(cfg["benchmark"]["gradient"]["eta_candidates"])
    if len(cands) != budget:
        raise ConfigError(f"benchmark mechanism {mech.id!r} has {len(cands)} candidates of {mech.hparam}; every "
                          f"mechanism gets the same selection budget, {budget} (benchmark.gradient.eta_candidates)")
    return each_protocol(cfg, dataset, data, lambda tun: _run_batch_mechanism(cfg, dataset, data, mech, log, cands, tun))


def _run_batch_mechanism(cfg: Mapping[str, Any], dataset: str, data: plan.BenchmarkData, mech: BatchMechanism,
                         log: logging.Logger, cands: list[float], tun: Tuning
                         ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    b = cfg["benchmark"]
    m_ref, u_ref, _ = plan.reference_cell(cfg)
    start = time.perf_counter()

    def runs_for(tag: str, sizes: np.ndarray, m: int, u: int, rep: int,
                 settings: Sequence[tuple[float, float]], noise_tag: str = "") -> list[Run]:
        keys = [plan.stream_key(noise_tag or tag, "noise", dataset, mech.id, m, u, float(eps), float(h), rep)
                for eps, h in settings]
        return [Run(float(eps), float(h), rep, mech.ledger(cfg, float(eps), sizes, float(h), data.p),
                    rng(cfg["root_seed"], *key), key) for (eps, h), key in zip(settings, keys, strict=True)]

    def thetas(ms: Sequence[str], eps: float, seeds: int, needed: set[tuple[int, int]] | None
               ) -> dict[str, np.ndarray]:
        part = plan.partitions(cfg, dataset, len(tun.y_fit), m_ref, u_ref, seeds, "tune")
        out = np.zeros((len(cands), seeds, data.p))
        for s in range(seeds):
            idx = [i for i in range(len(cands)) if needed is None or (i, s) in needed]
            runs = runs_for("tune", part.sizes[s], m_ref, u_ref, s, [(eps, cands[i]) for i in idx])
            out[idx, s] = mech.train_batch(cfg, tun.X_fit, tun.y_fit, part.party_indices(s), runs).T
        return {mech.id: out}

    chosen_by, eps_run, hp = select(cfg, dataset, tun, [mech.id], mech.hparam, cands, thetas)
    log.info("%s %s (%s): selected %s in %.1f s", dataset, mech.id, tun.protocol, mech.hparam,
             time.perf_counter() - start)
    data = tun.grid
    noise_tag = "grid" if tun.protocol == "oracle" else f"grid_{tun.protocol}"
    opt = Optimum(data)
    base = _base_row(cfg, dataset, data)
    rows: list[dict[str, Any]] = []
    grid_eps = [float(e) for e in b["eps_grid"]]
    for m, u in plan.cells(cfg, data.n)[0]:
        start = time.perf_counter()
        part = plan.partitions(cfg, dataset, data.n, m, u, b["reps"], "grid")
        cell_rows = []
        for rep in range(b["reps"]):
            for chosen in sorted(set(chosen_by[mech.id].values())):
                eps_list = [e for e in grid_eps if chosen_by[mech.id][e] == chosen]
                runs = runs_for("grid", part.sizes[rep], m, u, rep, [(eps_run[mech.id][e], chosen) for e in eps_list],
                                noise_tag)
                lam = mech.lam(cfg, chosen)
                out = _outcome(opt, mech.train_batch(cfg, data.X, data.y, part.party_indices(rep), runs), lam)
                common = {**base, **calib.size_summary(part.sizes[rep]), "mode": mech.family, "m": m,
                          "u": float(u), "rep": rep, "partition": plan.fingerprint(part, rep), "T": 0,
                          "dtype": "float64", "lambda": lam, "hparam": mech.hparam, "hparam_value": chosen,
                          **mech.row_fields(cfg, chosen)}
                for k, (run, eps) in enumerate(zip(runs, eps_list, strict=True)):
                    cell_rows.append({**common, **_mech_row(mech.id, run.ledger, eps),
                                      **_selection_fields(cfg, tun.protocol, mech.id, eps, run.ledger),
                                      **{key: float(v[k]) for key, v in out.items()}})
        seconds = (time.perf_counter() - start) / max(len(cell_rows), 1)
        rows += [{**r, "seconds": seconds} for r in cell_rows]
    return rows, hp


#: the papers' three training families and the function that trains all of a family's configured
#: mechanisms in one job
FAMILY_RUNNERS = {"gradient": run_gradient, "output": run_output, "admm": run_admm}


def run_job(cfg: Mapping[str, Any], dataset: str, data: plan.BenchmarkData, ids: Sequence[str],
            log: logging.Logger) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Train the mechanisms ``ids`` of one job (one family, or one added mechanism): a family of the
    papers by its runner, a :class:`~.interface.BatchMechanism` by the common protocol
    (:func:`run_batch_mechanism`), any other mechanism by its own ``train_job`` hook."""
    mech = registry.get(ids[0])
    if isinstance(mech, FamilyMechanism):
        return FAMILY_RUNNERS[mech.job](cfg, dataset, data, log, ids=ids)
    if isinstance(mech, BatchMechanism):
        return run_batch_mechanism(cfg, dataset, data, mech, log)
    return mech.train_job(cfg, dataset, data, ids, log)


def family_job(cfg: Mapping[str, Any], dataset: str, group: str, processed_dir: Path, out: Path,
               hparams_out: Path, log: logging.Logger) -> None:
    """One Snakemake job: every mechanism of ``group`` on every cell of ``dataset``."""
    data = plan.load_data(cfg, dataset, processed_dir)
    kept, skipped = plan.cells(cfg, data.n)
    log.info("%s: %d private records (of %d before the cap), %d auxiliary, p = %d; cells %s",
             dataset, data.n, data.n_available, len(data.X_aux), data.p, kept)
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
                   "n_private": data.n, "n_private_before_cap": data.n_available,
                   "n_aux": len(data.X_aux)}, hparams_out)


def collect(dataset: str, cfg: Mapping[str, Any], parts: Sequence[Path], hparams: Sequence[Path],
            out: Path, hparams_out: Path) -> None:
    """Concatenate a data set's job parts into its table and one hyper-parameter record."""
    frame = pd.concat([results.read(p, EXTRA_COLUMNS) for p in parts], ignore_index=True)
    order = {m.id: i for i, m in enumerate(registry.configured(cfg))}
    porder = {p: i for i, p in enumerate(selection.protocols(cfg))}
    frame = (frame.assign(_o=frame["mechanism"].map(order), _p=frame["selection"].map(porder))
             .sort_values(["_p", "_o", "epsilon", "m", "u", "rep"], kind="stable").drop(columns=["_o", "_p"]))
    results.write(frame.reset_index(drop=True), out, EXTRA_COLUMNS)
    records = [io.read_json(h) for h in hparams]
    by_protocol: dict[str, dict[str, Any]] = {}
    for r in records:
        for protocol, mechs in r["mechanisms"].items():
            by_protocol.setdefault(protocol, {}).update(mechs)
    m_ref, u_ref, eps_ref = plan.reference_cell(cfg)
    s = cfg["benchmark"]["selection"]
    io.write_json({
        "dataset": dataset, "protocol": PROTOCOL, "selection": s["protocol"],
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
    }, hparams_out)
