"""Snakemake script: render one paper figure (one variant) from its jobs' results rows."""
from mpdp.figures import warm

# rendered by the warm renderer where it runs (one process's imports for every figure; mpdp.figures.warm)
warm.delegate(globals(), ("mpdp.studies.wddp.figures", "mpdp.results", "pandas"))

from pathlib import Path  # noqa: E402

import pandas as pd  # noqa: E402

from mpdp import results  # noqa: E402
from mpdp.figures.plot import logged_warnings  # noqa: E402
from mpdp.pipeline.runner import run_step  # noqa: E402
from mpdp.studies.wddp.figures import render_figure  # noqa: E402

sm = snakemake  # noqa: F821  (injected by Snakemake)

def step(log):
    parts: dict[str, list[pd.DataFrame]] = {}
    for path in sm.input:
        parts.setdefault(Path(path).parent.name, []).append(results.read(path))
    tables = {ds: pd.concat(frames, ignore_index=True) for ds, frames in parts.items()}
    fig_id, _, variant = sm.wildcards.figname.partition("-")
    render_figure(fig_id, f"-{variant}" if variant else "", tables, Path(sm.output.png), Path(sm.output.pdf),
                  unavailable=dict(sm.params.unavailable))
    log.info("%s: %d runs from %d data sets", sm.wildcards.figname, sum(len(t) for t in tables.values()), len(tables))

run_step(logged_warnings(step), sm.log[0], f"figure {sm.wildcards.figname}")
