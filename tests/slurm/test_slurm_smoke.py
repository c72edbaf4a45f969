"""The pipeline through Snakemake's Slurm executor on a real (single-node) Slurm cluster.

The smoke profile's figure 7, restricted to one data set, is built twice from the same command: once
locally (profiles/default) and once through profiles/slurm on the cluster that
tests/slurm/start_cluster.sh starts (CI runs it from .ci/run). The training tables the figure reads and
the figures must be equal. Without a reachable cluster the test is skipped locally but fails under CI
(``CI=true``), so a broken cluster setup cannot pass silently.
"""

import filecmp
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from mpdp import config
from mpdp.studies.wddp.figure_spec import variants_for

ROOT = Path(__file__).resolve().parents[2]
MIRROR = Path(os.environ.get("MPDP_DATA_MIRROR", ROOT.parent / "shared" / "datasets"))
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
#: the same target and config for both runs: one figure of one small data set (its 12 jobs: fetch,
#: prepare, θ*, η, a partition, two training jobs, four figure jobs, the target)
COMMAND = ["fig07", "--configfile", "config/smoke.yaml", "--config", "datasets=[breast_cancer]"]
SLURM = ["--profile", "tests/slurm/profile", "--workflow-profile", "profiles/slurm", "--jobs", "4"]
LOCAL = ["--workflow-profile", "profiles/default", "--cores", "2"]
#: wall-clock limit of each run (CI alone on 2 cores: ~3 min each; slack for a loaded machine)
TIMEOUT_S = 1500

pytestmark = [pytest.mark.slow, pytest.mark.slurm]


def _cluster_problem() -> str | None:
    """Why no Slurm cluster can take jobs here, or None if one can."""
    if shutil.which("sbatch") is None or shutil.which("squeue") is None:
        return "Slurm client commands (sbatch, squeue) not installed"
    try:
        ping = subprocess.run(["scontrol", "ping"], capture_output=True, text=True, timeout=30)
        nodes = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"Slurm does not answer ({exc})"
    if "is UP" not in ping.stdout:
        return f"slurmctld is not up: {ping.stdout.strip()} {ping.stderr.strip()}"
    if not {"idle", "mixed", "allocated"} & set(nodes.stdout.split()):
        return f"no usable Slurm node (sinfo states: {nodes.stdout.split()})"
    try:
        import snakemake_executor_plugin_slurm  # noqa: F401
    except ImportError:
        return "snakemake-executor-plugin-slurm not installed (pip install -e '.[slurm]')"
    return None


@pytest.fixture(scope="module")
def cluster() -> None:
    problem = _cluster_problem()
    if problem is None:
        return
    if IN_CI:
        pytest.fail(f"CI must run the Slurm test but {problem}; .ci/run starts the cluster with "
                    f"tests/slurm/start_cluster.sh")
    pytest.skip(f"{problem}; start one with `sudo bash tests/slurm/start_cluster.sh`")


def _workdir(base: Path) -> Path:
    """A working directory that sees the repository's workflow and profiles, with its own data/."""
    base.mkdir()
    for name in ("Snakefile", "workflow", "config", "notebooks", "environment.yml", "profiles"):
        (base / name).symlink_to(ROOT / name)
    (base / "tests" / "slurm").mkdir(parents=True)
    (base / "tests" / "slurm" / "profile").symlink_to(ROOT / "tests" / "slurm" / "profile")
    return base


def _run(workdir: Path, *args: str) -> str:
    env = {**os.environ, "MPDP_DATA_MIRROR": str(MIRROR),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    cmd = [sys.executable, "-m", "snakemake", *COMMAND[:1], *args, *COMMAND[1:]]
    try:
        proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True,
                              timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        tail = (exc.stderr or b"")[-4000:]
        pytest.fail(f"{' '.join(cmd)} ran past {TIMEOUT_S} s:\n{tail!r}")
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
    return proc.stdout + proc.stderr


def _results(workdir: Path) -> pd.DataFrame:
    """The training jobs' tables the figure reads, one after the other."""
    paths = sorted((workdir / "data" / "results" / "wddp" / "runs" / "breast_cancer").glob("*.parquet"))
    assert [p.name for p in paths] == ["eps_central.parquet", "eps_m4.parquet"], paths
    table = pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)
    return table.drop(columns=["seconds"])  # wall time of the job: the only column allowed to differ


@pytest.mark.skipif(not MIRROR.is_dir(), reason=f"raw-data mirror {MIRROR} not found")
def test_slurm_run_equals_local_run(cluster, tmp_path):
    local = _workdir(tmp_path / "local")
    slurm = _workdir(tmp_path / "slurm")
    _run(local, *LOCAL)
    log = _run(slurm, *SLURM)

    # the jobs really went through Slurm (not a silent local fallback)
    submitted = log.count("has been submitted with SLURM jobid")
    assert submitted >= 10, log[-3000:]  # 11 jobs; the plugin deletes successful jobs' Slurm logs

    pd.testing.assert_frame_equal(_results(local), _results(slurm), check_exact=True)
    figures = sorted(p.name for p in (local / "reports" / "figures").glob("fig07*"))
    variants = variants_for(config.load(ROOT / "config" / "smoke.yaml"))
    assert figures == sorted(f"fig07{v}.{ext}" for v in variants for ext in ("png", "pdf"))
    for name in figures:
        assert filecmp.cmp(local / "reports" / "figures" / name,
                           slurm / "reports" / "figures" / name, shallow=False), name
