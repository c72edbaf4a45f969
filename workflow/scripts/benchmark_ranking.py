"""Snakemake script: the benchmark tables -> data/results/benchmark/ranking.parquet (one row per cell)."""
from pathlib import Path

from mpdp.pipeline.rule_keys import rule_config
from mpdp.pipeline.runner import run_step
from mpdp.studies.benchmark.ranking import write

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = rule_config(sm.config, "benchmark_ranking")
run_step(lambda log: write([Path(p) for p in sm.input.tables], cfg["benchmark"]["primary_metric"],
                           Path(sm.output[0])), sm.log[0], "benchmark ranking")
