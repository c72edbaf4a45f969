"""Train a batch of gradient-perturbation runs at once on the engine (spec M2–M4, E8).

Every run is mapped to parameter columns of one matrix: one column for a centralised or
per-round run, one column per party for a literal local-then-aggregate run. Columns that read
the same rows with the same record weights share an engine :class:`~mpdp.engine.Block`, so
each step is two matrix products per block. A column's noise comes from the run's own
stream (:meth:`RunSpec.noise_key`), so a run's result does not depend on its batch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from mpdp import mechanisms
from mpdp.engine import Block, deduplicate, noisy_gd
from mpdp.mechanisms import Calibration, RunSpec
from mpdp.partition import PartitionSet
from mpdp.seeding import rng, seed_sequence


@dataclass(frozen=True)
class BatchResult:
    """Final parameters (p × K, float64) and the calibration of each run."""

    thetas: np.ndarray
    calibrations: list[Calibration]
    theta0: np.ndarray  # (p × K) initial point of each run


def initial_point(root_seed: int, dataset: str, rep: int, p: int, init_std: float) -> np.ndarray:
    """θ₀ ~ N(0, init_std² I), shared by all parties and methods of a repetition (spec E7 #14)."""
    return rng(root_seed, "init", dataset, rep).normal(0.0, init_std, size=p)


def _block_key_and_weights(
    run: RunSpec, partition: PartitionSet, all_rows_retained: bool
) -> tuple[tuple, np.ndarray, np.ndarray]:
    """Rows and record weights of a centralised or per-round run (spec M3.2, M4.2)."""
    mech = mechanisms.get(run.mechanism)
    sizes = partition.sizes[run.rep]
    rows = partition.order[run.rep]
    per_party = mech.row_weights(sizes)
    if np.allclose(per_party, per_party[0]):
        key = ("uniform", None if all_rows_retained else run.rep)
        return key, (np.sort(rows) if all_rows_retained else rows), np.full(len(rows), per_party[0])
    return ("per_party", run.rep), rows, np.repeat(per_party, sizes)


def train_batch(
    runs: Sequence[RunSpec],
    X: np.ndarray,
    y: np.ndarray,
    partition: PartitionSet,
    theta0_by_rep: dict[int, np.ndarray],
    root_seed: int,
    dtype: str = "float32",
    dedup: bool = True,
    progress: Callable[[int], None] | None = None,
) -> BatchResult:
    """Train ``runs`` (all on ``partition``; ``run.rep`` indexes its repetitions)."""
    if not runs:
        raise ValueError("train_batch needs at least one run")
    T = runs[0].T
    lam = runs[0].lam
    if any(r.T != T or r.lam != lam for r in runs):
        raise ValueError("all runs of a batch must share T and lambda")
    all_rows_retained = partition.order.shape[1] == X.shape[0]

    blocks: dict[tuple, tuple[np.ndarray, np.ndarray, list[int]]] = {}
    col_eta: list[float] = []
    col_sigma: list[float] = []
    col_seed: list[np.random.SeedSequence] = []
    col_theta0: list[np.ndarray] = []
    run_cols: list[tuple[np.ndarray, np.ndarray]] = []  # (column ids, aggregation weights)
    calibrations: list[Calibration] = []

    def add_column(key, rows, weights, run, party, cal) -> int:
        col = len(col_eta)
        blocks.setdefault(key, (rows, weights, []))[2].append(col)
        col_eta.append(run.eta)
        col_sigma.append(cal.sigma)
        col_seed.append(seed_sequence(root_seed, *run.noise_key(party)))
        col_theta0.append(theta0_by_rep[run.rep])
        return col

    for run in runs:
        mech = mechanisms.get(run.mechanism)
        sizes = partition.sizes[run.rep]
        cal = mech.calibrate(run, sizes)
        calibrations.append(cal)
        if run.mode == "local_then_aggregate":
            cols = []
            for j, rows in enumerate(partition.party_indices(run.rep)):
                weights = np.full(len(rows), 1.0 / len(rows))
                cols.append(add_column(("party", run.rep, j), rows, weights, run, j, cal))
            run_cols.append((np.array(cols), mech.aggregation_weights(sizes)))
        else:
            key, rows, weights = _block_key_and_weights(run, partition, all_rows_retained)
            col = add_column(key, rows, weights, run, None, cal)
            run_cols.append((np.array([col]), np.ones(1)))

    np_dtype = np.dtype(dtype)
    engine_blocks = []
    for rows, weights, cols in blocks.values():
        Xb, yb, wb = X[rows], y[rows], weights
        if dedup:
            Xb, yb, wb = deduplicate(Xb, yb, wb)
        engine_blocks.append(
            Block(
                X=np.ascontiguousarray(Xb, dtype=np_dtype),
                y=np.asarray(yb, dtype=np_dtype),
                weights=np.asarray(wb, dtype=np_dtype),
                columns=np.asarray(cols, dtype=np.int64),
            )
        )
    theta0 = np.stack(col_theta0, axis=1)
    final = noisy_gd(
        engine_blocks, theta0, np.array(col_eta), lam, np.array(col_sigma), col_seed, T,
        dtype=np_dtype, progress=progress,
    )
    thetas = np.stack([final[:, cols] @ a for cols, a in run_cols], axis=1)
    theta0_runs = np.stack([theta0_by_rep[r.rep] for r in runs], axis=1)
    return BatchResult(thetas=thetas, calibrations=calibrations, theta0=theta0_runs)
