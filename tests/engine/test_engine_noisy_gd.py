"""Tests of the batched noisy-GD engine (spec M2, M3.1, M3.2, M4; experiments.md E8)."""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest

from mpdp.engine import gd as engine
from mpdp.engine.gd import Block, deduplicate, noisy_gd
from mpdp.models.logistic import gradient, solve_optimum


def make_data(n: int, p: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows with ‖x‖ ≤ 1 (spec §0.1) and random labels ±1."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    return X, y


def seeds(K: int, root: int = 0) -> list[np.random.SeedSequence]:
    return np.random.SeedSequence(root).spawn(K)


def reference_run(
    theta0: np.ndarray,
    X: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    eta: float,
    lam: float,
    sigma: float,
    seed: np.random.SeedSequence,
    T: int,
) -> np.ndarray:
    """The literal update of spec M2 with the float64 reference gradient."""
    generator = np.random.Generator(np.random.PCG64(seed))
    theta = theta0.copy()
    for _ in range(T):
        noise = generator.standard_normal(theta.size)
        theta = theta - eta * (gradient(theta, X, y, lam, w) + sigma * noise)
    return theta


def test_matches_literal_update_in_float64_and_float32() -> None:
    X, y = make_data(120, 5, seed=0)
    w = np.full(120, 1 / 120)
    K, T, lam = 3, 30, 0.01
    theta0 = np.random.default_rng(1).standard_normal((5, K))
    eta, sigma, ss = np.array([0.2, 1.0, 2.0]), np.array([0.0, 0.1, 1.0]), seeds(K)
    expected = np.stack(
        [reference_run(theta0[:, k], X, y, w, eta[k], lam, sigma[k], ss[k], T) for k in range(K)],
        axis=1,
    )
    block = Block(X, y, w, np.arange(K))
    got64 = noisy_gd([block], theta0, eta, lam, sigma, ss, T, dtype=np.float64)
    np.testing.assert_allclose(got64, expected, atol=1e-12)
    got32 = noisy_gd([block], theta0, eta, lam, sigma, ss, T)
    assert got32.dtype == np.float64
    np.testing.assert_allclose(got32, expected, atol=1e-4)


def test_noiseless_gd_reaches_the_optimum() -> None:
    X, y = make_data(200, 6, seed=2)
    lam = 0.1
    theta_star = solve_optimum(X, y, lam)
    K = 2
    theta0 = np.random.default_rng(3).standard_normal((6, K))
    eta = np.array([1.0 / (0.25 + lam), 0.5])
    block = Block(X, y, np.full(200, 1 / 200), np.arange(K))
    theta_T = noisy_gd([block], theta0, eta, lam, np.zeros(K), seeds(K), 300, dtype=np.float64)
    np.testing.assert_allclose(theta_T, np.repeat(theta_star[:, None], K, axis=1), atol=1e-6)


def batch_problem() -> tuple[list[Block], np.ndarray, np.ndarray, np.ndarray]:
    """Five columns in two blocks with different rows, weights, step sizes and noise."""
    XA, yA = make_data(90, 4, seed=4)
    XB, yB = make_data(40, 4, seed=5)
    blocks = [
        Block(XA, yA, np.full(90, 1 / 90), np.array([0, 3, 4])),
        Block(XB, yB, np.full(40, 1 / 40), np.array([2, 1])),
    ]
    theta0 = np.random.default_rng(6).standard_normal((4, 5))
    eta = np.array([0.5, 1.0, 0.1, 2.0, 1.5])
    sigma = np.array([0.3, 0.0, 1.0, 0.05, 0.2])
    return blocks, theta0, eta, sigma


@pytest.mark.parametrize(("dtype", "atol"), [(np.float64, 1e-10), (np.float32, 1e-4)])
def test_run_alone_equals_run_inside_a_batch(dtype: type, atol: float) -> None:
    blocks, theta0, eta, sigma = batch_problem()
    ss = seeds(5)
    batched = noisy_gd(blocks, theta0, eta, 0.01, sigma, ss, 40, dtype=dtype)
    for k in range(5):
        home = next(b for b in blocks if k in b.columns)
        alone = noisy_gd(
            [Block(home.X, home.y, home.weights, np.array([0]))],
            theta0[:, [k]],
            eta[[k]],
            0.01,
            sigma[[k]],
            [ss[k]],
            40,
            dtype=dtype,
        )
        np.testing.assert_allclose(batched[:, k], alone[:, 0], atol=atol)


def test_noise_chunking_does_not_change_results(monkeypatch: pytest.MonkeyPatch) -> None:
    blocks, theta0, eta, sigma = batch_problem()
    ss = seeds(5)
    results = []
    for steps_per_chunk in (1, 7, 1000):
        # The largest block has p * k_b = 4 * 3 values per step.
        monkeypatch.setattr(engine, "NOISE_BUFFER_VALUES", 12 * steps_per_chunk)
        results.append(noisy_gd(blocks, theta0, eta, 0.01, sigma, ss, 25, dtype=np.float64))
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], results[2])


def test_generator_draws_in_chunks_equal_one_draw() -> None:
    seed = np.random.SeedSequence(42)
    whole = np.random.Generator(np.random.PCG64(seed)).standard_normal((23, 6))
    generator = np.random.Generator(np.random.PCG64(seed))
    buffer = np.empty((5, 6))
    parts = []
    for start in range(0, 23, 5):
        steps = min(5, 23 - start)
        generator.standard_normal(out=buffer[:steps])
        parts.append(buffer[:steps].copy())
    np.testing.assert_array_equal(np.concatenate(parts), whole)


def test_injected_noise_has_the_right_law() -> None:
    # With zero rows and λ = 0 the data gradient vanishes: θ_T − θ_0 = −η σ Σ_t z_t.
    K, p, T = 200, 10, 50
    rng = np.random.default_rng(7)
    eta, sigma = rng.uniform(0.1, 1.0, K), rng.uniform(0.5, 2.0, K)
    theta0 = rng.standard_normal((p, K))
    ss = seeds(K, root=8)
    block = Block(np.zeros((3, p)), np.ones(3), np.full(3, 1 / 3), np.arange(K))
    delta = noisy_gd([block], theta0, eta, 0.0, sigma, ss, T, dtype=np.float64) - theta0
    standardised = delta / (eta * sigma * np.sqrt(T))  # i.i.d. N(0, 1) if correct
    assert abs(standardised.mean()) < 4.0 / np.sqrt(standardised.size)
    assert abs(standardised.var() - 1.0) < 4.0 * np.sqrt(2.0 / standardised.size)
    # Exact: the noise is the column's own stream, t-th block of p normals at step t.
    for k in (0, 123):
        z = np.random.Generator(np.random.PCG64(ss[k])).standard_normal((T, p))
        np.testing.assert_allclose(delta[:, k], -eta[k] * sigma[k] * z.sum(axis=0), atol=1e-12)


def test_shared_seed_gives_shared_noise() -> None:
    seed = np.random.SeedSequence(9)
    block = Block(np.zeros((2, 3)), np.ones(2), np.full(2, 0.5), np.arange(2))
    theta_T = noisy_gd([block], np.zeros((3, 2)), np.ones(2), 0.0, np.ones(2), [seed, seed], 5)
    np.testing.assert_array_equal(theta_T[:, 0], theta_T[:, 1])


def test_per_column_weights_equal_separate_blocks() -> None:
    X, y = make_data(70, 4, seed=10)
    rng = np.random.default_rng(11)
    W = rng.random((70, 3)) / 70
    theta0 = rng.standard_normal((4, 3))
    eta, sigma, ss = np.array([0.5, 1.0, 1.5]), np.array([0.1, 0.2, 0.0]), seeds(3)
    joint = noisy_gd([Block(X, y, W, np.arange(3))], theta0, eta, 0.01, sigma, ss, 30, np.float64)
    separate = noisy_gd(
        [Block(X, y, W[:, k], np.array([k])) for k in range(3)],
        theta0,
        eta,
        0.01,
        sigma,
        ss,
        30,
        np.float64,
    )
    np.testing.assert_allclose(joint, separate, atol=1e-12)


def test_exp_overflow_gives_zero_coefficient_not_nan() -> None:
    # Margins y θᵀx of ±1000 overflow exp in float32 and float64.
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    y = np.array([1.0, -1.0])
    theta0 = np.array([[1000.0], [1000.0]])
    w = np.array([0.5, 0.5])
    expected = theta0[:, 0] - 0.1 * gradient(theta0[:, 0], X, y, 0.0, w)
    for dtype in (np.float32, np.float64):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = noisy_gd(
                [Block(X, y, w, np.array([0]))], theta0, [0.1], 0.0, [0.0], seeds(1), 1, dtype
            )
        np.testing.assert_allclose(got[:, 0], expected, rtol=1e-6)


def test_deduplicate_merges_identical_rows_summing_weights() -> None:
    X = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0], [3.0, 4.0], [1.0, 2.0]])
    y = np.array([1.0, 1.0, -1.0, 1.0, 1.0])
    w = np.array([0.1, 0.1, 0.1, 0.2, 0.3])
    X_u, y_u, w_u = deduplicate(X, y, w)
    np.testing.assert_array_equal(X_u, [[1.0, 2.0], [1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(y_u, [1.0, -1.0, 1.0])
    np.testing.assert_allclose(w_u, [0.5, 0.1, 0.2])
    W = np.stack([w, np.array([0.1, 0.0, 0.5, 0.2, 0.1])], axis=1)
    X_u, y_u, W_u = deduplicate(X, y, W)
    np.testing.assert_allclose(W_u, [[0.5, 0.2], [0.1, 0.5], [0.2, 0.2]])


def test_deduplicate_with_precomputed_row_keys_is_identical() -> None:
    # issue 12: keys computed once for the data set, then used for many row subsets
    X, y = make_data(50, 4, seed=16)
    rng = np.random.default_rng(17)
    index = rng.integers(0, 50, size=300)
    X_all, y_all = X[index], np.where(rng.random(300) < 0.1, -y[index], y[index])
    keys = engine.row_keys(X_all, y_all)
    assert np.array_equal(keys[:, None] == keys[None, :],
                          np.all(X_all[:, None] == X_all[None, :], axis=2) & (y_all[:, None] == y_all[None, :]))
    for rows in (rng.permutation(300)[:120], np.arange(300), rng.integers(0, 300, size=80)):
        W = rng.random((rows.size, 3))
        plain = deduplicate(X_all[rows], y_all[rows], W)
        keyed = deduplicate(X_all[rows], y_all[rows], W, keys=keys[rows])
        for a, b in zip(plain, keyed, strict=True):
            np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="keys must have shape"):
        deduplicate(X_all, y_all, np.ones(300), keys=keys[:10])


def test_deduplicate_leaves_trajectories_unchanged() -> None:
    X, y = make_data(60, 5, seed=12)
    rng = np.random.default_rng(13)
    index = rng.integers(0, 60, size=400)  # heavy duplication, like KDDCup99
    X_dup, y_dup = X[index], y[index]
    w_dup = np.full(400, 1 / 400)
    X_u, y_u, w_u = deduplicate(X_dup, y_dup, w_dup)
    assert X_u.shape[0] == np.unique(index).size
    assert w_u.sum() == pytest.approx(1.0)
    theta0 = rng.standard_normal((5, 2))
    args = (theta0, np.array([0.5, 1.0]), 0.01, np.array([0.1, 0.3]), seeds(2), 40, np.float64)
    full = noisy_gd([Block(X_dup, y_dup, w_dup, np.arange(2))], *args)
    dedup = noisy_gd([Block(X_u, y_u, w_u, np.arange(2))], *args)
    np.testing.assert_allclose(dedup, full, atol=1e-12)


def test_progress_is_reported_about_every_tenth() -> None:
    X, y = make_data(10, 3, seed=14)
    calls: list[int] = []
    block = Block(X, y, np.full(10, 0.1), np.arange(1))
    noisy_gd([block], np.zeros((3, 1)), [0.1], 0.0, [0.0], seeds(1), 25, progress=calls.append)
    assert calls == [3, 5, 8, 10, 13, 15, 18, 20, 23, 25]
    two: list[int] = []
    noisy_gd([block, Block(X, y, np.full(10, 0.1), np.arange(1, 2))], np.zeros((3, 2)), [0.1] * 2,
             0.0, [0.0] * 2, seeds(2), 25, progress=two.append)
    assert two == sorted(two) and two[-1] == 25 and 8 <= len(two) <= 11


def test_zero_steps_return_theta0() -> None:
    X, y = make_data(10, 3, seed=15)
    theta0 = np.arange(6.0).reshape(3, 2)
    block = Block(X, y, np.full(10, 0.1), np.arange(2))
    np.testing.assert_array_equal(
        noisy_gd([block], theta0, np.ones(2), 0.1, np.ones(2), seeds(2), 0), theta0
    )


def test_columns_must_be_covered_exactly_once() -> None:
    X, y = make_data(10, 3, seed=16)
    w = np.full(10, 0.1)
    args = (np.zeros((3, 3)), np.ones(3), 0.0, np.zeros(3), seeds(3), 2)
    with pytest.raises(ValueError, match="exactly one block"):
        noisy_gd([Block(X, y, w, np.array([0, 1]))], *args)
    with pytest.raises(ValueError, match="exactly one block"):
        noisy_gd([Block(X, y, w, np.array([0, 1])), Block(X, y, w, np.array([1, 2]))], *args)
    with pytest.raises(ValueError, match="outside"):
        noisy_gd([Block(X, y, w, np.array([0, 1, 3]))], *args)


def test_invalid_inputs_are_rejected() -> None:
    X, y = make_data(10, 3, seed=17)
    with pytest.raises(ValueError, match="-1, \\+1"):
        Block(X, (y > 0).astype(float), np.full(10, 0.1), np.arange(1))
    with pytest.raises(ValueError, match="weights"):
        Block(X, y, np.full((10, 2), 0.1), np.arange(3))
    block = Block(X, y, np.full(10, 0.1), np.arange(1))
    with pytest.raises(ValueError, match="SeedSequence"):
        noisy_gd([block], np.zeros((3, 1)), [0.1], 0.0, [0.0], [0], 1)
    with pytest.raises(ValueError, match="features"):
        noisy_gd([block], np.zeros((4, 1)), [0.1], 0.0, [0.0], seeds(1), 1)
    with pytest.raises(ValueError, match="dtype"):
        noisy_gd([block], np.zeros((3, 1)), [0.1], 0.0, [0.0], seeds(1), 1, dtype=np.float16)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("per_column", [False, True])
def test_steps_allocate_no_rows_by_columns_arrays(dtype: type, per_column: bool) -> None:
    # Broadcasting ufuncs use a fixed 8192-element buffer; anything n × K would exceed n K / 8.
    n, p, K = 20_000, 10, 16
    X, y = make_data(n, p, seed=18)
    rng = np.random.default_rng(19)
    w = rng.random((n, K)) / n if per_column else np.full(n, 1 / n)
    state = engine._BlockState(
        Block(X, y, w, np.arange(K)),
        rng.standard_normal((p, K)),
        np.full(K, 0.5),
        0.01,
        np.full(K, 0.1),
        seeds(K),
        10,
        np.dtype(dtype),
    )
    state.refill_noise(state.chunk)
    state.step(0)
    tracemalloc.start()
    try:
        for t in range(1, 4):
            state.step(t)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < n * K * np.dtype(dtype).itemsize / 8


@pytest.mark.parametrize("K", [3, 20])  # transposed (skinny) and (p, K) layouts
@pytest.mark.parametrize("per_column", [False, True])
def test_tiled_steps_match_the_literal_update(small_tiles: None, K: int, per_column: bool) -> None:
    # issue 12: row tiles, the transposed layout and η folded into the coefficient weights
    # change only the order of the additions of the gradient
    n, p, T, lam = 237, 5, 25, 0.02
    X, y = make_data(n, p, seed=20)
    rng = np.random.default_rng(21)
    w = rng.random((n, K)) / n if per_column else np.full(n, 1 / n)
    theta0 = rng.standard_normal((p, K))
    eta, sigma, ss = rng.uniform(0.2, 2.0, K), rng.uniform(0.0, 0.5, K), seeds(K, root=22)
    block = Block(X, y, w, np.arange(K))
    state = engine._BlockState(block, theta0, eta, lam, sigma, ss, T, np.dtype(np.float64))
    assert len(state.tiles) > 3 and state.transposed == (K <= engine.TRANSPOSED_MAX_COLUMNS)
    got = noisy_gd([block], theta0, eta, lam, sigma, ss, T, dtype=np.float64)
    expected = np.stack(
        [reference_run(theta0[:, k], X, y, w[:, k] if per_column else w, eta[k], lam, sigma[k],
                       ss[k], T) for k in range(K)],
        axis=1,
    )
    np.testing.assert_allclose(got, expected, atol=1e-12)


@pytest.mark.parametrize(("n_b", "p", "k_b"), [(36177, 105, 6), (2260, 105, 6), (36177, 105, 120),
                                               (36177, 105, 512), (50, 105, 6), (0, 3, 1), (1000, 10, 1)])
def test_tiles_cover_the_rows_evenly_within_the_kernel_bound(n_b: int, p: int, k_b: int) -> None:
    rows = engine.tile_rows(n_b, p, k_b)
    tiles = [min(n_b, a + rows) - a for a in range(0, max(n_b, 1), rows)]
    assert sum(tiles) == n_b
    assert max(tiles) - min(tiles) < len(tiles)  # even: the last tile is short by < one per tile
    small = engine.SMALL_PRODUCT // (p * k_b) >= engine.MIN_SMALL_TILE_ROWS
    if small:
        assert rows * p * k_b <= engine.SMALL_PRODUCT or rows == n_b  # OpenBLAS small kernel
    else:
        assert rows <= engine.CACHE_TILE_ROWS


def test_column_flops_count_four_n_p_per_step() -> None:
    blocks, theta0, _, _ = batch_problem()
    flops = engine.column_flops(blocks, 5, T=7)
    np.testing.assert_array_equal(flops, 4.0 * 4 * 7 * np.array([90, 40, 40, 90, 90]))
