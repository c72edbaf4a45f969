"""Snakemake script: data/results/claims/cells.parquet -> one study's verdict map (issue 33)."""
from mpdp.claims import maps, tables
from mpdp.figures.plot import logged_warnings
from mpdp.pipeline.runner import run_step
from mpdp.studies import registry

sm = snakemake  # noqa: F821  (injected by Snakemake)


def step(log):
    cells = tables.read_cells(sm.input.cells)
    study = sm.wildcards.claims_study
    maps.write(cells, study, sm.output.png, sm.output.pdf, tables.read_verdicts(sm.input.verdicts),
               title=maps.study_title(registry.get(study).name))
    log.info("verdict map of %s: %d cells", sm.wildcards.claims_study,
             int((cells["study"] == sm.wildcards.claims_study).sum()))


run_step(logged_warnings(step), sm.log[0], "claims map")
