"""Snakemake script: figure reports/figures/<experiment>.png/pdf of the least-squares study."""
from mpdp.figures import warm

# rendered by the warm renderer where it runs (one process's imports for every figure; mpdp.figures.warm)
warm.delegate(globals(), ("mpdp.studies.ls.figures", "mpdp.studies.ls.report"))

from pathlib import Path  # noqa: E402

from mpdp.figures.plot import logged_warnings  # noqa: E402
from mpdp.pipeline.runner import run_step  # noqa: E402
from mpdp.studies.ls import figures, report  # noqa: E402

sm = snakemake  # noqa: F821  (injected by Snakemake)

def step(log):
    exp = sm.wildcards.ls_exp
    table = report.read_table(sm.input[0])
    if exp == "ls_1":
        figures.plot_ls1(table, report.read_table(sm.input[1]), Path(sm.output.png), Path(sm.output.pdf))
    else:
        figures.plot_comparison(table, exp, Path(sm.output.png), Path(sm.output.pdf))
    log.info("%s: %d rows plotted", exp, len(table))

run_step(logged_warnings(step), sm.log[0], f"ls figure {sm.wildcards.ls_exp}")
