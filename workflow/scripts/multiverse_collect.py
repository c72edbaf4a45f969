"""Snakemake script: data/results/claims/multiverse.parquet and its figure (mpdp.multiverse)."""
from mpdp.claims import tables
from mpdp.multiverse import collect, figure, spec, universe
from mpdp.pipeline.runner import run_step

sm = snakemake  # noqa: F821  (injected by Snakemake)


def step(log):
    by_id = {u.id: u for u in spec.universes(sm.config)}
    results = [universe.load(by_id[uid], path) for uid, path in zip(sm.params.universes, sm.input.status, strict=True)]
    table = collect.collect_results(results)
    tables.write(table, sm.output.table)
    figure.write(table, sm.output.png, sm.output.pdf)
    log.info("%d rows; outcomes: %s", len(table), table["outcome"].value_counts().to_dict())


run_step(step, sm.log[0], "multiverse_collect")
