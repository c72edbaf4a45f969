"""Snakemake script: the benchmark's private-selection budgets, once for every job (spec E10; issue 45)."""
from pathlib import Path

from mpdp.pipeline.rule_keys import rule_config
from mpdp.pipeline.runner import run_step
from mpdp.studies.benchmark.budgets import write

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = rule_config(sm.config, "benchmark_budgets")
run_step(lambda log: write(cfg, Path(sm.output.budgets)), sm.log[0], "benchmark selection budgets")
