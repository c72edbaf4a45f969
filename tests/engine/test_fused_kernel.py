"""The compiled fused step kernel of the engine (issue 12; src/mpdp/engine/_gd_kernel.c).

Each test of the kernel runs once per instruction set (AVX2, AVX-512). Without the compiled
kernel (no C compiler at install, or a CPU without AVX2/FMA) these tests skip locally; under CI
(``CI`` set) the AVX2 ones fail instead, because CI installs with a compiler on x86-64. The
AVX-512 ones skip on a CPU without AVX-512.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from test_engine_noisy_gd import make_data, reference_run, seeds

from mpdp.engine import gd as engine
from mpdp.engine import kernel as fused_kernel
from mpdp.engine import layout as engine_layout
from mpdp.engine import path as engine_path
from mpdp.engine.gd import Block, noisy_gd
from mpdp.errors import MpdpError
from mpdp.models.logistic import gradient


def require(isa: str) -> fused_kernel.Kernel:
    """The kernel of ``isa``, else skip; under CI (x86-64 with a compiler) the AVX2 one must
    be there, the AVX-512 one only where the CPU has AVX-512."""
    found = [kernel for kernel in fused_kernel.available() if kernel.isa == isa]
    if found:
        return found[0]
    if isa == "avx2" and os.environ.get("CI"):
        pytest.fail("the compiled engine kernel is not available (no compiler, or no AVX2/FMA)")
    pytest.skip(f"no {isa} kernel here (not compiled, or the CPU lacks {isa})")


@pytest.fixture(params=["avx2", "avx512"])
def kernel(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> fused_kernel.Kernel:
    """Each instruction set's kernel in turn (``MPDP_ENGINE`` set to it)."""
    found = require(request.param)
    monkeypatch.setenv(fused_kernel.ENGINE_VARIABLE, request.param)
    return found


@pytest.fixture(params=["transposed", "row_major"])
def fused_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both kinds of fused block: products from transposed tiles (blocks that fit the cache)
    and from row-major tiles (larger blocks), by moving the size threshold."""
    limit = 1 << 40 if request.param == "transposed" else 0
    monkeypatch.setattr(engine_layout, "FUSED_TRANSPOSED_MAX_BYTES", limit)
    if request.param == "row_major":
        monkeypatch.setattr(engine_layout, "FUSED_TRANSPOSED_WIDE_COLUMNS", 1 << 30)
    return request.param


def literal(X, y, w, theta0, eta, lam, sigma, ss, T, linear=None):
    """Each column by the float64 literal update of spec M2 (plus an optional constant
    gradient, as the audit's canaries use)."""
    cols = []
    for k in range(theta0.shape[1]):
        wk = w[:, k] if w.ndim == 2 else w
        if linear is None:
            cols.append(reference_run(theta0[:, k], X, y, wk, eta[k], lam, sigma[k], ss[k], T))
            continue
        gen = np.random.Generator(np.random.PCG64(ss[k]))
        theta = theta0[:, k].copy()
        for _ in range(T):
            noise = gen.standard_normal(theta.size)
            theta = theta - eta[k] * (gradient(theta, X, y, lam, wk) + linear[:, k] + sigma[k] * noise)
        cols.append(theta)
    return np.stack(cols, axis=1)


# Shapes that exercise every remainder of the kernel: rows not a multiple of its 8-row chunks,
# its 2-6-row blocks or of the tile, columns not a multiple of 4, features not a multiple of 8
# or 16, one row.
@pytest.mark.parametrize(("n", "p", "K"), [(1, 3, 1), (37, 5, 2), (100, 8, 4), (101, 13, 7),
                                           (64, 17, 9), (50, 24, 5), (23, 9, 6), (31, 40, 10)])
@pytest.mark.parametrize("per_column", [False, True])
def test_fused_float32_matches_the_float64_literal_update(kernel, small_tiles, fused_path, n, p, K,
                                                          per_column):
    X, y = make_data(n, p, seed=30 + n)
    rng = np.random.default_rng(31)
    w = rng.random((n, K)) / n if per_column else np.full(n, 1 / n)
    theta0 = rng.standard_normal((p, K))
    eta, sigma, ss = rng.uniform(0.2, 2.0, K), rng.uniform(0.0, 0.3, K), seeds(K, root=32)
    got = noisy_gd([Block(X, y, w, np.arange(K))], theta0, eta, 0.01, sigma, ss, 40)
    expected = literal(X, y, w, theta0, eta, 0.01, sigma, ss, 40)
    np.testing.assert_allclose(got, expected, rtol=0, atol=2e-5 * max(1.0, np.abs(expected).max()))


def test_fused_kernel_keeps_the_linear_term(kernel, small_tiles, fused_path):
    n, p, K, T = 45, 11, 3, 20
    X, y = make_data(n, p, seed=33)
    rng = np.random.default_rng(34)
    theta0, linear = rng.standard_normal((p, K)), rng.standard_normal((p, K))
    eta, sigma, ss = np.full(K, 0.5), np.full(K, 0.1), seeds(K, root=35)
    w = np.full(n, 1 / n)
    got = noisy_gd([Block(X, y, w, np.arange(K))], theta0, eta, 0.02, sigma, ss, T, linear_term=linear)
    expected = literal(X, y, w, theta0, eta, 0.02, sigma, ss, T, linear)
    np.testing.assert_allclose(got, expected, rtol=0, atol=2e-5 * np.abs(expected).max())


def test_fused_kernel_agrees_with_the_numpy_path(kernel, fused_path, monkeypatch):
    X, y = make_data(3000, 105, seed=36)  # Adult's width: padded to 112 features, many tiles
    K, T = 6, 30
    rng = np.random.default_rng(37)
    theta0 = 0.1 * rng.standard_normal((105, K))
    args = (theta0, np.full(K, 1.0), 1e-3, np.full(K, 0.05), seeds(K, root=38), T)
    block = Block(X, y, np.full(3000, 1 / 3000), np.arange(K))
    fused = noisy_gd([block], *args)
    monkeypatch.setenv(fused_kernel.ENGINE_VARIABLE, "numpy")
    blas = noisy_gd([block], *args)
    np.testing.assert_allclose(fused, blas, rtol=0, atol=1e-5 * np.abs(blas).max())


def test_a_column_is_bit_identical_alone_or_in_any_batch(kernel, fused_path):
    # each kind of block adds in an order that depends only on the rows and features, never on
    # the other columns: a run's result does not depend on what it is batched with
    X, y = make_data(500, 21, seed=39)
    K = 7
    rng = np.random.default_rng(40)
    w = rng.random((500, K)) / 500
    theta0, eta = rng.standard_normal((21, K)), rng.uniform(0.5, 2.0, K)
    sigma, ss = np.full(K, 0.2), seeds(K, root=41)
    batch = noisy_gd([Block(X, y, w, np.arange(K))], theta0, eta, 0.01, sigma, ss, 25)
    again = noisy_gd([Block(X, y, w, np.arange(K))], theta0, eta, 0.01, sigma, ss, 25)
    np.testing.assert_array_equal(batch, again)
    for k in (0, 3, 6):
        alone = noisy_gd([Block(X, y, w[:, k], np.arange(1))], theta0[:, [k]], eta[[k]], 0.01,
                         sigma[[k]], [ss[k]], 25)
        np.testing.assert_array_equal(alone[:, 0], batch[:, k])


def test_fused_kernel_saturates_like_the_logistic_function(kernel, fused_path):
    # |z| far beyond float range: the coefficient 1/(1+e^z) must be 0 or 1, never nan or inf
    X = np.array([[1.0, 0.0], [-1.0, 0.0]])
    y = np.array([1.0, 1.0])
    theta0 = np.array([[500.0, -500.0], [0.0, 0.0]])
    got = noisy_gd([Block(X, y, np.full(2, 0.5), np.arange(2))], theta0, np.ones(2), 0.0,
                   np.zeros(2), seeds(2), 1)
    expected = literal(X, y, np.full(2, 0.5), theta0, np.ones(2), 0.0, np.zeros(2), seeds(2), 1)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_fused_kernel_flushes_subnormals_and_restores_the_float_mode(kernel, fused_path):
    # z = 88 (the clamp): the coefficient 0.5 / (1 + e^88) is about 3e-39, a float32
    # subnormal, which the kernel flushes to zero (MXCSR FTZ/DAZ, _gd_kernel.c); the second
    # feature of the row then gets no gradient at all instead of a subnormal one
    X = np.array([[1.0, 1.0]])
    theta0 = np.array([[88.0], [0.0]])
    got = noisy_gd([Block(X, np.ones(1), np.ones(1), np.arange(1))], theta0, np.full(1, 0.5), 0.0,
                   np.zeros(1), seeds(1), 1)
    assert got[0, 0] == 88.0 and got[1, 0] == 0.0
    expected = literal(X, np.ones(1), np.ones(1), theta0, np.full(1, 0.5), 0.0, np.zeros(1), seeds(1), 1)
    assert 0 < expected[1, 0] < 1e-38
    # ... and only while it runs: NumPy's float32 arithmetic keeps its subnormals afterwards
    tiny = np.float32(1e-39)
    assert tiny * np.float32(1.0) == tiny and np.float32(3e-39) / np.float32(3.0) > 0


def test_block_shape_alone_chooses_the_product_layout(kernel):
    # a block is also held transposed while that second copy is small, or when it is wide; the
    # same for both builds (the rule takes no CPU fact)
    X, y = make_data(300, 10, seed=43)
    args = (np.zeros((10, 2)), np.ones(2), 0.0, np.zeros(2), seeds(2), 5)
    small = engine._FusedBlockState(kernel, Block(X, y, np.full(300, 1 / 300), np.arange(2)), *args)
    assert small.yx_tiles is not None and small.tile_rows % kernel.lanes == 0
    assert small.yx.nbytes <= engine_layout.FUSED_TRANSPOSED_MAX_BYTES
    big_n = engine_layout.FUSED_TRANSPOSED_MAX_BYTES // (4 * 16) + 1
    Xb, yb = np.resize(X, (big_n, 10)), np.resize(y, big_n)
    big = engine._FusedBlockState(kernel, Block(Xb, yb, np.full(big_n, 1 / big_n), np.arange(2)), *args)
    assert big.yx_tiles is None
    # a large block with many columns is transposed too, in either build
    for K, expected in ((engine_layout.FUSED_TRANSPOSED_WIDE_COLUMNS, True),
                        (engine_layout.FUSED_TRANSPOSED_WIDE_COLUMNS - 1, False)):
        args = (np.zeros((10, K)), np.ones(K), 0.0, np.zeros(K), seeds(K), 5)
        state = engine._FusedBlockState(kernel, Block(Xb, yb, np.full(big_n, 1 / big_n), np.arange(K)),
                                        *args)
        assert (state.yx_tiles is not None) is expected
        assert engine_layout.fused_transposed(big_n, 16, K) is expected


@pytest.mark.parametrize(("n", "p", "K"), [(3000, 105, 6), (501, 21, 7), (37, 5, 2), (64, 17, 13)])
def test_avx512_and_avx2_kernels_are_bit_identical(fused_path, monkeypatch, n, p, K):
    # the two builds add the same terms in the same order (_gd_kernel_simd.h), with different
    # tile sizes: their results must not differ in a single bit
    require("avx2")
    require("avx512")
    X, y = make_data(n, p, seed=47)
    rng = np.random.default_rng(48)
    w = rng.random((n, K)) / n
    args = (0.1 * rng.standard_normal((p, K)), rng.uniform(0.5, 2.0, K), 1e-3, np.full(K, 0.05),
            seeds(K, root=49), 20)
    results = {}
    for isa in ("avx2", "avx512"):
        monkeypatch.setenv(fused_kernel.ENGINE_VARIABLE, isa)
        results[isa] = noisy_gd([Block(X, y, w, np.arange(K))], *args)
    np.testing.assert_array_equal(results["avx512"], results["avx2"])


def test_both_product_layouts_agree(kernel, monkeypatch):
    X, y = make_data(2000, 105, seed=44)
    K, T = 9, 30
    rng = np.random.default_rng(45)
    w = rng.random((2000, K)) / 2000
    args = (0.1 * rng.standard_normal((105, K)), np.full(K, 1.0), 1e-3, np.full(K, 0.05),
            seeds(K, root=46), T)
    block = Block(X, y, w, np.arange(K))
    monkeypatch.setattr(engine_layout, "FUSED_TRANSPOSED_MAX_BYTES", 1 << 40)
    transposed = noisy_gd([block], *args)
    monkeypatch.setattr(engine_layout, "FUSED_TRANSPOSED_MAX_BYTES", 0)
    monkeypatch.setattr(engine_layout, "FUSED_TRANSPOSED_WIDE_COLUMNS", 1 << 30)
    row_major = noisy_gd([block], *args)
    np.testing.assert_allclose(transposed, row_major, rtol=0, atol=1e-5 * np.abs(row_major).max())


def test_engine_variable_chooses_or_refuses(monkeypatch):
    monkeypatch.setenv(fused_kernel.ENGINE_VARIABLE, "numpy")
    assert fused_kernel.load() is None
    assert "NumPy" in engine_path.describe_training()
    monkeypatch.setenv(fused_kernel.ENGINE_VARIABLE, "gpu")
    with pytest.raises(MpdpError, match="expected one of"):
        fused_kernel.load()
    kernels = fused_kernel.available()
    for isa in fused_kernel.ISAS:
        monkeypatch.setenv(fused_kernel.ENGINE_VARIABLE, isa)
        if any(kernel.isa == isa for kernel in kernels):
            assert fused_kernel.load().isa == isa
            assert fused_kernel.ISAS[isa][1] in engine_path.describe_training()
        else:
            with pytest.raises(MpdpError, match="lacks"):
                fused_kernel.load()
    monkeypatch.setenv(fused_kernel.ENGINE_VARIABLE, "fused")
    if kernels:  # the best one: AVX-512 where the CPU has it
        assert fused_kernel.load() == kernels[0]
        assert kernels[0].lanes == max(kernel.lanes for kernel in kernels)
    monkeypatch.setattr(fused_kernel, "_load_library", lambda: None)
    with pytest.raises(MpdpError, match="compiled kernel is missing"):
        fused_kernel.load()
    monkeypatch.setenv(fused_kernel.ENGINE_VARIABLE, "auto")
    assert fused_kernel.load() is None


def test_float64_never_uses_the_kernel(monkeypatch):
    # the float64 path is the exact reference; the kernel is float32 only
    monkeypatch.setattr(fused_kernel, "load", lambda: pytest.fail("kernel asked for in float64"))
    X, y = make_data(20, 3, seed=42)
    noisy_gd([Block(X, y, np.full(20, 0.05), np.arange(1))], np.zeros((3, 1)), [0.1], 0.0, [0.0],
             seeds(1), 3, dtype=np.float64)
    assert engine_layout.FUSED_TILE_BYTES >= 4 * 8 * 3
