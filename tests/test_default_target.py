"""The default target rebuilds every missing figure and table of every study (dry runs).

A build is simulated on the smoke profile: every output (and ``benchmark:`` file) the default
target plans is created empty, then ``snakemake --touch`` puts their times in DAG order, so a dry
run has nothing to do. Deleting outputs must then make a dry run of the default target schedule
them again; before, figures and tables read only by the report (``hamm_*``, ``ls_*``,
``audit_eps``, the audit table, …) were never rebuilt once the report existed.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ["--configfile", "config/smoke.yaml", "--cores", "1"]

pytestmark = pytest.mark.slow

#: one figure of each study (leaves of the DAG: nothing else rebuilds them)
ONE_FIGURE_PER_STUDY = (
    "reports/figures/hamm_h1.png",  # voting
    "reports/figures/ls_1.png",  # least squares
    "reports/figures/audit_eps.png",  # audit
    "reports/figures/noise_diagnostics.pdf",
    "reports/figures/fig07.png",  # WD-DP
    "reports/figures/zz_f4.pdf",  # ADMM
    "reports/figures/zz_table.csv",
    "reports/figures/xp_m.png",  # cross-paper benchmark
)


def _snakemake(work: Path, mirror: Path, *args: str) -> str:
    env = {**os.environ, "MPDP_DATA_MIRROR": str(mirror)}
    proc = subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=work, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout + proc.stderr


def _planned_files(output: str) -> set[str]:
    """Output and benchmark files of the jobs a dry run plans."""
    files: set[str] = set()
    for match in re.finditer(r"^\s+(?:output|benchmark): (.*)$", output, re.M):
        files.update(match[1].split(", "))
    return files


@pytest.fixture(scope="module")
def built(tmp_path_factory, mirror) -> tuple[Path, Path]:
    """A working directory in which every planned output exists and is up to date."""
    work = tmp_path_factory.mktemp("default_target")
    for name in ("Snakefile", "workflow", "config", "notebooks", "environment.yml"):
        (work / name).symlink_to(ROOT / name)
    planned = _planned_files(_snakemake(work, mirror, "-n", *SMOKE))
    # the raw files for real (copied from the mirror and verified): planning checks their sizes
    # and checksums (mpdp.data.fetch.check_fetched), so empty stand-ins would be refused
    manifests = sorted(p for p in planned if p.startswith("data/raw/") and p.endswith("manifest.json"))
    _snakemake(work, mirror, *manifests, *SMOKE)
    for path in planned:
        if path.startswith("data/raw/"):
            continue
        if not Path(path).suffix:  # a directory() output (the forest plots of a study's claims)
            (work / path).mkdir(parents=True, exist_ok=True)
            continue
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).touch()
    _snakemake(work, mirror, "--touch", "--quiet", *SMOKE)
    assert "Nothing to be done" in _snakemake(work, mirror, "-n", *SMOKE)
    return work, mirror


def test_a_missing_figure_of_any_study_is_rebuilt_by_the_default_target(built):
    """One study at a time: a missing WD-DP figure would rerun the report, which would
    reschedule the other studies' missing figures through the report's inputs."""
    work, mirror = built
    for path in ONE_FIGURE_PER_STUDY:
        stamp = (work / path).stat().st_mtime_ns
        (work / path).unlink()
        planned = _planned_files(_snakemake(work, mirror, "-n", *SMOKE))
        (work / path).touch()
        os.utime(work / path, ns=(stamp, stamp))
        assert path in planned, path


def test_every_missing_figure_and_table_is_rebuilt_by_the_default_target(built):
    """Every figure and every study table of the build (not the per-job parts, nor the
    benchmark's selection budgets: an input of its per-job parts only, remade when one reruns)."""
    work, mirror = built
    outputs = sorted(
        p for p in [*(work / "reports" / "figures").iterdir(), *(work / "data" / "results").glob("*/*.*"),
                    *(work / "data" / "results" / "wddp").glob("*/*.*")]
        if p.is_file() and "runs" not in p.parts and p.name != "budgets.json"
    )
    names = {str(p.relative_to(work)) for p in outputs}
    assert {"data/results/audit/audit.parquet", "data/results/voting/adult.parquet",
            "data/results/ls/ls_2.parquet", "data/results/admm/adult.parquet",
            "data/results/wddp/eta/adult.json", "data/results/benchmark/breast_cancer.hparams.json",
            "reports/figures/hamm_b5.pdf"} <= names
    for path in outputs:
        path.unlink()
    planned = _planned_files(_snakemake(work, mirror, "-n", *SMOKE))
    assert names <= planned, sorted(names - planned)


def test_audit_eps_is_a_target(built):
    work, mirror = built
    (work / "reports/figures/audit_eps.png").unlink(missing_ok=True)
    planned = _planned_files(_snakemake(work, mirror, "audit_eps", "-n", *SMOKE))
    assert {"reports/figures/audit_eps.png", "reports/figures/audit_eps.pdf"} <= planned
