"""Snakemake script: one results table per data set from its jobs' rows."""
from pathlib import Path

from mpdp.pipeline.runner import run_step
from mpdp.studies.wddp.job import collect

sm = snakemake  # noqa: F821  (injected by Snakemake)
run_step(lambda log: collect([Path(p) for p in sm.input], Path(sm.output[0]), log),
         sm.log[0], f"collect_results {sm.wildcards.dataset}")
