"""The compiled fused step kernel of :mod:`mpdp.engine` (``_gd_kernel.c``, issue 12).

``pip install -e .`` compiles ``src/mpdp/_gd_kernel.c`` (an optional extension: the install
succeeds without a C compiler). :func:`load` finds the library, checks that the CPU can run it
(x86-64 with AVX2 and FMA) and returns it, or ``None``; the engine then uses its NumPy path.
Setting the environment variable ``MPDP_ENGINE=numpy`` turns the kernel off (e.g. to compare
the two paths); ``MPDP_ENGINE=fused`` makes its absence an error instead of a fallback.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import os

from mpdp.errors import MpdpError

#: Environment variable choosing the engine path: ``auto`` (default), ``fused`` or ``numpy``.
ENGINE_VARIABLE = "MPDP_ENGINE"
_CHOICES = ("auto", "fused", "numpy")


def _library_path() -> str | None:
    """Path of the compiled ``mpdp._gd_kernel`` (found without importing it), or ``None``."""
    try:
        spec = importlib.util.find_spec("mpdp._gd_kernel")
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None and spec.origin and os.path.isfile(spec.origin) else None


@functools.cache
def _load_library() -> ctypes.CDLL | None:
    path = _library_path()
    if path is None:
        return None
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return None
    if not lib.mpdp_gd_supported():
        return None
    c_long, c_void = ctypes.c_long, ctypes.c_void_p
    lib.mpdp_gd_run.argtypes = [c_void, c_void, c_long, c_long, c_long, c_void, c_long, c_void,
                                ctypes.c_int, c_void, c_void, c_void, c_long, c_long]
    lib.mpdp_gd_run.restype = ctypes.c_int
    return lib


def load() -> ctypes.CDLL | None:
    """The kernel library if it is to be used (per :data:`ENGINE_VARIABLE`), else ``None``.

    Raises:
        MpdpError: for an unknown value of the variable, or ``fused`` without a usable kernel.
    """
    choice = os.environ.get(ENGINE_VARIABLE, "auto").strip().lower() or "auto"
    if choice not in _CHOICES:
        raise MpdpError(f"{ENGINE_VARIABLE}={choice!r}: expected one of {', '.join(_CHOICES)}")
    if choice == "numpy":
        return None
    lib = _load_library()
    if lib is None and choice == "fused":
        raise MpdpError(
            f"{ENGINE_VARIABLE}=fused, but the compiled kernel is missing or this CPU lacks "
            "AVX2/FMA; reinstall with a C compiler (pip install -e .) or unset the variable"
        )
    return lib


def describe(dtype: str = "float32") -> str:
    """A few words for job logs: which engine path training in ``dtype`` takes."""
    if dtype != "float32":
        return f"engine: NumPy/BLAS path ({dtype})"
    try:
        lib = load()
    except MpdpError as exc:
        return f"engine: {exc}"
    if lib is not None:
        return "engine: fused AVX2 kernel (float32)"
    reason = "turned off" if os.environ.get(ENGINE_VARIABLE, "").strip().lower() == "numpy" else (
        "kernel not built" if _library_path() is None else "CPU without AVX2/FMA")
    return f"engine: NumPy/BLAS path ({reason})"
