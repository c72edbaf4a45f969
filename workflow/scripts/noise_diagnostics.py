"""Snakemake script: the noise-magnitude diagnostic figure (spec B9)."""
from mpdp.figures import warm

# rendered by the warm renderer where it runs (one process's imports for every figure; mpdp.figures.warm)
warm.delegate(globals(), ("mpdp.studies.wddp.figures", "mpdp.results"))

from pathlib import Path  # noqa: E402

from mpdp import results  # noqa: E402
from mpdp.figures.plot import logged_warnings  # noqa: E402
from mpdp.pipeline.runner import run_step  # noqa: E402
from mpdp.studies.wddp.figures import render_noise_diagnostics  # noqa: E402

sm = snakemake  # noqa: F821  (injected by Snakemake)

def step(log):
    tables = {Path(p).stem: results.read(p) for p in sm.input}
    render_noise_diagnostics(tables, Path(sm.output.png), Path(sm.output.pdf), unavailable=dict(sm.params.unavailable))

run_step(logged_warnings(step), sm.log[0], "noise_diagnostics")
