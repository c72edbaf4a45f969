"""Snakemake script: the negative-closed-form table of the least-squares study (its claims are scored by
rule claims_tables, mpdp.studies.ls.claims)."""
from pathlib import Path

from mpdp.io import atomic_path
from mpdp.pipeline.runner import run_step
from mpdp.studies.ls import experiment, report

sm = snakemake  # noqa: F821  (injected by Snakemake)


def step(log):
    tables = {Path(p).stem: report.read_table(p) for p in sm.input}
    negative = experiment.negative_closed_form(tables["ls_1"])
    with atomic_path(sm.output.negative_closed_form) as tmp:
        negative.to_parquet(tmp, index=False)
    log.info("printed closed form negative at %d settings", len(negative))


run_step(step, sm.log[0], "ls negative closed form")
