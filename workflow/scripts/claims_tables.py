"""Snakemake script: every study's results -> data/results/claims/{cells,verdicts}.parquet (issue 33)."""
from pathlib import Path

from mpdp.claims import tables
from mpdp.pipeline.rule_keys import rule_config
from mpdp.pipeline.runner import run_step
from mpdp.studies.claims_build import Paths, build

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = rule_config(sm.config, "claims_tables")


def step(log):
    # each study's tables under its id (mpdp.studies.registry), the data cards by data set
    paths = Paths({study: list(getattr(sm.input, study)) for study in sm.params.studies},
                  cards={Path(p).parent.name: p for p in sm.input.cards})
    cells, verdicts = build(paths, cfg)
    tables.write(cells, sm.output.cells)
    tables.write(verdicts, sm.output.verdicts)
    log.info("%d cells, %d claim verdicts: %s", len(cells), len(verdicts), tables.verdict_counts(verdicts))


run_step(step, sm.log[0], "claims tables")
