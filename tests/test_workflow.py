"""The Snakemake workflow end to end on the smoke profile, in a temporary working directory.

Offline: the raw files come from the mirror ($MPDP_DATA_MIRROR, default ../shared/datasets);
without it these tests are skipped, and under CI (``CI`` set) they fail (tests/conftest.py).
Tests run in file order on one build: the dry-run checks of the rerun table of docs/reruns.md and of
the report's reproduce command need the finished smoke build of
``test_whole_pipeline_builds_report``.
"""

import html
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from mpdp import config, io, results
from mpdp.data import fetch
from mpdp.studies.wddp import plan

ROOT = Path(__file__).resolve().parents[1]
#: the mirror as tests/conftest.py finds it (its ``mirror`` fixture skips, or fails under CI)
MIRROR = Path(os.environ.get("MPDP_DATA_MIRROR") or ROOT / ".." / "shared" / "datasets").resolve()
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
SMOKE = ["--configfile", "config/smoke.yaml", "--cores", "2"]
#: a no-op override, so that the build records a --config argument the report must repeat
OVERRIDE = ["--config", "root_seed=0"]

pytestmark = pytest.mark.slow


def _snakemake(workdir: Path, *args: str, check: bool = True, env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "MPDP_DATA_MIRROR": str(MIRROR), **(env or {})}
    proc = subprocess.run([*SNAKEMAKE, *args], cwd=workdir, env=env, capture_output=True, text=True)
    if check and proc.returncode != 0:
        pytest.fail(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, mirror) -> Path:
    """A fresh working directory that sees the repository's workflow but has its own data/."""
    assert mirror == MIRROR
    work = tmp_path_factory.mktemp("workflow")
    for name in ("Snakefile", "workflow", "config", "notebooks", "environment.yml"):
        (work / name).symlink_to(ROOT / name)
    return work


def _planned_jobs(output: str) -> list[tuple[str, dict[str, str]]]:
    """(rule, wildcards) of every job a dry run plans (Snakemake's job blocks)."""
    jobs, rule = [], None
    for line in output.splitlines():
        if match := re.match(r"^(?:local)?rule (\w+):$", line):
            rule = match[1]
            jobs.append((rule, {}))
        elif rule and (match := re.match(r"^\s+wildcards: (.*)$", line)):
            jobs[-1] = (rule, dict(kv.split("=", 1) for kv in match[1].split(", ")))
    return jobs


def _reruns(workdir: Path, *args: str, env: dict | None = None) -> list[tuple[str, dict[str, str]]]:
    proc = _snakemake(workdir, "-n", *SMOKE, *args, env=env)
    return [(rule, wc) for rule, wc in _planned_jobs(proc.stdout + proc.stderr) if rule != "all"]


def test_lint_is_clean(workdir):
    proc = _snakemake(workdir, "--lint", "--configfile", "config/smoke.yaml", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_fig02_dry_run_schedules_no_eps_sweep_training(workdir):
    proc = _snakemake(workdir, "fig02", "-n", *SMOKE)
    jobs = [wc["job"] for rule, wc in _planned_jobs(proc.stdout + proc.stderr) if rule == "train_job"]
    assert jobs, "fig02 needs u-sweep training jobs"
    assert all(j.startswith("u_m16_") for j in jobs), jobs


def test_full_config_plans_quickly(workdir, calibration_memo):
    # the first plan on a machine fills the calibration memo (mpdp.privacy.disk_memo: about 80 s
    # of bisections on the full config); every later one reads it
    _snakemake(workdir, "-n", "--cores", "2", "--quiet", "rules")
    assert any(calibration_memo.rglob("*.json"))
    start = time.perf_counter()
    proc = _snakemake(workdir, "-n", "--cores", "2", "--quiet", "rules")
    seconds = time.perf_counter() - start
    cfg = config.load(ROOT / "config" / "config.yaml")
    available = [ds for ds in cfg["datasets"]
                 if fetch.locate(ds, workdir / "data" / "raw", MIRROR, False) is not None]
    stats = dict(re.findall(r"^(\w+)\s+(\d+)$", proc.stdout + proc.stderr, re.M))
    assert int(stats["train_job"]) == sum(len(plan.jobs(cfg, ds)) for ds in available)
    assert int(stats["collect_results"]) == len(available)
    assert seconds < 90, f"planning the full grid took {seconds:.0f} s"  # ~20 s on 2 busy cores


def test_multiclass_label_arrays_are_declared_outputs_and_inputs(workdir):
    """Issue 12: no hidden reads under data/. KDDCup99's class arrays come from rule
    prepare_multiclass, and the multiclass voting job declares them as inputs."""
    proc = _snakemake(workdir, "data/results/voting/kddcup99_multiclass.parquet", "-n", *SMOKE,
                      "--config", "datasets=[kddcup99]")
    blocks = {m[1]: m[2] for m in re.finditer(r"^rule (\w+):\n((?:\s+\S.*\n)+)", proc.stdout, re.M)}
    assert "prepare" not in blocks
    for rule, line in (("prepare_multiclass", "output"), ("voting_train", "input")):
        declared = re.search(rf"^\s+{line}: (.*)$", blocks[rule], re.M)[1]
        assert "data/processed/kddcup99/y_class_train.npy" in declared, (rule, declared)
        assert "data/processed/kddcup99/y_class_test.npy" in declared, (rule, declared)


def test_a_config_with_a_small_epsilon_plans_its_jobs(workdir):
    """Issue 13: eps = 1e-05 gave the job id u_m8_e1e-05, which the wildcard refused."""
    override = "wddp={u_settings: [{m: 8, eps: 0.00001}]}"
    proc = _snakemake(workdir, "train", "-n", *SMOKE, "--config", override)
    jobs = {wc["job"] for rule, wc in _planned_jobs(proc.stdout + proc.stderr) if rule == "train_job"}
    assert {"u_m8_e1e-05", "eps_central"} <= jobs


def test_no_available_data_set_is_a_clear_error(workdir):
    proc = _snakemake(workdir, "-n", *SMOKE, "--config", "datasets=[credit_card]", check=False)
    assert proc.returncode != 0
    assert "none of the requested data sets (credit_card) is available" in proc.stderr
    assert "creditcard.csv" in proc.stderr and "Traceback" not in proc.stderr


def test_data_target(workdir):
    proc = _snakemake(workdir, "data", *SMOKE)
    assert "credit_card" in proc.stderr and "skipped" in proc.stderr
    for ds in ("kddcup99", "adult", "bank", "breast_cancer"):
        card = io.read_json(workdir / "data" / "processed" / ds / "card.json")
        assert card["n_total"] == (699 if ds == "breast_cancer" else 2000)
        assert card["subsampled"] is True and card["synthetic"] is False
        assert (workdir / "data" / "partitions" / ds / "u_sweep.npz").exists()
    assert not (workdir / "data" / "processed" / "credit_card").exists()


def test_credit_card_asked_explicitly_fails_with_instructions(workdir):
    proc = _snakemake(workdir, "data/raw/credit_card/manifest.json", *SMOKE, check=False)
    assert proc.returncode != 0
    log = (workdir / "logs" / "fetch_raw" / "credit_card.log").read_text()
    assert "creditcard.csv" in log and "Traceback" not in log
    assert not list((workdir / "data" / "raw" / "credit_card").glob("*.csv"))


def test_whole_pipeline_builds_report(workdir):
    _snakemake(workdir, *SMOKE, *OVERRIDE)
    report = workdir / "reports" / "report.html"
    assert report.stat().st_size > 10_000
    assert (workdir / "reports" / "figures" / "fig07.png").exists()
    assert (workdir / "reports" / "figures" / "fig12-pr.pdf").exists()
    assert (workdir / "reports" / "figures" / "fig16-eq.png").exists()
    table = results.read(workdir / "data" / "results" / "wddp" / "adult.parquet")
    assert (table["optimal_gap"] >= -1e-9).all()
    assert set(table["mechanism"]) == {"wyx", "wddp", "jayaraman", "nonprivate"}
    private = table["mechanism"] != "nonprivate"
    assert table["eps_accounted"].notna().all() and table.loc[private, "sigma"].gt(0).all()
    assert table.loc[~private, "sigma"].eq(0).all()
    # the equal-privacy runs really give the target ε (each party calibrated to its n_j)
    eq = table[table["accountant"] == "exact_per_party"]
    assert len(eq) and ((eq["eps_accounted"] / eq["eps_claimed"] - 1).abs() < 1e-6).all()
    # per-round WD-DP coincides with WYX (same η and noise stream, spec M3.2)
    keys = ["accountant", "epsilon", "rep"]
    wd = table[(table["mechanism"] == "wddp") & (table["mode"] == "per_round")
               & (table["experiment"] == "eps_sweep")]
    wyx = table[(table["mechanism"] == "wyx") & (table["experiment"] == "eps_sweep")]
    pairs = wd.merge(wyx, on=keys, suffixes=("", "_wyx"))
    assert len(pairs) == len(wd) > 0
    assert (pairs["accuracy"] - pairs["accuracy_wyx"]).abs().max() < 0.01
    assert ((pairs["optimal_gap"] / pairs["optimal_gap_wyx"]) - 1).abs().max() < 1e-3
    assert table["majority_rate"].between(0.5, 1).all()
    # every study has its section, the cross-paper benchmark (issue 10) and the audit included
    text = html.unescape(report.read_text(encoding="utf-8"))
    for key, title in (("admm", "ADMM with dual and primal variable perturbation"),
                       ("voting", "Output perturbation and voting"), ("audit", "Empirical privacy audit"),
                       ("benchmark", "All mechanisms on one footing")):
        assert re.search(f'<h2 [^>]*id="{key}"[^>]*>{re.escape(title)}', text), key
    for part in ("Leaderboard", "Today's standard baseline", "What the figures show", 'id="register-i-20"',
                 "Settings the data did not allow", "Engine paths of the results rows"):
        assert part in text, part
    assert "was not part of this build" not in text and "xp_rank" in text
    # issue 46: every figure of the build passed the layout check when it was drawn (the claims' maps,
    # forest plots and the report's in-memory figures included), and no warning reached the report
    from mpdp.figures import check

    figures = workdir / "reports" / "figures"
    pngs = [p for p in figures.rglob("*.png") if check.RECORD_DIR not in p.parts]
    assert any(p.parent.name.startswith("forest_") for p in pngs) and (figures / "claims_map_wddp.pdf").is_file()
    failing = {p.stem: check.read_record(check.record_path(p)).problems for p in pngs}
    assert not {k: v for k, v in failing.items() if v}, failing
    assert not re.search(r"\w+Warning: ", text) and str(ROOT / "src") not in text
    assert (workdir / "reports" / "config.yaml").is_file()  # the build's profile, for notebooks/explore.py


def test_report_reproduce_command_rebuilds_exactly_this_report(workdir):
    text = html.unescape((workdir / "reports" / "report.html").read_text(encoding="utf-8"))
    commands = re.findall(r"^(?:MPDP_DATA_MIRROR=\S+ )?snakemake --cores all[^\n<]*$", text, re.M)
    main = commands[0]
    # issue 59: the mirror relative to the project folder; no absolute path of this machine in the report
    mirror = shlex.quote(os.path.relpath(os.path.abspath(MIRROR), os.path.abspath(workdir)))
    assert main == f"MPDP_DATA_MIRROR={mirror} snakemake --cores all --configfile config/smoke.yaml --config root_seed=0"
    bare = re.sub(r"(?:\.\./)+\S*", "", text)  # relative paths (one may end in the mirror's absolute path)
    for path in {os.path.abspath(MIRROR), os.path.realpath(MIRROR), os.path.abspath(workdir),
                 os.path.realpath(workdir)}:
        assert path not in bare, path
    assert "<code>config/config.yaml</code>, then <code>config/smoke.yaml</code>" in (
        workdir / "reports" / "report.html").read_text(encoding="utf-8")
    # the command, run as printed, has nothing to do: same config, same params, same outputs
    words = shlex.split(main.split(" ", 1)[1])
    assert words[:3] == ["snakemake", "--cores", "all"]
    proc = _snakemake(workdir, "-n", *words[1:])
    assert _planned_jobs(proc.stdout + proc.stderr) == [], proc.stdout[-3000:]
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_every_command_the_report_prints_plans_and_force_redraws_one_figure(workdir):
    """Every command of "How to reproduce it" plans (dry run) on this build; the single-figure
    rebuild (a file target with --force) plans exactly that figure's drawing job."""
    text = html.unescape((workdir / "reports" / "report.html").read_text(encoding="utf-8"))
    commands = re.findall(r"^(?:MPDP_DATA_MIRROR=\S+ )?(snakemake --cores all[^\n<]*)$", text, re.M)
    assert len(commands) >= 5, commands
    for command in commands:
        words = shlex.split(command)
        proc = _snakemake(workdir, "-n", *words[1:])
        jobs = _planned_jobs(proc.stdout + proc.stderr)
        if "--force" in words:
            assert jobs == [("figure", {"figname": "fig07"})], (command, jobs)
        else:
            assert jobs == [], (command, jobs)  # the build is complete: nothing to do


@pytest.mark.parametrize("where", ["elsewhere", "notebooks"])
def test_exploration_notebook_runs_on_the_build_from_any_folder(workdir, tmp_path, where):
    """notebooks/explore.py, converted and executed the usual way (jupytext + nbconvert, the kernel
    in the notebook's folder), loads every study's tables and claims of the smoke build: from an
    unrelated folder given $MPDP_BUILD_DIR, and from a build's notebooks/ folder without it."""
    env = {**os.environ, "MPDP_CONFIGFILES": "config/smoke.yaml"}
    env.pop("MPDP_BUILD_DIR", None)
    if where == "elsewhere":
        folder, build = tmp_path, workdir
        env["MPDP_BUILD_DIR"] = str(workdir)
    else:  # a build folder seen from its notebooks/ folder (links to this build's outputs)
        build = tmp_path / "build"
        folder = build / "notebooks"
        folder.mkdir(parents=True)
        for name in ("data", "reports", "config"):
            (build / name).symlink_to(workdir / name)
    notebook = folder / "explore.ipynb"
    subprocess.run([sys.executable, "-m", "jupytext", "--to", "ipynb", str(ROOT / "notebooks" / "explore.py"),
                    "-o", str(notebook)], check=True, capture_output=True)
    proc = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                           "--ExecutePreprocessor.timeout=900", "--output", "run.ipynb", str(notebook)],
                          cwd=folder, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    import nbformat

    run = nbformat.read(folder / "run.ipynb", as_version=4)
    text = "\n".join(str(output.get("text", "")) + str(output.get("data", {}).get("text/plain", ""))
                     for cell in run.cells if cell.cell_type == "code" for output in cell.outputs)
    assert f"build folder: {build.resolve()};" in text, text[:500]
    markdown = "\n".join(str(output.get("data", {}).get("text/markdown", ""))
                         for cell in run.cells if cell.cell_type == "code" for output in cell.outputs)
    assert "Not run in this build" not in markdown  # every study of the smoke build is found
    for claim in ("C1", "Z2", "V1", "LS1-formula"):  # a claim of each paper's claims table
        assert claim in text, claim
    # the claims engine's verdicts of every study (data/results/claims/verdicts.parquet)
    assert "No claims tables in this build" not in markdown
    for verdict_row in ("wddp", "admm", "voting", "ls", "n_informative"):
        assert verdict_row in text, verdict_row


# --- the rerun table of docs/reruns.md ("When does a step rerun?"), checked by dry runs ---------------

#: docs/reruns.md row (first cell) -> how the test makes that change
CHANGES = {
    "`wddp.eps_grid`": {"config": "wddp={eps_grid: [0.05, 0.3]}"},
    "`wddp.lambda`": {"config": "wddp={lambda: 0.002}"},
    "`wddp.tau_frac`": {"config": "wddp={tau_frac: 0.1}"},
    "`wddp.cv` (η fixed by `wddp.eta`, as in the smoke profile)": {"config": "wddp={cv: {folds: 3}}"},
    "`preprocess.bank_keep_duration`": {"config": "preprocess={bank_keep_duration: false}"},
    # issue 37: these used to rerun every benchmark_job / voting_train / the whole pipeline
    "`benchmark.primary_metric`": {"config": "benchmark={primary_metric: optimal_gap}"},
    "`voting.h2_eps`": {"config": "voting={h2_eps: 1}"},
    "`voting.delta_p`": {"config": "voting={delta_p: 0.1}"},
    "`MPDP_DATA_MIRROR` or `data_mirror` (the same files in another folder)": {"mirror": True},
    # issue 44: code hashes from the import graph, so an edit reruns exactly the rules importing it
    "plot code (`src/mpdp/figures/plot.py`)": {"edit": "figures/plot.py"},
    "the selection accountant (`src/mpdp/privacy/private_selection.py`)": {"edit": "privacy/private_selection.py"},
    "the trainer (`src/mpdp/engine/gd.py`; every reader of a results table imports it through `mpdp.results` "
    "and `mpdp.engine.provenance`)": {"edit": "engine/gd.py"},
    # issue 57: the hash covers code, not comments or docstrings (a comment in it replanned 167 of 178 jobs)
    "comments and docstrings only (`src/mpdp/data/prepare.py`)": {"edit": "data/prepare.py", "text_only": True},
}


def _readme_rerun_table() -> dict[str, set[str]]:
    text = (ROOT / "docs" / "reruns.md").read_text()
    section = text.split("## When does a step rerun?", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and line.startswith("| ") and not cells[0].startswith(("you change", "---")):
            rows[cells[0]] = set(re.findall(r"`(\w+)`", re.sub(r"\([^)]*\)", "", cells[1])))
    return rows


def test_readme_rerun_table_lists_exactly_the_tested_changes():
    assert set(_readme_rerun_table()) == set(CHANGES)


def _edited_package(tmp_path: Path, rel: str, text_only: bool = False) -> dict[str, str]:
    """A copy of the mpdp package with one module edited, first on PYTHONPATH: its code (a new
    constant), or only its module docstring and comments (``text_only``)."""
    copy = tmp_path / "src"
    shutil.copytree(ROOT / "src" / "mpdp", copy / "mpdp", ignore=shutil.ignore_patterns("__pycache__"))
    module = copy / "mpdp" / rel
    text = module.read_text()
    if text_only:
        assert text.startswith('"""')
        module.write_text('# an added comment\n"""An edited docstring. ' + text[3:] + "\n# a comment\n")
    else:
        module.write_text(text + "\n_AN_EDIT_OF_THE_CODE = 1\n")
    return {"PYTHONPATH": str(copy)}


@pytest.mark.parametrize("change", list(CHANGES))
def test_readme_rerun_table_is_true(workdir, tmp_path, change):
    """Each row by a dry run; the plot-code row is the check that a plot-only change (an
    edited plot module) reruns figures and the report but never training."""
    how = CHANGES[change]
    if "config" in how:
        jobs = _reruns(workdir, *OVERRIDE[:1], OVERRIDE[1], how["config"])
    elif "mirror" in how:  # the same files through another folder
        moved = tmp_path / "moved_mirror"
        moved.mkdir()
        for entry in MIRROR.iterdir():
            (moved / entry.name).symlink_to(entry)
        jobs = _reruns(workdir, *OVERRIDE, env={"MPDP_DATA_MIRROR": str(moved)})
    else:
        jobs = _reruns(workdir, *OVERRIDE, env=_edited_package(tmp_path, how["edit"], how.get("text_only", False)))
    assert {rule for rule, _ in jobs} == _readme_rerun_table()[change]
    train = {(wc["dataset"], wc["job"]) for rule, wc in jobs if rule == "train_job"}
    if change == "`wddp.eps_grid`":  # ε-sweep jobs only
        assert train and all(job.startswith("eps_") for _, job in train)
    if change == "`wddp.tau_frac`":  # every job with a partition, not the centralised one
        assert train and all(job != plan.CENTRAL for _, job in train)
        assert any(job.startswith("u_") for _, job in train)
    if change == "`preprocess.bank_keep_duration`":  # that data set's jobs only
        assert {wc["dataset"] for rule, wc in jobs if "dataset" in wc} == {"bank"}


def test_unexpected_job_error_leaves_its_traceback_in_the_log(workdir):
    """Runs last: it damages one per-job table of the finished build.

    The table stays readable Parquet with every column (an unreadable file is a user-facing
    one-line error, tests/test_corrupt_tables.py), but a repetition index that is not a number
    breaks the job where no check expects it: an unexpected error.
    """
    part = workdir / "data" / "results" / "wddp" / "runs" / "breast_cancer" / "eps_m2.parquet"
    damaged = pd.read_parquet(part)
    damaged["rep"] = "not a number"
    damaged.to_parquet(part, index=False)
    proc = _snakemake(workdir, "data/results/wddp/breast_cancer.parquet", *SMOKE, *OVERRIDE, check=False)
    assert proc.returncode != 0
    log = (workdir / "logs" / "collect_results" / "breast_cancer.log").read_text()
    assert "Traceback (most recent call last)" in log and "collect_results breast_cancer: start" in log
    summary = [line for line in proc.stderr.splitlines() if "failed with an unexpected" in line]
    assert len(summary) == 1 and "traceback in logs/collect_results/breast_cancer.log" in summary[0]
    assert "Traceback (most recent call last)" not in proc.stderr  # the console gets one line
