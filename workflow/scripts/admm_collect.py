"""Snakemake script: concatenate the ADMM jobs' tables into data/results/admm/<dataset>.parquet."""
from pathlib import Path

from mpdp.pipeline.runner import run_step
from mpdp.studies.admm.train import collect

sm = snakemake  # noqa: F821  (injected by Snakemake)
run_step(lambda log: collect([Path(p) for p in sm.input], Path(sm.output[0])), sm.log[0], "admm collect")
