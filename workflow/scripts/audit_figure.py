"""Snakemake script: the audit figure reports/figures/audit_eps.png/pdf."""
from mpdp.audit import table
from mpdp.audit.figure import render_audit_figure
from mpdp.pipeline.runner import run_step

sm = snakemake  # noqa: F821  (injected by Snakemake)


def step(log):
    render_audit_figure(table.read(sm.input[0]), sm.output.png, sm.output.pdf)


run_step(step, sm.log[0], "audit_figure")
