"""Snakemake script: one voting-study table (spec E5)."""
from pathlib import Path

from mpdp.pipeline.rule_keys import rule_config
from mpdp.pipeline.runner import run_step
from mpdp.studies.voting.train import run_table

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = rule_config(sm.config, "voting_train")
run_step(
    lambda log: run_table(cfg, sm.wildcards.table, Path(sm.input.card).parent, Path(sm.output[0]), log),
    sm.log[0], f"voting {sm.wildcards.table}",
)
