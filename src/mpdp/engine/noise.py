"""Fast, bit-identical copies of NumPy's normal noise streams for the fused engine (issue 12).

The engine's noise (spec M2, M3.1; :mod:`mpdp.engine`) is, for column ``k``, the stream of
``Generator(PCG64(noise_seeds[k])).standard_normal``. NumPy's loop and the scaling pass after it
cost 9.3 ns a value on an AMD Zen 5 and 15.1 ns on an Intel Xeon, up to 12 % of a training job.
``_normal_stream.c`` (in the compiled library ``libmpdp_kernel.so``) runs the same algorithm —
PCG64 and NumPy's 256-layer ziggurat — and writes the values already multiplied by ``η_k σ_k``
in float32 into the engine's noise buffer, so the float64 draws need no second pass: 2.1–2.9
and 3.7 ns a value on those machines.

The ziggurat tables are NumPy's, compiled in as constants (``_ziggurat_tables.h``).
:func:`load` checks the compiled generator against NumPy on :data:`CHECK_DRAWS` draws of a
fixed stream (enough to take the ziggurat's rare tail and wedge paths hundreds of times), bit
for bit and including the generator state it leaves behind. Without the library or that
agreement (e.g. a NumPy whose generator changed), :class:`NoiseStreams` draws with NumPy: the
values are the same either way, only the speed differs, and the engine logs a WARNING
(:mod:`mpdp.engine.provenance`). Kept, rather than dropped, because it saved 6–13 % of a
training job's time (``perf/README.md``) for 150 lines of C that are checked on every load.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
from collections.abc import Sequence

import numpy as np

from mpdp.engine import kernel as fused_kernel

#: Draws compared with NumPy before the compiled generator is used (about a millisecond).
CHECK_DRAWS = 1 << 16
#: Seed of the stream compared with NumPy.
CHECK_SEED = 20261124
_MASK64 = (1 << 64) - 1


def pcg64_words(seed: np.random.SeedSequence) -> np.ndarray:
    """The state of ``PCG64(seed)`` as 4 words: state high, state low, increment high, low."""
    state = np.random.PCG64(seed).state["state"]
    return np.array([state["state"] >> 64, state["state"] & _MASK64,
                     state["inc"] >> 64, state["inc"] & _MASK64], dtype=np.uint64)


@dataclasses.dataclass(frozen=True)
class CompiledNormals:
    """The compiled generator (``_normal_stream.c``) in the kernel library."""

    lib: ctypes.CDLL

    def tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Copies of its ziggurat tables ``(ki, wi, fi)``, 256 entries each."""
        ki = np.empty(256, dtype=np.uint64)
        wi, fi = np.empty(256), np.empty(256)
        self.lib.mpdp_normal_tables(ki.ctypes.data, wi.ctypes.data, fi.ctypes.data)
        return ki, wi, fi

    def fill(self, words: np.ndarray, out: np.ndarray) -> None:
        """``out.size`` draws of the stream whose state is ``words`` (4 words, advanced)."""
        self.lib.mpdp_normal_fill(words.ctypes.data, out.size, out.ctypes.data)

    def fill_scaled(self, words: np.ndarray, scale: np.ndarray, out: np.ndarray, p: int) -> None:
        """``out[t, k, :p] = float32(z · scale_k)`` for the streams ``words`` (``(K, 4)``)."""
        steps, K, P = out.shape
        self.lib.mpdp_normal_fill_scaled(words.ctypes.data, K, steps, p, P, scale.ctypes.data,
                                         out.ctypes.data)

    def agrees_with_numpy(self) -> bool:
        """Whether it gives NumPy's draws of a fixed stream and leaves NumPy's state behind."""
        seed = np.random.SeedSequence(CHECK_SEED)
        words = pcg64_words(seed)
        ours = np.empty(CHECK_DRAWS, dtype=np.float64)
        self.fill(words, ours)
        bit_generator = np.random.PCG64(seed)
        theirs = np.random.Generator(bit_generator).standard_normal(CHECK_DRAWS)
        state = bit_generator.state["state"]["state"]
        return bool(np.array_equal(ours.view(np.uint64), theirs.view(np.uint64))
                    and int(words[0]) == state >> 64 and int(words[1]) == state & _MASK64)


def compiled() -> CompiledNormals | None:
    """The compiled generator if the library has it and it agrees with NumPy, else ``None``."""
    lib = fused_kernel.library()
    if lib is None or not hasattr(lib, "mpdp_normal_fill_scaled"):
        return None
    c_long, c_void = ctypes.c_long, ctypes.c_void_p
    lib.mpdp_normal_tables.argtypes = [c_void, c_void, c_void]
    lib.mpdp_normal_fill.argtypes = [c_void, c_long, c_void]
    lib.mpdp_normal_fill_scaled.argtypes = [c_void, c_long, c_long, c_long, c_long, c_void, c_void]
    for function in (lib.mpdp_normal_tables, lib.mpdp_normal_fill, lib.mpdp_normal_fill_scaled):
        function.restype = ctypes.c_int
    normals = CompiledNormals(lib)
    return normals if normals.agrees_with_numpy() else None


@functools.cache
def load() -> CompiledNormals | None:
    """The compiled generator, checked against NumPy, or ``None`` (draw with NumPy)."""
    return compiled()


class NoiseStreams:
    """The standard normal streams ``Generator(PCG64(seeds[k]))`` of ``K`` columns, drawn
    ``p`` values per step and scaled per column into a float32 ``(steps, K, P)`` buffer.

    With ``use_compiled`` (default) it draws with the compiled generator when :func:`load`
    gives one; ``False`` always draws with NumPy (the reference the tests compare against).
    """

    def __init__(self, seeds: Sequence[np.random.SeedSequence], scale: np.ndarray,
                 use_compiled: bool = True) -> None:
        self.scale = np.ascontiguousarray(scale, dtype=np.float64)
        self.normals = load() if use_compiled else None
        if self.normals is not None:
            self.words = np.stack([pcg64_words(seed) for seed in seeds]) if seeds else (
                np.zeros((0, 4), dtype=np.uint64))
            self.generators: list[np.random.Generator] = []
        else:
            self.generators = [np.random.Generator(np.random.PCG64(seed)) for seed in seeds]
            self.draws = np.empty((len(seeds), 0, 0))

    @property
    def compiled(self) -> bool:
        return self.normals is not None

    def fill(self, out: np.ndarray, p: int) -> None:
        """Write the next ``steps = out.shape[0]`` vectors of every stream, times its scale:
        ``out[t, k, :p] = float32(z_{k,t} · scale_k)`` (``out``: C-contiguous float32
        ``(steps, K, P)``, ``P ≥ p``; ``out[..., p:]`` is left as it is)."""
        steps, K, P = out.shape
        if not (out.dtype == np.float32 and out.flags.c_contiguous and self.scale.size == K
                and 0 < p <= P):
            raise ValueError(f"out must be C-contiguous float32 (steps, {self.scale.size}, >= {p})")
        if self.normals is not None:
            self.normals.fill_scaled(self.words, self.scale, out, p)
            return
        if self.draws.shape[1] < steps or self.draws.shape[2] != p:
            self.draws = np.empty((K, steps, p), dtype=np.float64)
        draws = self.draws[:, :steps]
        for j, generator in enumerate(self.generators):
            generator.standard_normal(out=draws[j])
        np.multiply(draws.transpose(1, 0, 2), self.scale[:, None], out=out[:, :, :p],
                    casting="same_kind")
