"""Helpers of the end-to-end tests: a working directory that links the workflow, and a
Snakemake subprocess whose failure shows the end of its output (each study's workflow test
uses these instead of a copy of its own)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
MIRROR_ENV = "MPDP_DATA_MIRROR"
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
#: what a working directory needs of the repository (linked, so edits are seen at once)
WORKFLOW_FILES = ("Snakefile", "workflow", "config", "notebooks", "environment.yml")


def mirror_path() -> Path:
    """The raw-data mirror: ``$MPDP_DATA_MIRROR`` or ``../shared/datasets`` beside the repo."""
    return Path(os.environ.get(MIRROR_ENV) or REPO_ROOT / ".." / "shared" / "datasets").resolve()


def require_mirror() -> Path:
    """The mirror folder; skip the test without it, fail it under CI (``CI`` set), where the
    end-to-end and real-data tests must not vanish from a green run unnoticed."""
    path = mirror_path()
    if not path.is_dir():
        reason = f"raw-data mirror {path} absent (set ${MIRROR_ENV} to a folder laid out like ../shared/datasets)"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI is set, so the end-to-end and real-data tests must run")
        pytest.skip(reason)
    return path


def workflow_dir(path: Path) -> Path:
    """``path`` with the workflow files of the repository linked into it."""
    for name in WORKFLOW_FILES:
        (path / name).symlink_to(REPO_ROOT / name)
    return path


def run_snakemake(
    workdir: Path, *args: str, env: Mapping[str, str | None] | None = None, check: bool = True
) -> subprocess.CompletedProcess:
    """``snakemake *args`` in ``workdir``; ``env`` overrides the environment (None removes a
    variable). With ``check`` a non-zero exit fails the test with the end of the output."""
    full = dict(os.environ)
    for key, value in (env or {}).items():
        if value is None:
            full.pop(key, None)
        else:
            full[key] = value
    proc = subprocess.run([*SNAKEMAKE, *args], cwd=workdir, env=full, capture_output=True, text=True)
    if check and proc.returncode != 0:
        pytest.fail(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc
