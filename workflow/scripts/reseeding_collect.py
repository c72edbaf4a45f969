"""Snakemake script: the reseeding check's table (mpdp.multiverse.reseeding.compare)."""
from pathlib import Path

from mpdp.claims import tables
from mpdp.io import atomic_path
from mpdp.multiverse import reseeding
from mpdp.pipeline.runner import run_step

sm = snakemake  # noqa: F821  (injected by Snakemake)


def step(log):
    study = sm.wildcards.claims_study
    headline = (tables.read_cells(sm.input.headline[0]), tables.read_verdicts(sm.input.headline[1]))
    reseeded = {}
    for path, label in zip(sm.input.status, sm.params.labels, strict=True):
        verdicts = Path(reseeding.read_status(path)["verdicts"])
        reseeded[label] = (tables.read_cells(verdicts.with_name("cells.parquet")), tables.read_verdicts(verdicts))
    table = reseeding.compare(study, headline, reseeded)
    tables.write(table, sm.output.table)
    with atomic_path(sm.output.markdown) as tmp:
        Path(tmp).write_text(reseeding.markdown(table), encoding="utf-8")
    for _, row in reseeding.summary(table).iterrows():
        log.info("%s: %d of %d claim-readings change class (%.0f%%); %d sign reversals among %d cells decided in both "
                 "builds; %d cells moved between decided and not", row["reseed"], row["class_changed"],
                 row["claim_readings"], 100 * row["share_changed"], row["sign_reversals"], row["cells_decided_both"],
                 row["cells_moved"])


run_step(step, sm.log[0], "reseeding")
