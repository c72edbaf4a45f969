"""Train a batch of gradient-perturbation runs at once on the engine (spec M2–M4, E8).

Every run is mapped to parameter columns of one matrix: one column for a centralised or
per-round run, one column per party for a literal local-then-aggregate run. All centralised
and per-round columns share one engine :class:`~mpdp.engine.gd.Block` over the training records
with a per-column record-weight matrix (zero for records a run does not use), so they cost
two fat matrix products per step; local columns share one block per (repetition, party).
A column's noise comes from the run's own stream (:meth:`RunSpec.noise_key`), so a run's
result does not depend on its batch.

Audit hook (spec audit.md A2): ``train_batch(..., canaries=Canaries(...))`` makes some training
records Dirac gradient canaries on extra coordinates and returns those coordinates' final
values (:class:`CanaryTrace`), trained with the same calibration, per-party σ mapping, record
weights and step sizes as the real coordinates. Off (``None``) by default.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from mpdp import mechanisms
from mpdp.data.partition import PartitionSet
from mpdp.engine.gd import Block, column_flops, deduplicate, noisy_gd, row_keys
from mpdp.mechanisms import Calibration, RunSpec
from mpdp.seeding import rng, seed_sequence, tuning_key, tuning_rng


@dataclass(frozen=True)
class BatchResult:
    """Final parameters (p × K, float64), the calibration and the engine work of each run."""

    thetas: np.ndarray
    calibrations: list[Calibration]
    theta0: np.ndarray  # (p × K) initial point of each run
    #: (K,) flops of the engine's two products spent on each run (all its party columns), see
    #: :func:`mpdp.engine.gd.column_flops`; their sum is the batch's arithmetic
    flops: np.ndarray
    #: the canary coordinates, when :func:`train_batch` was given ``canaries`` (audit only)
    canary: CanaryTrace | None = None


@dataclass(frozen=True)
class Canaries:
    """Dirac gradient canaries among the training records (audit hook, spec audit.md A2).

    Record ``rows[i]`` (a row index of ``X``; its features should be zero) carries, besides
    its logistic loss, the linear loss ``−signs[i]·G·θ_{p+i}`` on its own extra coordinate
    ``p + i``, G-Lipschitz with gradient ``−signs[i]·G·e_{p+i}``. The real records are zero on
    those coordinates and the canary gradient is constant, so the recursion is block-diagonal:
    the extra coordinates are trained apart from the real ones, by the same engine with each
    column's own step size, λ and calibrated σ, starting at 0, with the canaries' weights in
    that column's gradient (a_j/n_j per round or centrally, 1/n_j in a party's local column).
    """

    rows: np.ndarray  # (c,) row indices of X
    signs: np.ndarray  # (c,) ±1
    G: float


@dataclass(frozen=True)
class CanaryTrace:
    """Final canary coordinates of every run, with what produced them (per run, its columns in
    party order for the literal mode, one column otherwise)."""

    theta: list[np.ndarray]  # (c × k_run) final canary coordinates (NaN in columns without canaries)
    sigma: list[np.ndarray]  # (k_run,) noise std each column used
    weight: list[np.ndarray]  # (c × k_run) weight of each canary record in each column's gradient


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
    tuning: bool = False,
    canaries: Canaries | None = None,
    pooled_by_rep: bool = False,
) -> BatchResult:
    """Train ``runs`` (all on ``partition``; ``run.rep`` indexes its repetitions).

    ``tuning`` draws every column's noise from the tuning stream of its key
    (:func:`mpdp.seeding.tuning_key`), disjoint from every evaluated repetition's.

    ``noise_scale`` multiplies every column's calibrated σ (test hook: 0 switches the noise off
    and gives the family's non-private trajectories; the calibrations returned are unchanged).
    ``canaries`` (audit hook, :class:`Canaries`): also train the canary coordinates and return
    them as ``BatchResult.canary``; the real coordinates are unchanged.
    ``pooled_by_rep``: the centralised/per-round columns share one block per repetition instead
    of one for all (issue 60: repetitions with their own records in one matrix ``X``; a column's
    block then holds its repetition's records only). Off: one block, as before.
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
    pooled_reps: list[int] = []
    col_eta: list[float] = []
    col_sigma: list[float] = []
    col_key: list[tuple] = []
    col_theta0: list[np.ndarray] = []
    col_rows: list[tuple[np.ndarray, np.ndarray]] = []  # (rows, their weights) in each column
    run_cols: list[tuple[np.ndarray, np.ndarray]] = []  # (column ids, aggregation weights)
    calibrations: list[Calibration] = []

    def add_column(run: RunSpec, party: int | None, cal: Calibration, rows: np.ndarray,
                   weights: np.ndarray) -> int:
        col_rows.append((rows, weights))
        col_eta.append(run.eta)
        col_sigma.append(cal.party_sigma(party) * noise_scale)
        key = run.noise_key(party)
        col_key.append(tuning_key(*key) if tuning else key)
        col_theta0.append(theta0_by_rep[run.rep])
        return len(col_eta) - 1

    all_rows = np.arange(X.shape[0])  # the rows of every pooled column (shared, not copied)
    for run in runs:
        mech = mechanisms.get(run.mechanism)
        sizes = partition.sizes[run.rep]
        cal = mech.calibrate(run, sizes)
        calibrations.append(cal)
        if run.mode == "local_then_aggregate":
            cols = []
            for j, rows in enumerate(partition.party_indices(run.rep)):
                col = add_column(run, j, cal, rows, np.full(len(rows), 1.0 / len(rows)))
                local_blocks.setdefault((run.rep, j), (rows, []))[1].append(col)
                cols.append(col)
            run_cols.append((np.array(cols), mech.aggregation_weights(sizes)))
        else:
            weights = _record_weights(run, partition, X.shape[0])
            col = add_column(run, None, cal, all_rows, weights)
            pooled_cols.append(col)
            pooled_weights.append(weights)
            pooled_reps.append(run.rep)
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
        make_block(rows, col_rows[cols[0]][1], cols) for rows, cols in local_blocks.values()
    ]
    groups = ([[i for i, r in enumerate(pooled_reps) if r == rep] for rep in sorted(set(pooled_reps))]
              if pooled_by_rep else [list(range(len(pooled_cols)))] if pooled_cols else [])
    for group in groups:
        W = np.stack([pooled_weights[i] for i in group], axis=1)
        used = W.any(axis=1)
        W = W[used]
        shared = bool(np.all(W[:, :1] == W))
        engine_blocks.append(make_block(np.flatnonzero(used), W[:, 0] if shared else W,
                                        [pooled_cols[i] for i in group]))
    theta0 = np.stack(col_theta0, axis=1)
    final = noisy_gd(
        engine_blocks, theta0, np.array(col_eta), lam, np.array(col_sigma),
        [seed_sequence(root_seed, *key) for key in col_key], T, dtype=np_dtype, progress=progress,
    )
    thetas = np.stack([final[:, cols] @ a for cols, a in run_cols], axis=1)
    theta0_runs = np.stack([theta0_by_rep[r.rep] for r in runs], axis=1)
    col_flops = column_flops(engine_blocks, len(col_eta), T)
    flops = np.array([col_flops[cols].sum() for cols, _ in run_cols])
    trace = None
    if canaries is not None:
        trace = _train_canaries(canaries, col_rows, np.array(col_eta), lam, np.array(col_sigma),
                                [seed_sequence(root_seed, *key, "canary") for key in col_key],
                                T, [cols for cols, _ in run_cols])
    return BatchResult(thetas=thetas, calibrations=calibrations, theta0=theta0_runs, flops=flops,
                       canary=trace)


def _train_canaries(canaries: Canaries, col_rows: list[tuple[np.ndarray, np.ndarray]],
                    eta: np.ndarray, lam: float, sigma: np.ndarray,
                    seeds: list[np.random.SeedSequence], T: int,
                    run_cols: list[np.ndarray]) -> CanaryTrace:
    """The canary coordinates of every column (:class:`Canaries`), in float64.

    Column k's canary gradient is ``−G·signs[i]·w_k(rows[i])`` with ``w_k`` the record weights
    the column's real gradient uses; its noise is an independent stream derived from the
    column's own (the canary coordinates are extra entries of the same N(0, σ_k² I) vector).
    Columns without a canary (other parties' local columns) are left NaN.
    """
    rows = np.asarray(canaries.rows)
    signs = np.asarray(canaries.signs, dtype=np.float64)
    if rows.shape != signs.shape or not np.all(np.abs(signs) == 1):
        raise ValueError("Canaries.rows and Canaries.signs must be equal-length, signs ±1")
    c, K = rows.size, len(col_rows)
    weight = np.zeros((c, K))
    for k, (col_rows_k, col_w) in enumerate(col_rows):
        if col_rows_k.size == 0:
            continue
        order = np.argsort(col_rows_k, kind="stable")
        position = np.minimum(np.searchsorted(col_rows_k[order], rows), col_rows_k.size - 1)
        weight[:, k] = np.where(col_rows_k[order][position] == rows, np.asarray(col_w)[order][position], 0.0)
    # columns in which no canary has weight carry no canary signal: not trained (NaN)
    live = np.flatnonzero(np.any(weight != 0, axis=0))
    theta = np.full((c, K), np.nan)
    if live.size:
        block = Block(X=np.zeros((0, c)), y=np.zeros(0), weights=np.zeros(0), columns=np.arange(live.size))
        theta[:, live] = noisy_gd([block], np.zeros((c, live.size)), eta[live], lam, sigma[live],
                                  [seeds[k] for k in live], T, dtype=np.float64,
                                  linear_term=-canaries.G * signs[:, None] * weight[:, live])
    return CanaryTrace(theta=[theta[:, cols] for cols in run_cols],
                       sigma=[sigma[cols] for cols in run_cols],
                       weight=[weight[:, cols] for cols in run_cols])
