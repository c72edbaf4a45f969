"""Fixtures shared by every test folder: the raw-data mirror (tests/workflow_helpers.py).

The mirror is ``$MPDP_DATA_MIRROR`` or ``../shared/datasets`` next to the repository. Tests
that need it are skipped with a reason when it is absent, except under CI (``CI`` set),
where a missing mirror is a failure: otherwise the end-to-end and real-data tests would
vanish from a green run without anyone noticing.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from workflow_helpers import require_mirror

from mpdp.engine import gd as engine
from mpdp.engine import layout as engine_layout
from mpdp.privacy import disk_memo


@pytest.fixture(scope="session", autouse=True)
def calibration_memo(tmp_path_factory: pytest.TempPathFactory):
    """The calibration memo on disk (mpdp.privacy.disk_memo) of this test session: one fresh folder,
    shared by the Snakemake runs the tests start and by the session's xdist workers (the memo's
    writes are atomic), so that no test reads or fills the user's."""
    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "calibration-memo"
    folder.mkdir(mode=0o700, exist_ok=True)  # the user's own, writable by no one else (disk_memo.usable)
    before = os.environ.get(disk_memo.ENV)
    os.environ[disk_memo.ENV] = str(folder)
    yield folder
    if before is None:
        os.environ.pop(disk_memo.ENV, None)
    else:
        os.environ[disk_memo.ENV] = before


@pytest.fixture
def socket_dir() -> Iterator[Path]:
    """A short folder for the warm renderer's sockets (mpdp.figures.warm): a Unix socket's name
    holds at most ~100 bytes, and a test's tmp_path under an xdist worker can be longer, which
    would silently turn the renderer off."""
    folder = Path(tempfile.mkdtemp(prefix="mpdp-w", dir="/tmp" if Path("/tmp").is_dir() else None))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def mirror() -> Path:
    return require_mirror()


@pytest.fixture
def small_tiles(monkeypatch: pytest.MonkeyPatch) -> None:
    """Engine tile thresholds scaled down so that blocks of a few hundred rows and a few
    features have many row tiles (both tile rules of :func:`mpdp.engine.tile_rows`)."""
    monkeypatch.setattr(engine, "SMALL_PRODUCT", 500)
    monkeypatch.setattr(engine, "MIN_SMALL_TILE_ROWS", 8)
    monkeypatch.setattr(engine, "CACHE_TILE_ROWS", 50)
    monkeypatch.setattr(engine_layout, "FUSED_TILE_BYTES", 320)  # 10 rows of 8 float32 features
    # transposed tiles: 32 rows at 8 features, 16 at 9-16, the lanes (8 or 16) from 17 on
    monkeypatch.setattr(engine_layout, "FUSED_TRANSPOSED_TILE_BYTES", {8: 1024, 16: 1024})
