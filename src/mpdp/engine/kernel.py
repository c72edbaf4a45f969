"""The compiled fused step kernel of :mod:`mpdp.engine` (``_gd_kernel.c``, issue 12).

``pip install -e .`` compiles ``src/mpdp/_gd_kernel.c`` and ``_normal_stream.c`` into the plain
shared library ``src/mpdp/libmpdp_kernel.so`` (``setup.py``; optional: the install succeeds
without a C compiler, and the engine then takes its NumPy path with a WARNING). The library
holds the kernel twice, for AVX2 + FMA and for AVX-512; the two give bit-identical results
(they add the same terms in the same order, and :mod:`mpdp.engine` lays out a block by its
shape only).
:func:`load` finds the library, checks what the CPU can run and returns a :class:`Kernel`
(the AVX-512 one where the CPU has it), or ``None``; the engine then uses its NumPy path.
The environment variable ``MPDP_ENGINE`` chooses: ``auto`` (default), ``fused`` (the best
kernel; its absence is an error instead of a fallback), ``avx2`` or ``avx512`` (that kernel,
an error where the CPU lacks it: to compare the two) or ``numpy`` (the kernel off).
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import os
import platform
import sys
from pathlib import Path

from mpdp.errors import MpdpError

#: File name of the compiled library (a plain shared library built by setup.py, not a Python
#: extension module)
LIBRARY = "libmpdp_kernel" + (".dll" if sys.platform == "win32" else ".so")
#: Environment variable choosing the engine path (see the module docstring).
ENGINE_VARIABLE = "MPDP_ENGINE"
_CHOICES = ("auto", "fused", "avx2", "avx512", "numpy")
#: Status codes of ``mpdp_gd_run`` (``_gd_kernel.c``) and what they mean.
STATUS = {
    -1: "out of memory for its work buffers; free memory or train fewer columns per block",
    -2: ("this CPU lacks the kernel's instruction set, or the block's shapes are not supported "
         "(a bug in mpdp.engine: please report it); MPDP_ENGINE=numpy trains without the kernel"),
}


class KernelError(MpdpError):
    """The compiled kernel refused a call (:data:`STATUS`)."""


#: The kernel's instruction sets: the code ``mpdp_gd_run`` takes, and the name in logs.
ISAS = {"avx512": (2, "AVX-512"), "avx2": (1, "AVX2")}


@dataclasses.dataclass(frozen=True)
class Kernel:
    """One instruction set's kernel in the compiled library."""

    lib: ctypes.CDLL
    isa: str
    lanes: int

    @property
    def name(self) -> str:
        return ISAS[self.isa][1]

    def run(self, *args: object) -> None:
        """``mpdp_gd_run`` with this kernel (arguments as in ``_gd_kernel.c``, after ``isa``).

        Raises:
            MemoryError: the kernel could not allocate its work buffers (nothing changed).
            KernelError: the kernel refused the call (see :data:`STATUS`).
        """
        status = int(self.lib.mpdp_gd_run(ISAS[self.isa][0], *args))
        if status == 0:
            return
        message = STATUS.get(status, f"unknown status {status}")
        if status == -1:
            raise MemoryError(f"fused engine kernel ({self.name}): {message}")
        raise KernelError(f"fused engine kernel ({self.name}): {message}")


def _library_path() -> str | None:
    """Path of the compiled library :data:`LIBRARY` next to this module, or ``None``."""
    path = Path(__file__).with_name(LIBRARY)
    return str(path) if path.is_file() else None


@functools.cache
def _load_library() -> ctypes.CDLL | None:
    path = _library_path()
    if path is None:
        return None
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return None
    if not hasattr(lib, "mpdp_gd_lanes") or not lib.mpdp_gd_supported():
        return None
    c_long, c_void = ctypes.c_long, ctypes.c_void_p
    lib.mpdp_gd_lanes.argtypes = [ctypes.c_int]
    lib.mpdp_gd_lanes.restype = ctypes.c_int
    lib.mpdp_gd_run.argtypes = [ctypes.c_int, c_void, c_void, c_long, c_long, c_long, c_void,
                                c_long, c_void, ctypes.c_int, c_void, c_void, c_void, c_long,
                                c_long]
    lib.mpdp_gd_run.restype = ctypes.c_int
    return lib


def library() -> ctypes.CDLL | None:
    """The compiled library, where this CPU can run its kernel (AVX2 and FMA), else ``None``."""
    return _load_library()


def available() -> list[Kernel]:
    """The kernels this CPU can run, best first (empty without the compiled library)."""
    lib = _load_library()
    if lib is None:
        return []
    kernels = [Kernel(lib, isa, lib.mpdp_gd_lanes(code)) for isa, (code, _) in ISAS.items()]
    return [kernel for kernel in kernels if kernel.lanes > 0]


def load() -> Kernel | None:
    """The kernel to use (per :data:`ENGINE_VARIABLE`), else ``None`` (the NumPy path).

    Raises:
        MpdpError: for an unknown value of the variable, or one naming a kernel that this
            installation or CPU cannot run.
    """
    choice = os.environ.get(ENGINE_VARIABLE, "auto").strip().lower() or "auto"
    if choice not in _CHOICES:
        raise MpdpError(f"{ENGINE_VARIABLE}={choice!r}: expected one of {', '.join(_CHOICES)}")
    if choice == "numpy":
        return None
    kernels = available()
    if choice in ISAS:
        kernels = [kernel for kernel in kernels if kernel.isa == choice]
    if not kernels and choice != "auto":
        needs = ISAS[choice][1] if choice in ISAS else "AVX2/FMA"
        raise MpdpError(
            f"{ENGINE_VARIABLE}={choice}, but the compiled kernel is missing or this CPU lacks "
            f"{needs}; reinstall with a C compiler (pip install -e .) or unset the variable"
        )
    return kernels[0] if kernels else None


def fallback_reason() -> str | None:
    """Why float32 training takes the NumPy path although the fused one was not turned off
    (``MPDP_ENGINE=numpy``), or ``None`` when it takes the fused path or was turned off."""
    if os.environ.get(ENGINE_VARIABLE, "").strip().lower() == "numpy" or load() is not None:
        return None
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return (f"this machine is {platform.machine()}, not x86-64: the compiled kernel needs "
                "AVX2 and FMA, so training takes the NumPy/BLAS path")
    if _library_path() is None:
        return ("the compiled kernel is not built (no C compiler at install?); install a C "
                "compiler and run `pip install -e .` again")
    return "this CPU lacks AVX2 or FMA, which the compiled kernel needs"
