"""`snakemake ls` end to end on the smoke profile (tiny: CI), in a temporary working directory,
and the report's least-squares section built from its outputs."""

import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from workflow_helpers import run_snakemake, workflow_dir

from mpdp import config
from mpdp.report.build import render_report
from mpdp.studies import registry
from mpdp.studies.ls import experiment

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ["--configfile", "config/smoke.yaml", "--cores", "2"]

pytestmark = pytest.mark.slow


def _snakemake(workdir: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    # ls needs no raw data: no mirror, so the data sets count as downloadable, and a run that
    # tried to download one would fail (no network in CI); nothing is fetched for these targets
    return run_snakemake(workdir, *args, env={"MPDP_DATA_MIRROR": None}, check=check)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return workflow_dir(tmp_path_factory.mktemp("ls_workflow"))


def test_ls_1_target_schedules_only_ls_1(workdir):
    proc = _snakemake(workdir, "ls_1", "-n", *SMOKE)
    out = proc.stdout + proc.stderr
    assert "ls_experiment_1" in out and "ls_figure" in out
    assert not re.search(r"rule ls_experiment:|ls_negative_closed_form|train_job", out)


def test_classical_epsilon_restriction_is_a_one_line_config_error(workdir):
    proc = _snakemake(workdir, "ls", "-n", *SMOKE, "--config", "ls={eps_grid: [0.5, 2.5], t_grid: [1], draws: 10}",
                      check=False)
    assert proc.returncode != 0
    assert "epsilon < 1" in proc.stderr and "Traceback" not in proc.stderr


def test_ls_target_builds_tables_figures_and_report_section(workdir, tmp_path):
    _snakemake(workdir, "ls", *SMOKE)
    res = workdir / "data" / "results" / "ls"
    for exp in ("ls_1", "ls_2", "ls_3"):
        table = pd.read_parquet(res / f"{exp}.parquet")
        assert list(table.columns) == list(experiment.COLUMNS)
        assert (workdir / "reports" / "figures" / f"{exp}.png").stat().st_size > 10_000
        assert (workdir / "reports" / "figures" / f"{exp}.pdf").exists()
    assert bool(pd.read_parquet(res / "ls_1.parquet")["synthetic"].all())
    assert not pd.read_parquet(res / "ls_3.parquet")["synthetic"].any()
    from mpdp.claims import engine
    from mpdp.studies.ls import claims as ls_claims

    built = {e: pd.read_parquet(res / f"{e}.parquet") for e in ("ls_1", "ls_2", "ls_3")}
    cells = engine.evaluate(ls_claims.CLAIMS, engine.Inputs(ls_claims.observations(built),
                                                            ls_claims.baselines(built)))
    assert {"LS1-formula", "LS1-delta", "LS1-t", "LS-sgd"} <= set(cells["claim_id"])
    negative = pd.read_parquet(res / "negative_closed_form.parquet")
    assert len(negative) > 0 and (negative["writeup_formula"] < 0).all() and (negative["excess_median"] > 0).all()
    # nothing reruns
    assert "Nothing to be done" in _snakemake(workdir, "ls", *SMOKE).stdout + _snakemake(workdir, "ls", *SMOKE).stderr

    # the report section, from these outputs (no WD-DP results: the rest of the report is empty)
    outputs = [str(p) for p in sorted(res.glob("*.parquet"))] + [
        str(p) for p in sorted((workdir / "reports" / "figures").glob("ls_*.png"))
    ]
    context = {
        "config": config.load(ROOT / "config" / "smoke.yaml"),
        "invocation": {"cli_configfiles": ["config/smoke.yaml"], "config_args": [], "mirror": None},
        "results": {}, "cards": {}, "unavailable": {}, "figures": {},
        "benchmarks_dir": str(workdir / "data" / "benchmarks"), "repo_root": str(ROOT),
        "studies": registry.report_context({"ls": {"tables": [], "files": outputs}}),
    }
    html_path = tmp_path / "report.html"
    render_report(ROOT / "notebooks" / "report.py", context, html_path, ROOT)
    html = html_path.read_text()
    assert "Least-squares write-up" in html and "Where the printed closed form is negative" in html
    assert "synthetic by design" in html and "LS1-formula" in html
    assert html.count("data:image/webp") >= 3
