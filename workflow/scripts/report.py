"""Snakemake script: render reports/report.html from notebooks/report.py."""
from pathlib import Path

import yaml

from mpdp.io import atomic_path
from mpdp.pipeline.rule_keys import rule_config
from mpdp.pipeline.runner import run_step
from mpdp.report.build import render_report
from mpdp.studies import registry

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = rule_config(sm.config, "report_html")  # the whole config (rule_keys.WHOLE_CONFIG)


def step(log):
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
        # every running study's own context from its tables and files (rule input ``studies``; issue 57)
        "studies": registry.report_context(sm.params.studies),
        "repo_root": str(Path.cwd()),
        # the figures' PDF links are relative to the report's folder
        "report_dir": str(Path(sm.output[0]).parent.resolve()),
        # the layout records of the figures the report draws in memory (issue 46), with the others'
        "figure_records": str((Path(sm.output[0]).parent / "figures").resolve()),
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
