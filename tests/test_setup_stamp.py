"""scripts/setup-venv.sh skips reinstalling an up-to-date environment (issue 35, README quick start).

Run on a copy of the files the stamp hashes, with a stand-in ``.venv/bin/python`` that records
each call instead of installing anything.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FAKE_PYTHON = """#!/usr/bin/env bash
if [ "$1" = "-c" ]; then echo 3.11.0; exit 0; fi
echo "$*" >> "$(dirname "$0")/../calls.log"
"""


def _copy(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    (repo / "src" / "mpdp" / "engine").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "setup-venv.sh", repo / "scripts")
    for name in ("pyproject.toml", "setup.py"):
        shutil.copy(ROOT / name, repo)
    engine = ROOT / "src" / "mpdp" / "engine"
    for source in [*engine.glob("*.c"), *engine.glob("*.h")]:
        shutil.copy(source, repo / "src" / "mpdp" / "engine")
    python = repo / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    return repo


def _installs(repo: Path, *args: str, env: dict[str, str] | None = None) -> int:
    log = repo / ".venv" / "calls.log"
    before = log.read_text().count("pip install -q -e") if log.exists() else 0
    subprocess.run(["bash", "scripts/setup-venv.sh", *args], cwd=repo, check=True, capture_output=True,
                   env={"PATH": "/usr/bin:/bin", **(env or {})})
    return log.read_text().count("pip install -q -e") - before


def test_setup_reinstalls_only_when_what_it_installs_changed(tmp_path):
    repo = _copy(tmp_path)
    assert _installs(repo) == 1  # first time: install
    assert _installs(repo) == 0  # nothing changed: skipped
    assert _installs(repo, "test") == 1  # new extras: install them
    assert _installs(repo, "test") == 0 and _installs(repo) == 0  # any up-to-date install serves no extras
    with (repo / "setup.py").open("a") as f:
        f.write("\n# changed\n")
    assert _installs(repo) == 1  # the build recipe changed
    next((repo / "src" / "mpdp" / "engine").glob("*.c")).write_text("/* changed kernel */\n")
    assert _installs(repo, "test") == 1  # a C source changed: the compiled kernel is rebuilt
    assert _installs(repo, "test", env={"MPDP_REINSTALL": "1"}) == 1  # forced
