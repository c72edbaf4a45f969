"""Atomic file output: nothing half-written is ever left behind, and nothing is written for a
Snakemake run that is gone.

Every file the pipeline produces is written to a temporary sibling and renamed into place
only when complete, so an interrupted job leaves either the old file or none.

**Run binding** (issue 47). ``workflow/rules/common.smk`` puts the identity of the Snakemake run,
``"<host> <pid> <start time>"`` of its main process (:func:`run_token`), in the environment
variable :data:`RUN_ENV` that every job inherits. :func:`atomic_path` checks just before it
renames a finished file into place that this process is still alive *with the same start
time* (a pid reused by another process after ``kill -9`` does not count) and *running* (not a
zombie: a killed Snakemake whose parent has not reaped it yet keeps its pid and start time; not
stopped; :func:`run_alive`), and refuses the write otherwise (:class:`RunGoneError`). So an
orphaned job, or a figure drawn by the warm renderer for a run that was killed, never adds an
output to a build nobody tracks. Jobs without the variable (run by hand, the tests) or on another
host (a cluster node, whose jobs cannot see the submitting host's processes) are not bound.
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
import time
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import numpy as np

from mpdp.errors import InputDataError, MpdpError

#: environment variable naming the Snakemake run a job belongs to (module docstring)
RUN_ENV = "MPDP_SNAKEMAKE_RUN"


class RunGoneError(MpdpError):
    """The Snakemake run that started this job is gone: the job stops without output."""


def _stat(pid: int) -> list[str] | None:
    """Fields 3 onwards of /proc/<pid>/stat (proc(5): state, ppid, …; after the command name,
    which may hold spaces); None if the process is gone (or not Linux)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()


def process_start(pid: int) -> int | None:
    """Start time (clock ticks since boot) of process ``pid`` from /proc (Linux); None if gone."""
    fields = _stat(pid)
    return None if fields is None else int(fields[19])  # field 22 of proc(5)


def process_state(pid: int) -> str | None:
    """State letter of process ``pid`` (field 3 of proc(5): R, S, D, Z, T, t, X, …); None if gone."""
    fields = _stat(pid)
    return None if fields is None else fields[0]


#: states of proc(5) in which a run's main process no longer runs the build: zombie (killed, its
#: parent has not reaped it yet), dead, stopped (SIGSTOP), stopped by a debugger
GONE_STATES = frozenset("ZXxTt")
#: a stopped run counts as gone only if it stays stopped at every look for this long: a whole
#: process group continued with ``fg`` (SIGCONT to every member at once) may show a job its run
#: as still stopped for an instant, and a tracer (strace, a sampling profiler) stops it briefly
STOPPED_GRACE_S = 0.5
#: looks at a stopped run during :data:`STOPPED_GRACE_S`
STOPPED_LOOKS = 5


def _run_state(run: tuple[int, int]) -> str | None:
    """State of the run's main process, None if gone (its pid absent, or reused by another start)."""
    fields = _stat(run[0])
    return None if fields is None or int(fields[19]) != run[1] else fields[0]


def run_token(pid: int | None = None) -> str:
    """``"<host> <pid> <start time>"`` of process ``pid`` (default: this one), the value of
    :data:`RUN_ENV`; empty where /proc is missing (not Linux: nothing is bound)."""
    pid = os.getpid() if pid is None else pid
    start = process_start(pid)
    return "" if start is None else f"{socket.gethostname()} {pid} {start}"


def bound_run(env: Mapping[str, str] | None = None) -> tuple[int, int] | None:
    """(pid, start time) of the Snakemake run this process belongs to, from :data:`RUN_ENV`;
    None when unbound: no or a malformed variable, or a run on another host."""
    parts = (os.environ if env is None else env).get(RUN_ENV, "").split()
    if len(parts) != 3 or parts[0] != socket.gethostname() or not (parts[1].isdigit() and parts[2].isdigit()):
        return None
    return int(parts[1]), int(parts[2])


def run_alive(run: tuple[int, int] | None) -> bool:
    """Whether the run ``(pid, start time)`` is still alive (True for an unbound job): its process
    exists with that start time and is not in a :data:`GONE_STATES` state. A killed Snakemake keeps
    its pid and start time until its parent reaps it (a driver that starts it with ``Popen`` and is
    slow to ``wait()``, issue 58), so the state decides; a stopped one is gone only if it stays
    stopped for :data:`STOPPED_GRACE_S`."""
    if run is None:
        return True
    state = _run_state(run)
    for _ in range(STOPPED_LOOKS if state in ("T", "t") else 0):
        time.sleep(STOPPED_GRACE_S / STOPPED_LOOKS)
        state = _run_state(run)
        if state not in ("T", "t"):
            break
    return state is not None and state not in GONE_STATES


def check_run_alive(path: str | Path) -> None:
    """Raise :class:`RunGoneError` if the run this job belongs to is gone (``path`` is not written)."""
    run = bound_run()
    if not run_alive(run):
        assert run is not None
        raise RunGoneError(f"the Snakemake run that started this job (process {run[0]}) is gone; {path} is not "
                           "written (rerun snakemake with --rerun-incomplete)")


@contextmanager
def atomic_path(path: str | Path, mode: int | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it to ``path`` on success, delete on error.
    The file gets ``mode`` (default: the usual ``0o666`` less the umask)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        check_run_alive(path)  # the last moment before the output appears
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask  # mkstemp creates 0600; give the file the usual mode
        tmp.chmod(mode)
        tmp.replace(path)
    except OSError as exc:
        if exc.errno is None or exc.filename not in (None, str(tmp), tmp):
            raise
        # a failed write (a full disk, a quota) names no file: name the output being written
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    finally:
        tmp.unlink(missing_ok=True)


def write_json(obj: object, path: str | Path) -> None:
    """Write ``obj`` as sorted, indented JSON atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=_json_default) + "\n")


# ----------------------------------------------------------------------------- readers
# Every intermediate (JSON, CSV, .npz, .npy; parquet tables through mpdp.results.read_parquet) is read
# through one of these (issue 47): a missing, truncated or damaged file is one line naming the file
# and the command that rebuilds it (Snakemake never rebuilds a file whose time stamp is up to date).


def rebuild_hint(path: str | Path) -> str:
    """How to rebuild one output of the workflow whatever its time stamp says."""
    return f"rebuild it with `snakemake --force {path}` (and the --configfile/--config of your run)"


def unreadable(path: str | Path, what: str, exc: BaseException | None = None) -> InputDataError:
    """The one-line error of a missing (``exc`` a :class:`FileNotFoundError` or None and no file)
    or damaged intermediate: the file, what it is, why, and the rebuild command."""
    path = Path(path)
    if isinstance(exc, FileNotFoundError) or (exc is None and not path.exists()):
        return InputDataError(f"{what} {path} does not exist; build it with `snakemake {path}`")
    text = str(exc).strip() if exc is not None else ""
    reason = text.splitlines()[0] if text else type(exc).__name__ if exc is not None else "damaged"
    return InputDataError(f"{what} {path} is unreadable ({reason}); {rebuild_hint(path)}")


#: what a damaged JSON, .npz or .npy file raises on reading (truncated zip: BadZipFile, EOFError)
READ_ERRORS = (OSError, ValueError, EOFError, zipfile.BadZipFile, UnicodeDecodeError)


def read_json(path: str | Path, what: str = "JSON file") -> Any:
    """The JSON value of ``path``; :func:`unreadable` if missing or damaged."""
    try:
        return json.loads(Path(path).read_text())
    except READ_ERRORS as exc:
        raise unreadable(path, what, exc) from None


def read_csv(path: str | Path, what: str = "table", **kwargs: Any) -> Any:
    """The pandas frame of the CSV/TSV file ``path`` (``kwargs`` to :func:`pandas.read_csv`);
    :func:`unreadable` if missing or damaged. pandas is imported here only (it is heavy)."""
    import pandas as pd

    try:
        return pd.read_csv(path, **kwargs)
    except READ_ERRORS as exc:
        raise unreadable(path, what, exc) from None


def load_npz(path: str | Path, what: str = "array file") -> dict[str, np.ndarray]:
    """Every array of the ``.npz`` file ``path``, read in full (a damaged member fails here, not
    later); :func:`unreadable` if missing or damaged. No pickles."""
    try:
        with np.load(path, allow_pickle=False) as stored:
            return {name: stored[name] for name in stored.files}
    except (*READ_ERRORS, KeyError) as exc:
        raise unreadable(path, what, exc) from None


def load_npy(path: str | Path, what: str = "array file", mmap_mode: Literal["r"] | None = None) -> np.ndarray:
    """The array of the ``.npy`` file ``path`` (memory-mapped with ``mmap_mode="r"``);
    :func:`unreadable` if missing or damaged. No pickles."""
    try:
        return np.load(path, mmap_mode=mmap_mode, allow_pickle=False)
    except READ_ERRORS as exc:
        raise unreadable(path, what, exc) from None


def _json_default(value: object) -> object:
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def save_npz(path: str | Path, **arrays: np.ndarray) -> None:
    """Save arrays to an uncompressed ``.npz`` atomically."""
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        np.savez(handle, **arrays)


def save_npy(path: str | Path, array: np.ndarray) -> None:
    """Save one array to ``.npy`` atomically (memory-mappable by readers)."""
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        np.save(handle, array)
