"""Hashes of the package's source, used as Snakemake params so code changes rerun jobs.

Snakemake does not track code imported from ``src/``. Each rule declares the hash of the
modules its output depends on as a param; editing a mechanism reruns training, editing plot
code reruns only figures (docs/reruns.md "When does a step rerun?").
"""

from __future__ import annotations

import hashlib
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[1]

#: the WD-DP study's training modules (its figure table is a figures/report dependency)
WDDP_TRAINING = tuple(f"studies/wddp/{name}.py" for name in ("plan", "batch", "cv", "evaluate", "job"))

#: the batched training engine: its Python side and the compiled kernel's and noise stream's C
#: sources
ENGINE = tuple(f"engine/{name}" for name in (
    "__init__.py", "gd.py", "kernel.py", "layout.py", "noise.py", "path.py", "_gd_kernel.c",
    "_gd_kernel_simd.h", "_normal_stream.c", "_ziggurat_tables.h"))

#: which parts of the package each stage depends on (paths relative to src/mpdp)
STAGE_SOURCES: dict[str, tuple[str, ...]] = {
    "data": ("data/__init__.py", "data/registry.py", "data/fetch.py", "data/parsers.py",
             "data/prepare.py", "seeding.py", "io.py", "errors.py"),
    "partition": ("data/partition.py", "seeding.py", "io.py"),
    "train": (*ENGINE, "models", "mechanisms", "privacy", *WDDP_TRAINING, "bounds.py",
              "data/partition.py", "seeding.py", "results.py"),
    "figures": ("figures", "studies/wddp/figures.py", "studies/wddp/figure_spec.py", "bounds.py",
                "results.py"),
    "report": ("report", "claims", "studies/wddp/claims.py", "studies/wddp/report.py",
               "studies/wddp/figures.py", "studies/wddp/section.py", "tuning.py", "figures",
               "studies/wddp/figure_spec.py", "bounds.py", "results.py", "studies/ls",
               "studies/voting", "studies/admm", "audit/report.py", "audit/figure.py", "audit/section.py",
               "audit/table.py",
               "studies/benchmark", "pipeline/planning.py", "pipeline/planning_studies.py", "studies/wddp/tuning_report.py"),
    # least-squares study (issue 9): experiment tables, then figures and claims
    "ls": ("studies/ls/__init__.py", "studies/ls/data.py", "studies/ls/experiment.py",
           "studies/ls/theory.py", "mechanisms/least_squares.py", "privacy", "claims/intervals.py",
           "seeding.py"),
    "ls_figures": ("studies/ls", "figures", "claims/intervals.py"),
    # the empirical privacy audit (spec audit.md): its adapters reuse the mechanisms' code
    # and the trainer and calibrations that produce the tables (wddp batch, benchmark calibration)
    "audit": ("audit", *ENGINE, "models", "mechanisms", "privacy", "data/partition.py",
              "seeding.py", "studies/wddp/batch.py", "studies/benchmark/calibration.py",
              "studies/voting/train.py", "data/prepare.py"),
    "audit_figure": ("audit/figure.py", "audit/table.py", "figures"),
    "voting_train": ("studies/voting/plan.py", "studies/voting/train.py", "models", "data/prepare.py",
                     "mechanisms/output_perturbation.py", "privacy/samplers.py", "bounds.py",
                     "seeding.py", "results.py"),
    "voting_figures": ("studies/voting/figures.py", "studies/voting/plan.py", "figures", "claims/intervals.py",
                       "results.py"),
    "admm_train": ("mechanisms/admm.py", "models", "privacy", "studies/admm/train.py",
                   "studies/admm/schema.py", "seeding.py", "results.py", "data/prepare.py"),
    "admm_figures": ("figures", "studies/admm", "claims/intervals.py", "results.py"),
    # cross-paper benchmark tables (issue 10): reuses the gradient, voting and ADMM training code
    "benchmark_train": ("studies/benchmark",
                        "studies/wddp/batch.py", "studies/voting/train.py", "studies/voting/plan.py",
                        *ENGINE, "models", "mechanisms", "privacy", "data/partition.py", "seeding.py",
                        "results.py", "data/prepare.py", "bounds.py"),
    # the claims tables (issue 33): the engine and every study's declarations and observations
    "claims": ("claims", "studies/wddp/claims.py", "studies/admm/claims.py", "studies/admm/figures.py",
               "studies/voting/claims.py", "studies/voting/plan.py", "studies/ls/claims.py",
               "studies/benchmark/claims.py", "studies/claims_build.py", "results.py", "io.py",
               # the table readers it calls
               "studies/admm/train.py", "studies/voting/figures.py", "studies/benchmark/figures.py"),
    "claims_map": ("claims/maps.py", "claims/tables.py", "figures/style.py", "figures/plot.py",
                   "figures/check.py", "io.py"),
    "claims_forest": ("claims/forest.py", "claims/tables.py", "figures/style.py", "figures/plot.py",
                      "figures/check.py", "io.py"),
    # the per-cell ranking table: a statistic of the tables, no plot code
    "benchmark_ranking": ("studies/benchmark/ranking.py", "studies/benchmark/schema.py", "io.py"),
    "benchmark_figures": ("studies/benchmark/figures.py", "studies/benchmark/ranking.py",
                          "studies/benchmark/schema.py", "figures/style.py", "figures/bands.py",
                          "figures/plot.py", "figures/check.py", "results.py"),
    # the multiverse (issue 38): one universe reruns on any package change (its nested run then
    # redoes only what changed); the collection is a comparison of claims tables and a figure
    "multiverse_universe": (".",),
    "multiverse": ("multiverse", "claims/tables.py", "figures/plot.py", "figures/check.py", "figures/style.py"),
}


#: files inside a stage's folders that its output does not depend on (the benchmark's claim
#: declarations are read by the claims rule, never by its training jobs)
STAGE_EXCLUDES: dict[str, tuple[str, ...]] = {"benchmark_train": ("studies/benchmark/claims.py",)}


def source_hash(stage: str) -> str:
    """SHA-256 (12 hex digits) over the stage's source files, in a stable order."""
    digest = hashlib.sha256()
    skip = {PACKAGE_ROOT / rel for rel in STAGE_EXCLUDES.get(stage, ())}
    for rel in STAGE_SOURCES[stage]:
        path = PACKAGE_ROOT / rel
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for file in files:
            if file in skip:
                continue
            digest.update(str(file.relative_to(PACKAGE_ROOT)).encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()[:12]
