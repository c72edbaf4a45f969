"""End to end (issue 38): `snakemake multiverse` on the smoke profile with one data set. A
choice that does not change the data (a key no claim reads) leaves every verdict unchanged, and
the universes' claims tables are identical, statistic for statistic. A choice that does change
them, run from the default universe's results (mpdp.multiverse.universe.seed), reruns only the
jobs that read it and gives the tables of the same universe run from scratch."""

import json

import pandas as pd
import pytest
import workflow_helpers
import yaml
from workflow_helpers import require_mirror, run_snakemake, workflow_dir

from mpdp import config
from mpdp.claims import tables
from mpdp.multiverse import spec, universe

TEST_CONFIG = """
multiverse:
  base:
    datasets: [breast_cancer]
    voting.datasets: [breast_cancer]
    benchmark.datasets: [breast_cancer]
  reseeds: [{root_seed: 1}]
  choices:
    - {choice: audit_beta, key: audit.beta, values: [0.1],
       source: "the audit's failure probability: no claim of the claims target reads it"}
    - {choice: wddp_lambda, key: wddp.lambda, values: [0.0], source: "E7 #4"}
"""


@pytest.mark.slow
def test_a_choice_that_does_not_change_the_data_leaves_every_verdict_unchanged(tmp_path, monkeypatch):
    mirror = require_mirror()
    work = workflow_dir(tmp_path)
    (work / "multiverse.yaml").write_text(TEST_CONFIG)
    run_snakemake(work, "--cores", "2", "multiverse", "--configfile", "config/smoke.yaml", "multiverse.yaml",
                  env={"MPDP_DATA_MIRROR": str(mirror)})
    table = pd.read_parquet(work / spec.TABLE_PATH)
    default = tables.read_verdicts(work / spec.ROOT / "default" / tables.VERDICTS_PATH)
    alt = tables.read_verdicts(work / spec.ROOT / "audit_beta=0.1" / tables.VERDICTS_PATH)
    beta = table[table["choice"] == "audit_beta"]
    assert len(beta) == len(default) > 0 and set(beta["study"]) == set(default["study"])
    assert (beta["verdict"] == beta["default_verdict"]).all()
    assert (beta["n_informative"] == beta["default_n_informative"]).all()
    assert set(beta["outcome"]) <= {"holds", "unchanged"}
    # issue 48: seeded from the default, its run reran no job, so it reads no key and is not counted
    assert beta["reads_no_key"].all() and set(beta["assessment"]) == {"reads no key"}
    assert (beta["n_cells_changed"] == 0).all() and (beta["estimate"].isna() == beta["default_estimate"].isna()).all()
    assert table["headline_verdict"].isna().all()  # no main build in this folder: no headline
    # the reseeded default ran like any universe (root_seed reruns what draws noise) and is the baseline
    reseed = table[table["kind"] == "reseed"]
    assert set(reseed["universe"]) == {"reseed=root_seed_1"} and (reseed["outcome"] != "failed").all()
    assert (reseed["n_cells_changed"] > 0).any()
    assert (work / spec.CURVES_PNG).stat().st_size > 0
    pd.testing.assert_frame_equal(alt, default)
    cells = [tables.read_cells(work / spec.ROOT / u / tables.CELLS_PATH) for u in ("default", "audit_beta=0.1")]
    pd.testing.assert_frame_equal(*cells)
    assert (work / spec.FIGURE_PNG).stat().st_size > 0
    for u in ("default", "audit_beta=0.1"):  # the universes share the outer run's raw data, nothing else
        assert (work / spec.ROOT / u / "data" / "raw").resolve() == (work / "data" / "raw").resolve()
        # issue 45: a universe builds the claims tables only, not the claims figures nothing reads
        assert not list((work / spec.ROOT / u).glob("reports/figures/*")), u
        assert "rule claims_forest:" not in (work / "logs" / "multiverse" / f"{u}.snakemake.log").read_text()

    # the λ universe started from the default's results: it retrained WD-DP, not the data
    lam = "wddp_lambda=0.0"
    status = json.loads((work / spec.ROOT / lam / "status.json").read_text())
    assert status["ok"] and status["seeded"]
    ran = (work / "logs" / "multiverse" / f"{lam}.snakemake.log").read_text()
    assert "rule train_job:" in ran and "rule optimum:" in ran
    lam_rows = table[table["universe"] == lam]
    assert not lam_rows["reads_no_key"].any() and (lam_rows["n_cells_changed"] > 0).any()
    assert "rule prepare:" not in ran and "rule voting_train:" not in ran and "rule ls_experiment" not in ran
    # ... and its tables equal those of the same universe run from scratch
    config = yaml.safe_load((work / spec.ROOT / lam / "config" / "config.yaml").read_text())
    u = {x.id: x for x in spec.universes({"multiverse": yaml.safe_load(TEST_CONFIG)["multiverse"]})}[lam]
    scratch = tmp_path / "scratch"
    monkeypatch.setenv("MPDP_DATA_MIRROR", str(mirror))
    fresh = universe.run(u, scratch, work, config, 2, scratch / "status.json", tmp_path / "scratch.log",
                         raw=work / "data" / "raw")
    assert fresh["ok"] and not fresh["seeded"], fresh["error"]
    for read, path in ((tables.read_cells, tables.CELLS_PATH), (tables.read_verdicts, tables.VERDICTS_PATH)):
        pd.testing.assert_frame_equal(read(work / spec.ROOT / lam / path), read(scratch / path))


def _inputs(stdout: str, rule: str) -> str:
    """The inputs of ``rule``'s job in a dry run's output."""
    job = stdout.split(f"rule {rule}:", 1)[1].split("\n\n", 1)[0]
    return job.split("input:", 1)[1].split("output:", 1)[0]


def _report_run(work, mirror) -> str:
    """A dry run of the documented report command (its output)."""
    return run_snakemake(work, "-n", "--cores", "1", "reports/report.html", "--configfile", "config/smoke.yaml",
                         env={"MPDP_DATA_MIRROR": str(mirror)}).stdout


@pytest.mark.slow
def test_the_report_depends_on_the_robustness_table_once_it_exists(tmp_path):
    """Issue 48: after `snakemake multiverse` the documented report command rebuilds the report with
    its robustness section: rule report_html lists the table and the figures as inputs once the
    table exists (so a newer table reruns the report), and does not ask for them before."""
    mirror = require_mirror()
    work = workflow_dir(tmp_path)
    assert spec.TABLE_PATH not in _inputs(_report_run(work, mirror), "report_html")
    (work / spec.TABLE_PATH).parent.mkdir(parents=True)
    for path in (spec.TABLE_PATH, tables.VERDICTS_PATH, tables.CELLS_PATH):
        (work / path).write_bytes(b"")
    out = _report_run(work, mirror)
    inputs = _inputs(out, "report_html")
    assert spec.TABLE_PATH in inputs and spec.CURVES_PNG in inputs and spec.FIGURE_PNG in inputs
    # the collection reads the main build's claims tables (the headline) once they exist
    collected = _inputs(out, "multiverse")
    assert tables.VERDICTS_PATH in collected and tables.CELLS_PATH in collected


def _jobs(stdout: str, rule: str) -> list[str]:
    """Every job block of ``rule`` in a dry run's output."""
    return [block.split("\n\n", 1)[0] for block in stdout.split(f"rule {rule}:")[1:]]


@pytest.mark.slow
def test_the_slurm_route_runs_the_full_grid_multiverse_as_an_array(tmp_path):
    """Issue 48: `multiverse.full_grid: true` with the Slurm profile plans the main build (its claims
    tables are the default universe's input: the default universe *is* the main build), one universe
    job per alternative and reseed, each with the full grid's time limit and 2 CPUs, and the profile
    submits the universe jobs as one Slurm array (the installed executor plugin's --slurm-array-jobs)."""
    pytest.importorskip("snakemake_executor_plugin_slurm")
    from snakemake_executor_plugin_slurm import ExecutorSettings

    mirror = require_mirror()
    work = workflow_dir(tmp_path)
    (work / "profiles").symlink_to(workflow_helpers.REPO_ROOT / "profiles")
    (work / "full.yaml").write_text("multiverse:\n  full_grid: true\n")
    out = run_snakemake(work, "-n", "--workflow-profile", "profiles/slurm", "multiverse", "--configfile",
                        "config/config.yaml", "full.yaml", env={"MPDP_DATA_MIRROR": str(mirror)}).stdout
    cfg = config.load(workflow_helpers.REPO_ROOT / "config" / "config.yaml")
    cfg["multiverse"]["full_grid"] = True
    universes = _jobs(out, "multiverse_universe")
    assert len(universes) == len(spec.to_run(cfg)) > 30
    default = next(j for j in universes if "output: data/multiverse/default/status.json" in j)
    assert tables.VERDICTS_PATH in default and tables.CELLS_PATH in default and "runtime=10," in default
    assert "rule claims_tables:" in out  # the main build's claims, built first
    for job in universes:
        if job is not default:
            assert "data/multiverse/default/status.json" in job.split("output:", 1)[0]  # seeded after it
            assert "runtime=600," in job and "cpus_per_task=2" in job and "mem_mb=4000" in job
    profile = yaml.safe_load((workflow_helpers.REPO_ROOT / "profiles" / "slurm" / "config.yaml").read_text())
    assert profile["slurm-array-jobs"] == "multiverse_universe" and "array_jobs" in ExecutorSettings.__dataclass_fields__
    assert "runtime" not in profile["set-resources"]["multiverse_universe"]  # the rule's, per grid


FULL_GRID_CONFIG = """
datasets: [breast_cancer]
voting: {datasets: [breast_cancer], multiclass_datasets: []}
benchmark: {datasets: [breast_cancer]}
multiverse:
  full_grid: true
  reseeds: []
  choices:
    - {choice: audit_beta, key: audit.beta, values: [0.1],
       source: "the audit's failure probability: no claim of the claims target reads it"}
    - {choice: wddp_lambda, key: wddp.lambda, values: [0.0], source: "E7 #4"}
"""


@pytest.mark.slow
def test_on_the_full_grid_the_default_universe_is_the_main_build(tmp_path):
    """Issue 48: with multiverse.full_grid `snakemake multiverse` builds the main build's claims, takes
    them as the default universe (no nested run) and seeds every alternative from the main build, which
    then reruns only what its key touches; the table's default verdicts are the headline's."""
    mirror = require_mirror()
    work = workflow_dir(tmp_path)
    (work / "full.yaml").write_text(FULL_GRID_CONFIG)
    run_snakemake(work, "--cores", "2", "multiverse", "--configfile", "config/smoke.yaml", "full.yaml",
                  env={"MPDP_DATA_MIRROR": str(mirror)})
    status = json.loads((work / spec.ROOT / "default" / "status.json").read_text())
    assert status["ok"] and status["main_build"] == str(work.resolve())
    assert status["verdicts"] == str((work / tables.VERDICTS_PATH).resolve())
    assert not (work / spec.ROOT / "default" / "data").exists()  # no nested run
    table = pd.read_parquet(work / spec.TABLE_PATH)
    assert (table["grid"] == "full").all() and (table["default_verdict"] == table["headline_verdict"]).all()
    main = tables.read_verdicts(work / tables.VERDICTS_PATH)
    beta = json.loads((work / spec.ROOT / "audit_beta=0.1" / "status.json").read_text())
    assert beta["seeded"] and beta["jobs_run"] == 0  # seeded from the main build: nothing to redo
    pd.testing.assert_frame_equal(tables.read_verdicts(work / spec.ROOT / "audit_beta=0.1" / tables.VERDICTS_PATH), main)
    lam = "wddp_lambda=0.0"
    assert json.loads((work / spec.ROOT / lam / "status.json").read_text())["seeded"]
    ran = (work / "logs" / "multiverse" / f"{lam}.snakemake.log").read_text()
    assert "rule train_job:" in ran and "rule prepare:" not in ran and "rule voting_train:" not in ran
    assert not (work / spec.ROOT / lam / "data" / "multiverse").exists()
