"""Provenance facts of the report (git, packages, machine, checksums, wall times)."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest

from mpdp.report import provenance


def _bench(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time"
    lines = [header] + [f"{s}\t0:00:00\t{rss}\t-\t-\t-\t-\t-\t-\t-" for s, rss in rows]
    path.write_text("\n".join(lines) + "\n")


def test_stage_wall_times_sum_jobs_per_stage(tmp_path):
    _bench(tmp_path / "train" / "adult" / "eps_m2.tsv", [(10.0, 120.5)])
    _bench(tmp_path / "train" / "adult" / "eps_m4.tsv", [(20.5, 300.0)])
    _bench(tmp_path / "figure" / "fig01.tsv", [(1.0, 50.0), (3.0, 60.0)])  # repeat(): mean of rows
    _bench(tmp_path / "report.tsv", [(7.0, "-")])  # top-level file: stage = stem; rss unmeasured
    (tmp_path / "train" / "notes.txt").write_text("ignored")
    frame = provenance.stage_wall_times(tmp_path)
    assert list(frame["stage"]) == ["figure", "report", "train"]
    by_stage = frame.set_index("stage")
    assert by_stage.loc["train", "jobs"] == 2
    assert by_stage.loc["train", "seconds"] == pytest.approx(30.5)
    assert by_stage.loc["train", "max_rss_mb"] == pytest.approx(300.0)
    assert by_stage.loc["figure", "seconds"] == pytest.approx(2.0)
    assert np.isnan(by_stage.loc["report", "max_rss_mb"])


def test_stage_wall_times_only_declared_files(tmp_path):
    """With ``files`` (the report rule's declared inputs) stale files of other runs don't count."""
    declared = [tmp_path / "train" / "adult" / "eps_m2.tsv", tmp_path / "prepare" / "adult.tsv"]
    _bench(declared[0], [(10.0, 120.5)])
    _bench(declared[1], [(4.0, 80.0)])
    _bench(tmp_path / "train" / "kddcup99" / "eps_m2.tsv", [(999.0, 9999.0)])  # an earlier run
    frame = provenance.stage_wall_times(tmp_path, [str(p) for p in declared]).set_index("stage")
    assert list(frame.index) == ["prepare", "train"]
    assert frame.loc["train", "jobs"] == 1
    assert frame.loc["train", "seconds"] == pytest.approx(10.0)
    assert frame.loc["train", "max_rss_mb"] == pytest.approx(120.5)
    assert provenance.stage_wall_times(tmp_path)["seconds"].sum() == pytest.approx(1013.0)


def test_stage_wall_times_without_benchmarks(tmp_path):
    assert provenance.stage_wall_times(tmp_path / "missing").empty
    assert provenance.stage_wall_times(None).empty
    assert list(provenance.stage_wall_times(tmp_path).columns) == [
        "stage",
        "jobs",
        "seconds",
        "max_rss_mb",
    ]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_state_reads_commit_and_dirty_flag(tmp_path):
    def git(*args):
        return subprocess.run(
            [
                "git",
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@example.org",
                "-C",
                str(tmp_path),
                *args,
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()

    git("init", "-q")
    (tmp_path / "a.txt").write_text("1\n")
    git("add", "a.txt")
    git("commit", "-q", "-m", "first")
    head = git("rev-parse", "HEAD")
    clean = provenance.git_state(tmp_path)
    assert clean.commit == head and clean.dirty is False and "clean tree" in clean.text
    (tmp_path / "untracked.txt").write_text("not counted\n")
    assert provenance.git_state(tmp_path).dirty is False
    (tmp_path / "a.txt").write_text("2\n")
    dirty = provenance.git_state(tmp_path)
    assert dirty.commit == head and dirty.dirty is True and "dirty" in dirty.text


def test_git_state_outside_a_checkout(tmp_path):
    state = provenance.git_state(tmp_path)
    assert state.dirty is None and state.commit.startswith("unknown")


def test_package_versions():
    versions = provenance.package_versions(["numpy", "pandas", "no-such-package-mpdp"])
    assert versions["numpy"] == np.__version__
    assert versions["pandas"] == pd.__version__
    assert versions["no-such-package-mpdp"] == "not installed"
    assert {
        "numpy",
        "scipy",
        "pandas",
        "scikit-learn",
        "dp-accounting",
        "snakemake",
        "matplotlib",
        "seaborn",
    } <= set(provenance.PACKAGES)


def test_machine_facts():
    import os
    import platform
    import sys

    facts = provenance.machine()
    assert facts["python"] == ".".join(map(str, sys.version_info[:3]))
    assert facts["platform"] == platform.platform() and facts["machine"] == platform.machine()
    assert facts["cpu_count"] == str(os.cpu_count())
    assert facts["usable_cpus"] == str(len(os.sched_getaffinity(0)))
    assert 1 <= int(facts["usable_cpus"]) <= int(facts["cpu_count"])


def test_cards_and_raw_checksums(tmp_path):
    card = {"dataset": "adult", "raw_files": {"adult.test": "b" * 64, "adult.data": "a" * 64}}
    (tmp_path / "card.json").write_text(json.dumps(card))
    cards = provenance.read_cards(
        {"adult": tmp_path / "card.json", "credit_card": None, "bank": tmp_path / "no.json"}
    )
    assert cards["credit_card"] is None and cards["bank"] is None
    table = provenance.raw_checksums(cards)
    assert table.to_dict("records")[:2] == [
        {"dataset": "adult", "file": "adult.data", "sha256": "a" * 64},
        {"dataset": "adult", "file": "adult.test", "sha256": "b" * 64},
    ]
    assert table.loc[table["dataset"] == "credit_card", "sha256"].item().startswith("no data card")


def test_invocation_names_files_in_merge_order_and_overrides(tmp_path):
    (tmp_path / "config").mkdir()
    # Snakemake 9: --configfile paths (absolute) first, then the Snakefile's configfile: entry
    inv = provenance.invocation(
        [tmp_path / "config" / "smoke.yaml", "/elsewhere/extra.yaml", "config/config.yaml"],
        ["datasets=[adult,bank]", "wddp={eta: 0.5}"], tmp_path, mirror="/data/mirror x",
    )
    assert inv.configfiles == ("config/config.yaml", "config/smoke.yaml", "/elsewhere/extra.yaml")
    assert inv.command() == (
        "MPDP_DATA_MIRROR='/data/mirror x' snakemake --cores all --configfile config/smoke.yaml "
        "/elsewhere/extra.yaml --config 'datasets=[adult,bank]' 'wddp={eta: 0.5}'"
    )
    assert inv.command("fig07").startswith("MPDP_DATA_MIRROR='/data/mirror x' snakemake --cores all fig07 --conf")
    assert "`--config datasets=[adult,bank]`" in inv.describe()
    assert provenance.Invocation.from_dict(json.loads(json.dumps(inv.to_dict()))) == inv


def test_invocation_without_command_line_config(tmp_path):
    inv = provenance.invocation(["config/config.yaml"], None, tmp_path)
    assert inv.configfiles == ("config/config.yaml",)
    assert inv.command() == "snakemake --cores all"
    assert "no command-line overrides" in inv.describe()
    # an explicit --configfile of the default file is kept (it is read twice, as Snakemake does)
    explicit = provenance.invocation([tmp_path / "config/config.yaml", "config/config.yaml"], {"root_seed": 3}, tmp_path)
    assert explicit.command() == "snakemake --cores all --configfile config/config.yaml --config root_seed=3"


def test_invocation_keeps_symlinked_config_folders_relative(tmp_path):
    real = tmp_path / "repo" / "config"
    real.mkdir(parents=True)
    (real / "smoke.yaml").write_text("{}\n")
    work = tmp_path / "work"
    work.mkdir()
    (work / "config").symlink_to(real)  # like the end-to-end tests' working directory
    inv = provenance.invocation([work / "config" / "smoke.yaml", "config/config.yaml"], [], work)
    assert inv.command() == "snakemake --cores all --configfile config/smoke.yaml"


def test_the_reproduce_command_names_the_mirror_relative_to_the_project(tmp_path):
    """Issue 59: the report printed the builder's absolute mirror path five times."""
    project, mirror = tmp_path / "work" / "project", tmp_path / "shared" / "datasets"
    inv = provenance.invocation([], None, project, str(mirror))
    assert inv.command(root=project) == "MPDP_DATA_MIRROR=../../shared/datasets snakemake --cores all"
    # the same invocation whether the mirror was given absolute or relative (the report rule's param)
    assert provenance.invocation([], None, project, "../../shared/datasets") == inv
    assert str(tmp_path) not in inv.command("fig07", root=project)
