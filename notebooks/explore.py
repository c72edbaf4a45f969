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
# # Explore the results of a build, study by study
#
# Loads every study's results tables and claims from a finished build — the folder holding
# `data/results/` and `reports/figures/` — with the same code as the report
# (`reports/report.html`), so that you can slice the tables yourself. Works from any working
# directory: the build folder is `$MPDP_BUILD_DIR`, else the first folder at or above the
# working directory that holds `data/results/`, else this repository. The config is
# `config/config.yaml` then the files in `$MPDP_CONFIGFILES` (comma-separated, e.g.
# `config/smoke.yaml` for the smoke profile), as Snakemake merges them; without that variable, the
# config the build's report was made with (`reports/config.yaml`). The first output line says
# which profile was read and from where.
#
# The set-up (`bash scripts/setup-venv.sh`) installs no notebook server; run it to an HTML page with
# the tools it does install (from the repository, with `.venv/bin` first on `PATH`):
# `jupytext --to ipynb notebooks/explore.py && jupyter nbconvert --to html --execute notebooks/explore.ipynb`,
# or open it in any Jupyter that has jupytext (the percent format).
# A study that the build did not run says so and is skipped.

# %%
import pandas as pd
from IPython.display import Markdown, display

from mpdp.audit import section as audit_section
from mpdp.audit import table as audit_table
from mpdp.report import claims_view
from mpdp.studies import explore
from mpdp.studies.registry import STUDIES
from mpdp.studies.wddp import report as wddp_report
from mpdp.studies.wddp.figures import load_tables

ROOT = explore.find_root()
CFG = explore.load_config(ROOT)
CTX = explore.build_context(ROOT, CFG)
# every verdict comes from the claims engine's tables (data/results/claims/; empty if not built)
CLAIMS_TABLES = claims_view.load(CTX["claims"])
pd.set_option("display.max_columns", 30)
print(f"build folder: {ROOT}; profile: {CFG.get('profile')} (config: {explore.config_source(ROOT)}); "
      f"data sets: {', '.join(CFG['datasets'])}")


def show(section) -> None:
    """A study's tables (name, rows, columns) and its claims tables, or why it did not run."""
    if not section.ran:
        display(Markdown(f"*Not run in this build:* {section.not_run}"))
        return
    if section.results:
        display(pd.DataFrame([{"table": name, "rows": len(frame), "columns": frame.shape[1]}
                              for name, frame in section.results.items()]))
    for reading, claims in section.claims_tables.items():
        display(Markdown(f"Claims{f' ({reading})' if reading else ''}:"))
        display(claims)


# %% [markdown]
# ## The studies
#
# One section per study of the registry (`mpdp.studies.registry.STUDIES`), in its order; each
# study's results tables are in `section.results` (the WD-DP study: one row per training run,
# `data/results/wddp/<dataset>.parquet`, columns in `mpdp.results.COLUMNS`).

# %%
SECTIONS = {}
for study in STUDIES:
    display(Markdown(f"### {study.name} (`{study.id}`)"))
    SECTIONS[study.id] = study.section(CTX, CFG, CLAIMS_TABLES)
    show(SECTIONS[study.id])

# %%
# the WD-DP runs per experiment and mechanism
TABLES = load_tables(CTX["results"])
if SECTIONS["wddp"].ran:
    runs = wddp_report.combined(TABLES)
    display(runs.groupby(["experiment", "mechanism", "mode", "accountant"]).size().unstack("mechanism"))

# %% [markdown]
# ## Empirical privacy audit

# %%
AUDIT = audit_section.build(CTX["audit"])
show(AUDIT)
if AUDIT.ran:
    display(audit_table.read(CTX["audit"]["table"]).head())

# %% [markdown]
# ## All verdicts
#
# One row per claim and reading, as on the report's first screen: the claims engine's
# `data/results/claims/verdicts.parquet` (run `snakemake claims` if the build has none), and the
# cells behind them in `cells.parquet`.

# %%
if CLAIMS_TABLES.verdicts.empty:
    display(Markdown("*No claims tables in this build:* run `snakemake --cores all claims`."))
display(CLAIMS_TABLES.verdicts)
display(CLAIMS_TABLES.cells.head(20))
