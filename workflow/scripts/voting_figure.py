"""Snakemake script: one figure of the voting study (spec E5 H-1..H-4, B5, the λ trade-off)."""
from pathlib import Path

from mpdp import config
from mpdp.pipeline.runner import run_step
from mpdp.studies.voting import figures

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = config.validate(sm.config)


def step(log):
    tables = figures.load_tables({Path(p).stem: p for p in sm.input})
    figures.render(sm.wildcards.vfig, tables, cfg, Path(sm.output.png), Path(sm.output.pdf))
    log.info("%s: %d tables", sm.wildcards.vfig, len(tables))


run_step(step, sm.log[0], f"figure {sm.wildcards.vfig}")
