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
entry, written atomically (:func:`mpdp.io.atomic_path`, mode 0600, in folders this module
creates 0700), so that concurrent jobs never read half a file; an unreadable or foreign entry is
computed again and replaced, and a folder that cannot be written leaves the memo in memory only.
Deleting the folder is always safe.

**Trust** (issue 58). A key is a hash of public inputs, so whoever can write the folder could
plant a smaller σ or a larger α under the right key. Two defences, both falling back to computing
the value (never to trusting it), with one line on stderr:

- *ownership*: the folder, an entry's sub-folder and the entry itself must belong to the current
  user and be writable by no one else (not group- or other-writable; an entry must be a regular
  file, not a link). A folder that fails is not used at all in this process (read nor written:
  the calibrations are computed in memory only) and the line says how to fix it, once per build
  (:data:`SAID_ENV` tells the jobs it was said); sub-folders that fail are not used either (one
  line for all of them); an entry that fails is computed again and not replaced.
- *re-verification*: every value read from disk is checked before use by the function's
  ``verify`` (given to :func:`persistent`), one cheap independent accountant or formula call
  that the value meets its privacy target (DP-SGD's σ: its ε at δ is at most the target; ADMM's
  α: its k-fold composition is at most ε_total; an RDP curve: recomputed at the orders that decide
  its ε at δ). A value that fails is computed again and its entry replaced. Values computed in the
  process are not re-checked: they come from the calibration itself. A value more conservative
  than the calibration's (a larger σ, a smaller α) passes: it is private, though a build using it
  differs from a clean one; keeping others from writing the folder is the ownership check's job.
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
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from mpdp import io as mpdp_io
from mpdp.errors import InputDataError

#: environment variable naming the folder (or ``off``)
ENV = "MPDP_CALIBRATION_CACHE"
#: the folder warnings already printed (hashes): the processes started afterwards (a Snakemake
#: run's jobs) refuse the same folders without printing them again
SAID_ENV = "MPDP_CALIBRATION_MEMO_SAID"
#: libraries whose versions enter every key
LIBRARIES = ("numpy", "scipy", "dp-accounting")
#: version of the entry layout
LAYOUT = 1

F = TypeVar("F", bound=Callable[..., Any])
#: ``verify(value, **arguments)`` of a memoised function: None when a value read from disk meets
#: its privacy target, else why not (one short phrase for the warning)
Verifier = Callable[..., "str | None"]

_WARNED: set[str] = set()
_FOLDERS: dict[Path, bool] = {}  # folder -> whether it may be used (checked once per process)
_BAD_SUBFOLDERS: set[Path] = set()  # sub-folders of a usable folder that may not be trusted


def _warn(message: str, *, once_per_build: bool = False) -> None:
    """One line on stderr, once per process per message; with ``once_per_build`` also once for
    the processes this one starts afterwards (:data:`SAID_ENV`)."""
    if message in _WARNED:
        return
    _WARNED.add(message)
    if once_per_build:
        said = os.environ.get(SAID_ENV, "").split()
        tag = hashlib.sha256(message.encode()).hexdigest()[:12]
        if tag in said:
            return
        os.environ[SAID_ENV] = " ".join([*said, tag])
    sys.stderr.write(f"mpdp: {message}\n")


def untrusted(path: Path, *, entry: bool = False) -> str | None:
    """Why ``path`` (a memo folder, or with ``entry`` an entry file) may not be trusted: another
    owner, group- or other-writable, or (an entry) not a regular file; None when it may."""
    info = os.lstat(path) if entry else os.stat(path)
    if entry and not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return f"belongs to user id {info.st_uid}, not to you ({os.getuid()})"
    if info.st_mode & 0o022:
        who = {0o022: "its group and others", 0o020: "its group", 0o002: "others"}[info.st_mode & 0o022]
        return f"is writable by {who} (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def usable(where: Path) -> bool:
    """Whether the memo may use folder ``where`` (module docstring, "Trust"): created 0700 when
    absent; refused, with one line on stderr, when it is not the user's or others may write it.
    Its sub-folders are checked at once too (one line for all that fail; they are not used)."""
    if where in _FOLDERS:
        return _FOLDERS[where]
    try:
        where.mkdir(mode=0o700, parents=True, exist_ok=True)
        why = untrusted(where)
        bad = [] if why is not None else [d for d in sorted(where.iterdir()) if d.is_dir() and untrusted(d)]
    except OSError:
        why, ok, bad = None, False, []  # cannot be created: the memo stays in memory, as for an unwritable folder
    else:
        ok = why is None
    if why is not None:
        _warn(f"calibration memo folder {where} {why}: not used, the calibrations are computed in this process "
              f"only (fix: chmod go-w, or set {ENV} to a folder of your own, or to off)", once_per_build=True)
    if bad:
        _BAD_SUBFOLDERS.update(bad)
        _warn(f"calibration memo folder {where}: {len(bad)} of its sub-folders are not used, e.g. {bad[0].name} "
              f"{untrusted(bad[0])}; their values are computed again (fix: chmod -R go-w {where})",
              once_per_build=True)
    _FOLDERS[where] = ok
    return ok


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


def _read(path: Path, key: str) -> tuple[Any | None, str | None]:
    """(the stored value or None, why the entry may not be trusted or None)."""
    if path.parent in _BAD_SUBFOLDERS:
        return None, ""  # said once for the whole folder (usable)
    try:
        if (why := untrusted(path.parent)) is not None:
            return None, f"folder {path.parent} {why}"
        if (why := untrusted(path, entry=True)) is not None:
            return None, f"entry {path} {why}"
    except OSError:
        return None, None  # absent: computed
    try:
        stored = mpdp_io.read_json(path, "calibration memo entry")
        if stored.get("key") != key:
            return None, None
        return _decode(stored["value"]), None
    except (InputDataError, ValueError, KeyError, TypeError, AttributeError):
        return None, None  # damaged or foreign: computed again


def _write(path: Path, key: str, value: Any, what: str) -> None:
    text = json.dumps({"key": key, "what": what, "value": _encode(value)}, indent=2, sort_keys=True) + "\n"
    with contextlib.suppress(OSError):  # a folder that cannot be written: the memo stays in this process
        path.parent.mkdir(mode=0o700, exist_ok=True)
        with mpdp_io.atomic_path(path, mode=0o600) as tmp:
            tmp.write_text(text)


def _refusal(verify: Verifier, fn: Callable[..., Any], value: Any, args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> str | None:
    """Why ``value`` read from disk fails ``verify`` (None when it passes; an error in the check fails)."""
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    try:
        return verify(_copy(value), **bound.arguments)
    except Exception as exc:  # a value the check cannot even evaluate is not trusted
        return f"its check failed ({type(exc).__name__}: {exc})"


def persistent(*, verify: Verifier) -> Callable[[F], F]:
    """Memoise a function (pure; arguments with an exact ``repr``; returns a float or a float64
    array) on disk and in memory; a value read from disk is used only if ``verify(value,
    **arguments)`` returns None (module docstring)."""

    def decorate(fn: F) -> F:
        memory: dict[str, Any] = {}
        name = f"{fn.__module__}.{fn.__qualname__}"

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            key = _key(fn, args, kwargs)
            if key in memory:
                return _copy(memory[key])
            where = folder()
            path = None if where is None or not usable(where) else where / key[:2] / f"{key}.json"
            value, distrust = (None, None) if path is None else _read(path, key)
            if distrust:
                _warn(f"calibration memo {distrust}: not used, its values are computed again (fix: chmod go-w, "
                      "or delete it)")
            elif value is not None and (why := _refusal(verify, fn, value, args, kwargs)) is not None:
                _warn(f"calibration memo entry {path} fails its re-verification ({why}): {name}{args!r} "
                      "computed again and the entry replaced")
                value = None
            if value is None:
                value = fn(*args, **kwargs)
                if path is not None and distrust is None and _storable(value):
                    _write(path, key, value, f"{name}{args!r}")
            memory[key] = value
            return _copy(value)

        wrapper.forget = memory.clear  # type: ignore[attr-defined]  # tests: a new process's empty memory
        return wrapper  # type: ignore[return-value]

    return decorate


def _storable(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isnan(value)
    return isinstance(value, np.ndarray) and value.dtype == np.float64


def _copy(value: Any) -> Any:
    return value.copy() if isinstance(value, np.ndarray) else value
