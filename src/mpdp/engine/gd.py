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
``noise_sharing: shared`` option of M3.1). The fused path draws the same values with the
compiled copy of NumPy's generator in :mod:`mpdp.engine.noise` (checked against NumPy on
every load; NumPy itself where that copy is unavailable).

Speed (issue 12, measured in ``perf/README.md``): each block runs all ``T`` steps before
the next one. In float32 on x86-64 CPUs with AVX2 and FMA, a compiled kernel
(``_gd_kernel.c``, loaded by :mod:`mpdp.engine.kernel`; :class:`_FusedBlockState`; its AVX-512
build where the CPU has AVX-512) runs many steps per call, each one pass over the block's rows
in cache-sized tiles: the products, the coefficients (a vectorised ``exp``) and the tile's
share of ``G`` while the tile is in cache. Small blocks and wide ones keep their rows
transposed tile by tile too, so that the products need no horizontal sums; the other blocks
are read row-major only. Which blocks is decided by the block's shape alone
(:func:`fused_transposed`, rule :data:`LAYOUT_RULE`), never by the CPU, and the AVX2 and
AVX-512 builds add the same terms in the same order, so the fused path gives bit-identical
results on every x86-64 CPU with AVX2 and FMA; within each layout the additions are ordered by
rows and features only, so a run's result is also the same alone or in any batch. Otherwise
(float64, which is the exact reference of the tests, other CPUs, no compiler at install, or
``MPDP_ENGINE=numpy``) a step walks the rows in tiles (:func:`tile_rows`) sized for OpenBLAS's small-matrix kernel or the L2 cache; skinny blocks
keep their parameters transposed, and the step sizes are folded into the coefficient
weights, so a step is two products and three elementwise passes per tile plus three updates
of ``Θ``. Both paths compute the same recursion and differ only in rounding.

The engine sets no BLAS thread count (the caller does, e.g. with ``threadpoolctl``) and uses
the CPU only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from mpdp.engine import kernel as fused_kernel
from mpdp.engine import noise as normal_stream
from mpdp.engine import path
from mpdp.engine.layout import (
    FUSED_TILE_BYTES,
    FUSED_TRANSPOSED_TILE_BYTES,
    fused_transposed,
)

_LOG = logging.getLogger("mpdp")

#: Number of noise values held per block between refills (about 8 MB in float64 on the NumPy
#: path, 4 MB of scaled float32 on the fused one); the number of steps drawn at once is this
#: divided by ``p k_b``. It does not change any value.
NOISE_BUFFER_VALUES = 1 << 20

_ENGINE_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

#: Largest ``rows · p · k_b`` of a row tile's product ``X_tile Θ``. OpenBLAS (0.3.x, x86-64)
#: multiplies products with M·N·K ≤ 10⁶ by its unpacked small-matrix kernel, which on skinny
#: blocks (few columns) runs 2× faster than the packed GEMM of the whole block.
SMALL_PRODUCT = 1_000_000
#: Fewest rows of a small-kernel tile; fatter blocks use :data:`CACHE_TILE_ROWS` rows instead.
MIN_SMALL_TILE_ROWS = 64
#: Rows of a tile of a fat block (many columns): its rows stay in the L2 cache between the two
#: products of a step, so the data is read from memory once per step instead of twice.
CACHE_TILE_ROWS = 512
#: Blocks with at most this many columns keep their parameters as ``(k_b, p)`` (see
#: :class:`_BlockState`): ``Θᵀ Xᵀ`` with few rows runs 10–40 % faster than ``X Θ`` with few columns.
TRANSPOSED_MAX_COLUMNS = 12


def tile_rows(n_b: int, p: int, k_b: int) -> int:
    """Rows per tile of a block's step (the last tile may be shorter by less than a tile count).

    A step computes, tile by tile, ``Z_c = X_c Θ``, the coefficients and ``G += X_cᵀ S_c``. The
    tile is as tall as the small-matrix bound :data:`SMALL_PRODUCT` allows, or
    :data:`CACHE_TILE_ROWS` when that would be shorter than :data:`MIN_SMALL_TILE_ROWS`; the
    rows are then spread evenly over the tiles. It depends only on the shapes, so a run's
    arithmetic (and its rounding) is the same on every call with the same block.
    """
    rows = SMALL_PRODUCT // max(1, p * k_b)
    if rows < MIN_SMALL_TILE_ROWS:
        rows = CACHE_TILE_ROWS
    if rows >= n_b:
        return max(1, n_b)
    tiles = -(-n_b // rows)
    return -(-n_b // tiles)


def column_flops(blocks: Sequence[Block], K: int, T: int) -> np.ndarray:
    """Flops of the two products of :func:`noisy_gd` spent on each of its ``K`` columns.

    Column ``k`` of a block with ``n_b`` rows costs ``4 n_b p T`` (two products of ``2 n_b p``
    per step). The elementwise passes and the noise are not counted: the sum is the work the
    dense-GEMM bound of ``perf/bench_engine.py --full`` is computed for (spec E8).
    """
    flops = np.zeros(K, dtype=np.float64)
    for block in blocks:
        flops[block.columns] = 4.0 * block.X.shape[0] * block.X.shape[1] * T
    return flops


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
    """Preallocated buffers and per-column constants of one block inside :func:`noisy_gd`.

    Two layouts give the same arithmetic: ``(p, k_b)`` parameters (``Z = X Θ``, ``G = Xᵀ S``)
    for blocks with many columns, and, for skinny blocks (at most
    :data:`TRANSPOSED_MAX_COLUMNS` columns), ``(k_b, p)`` parameters (``Zᵀ = Θᵀ Xᵀ``,
    ``Gᵀ = Sᵀ X``), whose products OpenBLAS multiplies faster when ``k_b`` is small. The step
    sizes are folded into the coefficient weights (``S = −η w / (1 + exp z)``), so a step is
    two products and three elementwise passes per row tile (:func:`tile_rows`) and three
    updates of the parameters.
    """

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
        self.transposed = k_b <= TRANSPOSED_MAX_COLUMNS
        # Rows premultiplied by their label: z̃ = (y x)ᵀθ = y θᵀx and the data gradient is
        # Σ_i (−w_i / (1 + exp(z̃_i))) y_i x_i, so the label costs no elementwise pass.
        yx = np.ascontiguousarray(block.y[:, None] * block.X, dtype=dtype)
        eta_c = eta[cols]
        # Coefficient weights −η_k w_ik as an (n_b, k_b) array, or (1, k_b) for equal weights.
        w = np.asarray(block.weights, dtype=np.float64)
        if w.ndim == 1 and n_b > 0 and np.all(w == w[0]):
            coef = (-w[0] * eta_c)[None, :]
        else:
            coef = -(w[:, None] if w.ndim == 1 else w) * eta_c[None, :]
        coef = coef.astype(dtype)
        theta = theta0[:, cols]
        decay = 1.0 - eta_c * lam
        eta_linear = None if linear_term is None else linear_term[:, cols] * eta_c
        if self.transposed:
            theta, decay, coef = theta.T, decay[:, None], coef.T
            eta_linear = None if eta_linear is None else eta_linear.T
        self.theta = np.ascontiguousarray(theta, dtype=dtype)
        self.decay = decay.astype(dtype)
        self.eta_linear = None if eta_linear is None else np.ascontiguousarray(eta_linear, dtype=dtype)
        self.g = np.empty_like(self.theta)
        self.g_tile = np.empty_like(self.theta)
        self.tiles = [self._tile(yx, coef, a, min(n_b, a + rows))
                      for rows in [tile_rows(n_b, p, k_b)] for a in range(0, max(n_b, 1), rows)]
        self.eta_sigma = eta_c * sigma[cols]
        self.generators = [np.random.Generator(np.random.PCG64(seeds[k])) for k in cols]
        self.chunk = int(max(1, min(T, NOISE_BUFFER_VALUES // max(1, p * k_b))))
        self.draws = np.empty((k_b, self.chunk, p), dtype=np.float64)
        self.scaled_noise = np.empty((self.chunk, *self.theta.shape), dtype=dtype)

    def _tile(self, yx: np.ndarray, coef: np.ndarray, start: int, stop: int) -> tuple[np.ndarray, ...]:
        """Operands of rows ``start:stop``: (left, right) of ``Z``, ``Z``, weights, (left,
        right) of ``G``; views of the block's arrays, or contiguous copies where that is faster."""
        x = yx[start:stop]
        k_b = self.theta.shape[0] if self.transposed else self.theta.shape[1]
        if self.transposed:
            z = np.empty((k_b, stop - start), dtype=yx.dtype)
            weights = coef if coef.shape[1] == 1 else coef[:, start:stop]
            return self.theta, np.ascontiguousarray(x.T), z, weights, z, x
        z = np.empty((stop - start, k_b), dtype=yx.dtype)
        weights = coef if coef.shape[0] == 1 else coef[start:stop]
        return x, self.theta, z, weights, x.T, z

    def refill_noise(self, steps: int) -> None:
        """Draw the next ``steps`` noise vectors of every column, scaled by ``η_k σ_k``."""
        for j, generator in enumerate(self.generators):
            generator.standard_normal(out=self.draws[j, :steps])
        draws = self.draws[:, :steps]
        np.multiply(
            draws.transpose(1, 0, 2) if self.transposed else draws.transpose(1, 2, 0),
            self.eta_sigma[:, None] if self.transposed else self.eta_sigma,
            out=self.scaled_noise[:steps],
            casting="same_kind",
        )

    def step(self, noise_index: int) -> None:
        """One update ``θ ← (1 − ηλ)θ − η G − ησ z`` of all the block's columns, in place.

        The data gradient ``η G = Σ_c X_cᵀ S_c`` is accumulated over the row tiles. Call it
        with floating-point overflow warnings off (``exp`` overflows to ``inf``, then the
        coefficient is exactly 0).
        """
        theta, g, g_tile = self.theta, self.g, self.g_tile
        for index, (left, right, z, weights, left_g, right_g) in enumerate(self.tiles):
            np.matmul(left, right, out=z)
            np.exp(z, out=z)
            np.add(z, 1.0, out=z)
            np.divide(weights, z, out=z)
            if index == 0:
                np.matmul(left_g, right_g, out=g)
            else:
                np.matmul(left_g, right_g, out=g_tile)
                g += g_tile
        theta *= self.decay
        theta -= g
        if self.eta_linear is not None:
            theta -= self.eta_linear
        theta -= self.scaled_noise[noise_index]

    def advance(self, noise_index: int, steps: int) -> None:
        """``steps`` calls of :meth:`step`, using the noise from ``noise_index`` on."""
        for offset in range(noise_index, noise_index + steps):
            self.step(offset)

    def final(self) -> np.ndarray:
        """The parameters as ``(p, k_b)``."""
        return self.theta.T if self.transposed else self.theta


def _transposed_tiles(rows: np.ndarray, tile_rows: int) -> np.ndarray:
    """``(n, c)`` rows as ``(tiles, c, tile_rows)`` float32, tile by tile transposed, the rows
    past ``n`` zero: the layout of the fused kernel's transposed tiles (``_gd_kernel.c``)."""
    n, c = rows.shape
    tiles = -(-n // tile_rows)
    padded = np.zeros((tiles * tile_rows, c), dtype=np.float32)
    padded[:n] = rows
    return np.ascontiguousarray(padded.reshape(tiles, tile_rows, c).transpose(0, 2, 1))


class _FusedBlockState:
    """A float32 block stepped by the compiled kernel (``_gd_kernel.c``, :mod:`mpdp.engine.kernel`).

    Same recursion and operands as :class:`_BlockState` (rows premultiplied by their label,
    ``S = −η w / (1 + exp z)``, ``θ ← (1 − ηλ)θ − Σ_i s_i x_i − η c − ησ z``), but one C call
    runs many steps, and each step is one pass over the rows in tiles of
    :data:`FUSED_TILE_BYTES` (or :data:`FUSED_TRANSPOSED_TILE_BYTES` per copy, a multiple of
    the kernel's lanes): products, coefficients and the gradient share of a tile are computed
    while it is in cache. Parameters are kept as ``(k_b, P)`` with ``P`` the feature count
    rounded up to a multiple of 8 (zero padding, which stays zero). The rows are held row-major
    ``(n_b, P)`` and, where :func:`fused_transposed` says so (by the block's shape only), also
    transposed tile by tile
    ``(tiles, p, tile_rows)`` for the products (the two kinds of block add a product's terms
    in different orders).
    """

    def __init__(
        self,
        kernel: fused_kernel.Kernel,
        block: Block,
        theta0: np.ndarray,
        eta: np.ndarray,
        lam: float,
        sigma: np.ndarray,
        seeds: Sequence[np.random.SeedSequence],
        T: int,
        linear_term: np.ndarray | None = None,
    ) -> None:
        cols = block.columns
        n_b, p = block.X.shape
        k_b = cols.size
        P = -(-p // 8) * 8
        self.kernel, self.columns, self.p = kernel, cols, p
        self.yx = np.zeros((n_b, P), dtype=np.float32)
        self.yx[:, :p] = block.y[:, None] * block.X
        transposed = fused_transposed(n_b, P, k_b)
        # transposed tiles: a multiple of the kernel's lanes; row-major ones: any count
        if transposed:
            lanes = kernel.lanes
            budget = FUSED_TRANSPOSED_TILE_BYTES[lanes] // (4 * P) // lanes * lanes
            self.tile_rows = max(lanes, budget)
        else:
            self.tile_rows = max(3, FUSED_TILE_BYTES // (4 * P))
        self.yx_tiles = _transposed_tiles(self.yx[:, :p], self.tile_rows) if transposed else None
        eta_c = eta[cols]
        w = np.asarray(block.weights, dtype=np.float64)
        self.per_row = not (w.ndim == 1 and n_b > 0 and np.all(w == w[0]))
        if self.per_row:  # (n_b, k_b), or tile by tile (tiles, k_b, tile_rows) when transposed
            coef = (-(w[:, None] if w.ndim == 1 else w) * eta_c[None, :]).astype(np.float32)
            self.coef = _transposed_tiles(coef, self.tile_rows) if transposed else coef
        else:
            self.coef = np.ascontiguousarray(-w[0] * eta_c, dtype=np.float32)
        self.theta = np.zeros((k_b, P), dtype=np.float32)
        self.theta[:, :p] = theta0[:, cols].T
        self.decay = np.ascontiguousarray(1.0 - eta_c * lam, dtype=np.float32)
        self.eta_linear = None
        if linear_term is not None:
            self.eta_linear = np.zeros((k_b, P), dtype=np.float32)
            self.eta_linear[:, :p] = (linear_term[:, cols] * eta_c).T
        self.noise = normal_stream.NoiseStreams([seeds[k] for k in cols], eta_c * sigma[cols])
        self.chunk = int(max(1, min(T, NOISE_BUFFER_VALUES // max(1, p * k_b))))
        self.scaled_noise = np.zeros((self.chunk, k_b, P), dtype=np.float32)

    def refill_noise(self, steps: int) -> None:
        """Draw the next ``steps`` noise vectors of every column, scaled by ``η_k σ_k``
        (:class:`~mpdp.engine.noise.NoiseStreams`: NumPy's values, drawn by compiled code)."""
        self.noise.fill(self.scaled_noise[:steps], self.p)

    def advance(self, noise_index: int, steps: int) -> None:
        """Run ``steps`` steps in one kernel call, using the noise from ``noise_index`` on."""
        if steps <= 0 or self.yx.shape[0] == 0:
            if steps > 0:  # no rows: the gradient is zero
                for offset in range(noise_index, noise_index + steps):
                    self.theta *= self.decay[:, None]
                    if self.eta_linear is not None:
                        self.theta -= self.eta_linear
                    self.theta -= self.scaled_noise[offset]
            return
        noise = self.scaled_noise[noise_index : noise_index + steps]
        n_b, P = self.yx.shape
        self.kernel.run(
            self.yx.ctypes.data, None if self.yx_tiles is None else self.yx_tiles.ctypes.data,
            n_b, self.p, P, self.theta.ctypes.data, self.theta.shape[0], self.coef.ctypes.data,
            int(self.per_row), self.decay.ctypes.data,
            None if self.eta_linear is None else self.eta_linear.ctypes.data, noise.ctypes.data,
            steps, self.tile_rows,
        )

    def final(self) -> np.ndarray:
        """The parameters as ``(p, k_b)``."""
        return self.theta[:, : self.p].T


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
    kernel = fused_kernel.load() if dtype == np.float32 else None
    record(dtype.name)  # the results rows' provenance; logs a fallback
    for block, cost in zip(blocks, work, strict=True):
        state: _BlockState | _FusedBlockState
        if kernel is not None:
            state = _FusedBlockState(kernel, block, theta0, eta, lam, sigma, noise_seeds, T, linear_term)
        else:
            state = _BlockState(block, theta0, eta, lam, sigma, noise_seeds, T, dtype, linear_term)
        # Steps after which progress is reported (about every tenth of all the work).
        reports: dict[int, int] = {}
        if progress is not None:
            for t in range(1, T + 1):
                fraction = (done + cost * t / T) / total
                if fraction >= next_report - 1e-12:
                    reports[t] = T if fraction >= 1 - 1e-12 else int(T * fraction)
                    next_report = np.floor(fraction * 10 + 1e-9) / 10 + 0.1
        stops = sorted({*reports, *range(state.chunk, T, state.chunk), T})
        t = 0
        with np.errstate(over="ignore"):
            for stop in stops:
                if t % state.chunk == 0 and t < T:
                    state.refill_noise(min(state.chunk, T - t))
                state.advance(t % state.chunk, stop - t)
                t = stop
                if t in reports:
                    progress(reports[t])
        done += cost
        theta_T[:, state.columns] = state.final()
    return theta_T


def row_keys(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Integer keys of the rows ``(x_i, y_i)``: equal exactly when the rows are bitwise equal.

    Computed once for a data set, they let :func:`deduplicate` merge the rows of many subsets
    (party blocks) without comparing their bytes again.
    """
    X = np.ascontiguousarray(X)
    n = X.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    key_bytes = np.concatenate(
        [
            X.view(np.uint8).reshape(n, -1),
            np.ascontiguousarray(y, dtype=np.float64).view(np.uint8).reshape(n, -1),
        ],
        axis=1,
    )
    keys = key_bytes.view(np.dtype((np.void, key_bytes.shape[1]))).ravel()
    return np.unique(keys, return_inverse=True)[1].ravel().astype(np.int64)


def deduplicate(
    X: np.ndarray, y: np.ndarray, weights: np.ndarray, keys: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Merge exactly identical rows, summing their weights (exact: the gradient is unchanged).

    Rows ``i`` and ``j`` merge when ``x_i`` and ``y_i`` are bitwise equal; the merged row
    carries the sum of their weight rows (``(n,)`` or ``(n, k)`` weights). Because the gradient
    is Σ_i w_ik ∇ℓ(θ_k; x_i, y_i), this is exact for every column, whatever the weights (rows
    of different parties or repetitions merge too, with their per-column weights added). The unique rows keep the order of their first occurrence. Heavily
    duplicated data (KDDCup99) thus train much faster with the same objective (spec E8).

    ``keys`` (optional): :func:`row_keys` of these rows (e.g. ``row_keys(X_all, y_all)[rows]``),
    which gives the same result faster than comparing the rows' bytes.

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
    if keys is None:
        keys = row_keys(X, y)
    elif np.shape(keys) != (n,):
        raise ValueError(f"keys must have shape ({n},), got {np.shape(keys)}")
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


#: what noisy_gd used in this process, by dtype name ("float32", "float64")
_USED: dict[str, path.Provenance] = {}


def record(dtype: str) -> path.Provenance:
    """Note that :func:`mpdp.engine.gd.noisy_gd` trains in ``dtype`` now and return its provenance;
    the first time per dtype it is logged (a WARNING for a fallback)."""
    provenance, fallback = path.current(dtype)
    if _USED.get(dtype) != provenance:
        _USED[dtype] = provenance
        _LOG.info("%s", path.describe(provenance))
        if fallback is not None:
            _LOG.warning("engine fallback: %s", fallback)
    return provenance


def used() -> dict[str, path.Provenance]:
    """What the engine used in this process so far, by dtype."""
    return dict(_USED)
