"""Atomic file output: nothing half-written is ever left behind.

Every file the pipeline produces is written to a temporary sibling and renamed into place
only when complete, so an interrupted job leaves either the old file or none.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it to ``path`` on success, delete on error."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        umask = os.umask(0)
        os.umask(umask)
        tmp.chmod(0o666 & ~umask)  # mkstemp creates 0600; give the file the usual mode
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


def read_json(path: str | Path) -> object:
    return json.loads(Path(path).read_text())


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
