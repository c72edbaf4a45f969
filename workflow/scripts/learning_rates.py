"""Snakemake script: learning rate per (mechanism, mode) by cross-validation (spec E3.3)."""
from pathlib import Path

from mpdp.pipeline.rule_keys import rule_config
from mpdp.pipeline.runner import run_step
from mpdp.studies.wddp.job import write_etas

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = rule_config(sm.config, "learning_rates")
run_step(lambda log: write_etas(cfg, Path(sm.input.card).parent, Path(sm.output[0]), log),
         sm.log[0], f"learning_rates {sm.wildcards.dataset}")
