"""Snakemake script: one benchmark job (spec E10): every mechanism of a job group on one data set."""
from pathlib import Path

from mpdp.pipeline.rule_keys import rule_config
from mpdp.pipeline.runner import run_step
from mpdp.studies.benchmark.train import family_job

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = rule_config(sm.config, "benchmark_job")
ds, group = sm.wildcards.ds, sm.wildcards.bgroup
run_step(
    lambda log: family_job(cfg, ds, group, Path(sm.input.card).parent, Path(sm.input.budgets),
                           Path(sm.output.table), Path(sm.output.hparams), log),
    sm.log[0], f"benchmark {ds} {group}",
)
