"""A memo on disk of the slow, pure privacy calibrations, shared by every process (issue 45).

Each bisection of a calibration runs dozens of dp-accounting PLD compositions: the ADMM
family's per-step α (:func:`mpdp.privacy.pure_dp.per_step_alpha`, ~3.5 s), DP-SGD's noise
multiplier (:func:`mpdp.privacy.subsampled_gaussian.calibrate_noise_multiplier`) and its RDP
curve. Every Snakemake invocation runs them again at planning time (the selection-budget check
of :mod:`mpdp.pipeline.planning_budgets`, for the main config and each universe of
``multiverse:``), and so does every job and every nested universe that calibrates them: about
105 of the 130 CPU seconds of a full-config dry run were these bisections.

:func:`persistent` wraps such a function: a call whose value is on disk returns it, bit for bit
(floats are stored as their ``repr``, which round-trips exactly), and a call that is not
computes it and stores it. The key of an entry is the function's module and name, its
arguments, and a **fingerprint** of the code and libraries the value depends on: the source of
the function's module, of every module of :mod:`mpdp.privacy`, and the versions of Python,
NumPy, SciPy and dp-accounting. A change to any of them gives new keys, so an entry is never
read by code that would compute another value. Only returned values are stored: a call that
raises (e.g. a :class:`~mpdp.privacy.calibration.PrivacyParameterError`) raises every time.

Where: ``$MPDP_CALIBRATION_CACHE`` (a folder; ``off`` turns the memo off), else
``$XDG_CACHE_HOME/mpdp/calibrations`` (``~/.cache/mpdp/calibrations``). One small JSON file per
entry, written atomically (:func:`mpdp.io.write_json`), so that concurrent jobs never read half a file;
an unreadable or foreign entry is computed again and replaced, and a folder that cannot be
written leaves the memo in memory only. Deleting the folder is always safe.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import inspect
import json
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from mpdp import io as mpdp_io
from mpdp.errors import InputDataError

#: environment variable naming the folder (or ``off``)
ENV = "MPDP_CALIBRATION_CACHE"
#: libraries whose versions enter every key
LIBRARIES = ("numpy", "scipy", "dp-accounting")
#: version of the entry layout
LAYOUT = 1

F = TypeVar("F", bound=Callable[..., Any])


def folder() -> Path | None:
    """The memo's folder, or None when ``$MPDP_CALIBRATION_CACHE`` is ``off``."""
    chosen = os.environ.get(ENV)
    if chosen is not None:
        return None if chosen.strip().lower() in ("off", "") else Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mpdp" / "calibrations"


@functools.cache
def _privacy_sources() -> str:
    here = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(here.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@functools.cache
def _versions() -> tuple[str, ...]:
    out = [f"python {sys.version.split()[0]}"]
    for name in LIBRARIES:
        try:
            out.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            out.append(f"{name} absent")
    return tuple(out)


@functools.cache
def fingerprint(module_file: str) -> str:
    """Hash of what a value of a function defined in ``module_file`` depends on (module docstring)."""
    digest = hashlib.sha256(Path(module_file).read_bytes())
    digest.update(_privacy_sources().encode())
    digest.update("\n".join(_versions()).encode())
    return digest.hexdigest()


def _encode(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        if value.dtype != np.float64:
            raise TypeError(f"only float64 arrays are memoised, got {value.dtype}")
        return {"ndarray": [repr(float(v)) for v in value.ravel()], "shape": list(value.shape)}
    if isinstance(value, float):
        return {"float": repr(value)}
    raise TypeError(f"only floats and float64 arrays are memoised, got {type(value).__name__}")


def _decode(stored: Any) -> Any:
    if "float" in stored:
        return float(stored["float"])
    return np.array([float(v) for v in stored["ndarray"]], dtype=np.float64).reshape(stored["shape"])


def _key(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    text = json.dumps([LAYOUT, fn.__module__, fn.__qualname__, fingerprint(inspect.getfile(fn)),
                       [repr(a) for a in args], sorted((k, repr(v)) for k, v in kwargs.items())])
    return hashlib.sha256(text.encode()).hexdigest()


def _read(path: Path, key: str) -> Any | None:
    try:
        stored = mpdp_io.read_json(path, "calibration memo entry")
        if stored.get("key") != key:
            return None
        return _decode(stored["value"])
    except (InputDataError, ValueError, KeyError, TypeError, AttributeError):
        return None  # absent, damaged or foreign: computed again


def _write(path: Path, key: str, value: Any, what: str) -> None:
    with contextlib.suppress(OSError):  # a folder that cannot be written: the memo stays in this process
        mpdp_io.write_json({"key": key, "what": what, "value": _encode(value)}, path)


def persistent(fn: F) -> F:
    """Memoise ``fn`` (pure; arguments with an exact ``repr``; returns a float or a float64
    array) on disk and in memory (module docstring)."""
    memory: dict[str, Any] = {}

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        key = _key(fn, args, kwargs)
        if key in memory:
            return _copy(memory[key])
        where = folder()
        path = None if where is None else where / key[:2] / f"{key}.json"
        value = None if path is None else _read(path, key)
        if value is None:
            value = fn(*args, **kwargs)
            if path is not None and _storable(value):
                _write(path, key, value, f"{fn.__module__}.{fn.__qualname__}{args!r}")
        memory[key] = value
        return _copy(value)

    return wrapper  # type: ignore[return-value]


def _storable(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isnan(value)
    return isinstance(value, np.ndarray) and value.dtype == np.float64


def _copy(value: Any) -> Any:
    return value.copy() if isinstance(value, np.ndarray) else value
