# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Explore the WD-DP results tables
#
# A scratch pad next to the report (`notebooks/report.py`): it reads the per-data-set results
# tables written by `snakemake train` (`data/results/wddp/<dataset>.parquet`, one row per run,
# columns in `mpdp.results.COLUMNS`) and uses the same selection and plotting code as the
# figures. Open it with jupytext (`jupytext --to notebook notebooks/explore_results.py`) or any
# editor that runs percent-format cells; run it from the repository root.

# %%
from pathlib import Path

import pandas as pd
from IPython.display import Image, display

from mpdp.studies.wddp import report as wddp_report
from mpdp.studies.wddp.figure_spec import FIGURES, VARIANTS
from mpdp.studies.wddp.figures import load_tables, render_figure, select_rows

RESULTS = Path("data/results/wddp")
tables = load_tables({path.stem: path for path in sorted(RESULTS.glob("*.parquet"))})
print({ds: len(t) for ds, t in tables.items()})

# %% [markdown]
# Runs per experiment, mechanism, mode and accountant:

# %%
runs = wddp_report.combined(tables)
runs.groupby(["dataset", "experiment", "mechanism", "mode", "accountant"]).size().unstack("dataset")

# %% [markdown]
# The rows behind one panel, and the means the figure draws (change `FIG`, `VARIANT`, `DATASET`):

# %%
FIG, VARIANT, DATASET = "fig07", "", "adult"
panel = select_rows(tables[DATASET], FIGURES[FIG], VARIANTS[VARIANT])
metric = FIGURES[FIG].metric
panel.pivot_table(
    index="x", columns="mechanism", values=[metric, "bound_gap", "sigma"], aggfunc="mean"
)

# %% [markdown]
# The figure itself, drawn into a scratch folder (the pipeline's copies are in `reports/figures`):

# %%
scratch = Path("build/explore")
summary = render_figure(FIG, VARIANT, tables, scratch / f"{FIG}.png", scratch / f"{FIG}.pdf")
display(Image(filename=scratch / f"{FIG}.png"))
pd.Series({ds: p.status for ds, p in summary.panels.items()}, name="panel status")
