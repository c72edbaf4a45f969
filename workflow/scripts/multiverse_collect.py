"""Snakemake script: data/results/claims/multiverse.parquet and its figures (mpdp.multiverse)."""
from mpdp.claims import tables
from mpdp.multiverse import collect, curves, figure, spec, universe
from mpdp.pipeline.rule_keys import rule_config
from mpdp.pipeline.runner import run_step

sm = snakemake  # noqa: F821  (injected by Snakemake)


def step(log):
    cfg = rule_config(sm.config, "multiverse")  # the whole config (rule_keys.WHOLE_CONFIG)
    by_id = {u.id: u for u in spec.universes(cfg)}  # defaults filled (reseeds)
    results = [universe.load(by_id[uid], path) for uid, path in zip(sm.params.universes, sm.input.status, strict=True)]
    results += [collect.Result(by_id[uid], None, "equals the default: not run", skipped=True) for uid in sm.params.skipped]
    headline = cells = None
    if sm.input.headline:  # the main build's verdicts and cells (multiverse_headline in common.smk)
        headline, cells = tables.read_verdicts(sm.input.headline[0]), tables.read_cells(sm.input.headline[1])
    else:
        log.warning("no main build's claims tables (%s): the headline verdicts are not shown", tables.VERDICTS_PATH)
    table = collect.collect_results(results, headline, cells, "full" if spec.full_grid(cfg) else "reduced")
    tables.write(table, sm.output.table)
    figure.write(table, sm.output.png, sm.output.pdf)
    curves.write(table, sm.output.curves_png, sm.output.curves_pdf)
    log.info("%d rows; assessments: %s", len(table), table["assessment"].value_counts().to_dict())


run_step(step, sm.log[0], "multiverse_collect")
