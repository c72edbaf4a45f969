"""Fixtures shared by every test folder: the raw-data mirror (tests/workflow_helpers.py).

The mirror is ``$MPDP_DATA_MIRROR`` or ``../shared/datasets`` next to the repository. Tests
that need it are skipped with a reason when it is absent, except under CI (``CI`` set),
where a missing mirror is a failure: otherwise the end-to-end and real-data tests would
vanish from a green run without anyone noticing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from workflow_helpers import require_mirror

from mpdp.engine import gd as engine
from mpdp.engine import layout as engine_layout


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
