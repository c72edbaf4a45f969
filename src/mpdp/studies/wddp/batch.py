"""Train a batch of gradient-perturbation runs at once on the engine (spec M2–M4, E8).

Every run is mapped to parameter columns of one matrix: one column for a centralised or
per-round run, one column per party for a literal local-then-aggregate run. All centralised
and per-round columns share one engine :class:`~mpdp.engine.Block` over the training records
with a per-column record-weight matrix (zero for records a run does not use), so they cost
two fat matrix products per step; local columns share one block per (repetition, party).
A column's noise comes from the run's own stream (:meth:`RunSpec.noise_key`), so a run's
result does not depend on its batch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from mpdp import mechanisms
from mpdp.engine import Block, column_flops, deduplicate, noisy_gd, row_keys
from mpdp.mechanisms import Calibration, RunSpec
from mpdp.partition import PartitionSet
from mpdp.seeding import rng, seed_sequence, tuning_rng


@dataclass(frozen=True)
class BatchResult:
    """Final parameters (p × K, float64), the calibration and the engine work of each run."""

    thetas: np.ndarray
    calibrations: list[Calibration]
    theta0: np.ndarray  # (p × K) initial point of each run
    #: (K,) flops of the engine's two products spent on each run (all its party columns), see
    #: :func:`mpdp.engine.column_flops`; their sum is the batch's arithmetic
    flops: np.ndarray


def initial_point(root_seed: int, dataset: str, rep: int, p: int, init_std: float,
                  tuning: bool = False) -> np.ndarray:
    """θ₀ ~ N(0, init_std² I), shared by all parties and methods of a repetition (spec E7 #14);
    ``tuning``: the θ₀ of a selection run (CV fold ``rep``), from a tuning stream."""
    gen = tuning_rng(root_seed, "init", dataset, rep) if tuning else rng(root_seed, "init", dataset, rep)
    return gen.normal(0.0, init_std, size=p)


def _record_weights(run: RunSpec, partition: PartitionSet, n: int) -> np.ndarray:
    """Weight of every training record in a centralised or per-round run's gradient.

    The server's gradient is Σ_j a_j ∇L_{D_j}(θ) (spec M3.2, M4.2), i.e. record i of party j
    has weight a_j/n_j; records the run does not use (dropped leftovers of the two-group
    design, spec E2.2) have weight 0.
    """
    mech = mechanisms.get(run.mechanism)
    sizes = partition.sizes[run.rep]
    weights = np.zeros(n)
    weights[partition.order[run.rep]] = mech.record_weights(sizes)
    return weights


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
    noise_scale: float = 1.0,
) -> BatchResult:
    """Train ``runs`` (all on ``partition``; ``run.rep`` indexes its repetitions).

    ``noise_scale`` multiplies every column's calibrated σ (test hook: 0 switches the noise off
    and gives the family's non-private trajectories; the calibrations returned are unchanged).
    """
    if not runs:
        raise ValueError("train_batch needs at least one run")
    T = runs[0].T
    lam = runs[0].lam
    if any(r.T != T or r.lam != lam for r in runs):
        raise ValueError("all runs of a batch must share T and lambda")

    # Local columns: one block per (repetition, party), shared by the runs of that repetition.
    local_blocks: dict[tuple[int, int], tuple[np.ndarray, list[int]]] = {}
    # Centralised and per-round columns: one block over all records, per-column weights.
    pooled_cols: list[int] = []
    pooled_weights: list[np.ndarray] = []
    col_eta: list[float] = []
    col_sigma: list[float] = []
    col_seed: list[np.random.SeedSequence] = []
    col_theta0: list[np.ndarray] = []
    run_cols: list[tuple[np.ndarray, np.ndarray]] = []  # (column ids, aggregation weights)
    calibrations: list[Calibration] = []

    def add_column(run: RunSpec, party: int | None, cal: Calibration) -> int:
        col_eta.append(run.eta)
        col_sigma.append(cal.party_sigma(party) * noise_scale)
        col_seed.append(seed_sequence(root_seed, *run.noise_key(party)))
        col_theta0.append(theta0_by_rep[run.rep])
        return len(col_eta) - 1

    for run in runs:
        mech = mechanisms.get(run.mechanism)
        sizes = partition.sizes[run.rep]
        cal = mech.calibrate(run, sizes)
        calibrations.append(cal)
        if run.mode == "local_then_aggregate":
            cols = []
            for j, rows in enumerate(partition.party_indices(run.rep)):
                col = add_column(run, j, cal)
                local_blocks.setdefault((run.rep, j), (rows, []))[1].append(col)
                cols.append(col)
            run_cols.append((np.array(cols), mech.aggregation_weights(sizes)))
        else:
            col = add_column(run, None, cal)
            pooled_cols.append(col)
            pooled_weights.append(_record_weights(run, partition, X.shape[0]))
            run_cols.append((np.array([col]), np.ones(1)))

    np_dtype = np.dtype(dtype)
    keys = row_keys(X, y) if dedup else None  # once: every block merges its rows by these

    def make_block(rows: np.ndarray, weights: np.ndarray, cols: list[int]) -> Block:
        Xb, yb, wb = X[rows], y[rows], weights
        if keys is not None:
            Xb, yb, wb = deduplicate(Xb, yb, wb, keys=keys[rows])
        return Block(
            X=np.ascontiguousarray(Xb, dtype=np_dtype),
            y=np.asarray(yb, dtype=np_dtype),
            weights=np.ascontiguousarray(wb, dtype=np_dtype),
            columns=np.asarray(cols, dtype=np.int64),
        )

    engine_blocks = [
        make_block(rows, np.full(len(rows), 1.0 / len(rows)), cols)
        for rows, cols in local_blocks.values()
    ]
    if pooled_cols:
        W = np.stack(pooled_weights, axis=1)
        used = W.any(axis=1)
        W = W[used]
        shared = bool(np.all(W[:, :1] == W))
        engine_blocks.append(make_block(np.flatnonzero(used), W[:, 0] if shared else W, pooled_cols))
    theta0 = np.stack(col_theta0, axis=1)
    final = noisy_gd(
        engine_blocks, theta0, np.array(col_eta), lam, np.array(col_sigma), col_seed, T,
        dtype=np_dtype, progress=progress,
    )
    thetas = np.stack([final[:, cols] @ a for cols, a in run_cols], axis=1)
    theta0_runs = np.stack([theta0_by_rep[r.rep] for r in runs], axis=1)
    col_flops = column_flops(engine_blocks, len(col_eta), T)
    flops = np.array([col_flops[cols].sum() for cols, _ in run_cols])
    return BatchResult(thetas=thetas, calibrations=calibrations, theta0=theta0_runs, flops=flops)
