"""Snakemake script: a data set's benchmark parts -> data/results/benchmark/<ds>.parquet (+ hparams)."""
from pathlib import Path

from mpdp.pipeline.rule_keys import rule_config
from mpdp.pipeline.runner import run_step
from mpdp.studies.benchmark.train import collect

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = rule_config(sm.config, "benchmark_collect")
run_step(
    lambda log: collect(sm.wildcards.ds, cfg, [Path(p) for p in sm.input.tables],
                        [Path(p) for p in sm.input.hparams], Path(sm.output.table),
                        Path(sm.output.hparams)),
    sm.log[0], f"benchmark collect {sm.wildcards.ds}",
)
