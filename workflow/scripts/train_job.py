"""Snakemake script: one coarse training job (spec E3)."""
from pathlib import Path

from mpdp.pipeline.rule_keys import rule_config
from mpdp.pipeline.runner import run_step
from mpdp.studies.wddp.job import train_job
from mpdp.studies.wddp.plan import parse_job_id

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = rule_config(sm.config, "train_job", dataset=sm.wildcards.dataset,
                  experiment=parse_job_id(sm.wildcards.dataset, sm.wildcards.job).experiment)
partitions = Path(sm.input.partitions[0]) if sm.input.partitions else None
run_step(
    lambda log: train_job(cfg, sm.wildcards.dataset, sm.wildcards.job, Path(sm.input.card).parent,
                          partitions, Path(sm.input.optimum), Path(sm.input.etas), Path(sm.output[0]), log),
    sm.log[0], f"train {sm.wildcards.dataset}/{sm.wildcards.job}",
)
