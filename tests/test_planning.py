"""Planning checks (mpdp.pipeline.planning): config errors that only a job used to find stop before any
job, naming the key; data-forced substitutions are warned about (console and report)."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mpdp import config
from mpdp.audit.adapters import AuditContext
from mpdp.audit.registry import get as audit_adapter
from mpdp.data import prepare
from mpdp.errors import ConfigError, MpdpError
from mpdp.pipeline import planning
from mpdp.studies.admm.cases import split_nodes

ROOT = Path(__file__).resolve().parents[1]
AVAILABLE = ["kddcup99", "adult", "bank", "breast_cancer"]


def _smoke() -> dict:
    return config.load(ROOT / "config" / "smoke.yaml")


def _card(tmp_path: Path, cfg: dict, ds: str, n_train: int, n_test: int, current: bool = True) -> Path:
    """A data card as rule prepare writes it (only what the planning reads)."""
    choices = prepare.preprocessing(ds, cfg if current else {**cfg, "max_records": 123})
    path = tmp_path / ds / "card.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"n_train": n_train, "n_test": n_test, "preprocessing": choices}))
    return path


@pytest.mark.parametrize("name", ["config.yaml", "smoke.yaml"])
def test_the_profiles_plan_without_errors_or_warnings(name):
    cfg = config.load(ROOT / "config" / name)
    assert planning.check(cfg, AVAILABLE, {}) == []


def _edit(cfg: dict, key: str, value) -> dict:
    *parents, last = key.split(".")
    node = cfg
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if value is None:
        del node[last]
    else:
        node[last] = value
    return cfg


@pytest.mark.parametrize(
    ("key", "value", "named"),
    [
        # smoke: at most 1 600 training records; m = 1000, u = 3 needs 2 000
        ("audit.settings.2.m", 1000, "audit.settings.2.m"),
        ("audit.settings.0.dataset", None, "audit.settings.0.dataset"),
        ("audit.settings.2.u", None, "audit.settings.2.u"),
        ("audit.settings.0.mechanism", "wxy", "audit.settings.0.mechanism"),
        ("admm.P", 100000, "admm.P"),
        ("admm.f3_alphas", [0.1, 0.5], "admm.f3_alphas"),
        ("admm.f4_iterations", [2, 4, 60], "admm.f4_iterations"),
        ("admm.tune_draws", 1, "admm.tune_draws"),  # per_method_if_stable: one draw shows no stability
        ("voting.h1_M", 100, "voting.h1_M"),
        ("voting.datasets", [], "voting.datasets"),
        ("benchmark.datasets", [], "benchmark.datasets"),
    ],
)
def test_a_setting_no_job_can_run_is_an_error_naming_its_key(key, value, named):
    cfg = _edit(_smoke(), key, value)
    with pytest.raises(ConfigError, match="config key '" + re.escape(named) + "': .*; "):
        planning.check(cfg, AVAILABLE, {})


def test_a_current_data_card_gives_the_exact_size(tmp_path):
    """breast_cancer has 559 training records in the smoke profile: m = 200, u = 9 needs 1 000,
    which the record cap alone (1 600) cannot refuse."""
    cfg = _edit(_smoke(), "audit.settings.4.m", 200)
    assert planning.check(cfg, AVAILABLE, {}) == []
    cards = {"breast_cancer": _card(tmp_path, cfg, "breast_cancer", 559, 140)}
    with pytest.raises(ConfigError, match=r"'audit\.settings\.4\.m'.*breast_cancer has 559 training records"):
        planning.check(cfg, AVAILABLE, cards)
    stale = {"breast_cancer": _card(tmp_path, cfg, "breast_cancer", 559, 140, current=False)}
    assert planning.check(cfg, AVAILABLE, stale) == []  # a card of other preprocessing is not trusted


def test_an_M_the_data_cannot_hold_is_a_warning(tmp_path):
    """adult with 750 records: private pool 600 − 75 = 525 < 30 × 20, so M = 30 (= h1_M) drops."""
    cfg = _smoke()
    cards = {"adult": _card(tmp_path, cfg, "adult", 600, 150)}
    warnings = planning.check(cfg, AVAILABLE, cards)
    assert warnings == planning.warnings(cfg, AVAILABLE, cards)
    assert len(warnings) == 1
    assert warnings[0].startswith("voting.M_grid: M = 30 dropped for adult: its private pool of 525 records")
    assert "voting.h1_M = 30 show M = 10 instead" in warnings[0]
    # adult not available: not judged (the benchmark's breast_cancer is missing too: warned apart)
    assert [w for w in planning.warnings(cfg, ["kddcup99"], cards) if w.startswith("voting.M_grid")] == []


def test_jobs_name_the_key_too():
    """A job that still meets a too-large setting (no card at planning) names the key."""
    with pytest.raises(ConfigError, match=r"config key 'admm\.P'"):
        split_nodes(np.zeros((10, 2)), np.ones(10), 100, 0, "adult")
    ctx = AuditContext(root_seed=0, beta=0.05, delta=1e-5, bug_noise_factor={}, n_train={"breast_cancer": 559},
                       one_run={"canaries": 10}, many_draws={}, processed={})
    setting = {"mechanism": "wddp_per_round", "dataset": "breast_cancer", "epsilon": 1.0, "m": 200, "u": 9}
    with pytest.raises(ConfigError, match=r"audit\.settings.*breast_cancer has 559") as err:
        audit_adapter("wddp_per_round").party_sizes(setting, ctx)
    assert "wddp.u_settings" not in str(err.value)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("override", "named"),
    [("admm={P: 100000}", "admm.P"), ("voting={h1_M: 100}", "voting.h1_M")],
)
def test_the_workflow_stops_at_planning(tmp_path, mirror, override, named):
    for name in ("Snakefile", "workflow", "config", "notebooks", "environment.yml"):
        (tmp_path / name).symlink_to(ROOT / name)
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--configfile", "config/smoke.yaml", "--config", override],
        cwd=tmp_path, env={**os.environ, "MPDP_DATA_MIRROR": str(mirror)}, capture_output=True, text=True,
    )
    assert proc.returncode != 0
    assert f"mpdp: config key '{named}'" in proc.stderr and "Traceback" not in proc.stderr


def _read_only_folder(tmp_path: Path) -> Path:
    """A folder this process cannot write (root writes through permission bits: use /proc/1)."""
    if os.geteuid() != 0:
        folder = tmp_path / "read_only"
        folder.mkdir()
        folder.chmod(0o555)
        return folder
    if not os.access("/proc/1", os.W_OK):
        return Path("/proc/1")
    pytest.skip("no folder that root cannot write")


def test_an_unwritable_output_folder_is_named(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    planning.check_writable(work)  # absent folders are created by Snakemake
    (work / "reports").symlink_to(_read_only_folder(tmp_path), target_is_directory=True)
    with pytest.raises(MpdpError, match=r"^the folder reports/ is not writable.*chmod -R u\+w reports"):
        planning.check_writable(work)


@pytest.mark.slow
def test_the_workflow_names_an_unwritable_reports_folder(tmp_path, mirror):
    for name in ("Snakefile", "workflow", "config", "notebooks", "environment.yml"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / "reports").symlink_to(_read_only_folder(tmp_path), target_is_directory=True)
    # a cheap target: the check runs at planning, whatever the target
    proc = subprocess.run([sys.executable, "-m", "snakemake", "data/raw/breast_cancer/manifest.json",
                           "--configfile", "config/smoke.yaml", "--cores", "1"],
                          cwd=tmp_path, env={**os.environ, "MPDP_DATA_MIRROR": str(mirror)},
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert "mpdp: the folder reports/ is not writable" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_moving_the_mirror_reruns_nothing_and_a_damaged_raw_file_stops_planning(tmp_path, mirror):
    """Issue 37: the mirror path was a param of fetch_raw (a moved mirror reran everything), and
    a truncated data/raw file went unnoticed by the default target."""
    import shutil

    work = tmp_path / "work"
    work.mkdir()
    for name in ("Snakefile", "workflow", "config", "notebooks", "environment.yml"):
        (work / name).symlink_to(ROOT / name)
    moved = tmp_path / "elsewhere" / "mirror"
    shutil.copytree(mirror / "breast_cancer_wisconsin", moved / "breast_cancer_wisconsin")
    args = ["data/processed/breast_cancer/card.json", "--configfile", "config/smoke.yaml",
            "--config", "datasets=[breast_cancer]", "--cores", "1"]

    def snakemake(*extra, mirror_path=mirror):
        return subprocess.run([sys.executable, "-m", "snakemake", *extra, *args], cwd=work,
                              env={**os.environ, "MPDP_DATA_MIRROR": str(mirror_path)},
                              capture_output=True, text=True)

    assert snakemake().returncode == 0
    dry = snakemake("-n", mirror_path=moved)
    assert dry.returncode == 0 and "Nothing to be done" in dry.stdout + dry.stderr, dry.stdout + dry.stderr
    raw = work / "data" / "raw" / "breast_cancer" / "breast-cancer-wisconsin.data"
    raw.write_bytes(raw.read_bytes()[:1000])  # truncated after its fetch was verified
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--configfile", "config/smoke.yaml",
                           "--config", "datasets=[breast_cancer]"], cwd=work,
                          env={**os.environ, "MPDP_DATA_MIRROR": str(mirror)}, capture_output=True, text=True)
    assert proc.returncode != 0
    assert f"mpdp: raw file data/raw/breast_cancer/{raw.name} has 1,000 bytes" in proc.stderr
    assert "rm -f" in proc.stderr and "Traceback" not in proc.stderr
