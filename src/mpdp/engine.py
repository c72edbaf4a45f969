"""Batched full-batch noisy gradient descent for logistic regression (spec M2, M3.1, M3.2, M4).

Every gradient-perturbation mechanism of the spec is, per trained model, the recursion

    θ_{t+1} = θ_t − η (Σ_i w_i ∇ℓ(θ_t; x_i, y_i) + λ θ_t + σ z_t),   z_t ~ N(0, I_p),

for ``t = 0..T−1`` on some rows with some weights: pooled data with ``w_i = 1/n`` (M2, and
M3.2 which equals M2 in distribution), party ``j``'s rows with ``w_i = 1/n_j`` (M3.1, M4.1),
or pooled rows with ``w_i = 1/(m n_j)`` (M4.2). :func:`noisy_gd` runs ``K`` such recursions
at once as the columns of a ``(p, K)`` parameter matrix, so that each step is two
matrix–matrix products per block of rows (``Z = X_b Θ_b`` and ``G = X_bᵀ S``) instead of ``K``
pairs of matrix–vector products — the vectorisation over repetitions required by spec
experiments.md E8.

Columns that share rows share a :class:`Block`. The weights of a block are shared by its
columns, or given per column (``(n_b, k_b)``), so that e.g. WD-DP (``1/n``) and Jayaraman
(``1/(m n_j)``) runs on the same pooled rows still share one product.

Noise: column ``k`` owns the stream ``Generator(PCG64(noise_seeds[k]))`` and ``z_{k,t}`` is the
``t``-th block of ``p`` standard normals of that stream (always drawn in float64). The values
therefore do not depend on how the draws are chunked, on the engine dtype, or on which other
columns are trained alongside, so a run's trajectory is the same alone or in any batch, up to
BLAS rounding. Passing the same seed for several columns gives them the same noise (the
``noise_sharing: shared`` option of M3.1).

The engine sets no BLAS thread count (the caller does, e.g. with ``threadpoolctl``) and uses
the CPU only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

#: Number of float64 noise values held per block between refills (about 8 MB); the number of
#: steps drawn at once is this divided by ``p k_b``. It does not change any value.
NOISE_BUFFER_VALUES = 1 << 20

_ENGINE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


@dataclass(frozen=True, eq=False)
class Block:
    """Rows shared by a set of parameter columns of :func:`noisy_gd`.

    Attributes:
        X: ``(n_b, p)`` feature rows. :func:`noisy_gd` copies them once, multiplied by their
            labels, into a C-contiguous array of the engine dtype.
        y: ``(n_b,)`` labels in ``{−1, +1}``.
        weights: ``(n_b,)`` weights shared by all columns of the block, or ``(n_b, k_b)`` with
            one weight vector per column; the data gradient is ``Σ_i w_i ∇ℓ_i``.
        columns: ``(k_b,)`` indices of the parameter columns trained on these rows.
    """

    X: np.ndarray
    y: np.ndarray
    weights: np.ndarray
    columns: np.ndarray

    def __post_init__(self) -> None:
        X = np.asarray(self.X)
        y = np.asarray(self.y)
        weights = np.asarray(self.weights)
        columns = np.asarray(self.columns)
        if X.ndim != 2 or not np.issubdtype(X.dtype, np.floating):
            raise ValueError(f"Block.X must be a 2-D float array, got {X.dtype} {X.shape}")
        n_b = X.shape[0]
        if y.shape != (n_b,):
            raise ValueError(f"Block.y must have shape ({n_b},), got {y.shape}")
        if not np.all(np.abs(y) == 1):
            raise ValueError("Block.y must hold labels in {-1, +1} (spec §0.1)")
        if columns.ndim != 1 or columns.size == 0 or not np.issubdtype(columns.dtype, np.integer):
            raise ValueError("Block.columns must be a non-empty 1-D integer array")
        if weights.shape not in ((n_b,), (n_b, columns.size)):
            raise ValueError(
                f"Block.weights must have shape ({n_b},) or ({n_b}, {columns.size}), "
                f"got {weights.shape}"
            )
        if not (np.all(np.isfinite(X)) and np.all(np.isfinite(weights))):
            raise ValueError("Block.X and Block.weights must be finite")
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "weights", weights)
        object.__setattr__(self, "columns", columns)


class _BlockState:
    """Preallocated buffers and per-column constants of one block inside :func:`noisy_gd`."""

    def __init__(
        self,
        block: Block,
        theta0: np.ndarray,
        eta: np.ndarray,
        lam: float,
        sigma: np.ndarray,
        seeds: Sequence[np.random.SeedSequence],
        T: int,
        dtype: np.dtype,
        linear_term: np.ndarray | None = None,
    ) -> None:
        cols = block.columns
        n_b, p = block.X.shape
        k_b = cols.size
        self.columns = cols
        # Rows premultiplied by their label: z̃ = (y x)ᵀθ = y θᵀx and the data gradient is
        # Σ_i (−w_i / (1 + exp(z̃_i))) y_i x_i, so the label costs no elementwise pass.
        self.yx = np.ascontiguousarray(block.y[:, None] * block.X, dtype=dtype)
        w = block.weights.astype(dtype)
        self.neg_w: np.ndarray | np.floating
        if w.ndim == 1 and n_b > 0 and np.all(w == w[0]):
            self.neg_w = -w[0]  # equal weights (e.g. 1/n_j): dividing by a scalar is faster
        else:
            self.neg_w = -(w[:, None] if w.ndim == 1 else w)
        self.theta = np.ascontiguousarray(theta0[:, cols], dtype=dtype)
        self.z = np.empty((n_b, k_b), dtype=dtype)
        self.g = np.empty((p, k_b), dtype=dtype)
        self.eta = eta[cols].astype(dtype)
        self.decay = (1.0 - eta[cols] * lam).astype(dtype)
        self.eta_sigma = eta[cols] * sigma[cols]
        self.eta_linear = (
            None
            if linear_term is None
            else np.ascontiguousarray(linear_term[:, cols] * eta[cols], dtype=dtype)
        )
        self.generators = [np.random.Generator(np.random.PCG64(seeds[k])) for k in cols]
        self.chunk = int(max(1, min(T, NOISE_BUFFER_VALUES // max(1, p * k_b))))
        self.draws = np.empty((k_b, self.chunk, p), dtype=np.float64)
        self.scaled_noise = np.empty((self.chunk, p, k_b), dtype=dtype)

    def refill_noise(self, steps: int) -> None:
        """Draw the next ``steps`` noise vectors of every column, scaled by ``η_k σ_k``."""
        for j, generator in enumerate(self.generators):
            generator.standard_normal(out=self.draws[j, :steps])
        np.multiply(
            self.draws[:, :steps].transpose(1, 2, 0),
            self.eta_sigma,
            out=self.scaled_noise[:steps],
            casting="same_kind",
        )

    def step(self, noise_index: int) -> None:
        """One update ``θ ← (1 − ηλ)θ − η G − ησ z`` of all the block's columns, in place."""
        z = self.z
        np.matmul(self.yx, self.theta, out=z)
        # Coefficient −w / (1 + exp(y θᵀx)); exp overflow gives inf and then exactly 0.
        with np.errstate(over="ignore"):
            np.exp(z, out=z)
        np.add(z, 1.0, out=z)
        np.divide(self.neg_w, z, out=z)
        np.matmul(self.yx.T, z, out=self.g)
        self.g *= self.eta
        self.theta *= self.decay
        self.theta -= self.g
        if self.eta_linear is not None:
            self.theta -= self.eta_linear
        self.theta -= self.scaled_noise[noise_index]


def _validate_columns(blocks: Sequence[Block], K: int) -> None:
    """Every column ``0..K−1`` must be trained by exactly one block."""
    counts = np.zeros(K, dtype=np.int64)
    for b, block in enumerate(blocks):
        cols = block.columns
        if cols.min() < 0 or cols.max() >= K:
            raise ValueError(f"block {b} has column indices outside 0..{K - 1}")
        np.add.at(counts, cols, 1)
    if np.any(counts != 1):
        missing = np.flatnonzero(counts == 0)[:5].tolist()
        repeated = np.flatnonzero(counts > 1)[:5].tolist()
        raise ValueError(
            "every parameter column must appear in exactly one block; "
            f"missing e.g. {missing}, repeated e.g. {repeated}"
        )


def noisy_gd(
    blocks: Sequence[Block],
    theta0: np.ndarray,
    eta: np.ndarray,
    lam: float,
    sigma: np.ndarray,
    noise_seeds: Sequence[np.random.SeedSequence],
    T: int,
    dtype: type[np.floating] | np.dtype = np.float32,
    progress: Callable[[int], None] | None = None,
    linear_term: np.ndarray | None = None,
) -> np.ndarray:
    """Run ``K`` noisy gradient descents for ``T`` steps at once and return ``Θ_T``.

    For each column ``k`` (spec M2 update; M3.1/M3.2/M4 through the block rows and weights):
    ``θ_k ← θ_k − η_k (Σ_{i∈block} w_i ∇ℓ(θ_k; x_i, y_i) + λ θ_k + σ_k z_{k,t})`` with
    ``z_{k,t} ~ N(0, I_p)`` the ``t``-th ``p``-vector of ``Generator(PCG64(noise_seeds[k]))``.
    It is evaluated as ``(1 − η_k λ) θ_k − η_k G_k − η_k σ_k z_{k,t}``, with two matrix products
    and three in-place elementwise passes over ``n_b × k_b`` per block and step.

    Args:
        blocks: groups of rows; every column appears in exactly one block.
        theta0: ``(p, K)`` initial parameters.
        eta: ``(K,)`` step sizes.
        lam: regularisation ``λ ≥ 0`` (shared by all columns).
        sigma: ``(K,)`` noise standard deviations (``0`` gives plain gradient descent, M1b).
        noise_seeds: ``K`` seed sequences, one noise stream per column.
        T: number of steps.
        dtype: working precision, ``np.float32`` (default, fast) or ``np.float64``.
        progress: called about every 10% of the work with the equivalent number of steps done
            (blocks run one after another, each for all ``T`` steps).
        linear_term: optional ``(p, K)`` constant gradient ``c_k`` added to every step of
            column ``k`` (``θ_k ← θ_k − η_k(… + c_k + σ_k z)``): the gradient of records with a
            linear loss ``−c_kᵀθ``-type term, e.g. the Dirac gradient canaries of the privacy
            audit (spec audit.md A2). ``None`` (default) adds nothing.

    Returns:
        ``Θ_T`` as a float64 ``(p, K)`` array.
    """
    dtype = np.dtype(dtype)
    if dtype not in _ENGINE_DTYPES:
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    theta0 = np.asarray(theta0, dtype=np.float64)
    if theta0.ndim != 2 or not np.all(np.isfinite(theta0)):
        raise ValueError(f"theta0 must be a finite (p, K) array, got shape {theta0.shape}")
    p, K = theta0.shape
    eta = np.asarray(eta, dtype=np.float64)
    sigma = np.asarray(sigma, dtype=np.float64)
    if eta.shape != (K,) or not np.all(np.isfinite(eta) & (eta > 0)):
        raise ValueError(f"eta must be {K} positive finite step sizes, got shape {eta.shape}")
    if sigma.shape != (K,) or not np.all(np.isfinite(sigma) & (sigma >= 0)):
        raise ValueError(f"sigma must be {K} finite values >= 0, got shape {sigma.shape}")
    if not (np.isfinite(lam) and lam >= 0):
        raise ValueError(f"lam must be finite and >= 0, got {lam!r}")
    if len(noise_seeds) != K or not all(
        isinstance(seed, np.random.SeedSequence) for seed in noise_seeds
    ):
        raise ValueError(f"noise_seeds must be {K} numpy.random.SeedSequence objects")
    if isinstance(T, bool) or not isinstance(T, int | np.integer) or T < 0:
        raise ValueError(f"T must be a non-negative integer, got {T!r}")
    if not blocks:
        raise ValueError("at least one block is needed")
    for b, block in enumerate(blocks):
        if block.X.shape[1] != p:
            raise ValueError(f"block {b} has {block.X.shape[1]} features, theta0 has {p}")
    _validate_columns(blocks, K)
    if linear_term is not None:
        linear_term = np.asarray(linear_term, dtype=np.float64)
        if linear_term.shape != (p, K) or not np.all(np.isfinite(linear_term)):
            raise ValueError(f"linear_term must be a finite ({p}, {K}) array, got {linear_term.shape}")

    # Block-major order: a block's columns depend on no other block, so each block runs all
    # T steps while its rows stay in cache (local party blocks are memory-bound otherwise),
    # and only one block's buffers (noise, activations) exist at a time.
    theta_T = np.empty((p, K), dtype=np.float64)
    work = np.array([max(1, b.X.shape[0] * b.columns.size) for b in blocks], dtype=np.float64)
    total, done, next_report = work.sum(), 0.0, 0.1
    for block, cost in zip(blocks, work, strict=True):
        state = _BlockState(block, theta0, eta, lam, sigma, noise_seeds, T, dtype, linear_term)
        for t in range(T):
            offset = t % state.chunk
            if offset == 0:
                state.refill_noise(min(state.chunk, T - t))
            state.step(offset)
            if progress is not None and (done + cost * (t + 1) / T) / total >= next_report - 1e-12:
                fraction = (done + cost * (t + 1) / T) / total
                progress(T if fraction >= 1 - 1e-12 else int(T * fraction))
                next_report = np.floor(fraction * 10 + 1e-9) / 10 + 0.1
        done += cost
        theta_T[:, state.columns] = state.theta
    return theta_T


def deduplicate(
    X: np.ndarray, y: np.ndarray, weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Merge exactly identical rows, summing their weights (exact: the gradient is unchanged).

    Rows ``i`` and ``j`` merge when ``x_i`` and ``y_i`` are bitwise equal; the merged row
    carries the sum of their weight rows (``(n,)`` or ``(n, k)`` weights). Because the gradient
    is Σ_i w_ik ∇ℓ(θ_k; x_i, y_i), this is exact for every column, whatever the weights (rows
    of different parties or repetitions merge too, with their per-column weights added). The unique rows keep the order of their first occurrence. Heavily
    duplicated data (KDDCup99) thus train much faster with the same objective (spec E8).

    Returns:
        ``(X_u, y_u, w_u)`` with the dtypes of the inputs.
    """
    X = np.ascontiguousarray(X)
    y = np.asarray(y)
    weights = np.asarray(weights)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array (n, p), got shape {X.shape}")
    n = X.shape[0]
    if y.shape != (n,) or weights.shape[:1] != (n,) or weights.ndim not in (1, 2):
        raise ValueError(
            f"y must have shape ({n},) and weights ({n},) or ({n}, k); "
            f"got {y.shape} and {weights.shape}"
        )
    if n == 0:
        return X.copy(), y.copy(), weights.copy()
    w2 = weights.reshape(n, 1) if weights.ndim == 1 else weights
    key_bytes = np.concatenate(
        [
            X.view(np.uint8).reshape(n, -1),
            np.ascontiguousarray(y, dtype=np.float64).view(np.uint8).reshape(n, -1),
        ],
        axis=1,
    )
    keys = key_bytes.view(np.dtype((np.void, key_bytes.shape[1]))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    # Relabel groups by first occurrence so that the output keeps the input order.
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    group = rank[inverse.ravel()]
    first = first[order]
    summed = np.stack(
        [np.bincount(group, weights=w2[:, j], minlength=first.size) for j in range(w2.shape[1])],
        axis=1,
    ).astype(weights.dtype, copy=False)
    w_u = summed.reshape(-1) if weights.ndim == 1 else summed
    return X[first], y[first], w_u
