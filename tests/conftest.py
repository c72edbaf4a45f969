"""Fixtures shared by every test folder: the raw-data mirror.

The mirror is ``$MPDP_DATA_MIRROR`` or ``../shared/datasets`` next to the repository. Tests
that need it are skipped with a reason when it is absent, except under CI (``CI`` set),
where a missing mirror is a failure: otherwise the end-to-end and real-data tests would
vanish from a green run without anyone noticing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
MIRROR_ENV = "MPDP_DATA_MIRROR"


def mirror_path() -> Path:
    return Path(os.environ.get(MIRROR_ENV) or REPO_ROOT / ".." / "shared" / "datasets").resolve()


def require_mirror() -> Path:
    """The mirror folder; skip the test without it, fail it under CI."""
    path = mirror_path()
    if not path.is_dir():
        reason = f"raw-data mirror {path} absent (set ${MIRROR_ENV} to a folder laid out like ../shared/datasets)"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; CI is set, so the end-to-end and real-data tests must run")
        pytest.skip(reason)
    return path


@pytest.fixture(scope="session")
def mirror() -> Path:
    return require_mirror()
