"""Snakemake script: one ADMM-study training job (spec E4): every mechanism on one topology."""
from pathlib import Path

from mpdp.pipeline.rule_keys import rule_config
from mpdp.pipeline.runner import run_step
from mpdp.studies.admm.train import train_job

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = rule_config(sm.config, "admm_job")
top = sm.wildcards.topology
run_step(
    lambda log: train_job(cfg, top, Path(sm.input.card).parent, Path(sm.output.table),
                          Path(sm.output.tuning), log),
    sm.log[0], f"admm {top}",
)
