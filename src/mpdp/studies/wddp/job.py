"""Entry points of the training stage: θ* per data set, the η table, one training job.

Each function reads its inputs from files, writes its output atomically, and logs progress.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mpdp import io, results
from mpdp.data.partition import PartitionSet, load_partition
from mpdp.data.prepare import load as load_processed
from mpdp.engine import path as engine_path
from mpdp.mechanisms.gradient_batch import initial_point, train_batch
from mpdp.models import logistic
from mpdp.studies.wddp import reference
from mpdp.studies.wddp.cv import cross_validate, eta_lookup, fixed_etas
from mpdp.studies.wddp.evaluate import (
    Optimum,
    compute_optimum,
    lambda_sensitivity,
    rep_references,
    result_rows,
)
from mpdp.studies.wddp.plan import job_unevenness, parse_job_id, runs_for_job


def write_optimum(cfg: dict[str, Any], processed_dir: Path, out: Path, log: logging.Logger) -> None:
    """Spec M1a on the full training split, with the Hessian eigen-decomposition (B1‴)."""
    data = load_processed(processed_dir)
    opt = compute_optimum(np.asarray(data.X_train, dtype=np.float64), np.asarray(data.y_train, dtype=np.float64),
                          cfg["wddp"]["lambda"])
    log.info("theta*: L* = %.6f, ||theta*|| = %.4f, Hessian eigenvalues in [%.3g, %.3g]",
             opt.loss, np.linalg.norm(opt.theta), opt.hessian_eigenvalues.min(), opt.hessian_eigenvalues.max())
    X_test, y_test = np.asarray(data.X_test, dtype=np.float64), np.asarray(data.y_test, dtype=np.float64)
    sens = lambda_sensitivity(np.asarray(data.X_train, dtype=np.float64),
                              np.asarray(data.y_train, dtype=np.float64), X_test, y_test)
    for row in sens:
        log.info("lambda = %g: theta* test accuracy %.4f, ||theta|| = %.3g%s", row["lambda"],
                 row["test_accuracy"], row["theta_norm"], "" if row["converged"] else " (not converged)")
    io.save_npz(out, theta=opt.theta, loss=np.array(opt.loss), eigval=opt.hessian_eigenvalues,
                eigvec=opt.hessian_eigenvectors,
                test_accuracy=np.array(float(logistic.accuracy(opt.theta, X_test, y_test))),
                majority_rate=np.array(float(max(np.mean(y_test > 0), np.mean(y_test <= 0)))),
                lambda_grid=np.array([r["lambda"] for r in sens]),
                lambda_test_accuracy=np.array([r["test_accuracy"] for r in sens]),
                lambda_theta_norm=np.array([r["theta_norm"] for r in sens]),
                lambda_converged=np.array([r["converged"] for r in sens]))


def load_optimum(path: Path) -> Optimum:
    f = io.load_npz(path, "optimum file")
    try:
        return Optimum(f["theta"], float(f["loss"]), f["eigval"], f["eigvec"])
    except KeyError as exc:
        raise io.unreadable(path, "optimum file", KeyError(f"no array {exc}")) from None


def write_etas(cfg: dict[str, Any], processed_dir: Path, out: Path, log: logging.Logger) -> None:
    """The η per (mechanism, mode): fixed by the config, or chosen by CV (spec E3.3)."""
    if cfg["wddp"]["eta"] is not None:
        table = fixed_etas(cfg)
        log.info("eta fixed by the config at %g (no cross-validation)", cfg["wddp"]["eta"])
    else:
        data = load_processed(processed_dir)
        X = np.asarray(data.X_train, dtype=np.float64)
        table = cross_validate(cfg, data.card["dataset"], X, np.asarray(data.y_train, dtype=np.float64), log)
    io.write_json(table, out)


def trivial_partition(n: int, reps: int) -> PartitionSet:
    """One party holding every training row, for the centralised baseline."""
    order = np.tile(np.arange(n, dtype=np.int64), (reps, 1))
    return PartitionSet(order=order, sizes=np.full((reps, 1), n, dtype=np.int64))


def train_job(
    cfg: dict[str, Any], dataset: str, job_id: str, processed_dir: Path, partitions: Path | None,
    optimum: Path, etas: Path, out: Path, log: logging.Logger,
) -> None:
    """Train every run of one job and write its results rows (spec E3): an ε-sweep job's runs
    in one batch, a u-sweep job's one batch per u (each u its own partition layout)."""
    start = time.perf_counter()
    w = cfg["wddp"]
    job = parse_job_id(dataset, job_id)
    data = load_processed(processed_dir)
    X = np.asarray(data.X_train, dtype=np.float64)
    y = np.asarray(data.y_train, dtype=np.float64)
    X_test, y_test = np.asarray(data.X_test, dtype=np.float64), np.asarray(data.y_test, dtype=np.float64)
    if job.m is not None and partitions is None:
        raise ValueError(f"job {job_id} needs a partition file")
    runs = runs_for_job(cfg, job, eta_lookup(io.read_json(etas, "η table")))
    opt = load_optimum(optimum)
    log.info("%s/%s: %d runs, n = %d, p = %d, T = %d", dataset, job_id, len(runs), X.shape[0], X.shape[1], w["T"])
    theta0 = {rep: initial_point(cfg["root_seed"], dataset, rep, X.shape[1], w["init_std"])
              for rep in range(w["reps"])}
    frames, train_seconds, flops = [], 0.0, 0.0
    for u in job_unevenness(cfg, job):
        setting = f"{dataset}/{job_id}" + ("" if u is None else f" u = {u}")
        batch_runs = [run for run in runs if run.u == u]
        if job.m is None:
            partition = trivial_partition(X.shape[0], w["reps"])
        else:
            partition = load_partition(partitions, job.m, u)
        batch_start = time.perf_counter()

        def progress(step: int, setting: str = setting, since: float = batch_start) -> None:
            log.info("%s: step %d/%d (%.0f s)", setting, step, w["T"], time.perf_counter() - since)

        batch = train_batch(batch_runs, X, y, partition, theta0, cfg["root_seed"], w["dtype"],
                            w["dedup"], progress)
        seconds = time.perf_counter() - batch_start
        refs = rep_references(X, y, partition, theta0, w["lambda"], opt,
                              need_simple_average=any(r.mechanism == "jayaraman" for r in batch_runs))
        frames.append(results.to_frame(result_rows(
            batch_runs, batch.calibrations, batch.thetas, batch.theta0, X, y, X_test, y_test,
            partition, refs, opt, w["dtype"], seconds / len(batch_runs), batch.flops,
        )))
        train_seconds += seconds
        flops += float(batch.flops.sum())
    frame = pd.concat(frames, ignore_index=True)
    results.write(frame, out)
    unaccounted = int((frame["eps_accounted_scope"] == "unaccounted").sum())
    if unaccounted:
        log.warning("%s/%s: %d runs use noise shared by all parties (noise_sharing: shared); the "
                    "worst-party privacy argument fails for correlated noise and no valid epsilon "
                    "is known: the ledger leaves eps_accounted empty for them", dataset, job_id,
                    unaccounted)
    over = frame[frame["eps_accounted"] > frame["eps_claimed"] * (1 + 1e-9)]
    if len(over):
        log.warning("%s/%s: %d of %d runs give more epsilon than claimed (max accounted %.3g for "
                    "claimed %.3g): see the privacy ledger", dataset, job_id, len(over), len(frame),
                    over["eps_accounted"].max(), over.loc[over["eps_accounted"].idxmax(), "eps_claimed"])
    log.info("%s/%s: trained in %.1f s (%.0f GFLOP of products, %.1f GFLOP/s; %s), evaluated in "
             "%.1f s", dataset, job_id, train_seconds, flops / 1e9,
             flops / 1e9 / max(train_seconds, 1e-9), engine_path.describe_training(w["dtype"]),
             time.perf_counter() - start - train_seconds)


def collect(parts: list[Path], out: Path, log: logging.Logger) -> None:
    """Concatenate the jobs' rows into the data set's results table."""
    frame = pd.concat([results.read(p) for p in parts], ignore_index=True)
    frame = frame.sort_values(results.KEY_COLUMNS, kind="stable").reset_index(drop=True)
    results.write(frame, out)
    log.info("collected %d runs from %d jobs into %s", len(frame), len(parts), out)


def write_reference_check(cfg: dict[str, Any], table: Path, out: Path, log: logging.Logger) -> None:
    """The convergence check of the data set's non-private reference (issue 33 §5), as CSV
    (:data:`mpdp.studies.wddp.reference.COLUMNS`), with a warning per unconverged setting."""
    conv = reference.convergence(results.read(table), cfg)
    for row in conv[~conv["ref_converged"].astype(bool)].itertuples(index=False):
        log.warning("%s/%s u = %s: the non-private reference (eta = %g, %s) ends %.3g above L(theta*), above "
                    "wddp.reference_gap_tol = %g: claims using it are uninformative", row.dataset, row.experiment,
                    row.u, row.eta, row.eta_source, row.ref_gap, row.ref_gap_tol)
    with io.atomic_path(out) as tmp:
        conv.to_csv(tmp, index=False)
