"""Snakemake script: the audit figure reports/figures/audit_eps.png/pdf."""
from mpdp.figures import warm

# rendered by the warm renderer where it runs (one process's imports for every figure; mpdp.figures.warm)
warm.delegate(globals(), ("mpdp.audit.figure", "mpdp.audit.table"))

from mpdp.audit import table  # noqa: E402
from mpdp.audit.figure import render_audit_figure  # noqa: E402
from mpdp.figures.plot import logged_warnings  # noqa: E402
from mpdp.pipeline.runner import run_step  # noqa: E402

sm = snakemake  # noqa: F821  (injected by Snakemake)

def step(log):
    render_audit_figure(table.read(sm.input[0]), sm.output.png, sm.output.pdf)

run_step(logged_warnings(step), sm.log[0], "audit_figure")
