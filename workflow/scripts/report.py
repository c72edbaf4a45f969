"""Snakemake script: render reports/report.html from notebooks/report.py."""
from pathlib import Path

import yaml

from mpdp.io import atomic_path
from mpdp.pipeline.rule_keys import rule_config
from mpdp.pipeline.runner import run_step
from mpdp.report.build import render_report
from mpdp.studies.ls import report as ls_report

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = rule_config(sm.config, "report_html")  # the whole config (rule_keys.WHOLE_CONFIG)


def admm_context(paths):
    """The ADMM study's files (None when it did not run: no admm section or no Adult)."""
    if not paths:
        return None
    resolved = {Path(p).name: str(Path(p).resolve()) for p in paths}
    return {
        "table": next(v for name, v in resolved.items() if name.endswith(".parquet")),
        "figures": {Path(name).stem: v for name, v in resolved.items() if name.endswith(".png")},
        "fit_table": resolved.get("zz_table.csv"),
    }


def resolved(paths):
    return [str(Path(p).resolve()) for p in paths]


def pngs(paths):
    return {Path(p).stem: str(Path(p).resolve()) for p in paths if p.endswith(".png")}


def step(log):
    # every running study's tables and files, from the study registry (rule input ``studies``)
    studies = {sid: {k: resolved(v) for k, v in files.items()} for sid, files in sm.params.studies.items()}
    empty = {"tables": [], "files": []}
    voting, xp = studies.get("voting", empty), studies.get("benchmark", empty)
    available = list(sm.params.available)
    context = {
        "config": cfg,
        "invocation": dict(sm.params.invocation),
        "results": {ds: str(Path(p).resolve()) for ds, p in zip(available, sm.input.results, strict=True)},
        "cards": {ds: str(Path(p).resolve()) for ds, p in zip(available, sm.input.cards, strict=True)},
        "unavailable": dict(sm.params.unavailable),
        "figures": {Path(p).stem: str(Path(p).resolve()) for p in sm.input.figures if p.endswith(".png")}
        | {"noise_diagnostics": str(Path(sm.input.diagnostics).resolve())},
        "benchmarks_dir": str(Path("data/benchmarks").resolve()),
        "audit": {
            "table": str(Path(sm.input.audit_table).resolve()),
            "figure": str(Path(sm.input.audit_figure).resolve()),
        },
        "benchmark_files": [str(Path(p).resolve()) for p in sm.input.benchmarks],
        "studies": studies,
        "admm": admm_context(studies.get("admm", empty)["files"]),
        "repo_root": str(Path.cwd()),
        # the figures' PDF links are relative to the report's folder
        "report_dir": str(Path(sm.output[0]).parent.resolve()),
        # the layout records of the figures the report draws in memory (issue 46), with the others'
        "figure_records": str((Path(sm.output[0]).parent / "figures").resolve()),
        "ls": ls_report.context(studies.get("ls", empty)["files"]),
        "voting": {"tables": {Path(p).stem: p for p in voting["tables"]}, "figures": pngs(voting["files"])},
        # the cross-paper benchmark (E10): tables, selection records, figures, the ranking
        "xp": {
            "tables": xp["tables"],
            "hparams": resolved(sm.input.benchmark_hparams),
            "figures": pngs(xp["files"]),
            "ranking": [p for p in xp["files"] if p.endswith(".parquet") and p not in xp["tables"]],
        },
        # the claims tables (issue 33) and one verdict map per study
        "claims": {
            "cells": str(Path(sm.input.claims_cells).resolve()),
            "verdicts": str(Path(sm.input.claims_verdicts).resolve()),
            "maps": {study: str(Path(p).resolve())
                     for study, p in zip(sm.params.claims_studies, sm.input.claims_maps, strict=True)},
            # one folder of forest plots per study (issue 46)
            "forests": {study: str(Path(p).resolve())
                        for study, p in zip(sm.params.claims_studies, sm.input.claims_forests, strict=True)},
        },
    }
    for ds in context["unavailable"]:
        context["results"].setdefault(ds, None)
        context["cards"].setdefault(ds, None)
    render_report(Path(sm.input.notebook), context, Path(sm.output[0]), Path.cwd())
    with atomic_path(sm.output.config) as tmp:  # the build's config, for notebooks/explore.py
        tmp.write_text(yaml.safe_dump(cfg, sort_keys=True, allow_unicode=True))


run_step(step, sm.log[0], "report")
