"""Snakemake script: one least-squares experiment (spec E6) -> data/results/ls/<experiment>.parquet."""
from mpdp.io import atomic_path
from mpdp.pipeline.rule_keys import rule_config
from mpdp.pipeline.runner import run_step
from mpdp.studies.ls import experiment

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = rule_config(sm.config, "ls_experiment", experiment=sm.params.experiment)


def step(log):
    table, tail = experiment.run(sm.params.experiment, cfg["ls"], cfg["root_seed"])
    with atomic_path(sm.output.table) as tmp:
        table.to_parquet(tmp, index=False)
    if tail is not None:
        with atomic_path(sm.output.tail) as tmp:
            tail.to_parquet(tmp, index=False)
    log.info("%s: %d rows (%s), %d draws per SSP setting", sm.params.experiment, len(table),
             table["dataset"].iloc[0], cfg["ls"]["draws"])


run_step(step, sm.log[0], f"ls experiment {sm.params.experiment}")
