"""Snakemake script: claims rows and the negative-closed-form table of the least-squares study."""
from pathlib import Path

from mpdp.io import atomic_path
from mpdp.pipeline.runner import run_step
from mpdp.studies.ls import claims, experiment, report

sm = snakemake  # noqa: F821  (injected by Snakemake)


def step(log):
    tables = {Path(p).stem: report.read_table(p) for p in sm.input}
    rows = claims.evaluate(tables)
    with atomic_path(sm.output.claims) as tmp:
        rows.to_parquet(tmp, index=False)
    negative = experiment.negative_closed_form(tables["ls_1"])
    with atomic_path(sm.output.negative_closed_form) as tmp:
        negative.to_parquet(tmp, index=False)
    log.info("%d claim rows (%s); printed closed form negative at %d settings", len(rows),
             rows["verdict"].value_counts().to_dict(), len(negative))


run_step(step, sm.log[0], "ls claims")
