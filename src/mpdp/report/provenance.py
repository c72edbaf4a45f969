"""Where a report's numbers come from (spec experiments.md E0 "per-run artefacts", E8).

Functions that collect the provenance section of the HTML report: the git commit and
whether the tree had uncommitted changes, the config hash, the versions of the packages
that shape the numbers, the machine, the SHA-256 of every raw file (from the data cards) and
the wall time of each pipeline stage (from Snakemake ``benchmark:`` files). Each function
degrades to an explicit "unknown"/empty answer rather than failing, so a report can always
say what it does not know.
"""

from __future__ import annotations

import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from mpdp.io import read_csv, read_json

#: packages whose versions change results or outputs (report section "Provenance")
PACKAGES = (
    "mpdp",
    "numpy",
    "scipy",
    "pandas",
    "scikit-learn",
    "dp-accounting",
    "snakemake",
    "matplotlib",
    "seaborn",
    "pyarrow",
    "nbconvert",
    "jupytext",
)

#: columns of a Snakemake benchmark TSV that this module reads
_BENCH_SECONDS = "s"
_BENCH_RSS = "max_rss"


@dataclass(frozen=True)
class GitState:
    """The commit a report was built from."""

    commit: str  # full hash, or "unknown (…)" when it cannot be read
    dirty: bool | None  # uncommitted changes to tracked files; None when unknown
    describe: str  # short human-readable form

    @property
    def text(self) -> str:
        """One line for the report."""
        if self.dirty is None:
            return self.commit
        state = "with uncommitted changes (dirty tree)" if self.dirty else "clean tree"
        return f"{self.commit} ({state})"


def _git(repo_root: Path, *args: str) -> str | None:
    """Output of a read-only git command in ``repo_root``, or None if git fails."""
    try:
        done = subprocess.run(
            ["git", "--no-optional-locks", "-C", str(repo_root), *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_state(repo_root: str | Path) -> GitState:
    """Commit of ``repo_root`` and whether tracked files differ from it (read-only git calls).

    Untracked files do not count as dirty: outputs and data live in ignored folders, and a
    new untracked source file shows up in ``git status`` of the reader anyway.
    """
    root = Path(repo_root)
    commit = _git(root, "rev-parse", "HEAD")
    if not commit:
        return GitState("unknown (the project folder is not a git checkout or has no commit)", None, "unknown")
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    dirty = None if status is None else bool(status)
    describe = _git(root, "describe", "--always", "--dirty") or commit[:12]
    return GitState(commit, dirty, describe)


def package_versions(names: Iterable[str] = PACKAGES) -> dict[str, str]:
    """Installed version of each distribution in ``names`` ("not installed" if absent)."""
    versions: dict[str, str] = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def machine() -> dict[str, str]:
    """Platform, Python and CPU facts of the machine that builds the report."""
    try:
        usable = str(len(os.sched_getaffinity(0)))
    except AttributeError:  # not available on macOS / Windows
        usable = "unknown"
    return {
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "machine": platform.machine(),
        "processor": platform.processor() or "unknown",
        "cpu_count": str(os.cpu_count() or "unknown"),
        "usable_cpus": usable,
    }


def stage_wall_times(
    benchmarks_dir: str | Path | None, files: Iterable[str | Path] | None = None
) -> pd.DataFrame:
    """Wall time per pipeline stage, summed from Snakemake ``benchmark:`` TSV files.

    Files are expected at ``<benchmarks_dir>/<stage>/<...>.tsv`` (one per job; a file
    directly in ``benchmarks_dir`` counts for the stage named by its stem). A file with
    several rows (``repeat()`` benchmarks) contributes the mean of its rows. Returns columns
    ``stage``, ``jobs``, ``seconds`` (sum), ``max_rss_mb`` (largest peak resident memory,
    NaN if not measured), sorted by stage; empty if there are no files.

    ``files`` (the benchmark files the report rule declares as inputs) restricts the table to
    exactly those files, all under ``benchmarks_dir``; without it every ``*.tsv`` below
    ``benchmarks_dir`` counts, including files of earlier runs with other settings.
    """
    columns = ["stage", "jobs", "seconds", "max_rss_mb"]
    if benchmarks_dir is None or not Path(benchmarks_dir).is_dir():
        return pd.DataFrame(columns=columns)
    root = Path(benchmarks_dir)
    records = []
    paths = sorted(root.rglob("*.tsv")) if files is None else sorted(Path(f) for f in files)
    for path in paths:
        if not path.is_file():
            continue
        rel = path.relative_to(root)
        stage = rel.parts[0] if len(rel.parts) > 1 else path.stem
        bench = read_csv(path, "Snakemake benchmark file", sep="\t")
        if _BENCH_SECONDS not in bench.columns or bench.empty:
            continue
        seconds = pd.to_numeric(bench[_BENCH_SECONDS], errors="coerce").mean()
        rss = (
            pd.to_numeric(bench[_BENCH_RSS], errors="coerce").max()
            if _BENCH_RSS in bench.columns
            else float("nan")
        )
        records.append({"stage": stage, "seconds": seconds, "max_rss_mb": rss})
    if not records:
        return pd.DataFrame(columns=columns)
    frame = pd.DataFrame(records)
    out = frame.groupby("stage", sort=True).agg(
        jobs=("seconds", "size"), seconds=("seconds", "sum"), max_rss_mb=("max_rss_mb", "max")
    )
    return out.reset_index()[columns]


def read_cards(cards: Mapping[str, str | Path | None]) -> dict[str, dict[str, Any] | None]:
    """The data cards (``card.json`` written by the data preparation), None where absent."""
    out: dict[str, dict[str, Any] | None] = {}
    for dataset, path in cards.items():
        if path is None or not Path(path).is_file():
            out[dataset] = None
        else:
            card = read_json(path)
            out[dataset] = card if isinstance(card, dict) else None
    return out


def raw_checksums(cards: Mapping[str, Mapping[str, Any] | None]) -> pd.DataFrame:
    """SHA-256 of every raw file each card was prepared from (card key ``raw_files``).

    Returns columns ``dataset``, ``file``, ``sha256``; a data set without a card has one row
    with file "—" and sha256 "no data card (data set not prepared)".
    """
    rows = []
    for dataset, card in cards.items():
        if card is None:
            rows.append(
                {"dataset": dataset, "file": "—", "sha256": "no data card (data set not prepared)"}
            )
            continue
        for name, digest in sorted(dict(card.get("raw_files") or {}).items()):
            rows.append({"dataset": dataset, "file": name, "sha256": str(digest)})
    return pd.DataFrame(rows, columns=["dataset", "file", "sha256"])


def relative_path(path: str | Path, root: str | Path) -> str:
    """``path`` relative to the project folder ``root`` (``../shared/datasets``), so that a report
    names no absolute path of the machine that built it; a relative ``path`` is kept."""
    if not os.path.isabs(str(path)):
        return str(path)
    return Path(os.path.relpath(os.path.abspath(path), os.path.abspath(root))).as_posix()


#: the config file the Snakefile always loads first (``configfile:`` directive)
DEFAULT_CONFIGFILE = "config/config.yaml"


@dataclass(frozen=True)
class Invocation:
    """How Snakemake was called: the config files and ``--config`` overrides actually used.

    ``configfiles`` are in order of precedence, lowest first: the Snakefile's default file,
    then every ``--configfile`` in the order given (Snakemake merges them in that order);
    ``config_args`` are the ``--config KEY=VALUE`` entries, applied last. ``mirror`` is
    ``$MPDP_DATA_MIRROR`` when set (it decides which data sets are available).
    """

    cli_configfiles: tuple[str, ...]
    config_args: tuple[str, ...]
    mirror: str | None = None
    default_configfile: str = DEFAULT_CONFIGFILE

    @property
    def configfiles(self) -> tuple[str, ...]:
        """Every config file read, lowest precedence first."""
        return (self.default_configfile, *self.cli_configfiles)

    def command(self, *targets: str, root: str | Path | None = None) -> str:
        """A shell command that rebuilds exactly the outputs of this invocation, run in the project's
        folder; with ``root`` (that folder) the mirror is named relative to it (issue 59: no path of
        the builder's machine in the report)."""
        words = ["snakemake", "--cores", "all", *targets]
        if self.cli_configfiles:
            words += ["--configfile", *self.cli_configfiles]
        if self.config_args:
            words += ["--config", *self.config_args]
        mirror = relative_path(self.mirror, root) if self.mirror and root is not None else self.mirror
        prefix = f"MPDP_DATA_MIRROR={shlex.quote(mirror)} " if mirror else ""
        return prefix + shlex.join(words)

    def describe(self) -> str:
        """One sentence naming every config file and override, in order of precedence."""
        files = ", then ".join(f"`{f}`" for f in self.configfiles)
        text = f"Configuration files, in order of precedence (later ones override): {files}"
        if self.config_args:
            text += "; then the command-line overrides " + ", ".join(
                f"`--config {a}`" for a in self.config_args)
        else:
            text += "; no command-line overrides (`--config`)"
        return text + "."

    def to_dict(self) -> dict[str, Any]:
        return {"cli_configfiles": list(self.cli_configfiles), "config_args": list(self.config_args),
                "mirror": self.mirror, "default_configfile": self.default_configfile}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Invocation:
        return cls(tuple(data["cli_configfiles"]), tuple(data["config_args"]), data.get("mirror"),
                   data.get("default_configfile", DEFAULT_CONFIGFILE))


def invocation(
    workflow_configfiles: Iterable[str | Path], config_args: Iterable[str] | Mapping[str, Any] | None,
    cwd: str | Path, mirror: str | None = None, default_configfile: str = DEFAULT_CONFIGFILE,
) -> Invocation:
    """The :class:`Invocation` from Snakemake's view of its call.

    ``workflow_configfiles`` is ``workflow.configfiles`` (Snakemake 9: the ``--configfile``
    paths, made absolute, followed by the Snakefile's ``configfile:`` entries);
    ``config_args`` is ``workflow.config_settings.config_args`` (the ``--config`` entries as
    typed, or a mapping when called through the API). Paths inside ``cwd`` become relative.
    """
    root = Path(os.path.abspath(cwd))  # symlinks kept: config/ may link elsewhere
    files: list[str] = []
    for entry in workflow_configfiles:
        path = Path(entry)
        if not path.is_absolute() and os.path.normpath(path) == os.path.normpath(default_configfile):
            continue  # the Snakefile's own configfile: directive, always read first
        absolute = Path(os.path.normpath(root / path))
        try:
            files.append(str(absolute.relative_to(root)))
        except ValueError:
            files.append(str(absolute))
    if isinstance(config_args, Mapping):
        args = tuple(f"{k}={v!r}" if not isinstance(v, str) else f"{k}={v}" for k, v in config_args.items())
    else:
        args = tuple(config_args or ())
    if mirror:  # one form whether the mirror was given absolute or relative (the report prints it relative)
        mirror = os.path.normpath(root / os.path.expanduser(mirror))
    return Invocation(tuple(files), args, mirror, default_configfile)


#: the provenance columns of every results table (mpdp.engine.provenance)
ENGINE_COLUMNS = ["engine_path", "isa", "layout_rule", "noise_source"]


def engine_paths(tables: Mapping[str, pd.DataFrame | None]) -> pd.DataFrame:
    """How the rows of each results table were computed: rows per table and combination of the
    provenance columns (engine path, instruction set, layout rule, noise source). Tables that
    are absent, or predate those columns, count under "not recorded"."""
    columns = ["table", *ENGINE_COLUMNS, "rows"]
    records = []
    for name, frame in tables.items():
        if frame is None or frame.empty:
            continue
        if not set(ENGINE_COLUMNS) <= set(frame.columns):
            records.append({"table": name, **dict.fromkeys(ENGINE_COLUMNS, "not recorded"),
                            "rows": len(frame)})
            continue
        counts = frame[ENGINE_COLUMNS].astype("string").fillna("not recorded").value_counts(sort=False)
        for key, rows in counts.sort_index().items():
            records.append({"table": name, **dict(zip(ENGINE_COLUMNS, key, strict=True)), "rows": int(rows)})
    return pd.DataFrame(records, columns=columns)


def engine_sentence(paths: pd.DataFrame) -> str:
    """What the engine paths of :func:`engine_paths` mean for a rerun on another machine."""
    if paths.empty:
        return "No results table was read, so no engine path is recorded."
    rows = paths.groupby("engine_path")["rows"].sum()
    total = int(rows.sum())
    parts = [f"{int(count)} of {total} rows: `{path}`" for path, count in rows.items()]
    text = "Engine paths of the results rows — " + "; ".join(parts) + ". "
    fused = paths[paths["engine_path"] == "fused"]
    if len(fused):
        isas = ", ".join(sorted(fused["isa"].unique()))
        rules = ", ".join(sorted(fused["layout_rule"].unique()))
        text += (f"Rows of the fused float32 kernel ({isas}; layout rule {rules}) are bit-identical "
                 "on every x86-64 CPU with AVX2 and FMA. ")
    if rows.get("numpy-float32", 0):
        text += ("Rows of the NumPy float32 path agree with the fused path's only to rounding "
                 "(see the engine documentation for the measured size). ")
    if rows.get("unrecorded", 0) or rows.get("not recorded", 0):
        text += "Some rows do not record how they were computed. "
    return text.strip()
