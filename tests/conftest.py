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


@pytest.fixture(scope="session")
def mirror() -> Path:
    return require_mirror()
