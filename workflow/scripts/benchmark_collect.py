"""Snakemake script: a data set's benchmark parts -> data/results/benchmark/<ds>.parquet (+ hparams)."""
from pathlib import Path

from mpdp import config
from mpdp.pipeline.runner import run_step
from mpdp.studies.benchmark.train import collect

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = config.validate(sm.config)
run_step(
    lambda log: collect(sm.wildcards.ds, cfg, [Path(p) for p in sm.input.tables],
                        [Path(p) for p in sm.input.hparams], Path(sm.output.table),
                        Path(sm.output.hparams)),
    sm.log[0], f"benchmark collect {sm.wildcards.ds}",
)
