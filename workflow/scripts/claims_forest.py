"""Snakemake script: data/results/claims/{cells,verdicts}.parquet -> one study's forest plots (issue 46)."""
from mpdp.claims import forest, tables
from mpdp.figures.plot import logged_warnings
from mpdp.pipeline.runner import run_step

sm = snakemake  # noqa: F821  (injected by Snakemake)


def step(log):
    names = forest.write_study(tables.read_cells(sm.input.cells), tables.read_verdicts(sm.input.verdicts),
                               sm.wildcards.claims_study, sm.output[0])
    log.info("forest plots of %s: %d claims and readings", sm.wildcards.claims_study, len(names))


run_step(logged_warnings(step), sm.log[0], "claims forest plots")
