"""Fast, bit-identical copies of NumPy's normal noise streams for the fused engine (issue 12).

The engine's noise (spec M2, M3.1; :mod:`mpdp.engine`) is, for column ``k``, the stream of
``Generator(PCG64(noise_seeds[k])).standard_normal``. NumPy's loop and the scaling pass after it
cost 9.3 ns a value on an AMD Zen 5 and 15.1 ns on an Intel Xeon, up to 12 % of a training job.
``_normal_stream.c`` (in the compiled ``mpdp._gd_kernel`` library) runs the same algorithm —
PCG64 and NumPy's 256-layer ziggurat — and writes the values already multiplied by ``η_k σ_k``
in float32 into the engine's noise buffer, so the float64 draws need no second pass: 2.1–2.9
and 3.7 ns a value on those machines.

The ziggurat tables are NumPy's own: :func:`numpy_ziggurat_tables` reads them from the static
library ``numpy/random/lib/libnpyrandom.a`` that NumPy installs for C code built on its random
module. :func:`load` then checks the compiled generator against NumPy on
:data:`CHECK_DRAWS` draws of a fixed stream (enough to take the ziggurat's rare tail and wedge
paths hundreds of times), bit for bit and including the generator state it leaves behind.
Without the library, the tables, or that agreement, :class:`NoiseStreams` draws with NumPy: the
values are the same either way, only the speed differs.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import struct
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from mpdp import fused_kernel

#: Draws compared with NumPy before the compiled generator is used (about a millisecond).
CHECK_DRAWS = 1 << 16
#: Seed of the stream compared with NumPy.
CHECK_SEED = 20261124
_TABLE_SYMBOLS = {b"ki_double": np.uint64, b"wi_double": np.float64, b"fi_double": np.float64}
_TABLE_BYTES = 256 * 8
_MASK64 = (1 << 64) - 1


def _archive_members(data: bytes) -> list[bytes]:
    """The member files of a Unix ``ar`` archive (``!<arch>`` format)."""
    if not data.startswith(b"!<arch>\n"):
        return []
    members, offset = [], 8
    while offset + 60 <= len(data):
        header = data[offset : offset + 60]
        if header[58:60] != b"`\n":
            return []
        size = int(header[48:58].decode("ascii").strip() or 0)
        members.append(data[offset + 60 : offset + 60 + size])
        offset += 60 + size + (size & 1)
    return members


def _elf_symbols(obj: bytes, wanted: set[bytes]) -> dict[bytes, bytes]:
    """The bytes of the named data symbols of a little-endian ELF64 object (others skipped)."""
    if obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        return {}
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + i * shentsize) for i in range(shnum)]
    found: dict[bytes, bytes] = {}
    for _, sh_type, _, _, sh_offset, sh_size, sh_link, _, _, sh_entsize in sections:
        if sh_type != 2 or sh_entsize != 24:  # SHT_SYMTAB
            continue
        strtab_offset = sections[sh_link][4]
        for start in range(sh_offset, sh_offset + sh_size, 24):
            st_name, _, _, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", obj, start)
            end = obj.index(b"\0", strtab_offset + st_name)
            name = obj[strtab_offset + st_name : end]
            if name in wanted and 0 < st_shndx < len(sections) and sections[st_shndx][1] == 1:
                data_offset = sections[st_shndx][4] + st_value
                found[name] = obj[data_offset : data_offset + st_size]
    return found


def numpy_ziggurat_tables(library: Path | None = None) -> tuple[np.ndarray, ...] | None:
    """NumPy's ziggurat tables ``(ki, wi, fi)`` for float64 normals, read from ``library``
    (default: the installed NumPy's ``random/lib/libnpyrandom.a``), or ``None`` when it is not
    there in the expected form (an ``ar`` archive of little-endian ELF64 objects)."""
    if library is None:
        library = Path(np.__file__).parent / "random" / "lib" / "libnpyrandom.a"
    try:
        members = _archive_members(library.read_bytes())
    except OSError:
        return None
    for member in members:
        try:
            found = _elf_symbols(member, set(_TABLE_SYMBOLS))
        except (struct.error, ValueError, IndexError):
            continue
        if len(found) == len(_TABLE_SYMBOLS) and all(len(v) == _TABLE_BYTES for v in found.values()):
            ki, wi, fi = (np.frombuffer(found[name], dtype=dtype).copy()
                          for name, dtype in _TABLE_SYMBOLS.items())
            return ki, wi, fi
    return None


def pcg64_words(seed: np.random.SeedSequence) -> np.ndarray:
    """The state of ``PCG64(seed)`` as 4 words: state high, state low, increment high, low."""
    state = np.random.PCG64(seed).state["state"]
    return np.array([state["state"] >> 64, state["state"] & _MASK64,
                     state["inc"] >> 64, state["inc"] & _MASK64], dtype=np.uint64)


@dataclasses.dataclass(frozen=True)
class CompiledNormals:
    """The compiled generator with NumPy's ziggurat tables (the arrays it reads in every call)."""

    lib: ctypes.CDLL
    ki: np.ndarray
    wi: np.ndarray
    fi: np.ndarray

    def fill(self, words: np.ndarray, out: np.ndarray) -> None:
        """``out.size`` draws of the stream whose state is ``words`` (4 words, advanced)."""
        self.lib.mpdp_normal_fill(self.ki.ctypes.data, self.wi.ctypes.data, self.fi.ctypes.data,
                                  words.ctypes.data, out.size, out.ctypes.data)

    def fill_scaled(self, words: np.ndarray, scale: np.ndarray, out: np.ndarray, p: int) -> None:
        """``out[t, k, :p] = float32(z · scale_k)`` for the streams ``words`` (``(K, 4)``)."""
        steps, K, P = out.shape
        self.lib.mpdp_normal_fill_scaled(self.ki.ctypes.data, self.wi.ctypes.data,
                                         self.fi.ctypes.data, words.ctypes.data, K, steps, p, P,
                                         scale.ctypes.data, out.ctypes.data)

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


def compiled(tables: tuple[np.ndarray, ...] | None) -> CompiledNormals | None:
    """The compiled generator with ``tables`` if it agrees with NumPy, else ``None``."""
    lib = fused_kernel.library()
    if lib is None or tables is None or not hasattr(lib, "mpdp_normal_fill_scaled"):
        return None
    c_long, c_void = ctypes.c_long, ctypes.c_void_p
    lib.mpdp_normal_fill.argtypes = [c_void, c_void, c_void, c_void, c_long, c_void]
    lib.mpdp_normal_fill_scaled.argtypes = [c_void, c_void, c_void, c_void, c_long, c_long,
                                            c_long, c_long, c_void, c_void]
    lib.mpdp_normal_fill.restype = lib.mpdp_normal_fill_scaled.restype = ctypes.c_int
    ki, wi, fi = (np.ascontiguousarray(table) for table in tables)
    if not (ki.dtype == np.uint64 and wi.dtype == fi.dtype == np.float64
            and ki.shape == wi.shape == fi.shape == (256,)):
        return None
    normals = CompiledNormals(lib, ki, wi, fi)
    return normals if normals.agrees_with_numpy() else None


@functools.cache
def load() -> CompiledNormals | None:
    """The compiled generator with the installed NumPy's tables, checked against NumPy, or
    ``None`` (draw with NumPy)."""
    return compiled(numpy_ziggurat_tables())


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
