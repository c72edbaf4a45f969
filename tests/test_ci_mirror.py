"""Without the raw-data mirror, mirror tests skip locally but fail under CI (issue 13 item 9)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = "tests/data/test_registry.py::test_pins_agree_with_the_mirror_manifest"


def _pytest(tmp_path: Path, ci: bool) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["MPDP_DATA_MIRROR"] = str(tmp_path / "no-mirror")
    if ci:
        env["CI"] = "true"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", TARGET],
                          cwd=ROOT, env=env, capture_output=True, text=True)


def test_missing_mirror_skips_locally(tmp_path):
    proc = _pytest(tmp_path, ci=False)
    assert proc.returncode == 0 and "1 skipped" in proc.stdout, proc.stdout[-2000:]
    assert "no-mirror" in proc.stdout


def test_missing_mirror_fails_under_ci(tmp_path):
    proc = _pytest(tmp_path, ci=True)
    assert proc.returncode == 1, proc.stdout[-2000:]
    assert "1 error" in proc.stdout or "1 failed" in proc.stdout
    assert "CI is set, so the end-to-end and real-data tests must run" in proc.stdout
