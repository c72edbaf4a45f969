"""Snakemake script: the noise-magnitude diagnostic figure (spec B9)."""
from pathlib import Path

from mpdp import results
from mpdp.pipeline.runner import run_step
from mpdp.studies.wddp.figures import render_noise_diagnostics

sm = snakemake  # noqa: F821  (injected by Snakemake)


def step(log):
    tables = {Path(p).stem: results.read(p) for p in sm.input}
    render_noise_diagnostics(tables, Path(sm.output.png), Path(sm.output.pdf), unavailable=dict(sm.params.unavailable))


run_step(step, sm.log[0], "noise_diagnostics")
