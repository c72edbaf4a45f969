"""One voting-study table: local classifiers, votes, global ERMs, then noise over the ε grid (spec E5).

Per (M, repetition) the M local classifiers are fitted as one batched exact problem
(:mod:`mpdp.models.batched_erm`), the votes on the auxiliary pool and the global minimisers
``w_s`` (Alg. 1 on voted labels, Alg. 2 on soft labels, the parameter average) are computed
once, and the ε grid only draws noise (spec E5 "performance"). Every row records the privacy
unit, the sensitivity and the β actually used (spec I-12).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import log_expit, logsumexp

from mpdp import bounds, results
from mpdp.data.prepare import load, load_classes
from mpdp.errors import InputDataError
from mpdp.mechanisms import output_perturbation as op
from mpdp.models.batched_erm import (
    fit_logistic_batch,
    fit_softmax_batch,
    predict_binary,
    predict_class,
    stack_problems,
)
from mpdp.seeding import rng
from mpdp.studies.voting.plan import (
    CONTROLS,
    EXTRA_COLUMNS,
    PRIVATE_BINARY,
    PRIVATE_MULTICLASS,
    aux_split,
    dataset_of,
    feasible_M,
    party_split,
)


@dataclass(frozen=True)
class Task:
    """Data of one table: auxiliary pool, private pool, test set, labels as class codes or ±1."""

    X_aux: np.ndarray
    y_aux: np.ndarray  # true labels of the pool: only for the non-private λ validation
    X_priv: np.ndarray
    y_priv: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    n_classes: int  # 2: labels ±1; K > 2: class codes 0..K-1

    @property
    def multiclass(self) -> bool:
        return self.n_classes > 2


# ---------------------------------------------------------------------------------------------
# model-agnostic helpers (binary W: (..., d); multiclass W: (..., d, K))
# ---------------------------------------------------------------------------------------------


def targets(labels: np.ndarray, n_classes: int) -> np.ndarray:
    """Hard labels as soft targets: (y + 1)/2 (binary ±1) or one-hot rows (multiclass codes)."""
    if n_classes == 2:
        return (labels.astype(float) + 1.0) / 2.0
    return np.eye(n_classes)[labels]


def fit(X: np.ndarray, c: np.ndarray, t: np.ndarray, lam: float, n_classes: int,
        init: np.ndarray | None = None) -> np.ndarray:
    """Exact batched minimisers of the (soft-target) logistic or softmax objectives.

    ``init`` is a warm start (e.g. the pooled model for the local ones): it saves Newton
    iterations and does not change the (unique) minimiser.
    """
    if n_classes == 2:
        return fit_logistic_batch(X, c, t, lam, init=init)
    return fit_softmax_batch(X, c, t, lam, init=init)


def predict(W: np.ndarray, X: np.ndarray, n_classes: int) -> np.ndarray:
    """Labels (±1 or class codes) of models ``W`` on rows ``X``: shape ``(*W.shape[:-1 or -2], n)``."""
    return predict_binary(W, X) if n_classes == 2 else predict_class(W, X)


def objective(W: np.ndarray, X: np.ndarray, t: np.ndarray, lam: float, n_classes: int) -> np.ndarray:
    """Mean (soft-target) loss on shared rows ``X`` plus (λ/2)‖w‖², for a stack of models ``W``.

    Binary: spec M12 eq. (14)/(19); multiclass: the (55) form of B.3 (I-14).
    """
    if n_classes == 2:
        z = W @ X.T
        data = -(t * log_expit(z) + (1.0 - t) * log_expit(-z)).mean(axis=-1)
        return data + 0.5 * lam * np.sum(W * W, axis=-1)
    Z = np.einsum("nd,...dk->...nk", X, W)
    data = (logsumexp(Z, axis=-1) - np.einsum("nk,...nk->...n", t, Z)).mean(axis=-1)
    return data + 0.5 * lam * np.sum(W * W, axis=(-2, -1))


def vote_targets(preds: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """(majority-vote targets, soft-vote targets) from local predictions ``preds`` of shape (M, N).

    Binary (M11, M12): v = sign(Σ_j h_j) with ties → +1, α = fraction voting +1.
    Multiclass (M13): v = argmax of the vote counts (ties → smallest class), α^k = count_k/M.
    """
    M = preds.shape[0]
    if n_classes == 2:
        alpha = (preds == 1).mean(axis=0)
        vote = np.where(preds.sum(axis=0) >= 0, 1.0, 0.0)
        return vote, alpha
    counts = np.stack([(preds == k).sum(axis=0) for k in range(n_classes)], axis=1)
    return np.eye(n_classes)[np.argmax(counts, axis=1)], counts / M


def error(pred: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Error rate of predictions (last axis = records)."""
    return (pred != labels).mean(axis=-1)


# ---------------------------------------------------------------------------------------------
# the job
# ---------------------------------------------------------------------------------------------


def load_task(processed_dir: Path, table: str, cfg: Mapping[str, Any]) -> tuple[Task, dict[str, Any]]:
    """Split the prepared data set into auxiliary pool, private pool and test set (spec E5)."""
    dataset, multi = dataset_of(table)
    data = load(Path(processed_dir))
    y_train, y_test = np.asarray(data.y_train), np.asarray(data.y_test)
    n_classes = 2
    if multi:
        y_train, y_test, names = load_classes(Path(processed_dir))
        n_classes = len(names)
    X_train = np.asarray(data.X_train, dtype=np.float64)
    n_total = data.card["n_train"] + data.card["n_test"]
    aux, priv = aux_split(len(X_train), n_total, cfg["voting"]["aux_frac"], cfg["root_seed"], dataset)
    task = Task(
        X_train[aux], y_train[aux], X_train[priv], y_train[priv],
        np.asarray(data.X_test, dtype=np.float64), y_test, n_classes,
    )
    return task, data.card


def local_models(task: Task, parts: list[np.ndarray], lam_loc: float, init: np.ndarray | None = None) -> np.ndarray:
    """The M local classifiers (exact, one batched Newton solve), shape (M, d[, K])."""
    t = targets(task.y_priv, task.n_classes)
    X, c, T = stack_problems([task.X_priv[p] for p in parts], [t[p] for p in parts], dedup=True)
    return fit(X, c, T, lam_loc, task.n_classes, init)


def global_models(X: np.ndarray, soft_targets: list[np.ndarray], lam: float, n_classes: int,
                  init: np.ndarray | None = None) -> np.ndarray:
    """Minimisers of the (soft-label) ERM on the shared rows ``X`` for each target, one batch."""
    Xs, c, T = stack_problems([X] * len(soft_targets), soft_targets, dedup=True)
    return fit(Xs, c, T, lam, n_classes, init)


def select_lambda(task: Task, cfg: Mapping[str, Any], Ms: list[int], table: str, log: logging.Logger,
                  init: np.ndarray | None = None) -> tuple[float, str]:
    """Global λ: the config value, or the grid value with the lowest error of noise-free Alg. 2.

    Validation [REC]: M = ``lambda_ref_M`` (or the largest feasible M below it), repetition 0,
    error of noise-free Alg. 2 against the auxiliary pool's true labels (non-private
    validation, spec E5 "global λ"; its privacy cost is ignored, like E7 #16).
    """
    v = cfg["voting"]
    if v["lambda"] is not None:
        return float(v["lambda"]), "config"
    M_ref = max([m for m in Ms if m <= v["lambda_ref_M"]] or [min(Ms)])
    dataset, _ = dataset_of(table)
    parts = party_split(len(task.X_priv), M_ref, cfg["root_seed"], dataset, 0)
    W_loc = local_models(task, parts, v["lambda_local"], init)
    _, alpha = vote_targets(predict(W_loc, task.X_aux, task.n_classes), task.n_classes)
    errors = {}
    for lam in v["lambda_grid"]:
        w = global_models(task.X_aux, [alpha], lam, task.n_classes, init)[0]
        errors[lam] = float(error(predict(w, task.X_aux, task.n_classes), task.y_aux))
    best = min(v["lambda_grid"], key=lambda lam: (errors[lam], -lam))
    log.info("%s: lambda validation at M=%d: %s -> %g", table, M_ref, errors, best)
    return float(best), "validated"


def run_table(cfg: Mapping[str, Any], table: str, processed_dir: Path, out_path: Path, log: logging.Logger) -> None:
    """Train every mechanism and control of one table and write its results (spec E5)."""
    frame = results.to_frame(table_rows(cfg, table, processed_dir, log), EXTRA_COLUMNS)
    results.write(frame, out_path, EXTRA_COLUMNS)
    log.info("%s: %d rows -> %s", table, len(frame), out_path)


def table_rows(cfg: Mapping[str, Any], table: str, processed_dir: Path, log: logging.Logger) -> list[dict[str, Any]]:
    """All rows of one table."""
    v = cfg["voting"]
    task, card = load_task(processed_dir, table, cfg)
    dataset, _ = dataset_of(table)
    K = task.n_classes
    Ms = feasible_M(v["M_grid"], len(task.X_priv), v["min_party_size"])
    if not Ms:
        raise InputDataError(
            f"{table}: no M of voting.M_grid = {v['M_grid']} leaves >= {v['min_party_size']} "
            f"records per party in the private pool of {len(task.X_priv)}"
        )
    if dropped := [M for M in v["M_grid"] if M not in Ms]:
        log.warning("%s: voting.M_grid: M = %s dropped: the private pool of %d records leaves fewer than "
                    "voting.min_party_size = %d per party", table, dropped, len(task.X_priv), v["min_party_size"])
    lam_loc = float(v["lambda_local"])
    # pooled non-private batch LR on the private pool (control, J* of B5, warm start of the rest)
    t_priv = targets(task.y_priv, K)
    w_pool = global_models(task.X_priv, [t_priv], lam_loc, K)[0]
    lam, lam_source = select_lambda(task, cfg, Ms, table, log, w_pool)
    J_star = float(objective(w_pool, task.X_priv, t_priv, lam_loc, K))
    pooled_error = float(error(predict(w_pool, task.X_test, K), task.y_test))
    base = {
        "dataset": dataset, "experiment": "voting", "mode": "output_perturbation",
        "noise_sharing": "n/a", "delta": 0.0, "T": 0, "G": 1.0, "dtype": "float64",
        "n": len(task.X_priv), "p": task.X_aux.shape[1], "n_classes": K,
        "N_aux": len(task.X_aux), "synthetic": bool(card.get("synthetic", False)),
    }
    rows: list[dict[str, Any]] = []
    for M in Ms:
        for rep in range(v["reps"]):
            start = time.perf_counter()
            rows.extend(_setting_rows(cfg, table, task, M, rep, lam, lam_source, lam_loc, w_pool,
                                      J_star, pooled_error, base))
            log.info("%s: M=%d rep=%d in %.2f s", table, M, rep, time.perf_counter() - start)
    return rows


def _setting_rows(cfg, table, task: Task, M: int, rep: int, lam: float, lam_source: str,
                  lam_loc: float, w_pool, J_star: float, pooled_error: float, base) -> list[dict[str, Any]]:
    """Rows of one (M, repetition): controls once, private mechanisms for every ε."""
    v = cfg["voting"]
    seed = cfg["root_seed"]
    dataset, _ = dataset_of(table)
    K = task.n_classes
    start = time.perf_counter()
    parts = party_split(len(task.X_priv), M, seed, dataset, rep)
    sizes = np.array([len(p) for p in parts])
    W_loc = local_models(task, parts, lam_loc, init=w_pool)
    vote_t, soft_t = vote_targets(predict(W_loc, task.X_aux, K), K)
    w_vote, w_soft = global_models(task.X_aux, [vote_t, soft_t], lam, K, init=w_pool)
    w_avg = W_loc.mean(axis=0)
    H_test = predict(W_loc, task.X_test, K)
    ens_vote, ens_alpha = vote_targets(H_test, K)
    ens_pred = (2 * ens_vote - 1).astype(np.int8) if K == 2 else np.argmax(ens_vote, axis=1)
    t_priv = targets(task.y_priv, K)
    # Theorem 4: held-out pool = test inputs labelled by the ensemble's α; w_0 = w_s(λ) there [REC]
    w0 = global_models(task.X_test, [ens_alpha], lam, K, init=w_soft)[0] if K == 2 else None
    risk_w0 = float(objective(w0, task.X_test, ens_alpha, 0.0, K)) if K == 2 else math.nan
    setting = {**base, "m": M, "M": M, "rep": rep, "n_min": int(sizes.min()), "n_max": int(sizes.max()),
               "size_ratio": float(sizes.sum() / (M * sizes.min()))}
    shared_seconds = time.perf_counter() - start
    rows = []
    controls = {
        "pooled_lr": (pooled_error, lam_loc, "local"),
        "local_mean": (float(error(H_test, task.y_test).mean()), lam_loc, "local"),
        "ensemble": (float(error(ens_pred, task.y_test)), lam_loc, "local"),
        "hamm_vote_np": (float(error(predict(w_vote, task.X_test, K), task.y_test)), lam, lam_source),
        "hamm_soft_np": (float(error(predict(w_soft, task.X_test, K), task.y_test)), lam, lam_source),
        "param_avg_np": (float(error(predict(w_avg, task.X_test, K), task.y_test)), lam_loc, "local"),
    }
    for mech in CONTROLS:
        err, lam_m, src = controls[mech]
        rows.append({**setting, "mechanism": mech, "accountant": "none", "epsilon": math.inf,
                     "eps_claimed": math.inf, "eps_accounted": math.inf, "privacy_unit": "none",
                     "beta": math.inf, "noise": "none", "noise_norm": 0.0, "test_error": err,
                     "accuracy": 1.0 - err, "lambda": lam_m, "lambda_source": src,
                     "seconds": shared_seconds / len(CONTROLS)})
    mechs = PRIVATE_MULTICLASS if K > 2 else PRIVATE_BINARY
    released = {"hamm_vote": (w_vote, lam, lam_source, vote_t), "hamm_soft": (w_soft, lam, lam_source, soft_t)}
    bias = float(objective(w_avg, task.X_priv, t_priv, lam_loc, K)) - J_star
    L_J = (0.5 if K > 2 else bounds.HAMM_C) + lam_loc  # smoothness of the softmax / logistic objective
    for mech in mechs:
        w, lam_m, src, t_aux = released.get(mech, (w_avg, lam_loc, "local", None))
        t0 = time.perf_counter()
        eps_grid = [float(e) for e in v["eps_grid"]]
        cals = [op.calibrate(mech, eps, w.size, lam_m, M, int(sizes.min()), K,
                             v["tight_logistic_sensitivity"], v["code_faithful_laplace"]) for eps in eps_grid]
        noise = np.stack([
            op.draw_noise(rng(seed, "voting", "noise", table, mech, M, eps, rep), cal, w.shape)
            for eps, cal in zip(eps_grid, cals, strict=True)
        ])
        W_p = w[None] + noise
        errs = error(predict(W_p, task.X_test, K), task.y_test)
        extra: dict[str, np.ndarray] = {}
        if t_aux is not None:  # B6: weighted empirical risk gap on the auxiliary pool
            extra["risk_gap"] = objective(W_p, task.X_aux, t_aux, lam_m, K) - objective(w, task.X_aux, t_aux, lam_m, K)
            if K == 2 and np.isfinite(eps_grid).all():
                M_eff = M if mech == "hamm_soft" else 1  # Alg. 1: M = 1 in the noise term (B6)
                eps_arr = np.array(eps_grid)
                # the bound scales with the sensitivity actually used (tight: half of the paper's)
                scale = 0.25 if v["tight_logistic_sensitivity"] else 1.0
                extra["lemma6_bound"] = scale * bounds.b6_lemma6(w.size, lam_m, M_eff, eps_arr, v["delta_p"])
                extra["lemma6_expected"] = scale * bounds.b6_lemma6_expected(w.size, lam_m, M_eff, eps_arr)
                if mech == "hamm_soft":
                    extra["heldout_risk"] = objective(W_p, task.X_test, ens_alpha, 0.0, K)
                    extra["thm4_bound"] = bounds.b6_theorem4(  # paper constants: valid, looser if tight
                        risk_w0, float(w0 @ w0), w.size, lam_m, M, eps_arr, len(task.X_aux),
                        v["delta_thm4"], v["delta_thm4"])
        else:  # B5: excess pooled risk of the averaging baselines
            extra["excess_risk"] = objective(W_p, task.X_priv, t_priv, lam_loc, K) - J_star
            extra["b5_bound"] = np.array([
                bounds.b5_output_perturbation(w.size, cal.beta, L_J, max(bias, 0.0)) if math.isfinite(cal.beta)
                else max(bias, 0.0) for cal in cals])
        seconds = (time.perf_counter() - t0) / len(eps_grid)
        for i, (eps, cal) in enumerate(zip(eps_grid, cals, strict=True)):
            rows.append({**setting, "mechanism": mech, "accountant": "pure", "epsilon": eps,
                         "eps_claimed": eps, "eps_accounted": cal.eps_accounted,
                         "eps_accounted_scope": "aggregate", "privacy_unit": cal.privacy_unit,
                         "sensitivity": cal.sensitivity, "beta": cal.beta, "noise": cal.noise,
                         "noise_norm": float(np.linalg.norm(noise[i])), "test_error": float(errs[i]),
                         "accuracy": 1.0 - float(errs[i]), "lambda": lam_m, "lambda_source": src,
                         "seconds": seconds,
                         **{k: float(np.asarray(val)[i]) for k, val in extra.items()}})
    return rows
