"""Snakemake script: one figure of the voting study (spec E5 H-1..H-4, B5, the λ trade-off)."""
from mpdp.figures import warm

# rendered by the warm renderer where it runs (one process's imports for every figure; mpdp.figures.warm)
warm.delegate(globals(), ("mpdp.studies.voting.figures", "mpdp.pipeline.rule_keys"))

from pathlib import Path  # noqa: E402

from mpdp.figures.plot import logged_warnings  # noqa: E402
from mpdp.pipeline.rule_keys import rule_config  # noqa: E402
from mpdp.pipeline.runner import run_step  # noqa: E402
from mpdp.studies.voting import figures  # noqa: E402

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = rule_config(sm.config, "voting_figure")

def step(log):
    tables = figures.load_tables({Path(p).stem: p for p in sm.input})
    figures.render(sm.wildcards.vfig, tables, cfg, Path(sm.output.png), Path(sm.output.pdf))
    log.info("%s: %d tables", sm.wildcards.vfig, len(tables))

run_step(logged_warnings(step), sm.log[0], f"figure {sm.wildcards.vfig}")
