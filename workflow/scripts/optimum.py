"""Snakemake script: theta* of a data set's training split (spec M1a)."""
from pathlib import Path

from mpdp.pipeline.rule_keys import rule_config
from mpdp.pipeline.runner import run_step
from mpdp.studies.wddp.job import write_optimum

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = rule_config(sm.config, "optimum")
run_step(lambda log: write_optimum(cfg, Path(sm.input.card).parent, Path(sm.output[0]), log),
         sm.log[0], f"optimum {sm.wildcards.dataset}")
