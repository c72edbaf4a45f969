"""Build the claims tables in one universe's own folder (issue 38).

A universe's folder ``data/multiverse/<id>/`` links the workflow (Snakefile, rules, notebooks)
and the outer run's raw data (``data/raw``, fetched once by the outer run), holds its config as ``config/config.yaml`` (the file the
Snakefile loads, so nothing merges into it) and gets its own ``data/``, ``logs/`` and
``.snakemake/``, and rerunning one redoes only what its config or the code changed (Snakemake's
own rerun rules). The run's outcome goes to ``status.json``; a failed run is recorded there with
the end of its log, never raised, so one impossible universe cannot stop the others or the
collection.

With ``multiverse.full_grid`` the default universe is the main build itself (:func:`adopt_main_build`)
and the alternatives start from the main build's results instead.

An alternative universe starts from a copy of the default universe's results (:func:`seed`):
its ``data/`` (time stamps kept) and Snakemake's job records ``.snakemake/metadata``. Every
rule's ``settings`` param is the hash of exactly the config keys its job reads
(:mod:`mpdp.pipeline.rule_keys`, enforced: a script sees no other key), so Snakemake's params
trigger reruns exactly the jobs that read the changed key and those downstream of them, and
keeps the rest: a choice of the ADMM study retrains ADMM only. The copied outputs are the ones a
fresh run of the universe would write (same config keys, same code, seeds that depend only on
a run's identity), which ``tests/multiverse`` checks against a universe run from scratch.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from mpdp.claims.tables import CELLS_PATH, VERDICTS_PATH, read_cells, read_verdicts
from mpdp.errors import InputDataError
from mpdp.io import atomic_path, read_json
from mpdp.multiverse.collect import Result
from mpdp.multiverse.spec import Universe

#: what a universe's folder links from the workflow root (src/ is the installed package)
LINKED = ("Snakefile", "workflow", "notebooks", "environment.yml")
#: what a universe builds: the claims engine's two tables, all the collection reads. Not the
#: ``claims`` target, whose forest plots and verdict maps (about 30 CPU s per study, redrawn in
#: every seeded universe) nothing reads (issue 45: about a minute, a fifth to a third of a cheap seeded universe)
TARGETS = (CELLS_PATH, VERDICTS_PATH)
LOG_TAIL = 2000  # characters of a failed run's output kept in status.json


def prepare(folder: Path, workflow_root: Path, config: Mapping[str, Any], raw: Path) -> None:
    """Create ``folder`` with the workflow of ``workflow_root`` linked, ``data/raw`` linked to the
    outer run's ``raw`` folder (shared by every universe) and ``config`` as its config file."""
    (folder / "config").mkdir(parents=True, exist_ok=True)
    for name in LINKED:
        link = folder / name
        if not link.is_symlink():
            link.symlink_to((workflow_root / name).resolve())
    raw = Path(raw).resolve()
    raw.mkdir(parents=True, exist_ok=True)
    (folder / "data").mkdir(exist_ok=True)
    link = folder / "data" / "raw"
    if link.is_symlink() and link.resolve() != raw:  # a folder moved, or another outer run
        link.unlink()
    if not link.is_symlink():
        link.symlink_to(raw)
    text = yaml.safe_dump(dict(config), sort_keys=True, allow_unicode=True)
    path = folder / "config" / "config.yaml"
    if not path.is_file() or path.read_text() != text:  # unchanged: keep its time stamp
        with atomic_path(path) as tmp:
            Path(tmp).write_text(text)


def seed(folder: Path, base: Path) -> bool:
    """Copy the default universe's results (``base``) into the fresh universe ``folder``.

    Only into a universe without job records of its own (a universe that ran before keeps its
    own history); the records are copied last, so an interrupted copy is redone whole by the next
    run rather than leaving outputs Snakemake would not know the params of. ``data/raw`` (a link
    to the shared raw data) is not copied. Returns whether it copied.
    """
    metadata = folder / ".snakemake" / "metadata"
    if metadata.exists() or not (base / ".snakemake" / "metadata").is_dir():
        return False
    data = base / "data"
    # the main build as the base (multiverse.full_grid) also holds the universes themselves
    shutil.copytree(data, folder / "data", symlinks=True, dirs_exist_ok=True,  # copy2: time stamps kept
                    ignore=lambda d, names: ["raw", "multiverse"] if Path(d) == data else [])
    partial = metadata.with_name("metadata.seeding")
    shutil.rmtree(partial, ignore_errors=True)
    # the main build as the base (multiverse.full_grid): its Snakemake writes the records of the
    # universe jobs that finish meanwhile; a record that vanishes while listed is not one of `claims`
    shutil.copytree(base / ".snakemake" / "metadata", partial, copy_function=_copy_if_present)
    partial.rename(metadata)
    return True


def _copy_if_present(src: str, dst: str) -> None:
    """``shutil.copy2``, skipping a file removed since its folder was listed."""
    with contextlib.suppress(FileNotFoundError):
        shutil.copy2(src, dst)


def seed_source(base_status: list[str]) -> Path | None:
    """The folder to seed from: the default universe's, given its status file, when its run
    succeeded (a failed default leaves the alternatives to run from scratch); None without one."""
    if not base_status:
        return None
    path = Path(base_status[0])
    status = read_json(path, "universe status file")
    if not status.get("ok"):
        return None
    return Path(status["main_build"]) if status.get("main_build") else path.parent


def adopt_main_build(universe: Universe, status_path: Path, root: Path, verdicts: Path) -> dict[str, Any]:
    """The default universe of ``multiverse.full_grid`` (issue 48): the main build itself. Its
    config is the main config (no ``multiverse.base``), so its claims tables are the main build's
    (``verdicts``, the rule's input: Snakemake builds them first); no nested run. The status names
    the main build's folder ``root``, from which the alternatives are seeded (:func:`seed_source`)."""
    status = {"universe": universe.id, "choice": None, "key": None, "value": None, "ok": True, "returncode": 0,
              "verdicts": str(Path(verdicts).resolve()), "log": "", "seeded": False, "error": "",
              "warnings": [], "jobs_run": 0, "main_build": str(Path(root).resolve())}
    with atomic_path(status_path) as tmp:
        Path(tmp).write_text(json.dumps(status, indent=1, sort_keys=True) + "\n")
    return status


def command(cores: int, targets: Sequence[str] = TARGETS) -> list[str]:
    """The nested Snakemake call (no profile: the universe runs where its job runs)."""
    return [sys.executable, "-m", "snakemake", "--snakefile", "Snakefile", "--cores", str(cores),
            "--rerun-incomplete", *targets]


def run(universe: Universe, folder: Path, workflow_root: Path, config: Mapping[str, Any],
        cores: int, status_path: Path, log_path: Path, raw: Path = Path("data/raw"),
        base: Path | None = None, targets: Sequence[str] = TARGETS,
        verdicts_path: str = VERDICTS_PATH) -> dict[str, Any]:
    """Prepare and run one universe; write and return its status (``ok``, ``verdicts``, ``error``,
    ``seeded``). ``raw``: the outer run's raw-data folder (relative to its working directory by
    default); ``base``: the default universe's folder to :func:`seed` from (None: from scratch).
    ``targets`` and ``verdicts_path`` (the verdicts table among them): what the nested run builds
    (the reseeding check, :mod:`mpdp.multiverse.reseeding`, builds one study's claims tables)."""
    prepare(folder, workflow_root, config, raw)
    seeded = base is not None and seed(folder, base)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SNAKEMAKE")}
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "w") as log:
        proc = subprocess.run(command(cores, targets), cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    verdicts = folder / verdicts_path
    ok = proc.returncode == 0 and verdicts.is_file()
    output = Path(log_path).read_text(errors="replace")
    tail = "" if ok else output[-LOG_TAIL:]
    status = {"universe": universe.id, "choice": universe.choice, "key": universe.key,
              "value": universe.value, "ok": ok, "returncode": proc.returncode,
              "verdicts": str(verdicts) if ok else None, "log": str(log_path), "seeded": seeded,
              "error": "" if ok else _reason(tail, proc.returncode), "warnings": planning_warnings(output),
              "jobs_run": jobs_run(output)}
    with atomic_path(status_path) as tmp:
        Path(tmp).write_text(json.dumps(status, indent=1, sort_keys=True) + "\n")
    return status


def planning_warnings(output: str) -> list[str]:
    """The planning warnings (``mpdp: WARNING: …``, workflow/rules/common.smk) a nested run
    printed, once each, in order (issue 47: kept in the status, the job log and the report)."""
    marker = "mpdp: WARNING: "
    return list(dict.fromkeys(line.split(marker, 1)[1].strip() for line in output.splitlines() if marker in line))


#: a job's header in Snakemake's output (``rule train_job:``, ``localrule claims:``)
_JOB = re.compile(r"^\s*(?:local)?(?:rule|checkpoint) [A-Za-z0-9_]+:\s*$")
#: the output line of a job's block
_OUTPUT = re.compile(r"^\s+output:\s*(.*)$")


def jobs_run(output: str) -> int:
    """How many jobs of a nested run wrote results (an output under ``data/``); issue 48: a
    universe seeded from the default whose run wrote none reads no key of the grid. Jobs whose
    outputs all lie elsewhere are not counted (e.g. the claims figures under ``reports/`` that
    universes drew before they built only :data:`TARGETS`, or a rule without output)."""
    count, in_job = 0, False
    for line in output.splitlines():
        if _JOB.match(line):
            in_job = True
        elif in_job and (m := _OUTPUT.match(line)):
            count += any(p.strip().startswith("data/") for p in m.group(1).split(","))
            in_job = False
        elif not line.strip():
            in_job = False
    return count


def _reason(tail: str, returncode: int) -> str:
    """The most telling line of a failed run's output (an mpdp message, else its last error);
    warnings, which every run may print, are not reasons."""
    lines = [ln.strip() for ln in tail.splitlines() if ln.strip() and "WARNING" not in ln]
    for marker in ("mpdp:", "Error", "error"):
        hits = [ln for ln in lines if marker in ln]
        if hits:
            return hits[0][:300]
    return f"snakemake exited with status {returncode}"


def load(universe: Universe, status_path: str | Path) -> Result:
    """A universe's verdicts and cells from its status file (read through the claims engine's
    readers; the cells lie beside the verdicts in the universe's folder). ``reads_no_key``: the
    universe was seeded from the default and its nested run wrote no result (:func:`jobs_run`, issue 48)."""
    status = read_json(status_path, "universe status file")
    warnings = tuple(status.get("warnings", []))
    if not status["ok"]:
        return Result(universe, None, f"{status['error']} (log: {status['log']})", warnings)
    verdicts = Path(status["verdicts"])
    cells = Path(str(verdicts)[: -len(VERDICTS_PATH)] + CELLS_PATH)
    reads_no_key = bool(status.get("seeded")) and status.get("jobs_run") == 0
    try:
        return Result(universe, read_verdicts(verdicts), warnings=warnings, cells=read_cells(cells),
                      reads_no_key=reads_no_key)
    except InputDataError as exc:
        return Result(universe, None, str(exc), warnings)
