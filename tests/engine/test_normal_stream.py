"""The compiled copy of NumPy's normal streams that feeds the fused engine's noise (issue 12;
src/mpdp/engine/_normal_stream.c, mpdp.engine.noise).

The property that matters is bit-for-bit agreement with ``Generator(PCG64(seed))
.standard_normal``, the stream the spec's noise is defined by and the NumPy engine draws: on
ordinary draws, on every layer's rare (wedge and tail) path, across refills, and through the
engine. Without the compiled library or NumPy's tables these tests skip locally; under CI
(x86-64 with a compiler and NumPy's wheels) they fail instead.
"""

from __future__ import annotations

import math
import os
import platform

import numpy as np
import pytest
from test_engine_noisy_gd import make_data, seeds

from mpdp.engine import noise as normal_stream
from mpdp.engine import path as engine_path
from mpdp.engine.gd import Block, noisy_gd
from mpdp.engine.noise import NoiseStreams

R = 3.6541528853610088  # the ziggurat's base-strip edge (NumPy's ziggurat_nor_r)
MULTIPLIER = 0x2360ED051FC65DA44385DF649FCCF645  # PCG64's 128-bit LCG multiplier
MASK64, MASK128 = (1 << 64) - 1, (1 << 128) - 1


def require() -> normal_stream.CompiledNormals:
    normals = normal_stream.load()
    if normals is not None:
        return normals
    if os.environ.get("CI") and platform.machine() in ("x86_64", "AMD64"):
        pytest.fail("the compiled normal generator is not available under CI")
    pytest.skip("no compiled normal generator here (no compiled kernel, or no NumPy tables)")


def numpy_draws(seed: np.random.SeedSequence, count: int) -> np.ndarray:
    return np.random.Generator(np.random.PCG64(seed)).standard_normal(count)


def test_numpy_tables_have_the_shape_of_the_256_layer_ziggurat():
    normals = require()
    ki, wi, fi = normals.tables()
    x = wi * 2.0**52  # layer edges x_i (wi = x_i / 2^52)
    assert x[255] == R and fi[255] == math.exp(-0.5 * R * R)
    assert fi[0] == 1.0 and ki[1] == 0  # the top layer always takes the wedge test
    assert np.all(np.diff(x[1:]) > 0) and np.all(np.diff(fi[1:]) < 0)
    # ki_i = 2^52 x_{i-1} / x_i: the share of layer i inside the layer below's rectangle
    np.testing.assert_allclose(ki[2:].astype(float), 2.0**52 * x[1:-1] / x[2:], rtol=1e-12)
    # the base strip has the area of every layer: x_0 f(R) = R f(R) + the tail beyond R
    area = R * fi[255] + math.sqrt(math.pi / 2) * math.erfc(R / math.sqrt(2))
    assert x[0] * fi[255] == pytest.approx(area, rel=1e-12)


def test_compiled_streams_equal_numpy_bit_for_bit_across_refills():
    require()
    column_seeds = [np.random.SeedSequence(11, spawn_key=(k,)) for k in range(9)]
    scale = np.geomspace(1e-3, 40.0, 9)
    fast, slow = NoiseStreams(column_seeds, scale), NoiseStreams(column_seeds, scale, use_compiled=False)
    assert fast.compiled and not slow.compiled
    p, P = 21, 24
    for steps in (1, 7, 64, 3):
        ours = np.full((steps, 9, P), np.nan, dtype=np.float32)
        theirs = np.full((steps, 9, P), np.nan, dtype=np.float32)
        fast.fill(ours, p)
        slow.fill(theirs, p)
        assert np.array_equal(ours.view(np.uint32), theirs.view(np.uint32))
        assert np.all(np.isnan(ours[:, :, p:]))  # the padding is left alone
    # and the values are the stream's draws times the scale, rounded once to float32
    total = 1 + 7 + 64 + 3
    column = np.float32(numpy_draws(column_seeds[4], total * p)[-3 * p :] * scale[4])
    assert np.array_equal(ours[:, 4, :p].ravel(), column)


def test_a_long_stream_equals_numpy_including_its_tail_values():
    normals = require()
    seed = np.random.SeedSequence(7, spawn_key=(3, 1))
    words = normal_stream.pcg64_words(seed)
    ours = np.empty(1_000_000)
    normals.fill(words, ours)
    theirs = numpy_draws(seed, ours.size)
    assert np.array_equal(ours.view(np.uint64), theirs.view(np.uint64))
    assert np.sum(np.abs(ours) > R) > 100  # values beyond R come only from the tail path


def pcg64_state_giving(output: int, inc: int) -> int:
    """A PCG64 state whose next 64-bit output is ``output`` (the stepped state is ``output``:
    high word 0, so no rotation and the output is the low word)."""
    inverse = pow(MULTIPLIER, -1, 1 << 128)
    return ((output - inc) * inverse) & MASK128


@pytest.mark.parametrize("sign", [0, 1])
def test_every_layers_rare_path_equals_numpy(sign: int):
    """For every layer, states whose next draw fails the layer's fast test (at the threshold
    ``ki`` and at the largest mantissa): layer 0 samples the tail, the others the wedge."""
    normals = require()
    ki = normals.tables()[0]
    inc = 0x5851F42D4C957F2D14057B7EF767814F
    for idx in range(256):
        for rabs in {int(ki[idx]), (1 << 52) - 1}:
            if rabs >= 1 << 52:
                continue
            output = idx | (sign << 8) | (rabs << 9)
            state = pcg64_state_giving(output, inc)
            bit_generator = np.random.PCG64()
            bit_generator.state = {"bit_generator": "PCG64", "state": {"state": state, "inc": inc},
                                   "has_uint32": 0, "uinteger": 0}
            theirs = np.random.Generator(bit_generator).standard_normal(6)
            words = np.array([state >> 64, state & MASK64, inc >> 64, inc & MASK64], np.uint64)
            ours = np.empty(6)
            normals.fill(words, ours)
            assert np.array_equal(ours.view(np.uint64), theirs.view(np.uint64)), (idx, rabs)
            end = bit_generator.state["state"]["state"]
            assert (int(words[0]), int(words[1])) == (end >> 64, end & MASK64), (idx, rabs)


def test_a_generator_one_ulp_off_numpy_is_refused(monkeypatch):
    # the check on load compares every bit of 65 536 draws and the state left behind
    require()
    honest = normal_stream.CompiledNormals.fill

    def one_ulp_off(self, words, out):
        honest(self, words, out)
        out[40_000] = np.nextafter(out[40_000], np.inf)

    assert normal_stream.compiled() is not None
    monkeypatch.setattr(normal_stream.CompiledNormals, "fill", one_ulp_off)
    assert normal_stream.compiled() is None


def test_fused_engine_gives_the_same_parameters_with_either_generator(monkeypatch):
    """Through the engine: the compiled noise and NumPy's give bit-identical parameters."""
    require()
    from test_fused_kernel import require as require_kernel

    require_kernel("avx2")
    X, y = make_data(300, 6, seed=3)
    K = 5
    theta0 = np.zeros((6, K))
    eta, sigma = np.full(K, 0.2), np.linspace(0.0, 2.0, K)
    blocks = [Block(X, y, np.full(300, 1 / 300), np.arange(K))]
    fast = noisy_gd(blocks, theta0, eta, 1e-3, sigma, seeds(K), T=40)
    assert "compiled copy of NumPy's normal streams" in engine_path.describe_training()
    monkeypatch.setattr(normal_stream, "load", lambda: None)
    slow = noisy_gd(blocks, theta0, eta, 1e-3, sigma, seeds(K), T=40)
    assert np.array_equal(fast, slow)
