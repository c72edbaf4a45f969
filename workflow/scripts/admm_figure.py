"""Snakemake script: one ADMM-study figure (zz_f3, zz_f4, zz_f5: png + pdf) or zz_table.csv."""
from pathlib import Path

from mpdp import config
from mpdp.pipeline.runner import run_step
from mpdp.studies.admm.figures import build

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = config.validate(sm.config)
outputs = [Path(p) for p in sm.output]
run_step(lambda log: build(cfg, Path(sm.input.table), outputs, log), sm.log[0], f"admm {outputs[0].name}")
