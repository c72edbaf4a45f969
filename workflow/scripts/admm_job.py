"""Snakemake script: one ADMM-study training job (spec E4), a (topology, mechanism) pair."""
from pathlib import Path

from mpdp import config
from mpdp.runner import run_step
from mpdp.studies.admm.train import train_job

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = config.validate(sm.config)
top, mech = sm.wildcards.topology, sm.wildcards.admm_mech
run_step(
    lambda log: train_job(cfg, top, mech, Path(sm.input.card).parent, Path(sm.output.table),
                          Path(sm.output.tuning), log),
    sm.log[0], f"admm {top}/{mech}",
)
