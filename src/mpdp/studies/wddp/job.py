"""Entry points of the training stage: θ* per data set, the η table, one training job.

Each function reads its inputs from files, writes its output atomically, and logs progress.

**Split per repetition** (spec E1.2 as amended by issue 60, :mod:`mpdp.data.splits`): with
``split.per_repetition`` every repetition r has its own training and test records of the data
set's pool. The θ* file then holds one θ* per repetition (on r's training records, stacked
along a leading axis); a training job gives ``train_batch`` the pool, its partitions' ``order``
holding pool indices of r's training records (the test records of r carry weight 0 in r's
columns), and scores repetition r on r's test records. Under the fixed split
(``per_repetition: false``) the files and results are those of before issue 60, bit for bit.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mpdp import io, results
from mpdp.data import splits
from mpdp.data.partition import PartitionSet, load_partition
from mpdp.data.prepare import load as load_processed
from mpdp.engine import path as engine_path
from mpdp.errors import InputDataError
from mpdp.mechanisms.gradient_batch import initial_point, train_batch
from mpdp.models import logistic
from mpdp.studies.wddp import reference
from mpdp.studies.wddp.cv import cross_validate, eta_lookup, fixed_etas
from mpdp.studies.wddp.evaluate import (
    Optima,
    Optimum,
    compute_optimum,
    lambda_sensitivity,
    rep_references,
    result_rows,
)
from mpdp.studies.wddp.plan import job_unevenness, parse_job_id, runs_for_job

#: the repetition whose split the λ-sensitivity diagnostic uses under a split per repetition
LAMBDA_SENSITIVITY_REP = 0


def write_optimum(cfg: dict[str, Any], processed_dir: Path, out: Path, log: logging.Logger) -> None:
    """Spec M1a on each repetition's training records, with the Hessian eigen-decomposition (B1‴).

    Fixed split: one θ* of the training split (arrays as before issue 60). Split per repetition:
    one θ* per repetition on its own training records, stacked (``theta`` R × p, ``loss`` R,
    ``eigval`` R × p, ``eigvec`` R × p × p, ``test_accuracy`` and ``majority_rate`` R, on each
    repetition's test records). The λ-sensitivity diagnostic (issue 11) stays on one split:
    repetition :data:`LAMBDA_SENSITIVITY_REP`'s (``lambda_rep``).
    """
    data = load_processed(processed_dir)
    pool = splits.Pool.of(data)
    lam = cfg["wddp"]["lambda"]
    per_rep = splits.per_repetition(cfg)
    reps = range(cfg["wddp"]["reps"]) if per_rep else range(1)
    log.info("split: %s", splits.describe(cfg))
    fields: dict[str, list[np.ndarray]] = {k: [] for k in
                                           ("theta", "loss", "eigval", "eigvec", "test_accuracy", "majority_rate")}
    for rep in reps:
        split = pool.repetition(rep, cfg)
        y_train, y_test = split.y_train.astype(np.float64), split.y_test.astype(np.float64)
        opt = compute_optimum(split.X_train, y_train, lam)
        log.info("theta*%s: L* = %.6f, ||theta*|| = %.4f, Hessian eigenvalues in [%.3g, %.3g]",
                 f" (repetition {rep})" if per_rep else "", opt.loss, np.linalg.norm(opt.theta),
                 opt.hessian_eigenvalues.min(), opt.hessian_eigenvalues.max())
        fields["theta"].append(opt.theta)
        fields["loss"].append(np.array(opt.loss))
        fields["eigval"].append(opt.hessian_eigenvalues)
        fields["eigvec"].append(opt.hessian_eigenvectors)
        fields["test_accuracy"].append(np.array(float(logistic.accuracy(opt.theta, split.X_test, y_test))))
        fields["majority_rate"].append(np.array(float(max(np.mean(y_test > 0), np.mean(y_test <= 0)))))
    arrays = {k: np.stack(v) if per_rep else v[0] for k, v in fields.items()}
    sens_split = pool.repetition(LAMBDA_SENSITIVITY_REP if per_rep else 0, cfg)
    sens = lambda_sensitivity(sens_split.X_train, sens_split.y_train.astype(np.float64), sens_split.X_test,
                              sens_split.y_test.astype(np.float64))
    for row in sens:
        log.info("lambda = %g: theta* test accuracy %.4f, ||theta|| = %.3g%s", row["lambda"],
                 row["test_accuracy"], row["theta_norm"], "" if row["converged"] else " (not converged)")
    extra = {"lambda_rep": np.array(LAMBDA_SENSITIVITY_REP)} if per_rep else {}
    io.save_npz(out, theta=arrays["theta"], loss=arrays["loss"], eigval=arrays["eigval"],
                eigvec=arrays["eigvec"], test_accuracy=arrays["test_accuracy"],
                majority_rate=arrays["majority_rate"],
                lambda_grid=np.array([r["lambda"] for r in sens]),
                lambda_test_accuracy=np.array([r["test_accuracy"] for r in sens]),
                lambda_theta_norm=np.array([r["theta_norm"] for r in sens]),
                lambda_converged=np.array([r["converged"] for r in sens]), **extra)


def load_optimum(path: Path, reps: int | None = None) -> Optima:
    """The θ* file: one :class:`Optimum` (fixed split), or one per repetition (a split per
    repetition, issue 60) when the file holds them; ``reps`` (the config's ``wddp.reps``) is
    checked against a per-repetition file."""
    f = io.load_npz(path, "optimum file")
    try:
        theta, loss, eigval, eigvec = f["theta"], f["loss"], f["eigval"], f["eigvec"]
    except KeyError as exc:
        raise io.unreadable(path, "optimum file", KeyError(f"no array {exc}")) from None
    if theta.ndim == 1:
        return Optimum(theta, float(loss), eigval, eigvec)
    if reps is not None and theta.shape[0] < reps:
        raise InputDataError(f"optimum file {path} holds θ* of {theta.shape[0]} repetitions, the config "
                             f"needs {reps} (wddp.reps): {io.rebuild_hint(path)}")
    return {rep: Optimum(theta[rep], float(loss[rep]), eigval[rep], eigvec[rep]) for rep in range(theta.shape[0])}


def write_etas(cfg: dict[str, Any], processed_dir: Path, out: Path, log: logging.Logger) -> None:
    """The η per (mechanism, mode): fixed by the config, or chosen by CV (spec E3.3) within the
    training records of the fixed split, or of each repetition (a split per repetition: one
    selection per repetition, :func:`mpdp.studies.wddp.cv.cross_validate`)."""
    if cfg["wddp"]["eta"] is not None:
        table = fixed_etas(cfg)
        log.info("eta fixed by the config at %g (no cross-validation)", cfg["wddp"]["eta"])
    else:
        pool = splits.Pool.of(load_processed(processed_dir))
        log.info("split: %s", splits.describe(cfg))
        table = cross_validate(cfg, pool.dataset, pool.X, pool.y.astype(np.float64), log,
                               train_rows=cv_selections(cfg, pool))
    io.write_json(table, out)


def cv_selections(cfg: dict[str, Any], pool: splits.Pool) -> dict[int | None, np.ndarray]:
    """The training records of each η selection: the fixed split's (key None), or each
    repetition's own (a split per repetition, keyed by repetition)."""
    if not splits.per_repetition(cfg):
        return {None: pool.indices(0, cfg)[0]}
    return {rep: pool.indices(rep, cfg)[0] for rep in range(cfg["wddp"]["reps"])}


def trivial_partition(rows: int | list[np.ndarray], reps: int | None = None) -> PartitionSet:
    """One party holding every training row, for the centralised baseline: ``rows`` per
    repetition (its training records in the pool), or ``0..rows-1`` in each of ``reps``."""
    if isinstance(rows, int):
        order = np.tile(np.arange(rows, dtype=np.int64), (int(reps or 1), 1))
    else:
        order = np.stack([np.asarray(r, dtype=np.int64) for r in rows])
    return PartitionSet(order=order, sizes=np.full((order.shape[0], 1), order.shape[1], dtype=np.int64))


def check_partition(partition: PartitionSet, train_rows: list[np.ndarray], where: str) -> None:
    """Every repetition's partition holds only its own training records (issue 60): a partition
    file of another split design (or split) fails here, never trains on a test record."""
    if partition.reps < len(train_rows):
        raise InputDataError(f"{where}: the partition file holds {partition.reps} repetitions, the "
                             f"config {len(train_rows)} (wddp.reps); rebuild the partitions")
    for rep, rows in enumerate(train_rows):
        if not np.isin(partition.order[rep], rows).all():
            raise InputDataError(f"{where}: repetition {rep}'s partition holds records outside its training "
                                 "records (written under another split design?); rebuild the partitions")


class _Rows(Mapping[int, np.ndarray]):
    """``rep -> array[rows[rep]]``, each gathered when looked up."""

    def __init__(self, array: np.ndarray, rows: dict[int, np.ndarray]) -> None:
        self._array, self._rows = array, rows

    def __getitem__(self, rep: int) -> np.ndarray:
        return self._array[self._rows[rep]]

    def __iter__(self) -> Iterator[int]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


def train_job(
    cfg: dict[str, Any], dataset: str, job_id: str, processed_dir: Path, partitions: Path | None,
    optimum: Path, etas: Path, out: Path, log: logging.Logger,
) -> None:
    """Train every run of one job and write its results rows (spec E3): an ε-sweep job's runs
    in one batch, a u-sweep job's one batch per u (each u its own partition layout).

    Every batch trains on the data set's pool (:class:`mpdp.data.splits.Pool`): repetition r's
    columns weight only r's training records (its partition's pool indices), so the runs of every
    repetition stay columns of one batch; r's metrics are on r's test records and its references
    on r's training records (:func:`write_optimum`)."""
    start = time.perf_counter()
    w = cfg["wddp"]
    job = parse_job_id(dataset, job_id)
    pool = splits.Pool.of(load_processed(processed_dir))
    X = pool.X
    y = pool.y.astype(np.float64)
    per_rep = splits.per_repetition(cfg)
    split_of = {rep: pool.indices(rep, cfg) for rep in range(w["reps"])}
    train_rows = [split_of[rep][0] for rep in range(w["reps"])]
    if per_rep:  # each repetition's test records, gathered when read (not R copies at once)
        tests = {rep: test for rep, (_, test) in split_of.items()}
        X_test: np.ndarray | Mapping[int, np.ndarray] = _Rows(X, tests)
        y_test: np.ndarray | Mapping[int, np.ndarray] = _Rows(y, tests)
    else:  # one pair of arrays for every repetition: the accuracies of all runs in one product
        X_test, y_test = X[split_of[0][1]], y[split_of[0][1]]
    if job.m is not None and partitions is None:
        raise ValueError(f"job {job_id} needs a partition file")
    runs = runs_for_job(cfg, job, eta_lookup(io.read_json(etas, "η table")))
    opt = load_optimum(optimum, w["reps"])
    if per_rep == isinstance(opt, Optimum):
        raise InputDataError(f"optimum file {optimum} was written under the other split design "
                             f"({splits.describe(cfg)} now): {io.rebuild_hint(optimum)}")
    log.info("%s/%s: %d runs, n = %d of a pool of %d, p = %d, T = %d; split: %s", dataset, job_id, len(runs),
             len(train_rows[0]), pool.n, X.shape[1], w["T"], splits.describe(cfg))
    theta0 = {rep: initial_point(cfg["root_seed"], dataset, rep, X.shape[1], w["init_std"])
              for rep in range(w["reps"])}
    frames, train_seconds, flops = [], 0.0, 0.0
    for u in job_unevenness(cfg, job):
        setting = f"{dataset}/{job_id}" + ("" if u is None else f" u = {u}")
        batch_runs = [run for run in runs if run.u == u]
        if job.m is None:
            partition = trivial_partition(train_rows)
        else:
            partition = load_partition(partitions, job.m, u)
            check_partition(partition, train_rows, f"{dataset}/{job_id}")
        batch_start = time.perf_counter()

        def progress(step: int, setting: str = setting, since: float = batch_start) -> None:
            log.info("%s: step %d/%d (%.0f s)", setting, step, w["T"], time.perf_counter() - since)

        # a split per repetition: a repetition's pooled columns in a block of its own training
        # records (not the pool's N rows with the others' at weight 0; issue 60 cost)
        batch = train_batch(batch_runs, X, y, partition, theta0, cfg["root_seed"], w["dtype"],
                            w["dedup"], progress, pooled_by_rep=splits.per_repetition(cfg))
        seconds = time.perf_counter() - batch_start
        refs = rep_references(X, y, partition, theta0, w["lambda"], opt,
                              need_simple_average=any(r.mechanism == "jayaraman" for r in batch_runs),
                              train_rows=dict(enumerate(train_rows)))
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
