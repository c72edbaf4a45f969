"""Snakemake script: one results table per data set from its jobs' rows, and the convergence
check of its non-private reference (mpdp.studies.wddp.reference)."""
from pathlib import Path

from mpdp.pipeline.rule_keys import rule_config
from mpdp.pipeline.runner import run_step
from mpdp.studies.wddp.job import collect, write_reference_check

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = rule_config(sm.config, "collect_results")


def step(log):  # noqa: ANN001, ANN201
    collect([Path(p) for p in sm.input], Path(sm.output.table), log)
    write_reference_check(cfg, Path(sm.output.table), Path(sm.output.reference), log)


run_step(step, sm.log[0], f"collect_results {sm.wildcards.dataset}")
