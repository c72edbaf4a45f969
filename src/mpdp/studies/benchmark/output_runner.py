"""The output/voting family of the benchmark (M1a reference, M5, M6a, M6b, M11, M12; spec E10):
local exact minimisers, votes and global minimisers of :mod:`mpdp.models.voting_erm` once per
(cell, repetition, λ); the ε grid only draws N-L2 noise (:mod:`mpdp.mechanisms.output_perturbation`).
Knob: λ. Under the private protocol the party-level mechanisms take their own path
(:func:`_run_output_party`, :mod:`mpdp.studies.benchmark.selection`).
"""

from __future__ import annotations

import functools
import logging
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mpdp.mechanisms import output_perturbation as op
from mpdp.models.voting_erm import global_models, local_models, predict, vote_targets
from mpdp.studies.benchmark import calibration as calib
from mpdp.studies.benchmark import plan, registry, runner, selection


def _output_models(data: plan.BenchmarkData, X: np.ndarray, y: np.ndarray, parts: list[np.ndarray],
                   lam: float) -> dict[str, np.ndarray]:
    """The exact pre-noise release of every output mechanism for one partition and λ."""
    W_loc = local_models(X, y, parts, lam, 2)
    vote_t, soft_t = vote_targets(predict(W_loc, data.X_aux, 2), 2)
    w_vote, w_soft = global_models(data.X_aux, [vote_t, soft_t], lam, 2)
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


def run_output(cfg: Mapping[str, Any], dataset: str, data: plan.BenchmarkData | plan.Repetitions,
               log: logging.Logger, noise: bool = True, ids: Sequence[str] | None = None
               ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Select λ by each configured protocol, then release the output/voting mechanisms ``ids`` on the
    grid (a reference-family id among them adds the non-private θ* rows)."""
    ids = tuple(ids if ids is not None else registry.job_groups(cfg)["output"])
    reps = runner.repetitions(cfg, data)
    return runner.each_protocol(cfg, dataset, reps, lambda tuns: _run_output(cfg, dataset, reps, log, noise, ids, tuns))


def _run_output(cfg: Mapping[str, Any], dataset: str, data: plan.Repetitions, log: logging.Logger,
                noise: bool, ids: Sequence[str], tuns: list[runner.Tuning]
                ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    b = cfg["benchmark"]
    protocol = tuns[0].protocol
    refs = [m for m in ids if registry.get(m).family == "reference"]
    party: list[str] = []
    if protocol == "private":
        party = [m for m in ids if m not in refs and selection.releases_selected_trial(m)]
    mechs = [m for m in ids if m not in refs and m not in party]
    if party:
        party_rows, party_hp = _run_output_party(cfg, dataset, data, log, noise, party, tuns)
    else:
        party_rows, party_hp = [], {}
    m_ref, u_ref, _ = plan.reference_cell(cfg)
    cands = [float(x) for x in b["output"]["lambda_candidates"]]
    lam_np = float(b["lambda"])

    def thetas_for(tun: runner.Tuning) -> runner.ThetaFn:
        def thetas(ms: Sequence[str], eps: float, seeds: int, needed: set[tuple[int, int]] | None
                   ) -> dict[str, np.ndarray]:
            part = plan.partitions(cfg, tun.label, len(tun.y_fit), m_ref, u_ref, seeds, "tune")
            out = {mech: np.zeros((len(cands), seeds, data.p)) for mech in ms}
            for s in range(seeds):
                parts = part.party_indices(s)
                for c, lam in enumerate(cands):
                    if needed is not None and (c, s) not in needed:
                        continue
                    models = _output_models(tun.grid, tun.X_fit, tun.y_fit, parts, lam)
                    for mech in ms:
                        out[mech][c, s], _, _ = _output_release(cfg, tun.label, mech, models[mech], eps, lam, m_ref,
                                                                u_ref, int(part.sizes[s].min()), s, "tune", noise)
            return out
        return thetas

    def cell(grid: runner.Grid, m: int, u: int) -> list[dict[str, Any]]:
        eps_run, gdata = grid.eps_run, grid.data
        np_outs = [runner.outcome(opt, opt.theta(lam_np)[:, None], lam_np) for opt in grid.opt[:1 if gdata.shared
                                                                                               else gdata.reps]]
        part = plan.partitions(cfg, dataset, gdata.n, m, u, b["reps"], "grid", gdata.partition_rows())
        cell_rows = []
        for rep in range(b["reps"]):
            chosen, opt, np_out = grid.chosen[rep], grid.opt[rep], np_outs[0 if gdata.shared else rep]
            parts = part.party_indices(rep)
            sizes = calib.size_summary(part.sizes[rep])
            common = {**grid.base[rep], **sizes, "mode": "output_perturbation", "m": m, "u": float(u), "rep": rep,
                      "partition": plan.fingerprint(part, rep),
                      "T": 0, "dtype": "float64"}
            for ref, eps in ((ref, eps) for ref in refs for eps in b["eps_grid"]):
                cell_rows.append({**common, **runner.mech_row(ref, calib.NONPRIVATE, eps),
                                  **selection.budget_fields(None, grid.protocol, eps),
                                  "mode": "central", "lambda": lam_np, "hparam": "none",
                                  "hparam_value": math.nan, **{k: float(v[0]) for k, v in np_out.items()}})
            lams = sorted({lam for mech in mechs for lam in chosen[mech].values()})
            for lam in lams:
                models = _output_models(gdata.rep(rep), gdata.X, gdata.y, parts, lam)
                for mech in mechs:
                    released, info = [], []
                    for eps in (float(e) for e in b["eps_grid"] if chosen[mech][float(e)] == lam):
                        theta, led, norm = _output_release(cfg, dataset, mech, models[mech], eps_run[mech][eps], lam,
                                                           m, u, sizes["n_min"], rep, grid.noise_tag, noise)
                        released.append(theta)
                        info.append((eps, led, norm))
                    if not released:
                        continue
                    out = runner.outcome(opt, np.stack(released, axis=1), lam)
                    for i, (eps, led, norm) in enumerate(info):
                        cell_rows.append({**common, **runner.mech_row(mech, led, eps), "lambda": lam,
                                          **runner.selection_fields(cfg, grid.protocol, mech, eps, led),
                                          "hparam": "lambda", "hparam_value": lam, "noise_norm": norm,
                                          **{k: float(v[i]) for k, v in out.items()}})
        return cell_rows

    rows, hp = runner.select_then_grid(cfg, dataset, tuns, data, log, "output", mechs, "lambda", cands, thetas_for,
                                       cell)
    for ref in refs:
        hp[ref] = {"hparam": "none", "candidates": [], "seeds": 0, "val_accuracy": [], "chosen": lam_np,
                   "selection": "none (non-private reference)"}
    return rows + party_rows, {**hp, **party_hp}


def _run_output_party(cfg: Mapping[str, Any], dataset: str, data: plan.Repetitions, log: logging.Logger,
                      noise: bool, mechs: Sequence[str], tuns: list[runner.Tuning]
                      ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The private protocol of the party-level output mechanisms (:mod:`.selection`, issues 43, 58).

    The validation split of each repetition's tuning data (one for the fixed split) is held out of
    every party; per (cell, repetition, ε) the
    K ~ TNB trials release the mechanism at ε_t on **the row's own partition** of the fit records,
    each with its own noise stream, are scored by the clipped log-loss on the validation records
    plus Gaussian noise for one validation record at (ε_s, δ) (:func:`.selection.noisy_scores`,
    :func:`.selection.validation_budget`), and the best trial is the row's release. The selection is
    part of the released procedure, so its draws (K, the candidates, every trial's noise, the score
    noise) come from the repetition's own evaluated streams (tag ``grid_private``). A split per
    repetition: repetition r's fit and validation records are those of its own private pool.
    """
    b, s = cfg["benchmark"], cfg["benchmark"]["selection"]
    cands = [float(x) for x in b["output"]["lambda_candidates"]]
    clip = float(s["score_clip"])
    held = runner.held_out(cfg, data, tuns)
    vals = [(t.X_val, t.y_val) for t in tuns] * (data.reps if data.shared else 1)
    opts = [runner.Optimum(v) for v in held.data[:1 if held.shared else held.reps]]
    bases = [runner.base_row(cfg, dataset, v) for v in held.data[:len(opts)]]
    grid_eps = [float(e) for e in b["eps_grid"]]
    rows: list[dict[str, Any]] = []
    drawn = {mech: 0 for mech in mechs}
    for m, u in plan.cells(cfg, held.n)[0]:
        start = time.perf_counter()
        part = plan.partitions(cfg, dataset, held.n, m, u, b["reps"], "grid_party", held.partition_rows())
        cell_rows = []
        for rep in range(b["reps"]):
            k_view = 0 if held.shared else rep
            opt, base, (X_val, y_val) = opts[k_view], bases[k_view], vals[rep]
            parts = part.party_indices(rep)
            sizes = calib.size_summary(part.sizes[rep])
            view = held.rep(rep)
            models = functools.cache(lambda lam, parts=parts, view=view: _output_models(view, held.X, held.y, parts, lam))
            common = {**base, **sizes, "mode": "output_perturbation", "m": m, "u": float(u), "rep": rep,
                      "partition": plan.fingerprint(part, rep), "T": 0, "dtype": "float64", "hparam": "lambda"}
            for mech in mechs:
                for eps in grid_eps:
                    bud = selection.budget(cfg, mech, eps)
                    trials = selection.draw_trials(plan.stream(cfg, "grid_private", "selection_party", dataset, mech,
                                                               eps, m, u, rep), cfg, len(cands))
                    drawn[mech] += len(trials)
                    released = []
                    for k, c in enumerate(trials):
                        w = models(cands[c])[mech]
                        led, cal = calib.output_ledger(mech, bud.eps_trial, w.size, cands[c], m, sizes["n_min"])
                        gen = plan.stream(cfg, "grid_private", "trial_noise", dataset, mech, m, u, eps, rep, k)
                        eta = op.draw_noise(gen, cal, w.shape) if noise else np.zeros_like(w)
                        released.append((w + eta, led, float(np.linalg.norm(eta)), cands[c]))
                    scores = selection.noisy_scores(
                        np.stack([r[0] for r in released], axis=1), X_val, y_val, clip, bud.eps_score, bud.delta,
                        plan.stream(cfg, "grid_private", "score_noise_party", dataset, mech, eps, m, u, rep), noise)
                    theta, led, norm, lam = released[int(np.argmin(scores))]
                    out = runner.outcome(opt, theta[:, None], lam)
                    cell_rows.append({**common, **runner.mech_row(mech, led, eps), "lambda": lam,
                                      **runner.selection_fields(cfg, "private", mech, eps, led),
                                      "hparam_value": lam, "noise_norm": norm,
                                      **{key: float(v[0]) for key, v in out.items()}})
        seconds = (time.perf_counter() - start) / max(len(cell_rows), 1)
        rows += [{**r, "seconds": seconds} for r in cell_rows]
        log.info("%s output, party level (m=%d, u=%d): %d rows in %.1f s", dataset, m, u, len(cell_rows),
                 seconds * len(cell_rows))
    hp = {mech: {"hparam": "lambda", "candidates": cands, "selection": "private", "label": selection.LABELS["private"],
                 "privacy_unit": "party", "diagnostic": runner.DIAGNOSTIC,
                 "validation": selection.VALIDATION["party"], "n_validation": len(tuns[0].y_val),
                 "trials_on": "the partition of the released row (per cell and repetition)",
                 "released": "the selected trial (Papernot & Steinke 2022), no final run",
                 "score": "clipped validation log-loss + Gaussian noise for one validation record at (eps_score, "
                          "delta)",
                 "score_clip": clip, "trials": dict(s["trials"]),
                 "by_epsilon": {str(eps): {**selection.budget_record(selection.budget(cfg, mech, eps)),
                                           "slack": selection.slack(cfg, mech, eps)} for eps in grid_eps},
                 "trials_drawn": drawn[mech]} for mech in mechs}
    return rows, hp
