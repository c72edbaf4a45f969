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
# # Replication report: Weighted Distributed Differential Privacy ERM (WD-DP)
#
# Kang, Liu and Wang compare their weighted aggregation (**WD-DP**) with the simple average of
# **Jayaraman et al.** and with the centralised DP gradient descent of **Wang, Ye and Xu** on
# five data sets (Figures 1–16). This report shows the replicated figures, checks each of the
# paper's claims statistically, and records everything needed to trust or redo the numbers.
# Every number below is computed from the pipeline's outputs when the report is built.

# %%
# Setup: read the build context (written by mpdp.report.build.render_report).
import json
import os
from pathlib import Path

import pandas as pd
import yaml
from IPython.display import HTML, Image, Markdown, display

from mpdp import config as mpdp_config
from mpdp.figures.plot import load_tables, table1_frame
from mpdp.report import provenance, sections
from mpdp.report.build import CONTEXT_ENV
from mpdp.studies.wddp.figure_spec import (
    ACCOUNTANT_NOTES,
    FIGURES,
    MODE_NOTES,
    VARIANT_NAMES,
    VARIANTS,
    variants_for,
)

CTX = json.loads(Path(os.environ[CONTEXT_ENV]).read_text())
CFG = CTX["config"]
TABLES = load_tables(CTX["results"])
CARDS = provenance.read_cards(CTX["cards"])
UNAVAILABLE = CTX["unavailable"]
FIGURE_FILES = CTX["figures"]
CONFIGURED_VARIANTS = variants_for(CFG)
display(HTML(sections.REPORT_CSS))
warnings = sections.data_warnings(CFG, CARDS, TABLES, UNAVAILABLE)
if warnings:
    display(HTML(sections.callout(warnings, "warning")))
CLAIMS = {
    "local_then_aggregate": sections.claims_check(TABLES, "local_then_aggregate"),
    "per_round": sections.claims_check(TABLES, "per_round"),
}

# %% [markdown]
# ## Claims check at a glance
#
# Every qualitative claim of the paper's experiment section, tested per data set on the main
# reading (Algorithm 1 as printed, `local_then_aggregate`, accountant `ma16`). Cells show
# *verdict: estimate [95 % CI over repetitions]*; section 4 has the method and the per-round
# reading.

# %%
if CLAIMS["local_then_aggregate"].empty:
    display(HTML(sections.callout("No results tables: no claim could be checked.", "warning")))
else:
    display(HTML(sections.html_table(sections.claims_matrix(CLAIMS["local_then_aggregate"]))))

# %% [markdown]
# ## 1. How to reproduce it

# %%
config_path = CTX["config_path"]
config_hash = mpdp_config.config_hash(CFG)
commands = f"""# everything: data, training, all figures and this report
snakemake --cores all --configfile {config_path}

# one paper figure in all its variants (here Fig. 7), or one file of it
snakemake --cores all fig07
snakemake --cores all reports/figures/fig07-pr.png

# redraw a figure although nothing changed (-f forces only the target)
snakemake --cores all -f fig07

# this report only
snakemake --cores all reports/report.html
"""
display(
    Markdown(
        f"Configuration file: `{config_path}` (profile `{CFG.get('profile')}`), "
        f"hash of the validated configuration: `{config_hash}`. "
        "Figures are written to `reports/figures/<fig><variant>.png|pdf`; the variants are "
        + "; ".join(f"`{s or '(none)'}` = {name}" for s, name in VARIANT_NAMES.items())
        + "."
    )
)
display(HTML(sections.pre(commands)))
config_text = yaml.safe_dump(CFG, sort_keys=True, allow_unicode=True, default_flow_style=None)
display(
    HTML(
        sections.details(
            "The validated configuration used (defaults filled in)", sections.pre(config_text)
        )
    )
)

# %% [markdown]
# ## 2. Provenance

# %%
git = provenance.git_state(CTX["repo_root"])
facts = {"git commit": git.text, "config hash": config_hash}
facts |= {f"machine: {k}": v for k, v in provenance.machine().items()}
facts |= {f"package: {k}": v for k, v in provenance.package_versions().items()}
display(HTML(sections.html_table(pd.DataFrame(list(facts.items()), columns=["item", "value"]))))
if git.dirty:
    display(
        HTML(
            sections.callout(
                "The working tree had uncommitted changes when this report was built: the "
                "commit above does not fully identify the code.",
                "warning",
            )
        )
    )

display(
    Markdown("**Raw files** (SHA-256 of the uncompressed file each data card was prepared from):")
)
display(HTML(sections.html_table(provenance.raw_checksums(CARDS))))

display(
    Markdown("**Wall time per pipeline stage** (summed over the jobs' Snakemake benchmark files):")
)
wall = provenance.stage_wall_times(CTX["benchmarks_dir"])
if wall.empty:
    display(
        HTML(
            sections.callout(
                f"No benchmark files under {CTX['benchmarks_dir']}: wall times were not recorded.",
                "note",
            )
        )
    )
else:
    display(HTML(sections.html_table(wall)))

# %% [markdown]
# ## 3. Data cards

# %%
display(HTML(sections.html_table(sections.data_card_table(CARDS, UNAVAILABLE))))
notes = sections.parsing_notes(CARDS)
if not notes.empty:
    display(Markdown("What the preparation dropped or imputed:"))
    display(HTML(sections.html_table(notes)))

# %% [markdown]
# ## 4. Claims check
#
# Each claim of the paper's experiment section is turned into a statistic on the results,
# computed per repetition (a repetition redraws the partition, θ₀ and all noise; methods are
# paired within it), with a 95 % t-interval over repetitions. **PASS**: the interval lies on
# the claimed side (or inside the equivalence margin); **FAIL**: entirely on the other side;
# **INCONCLUSIVE**: otherwise, or too few repetitions. Cells show *verdict: estimate [CI]*.

# %%
for mode, claims in CLAIMS.items():
    reading = "main reading" if mode == "local_then_aggregate" else "per-round reading"
    display(Markdown(f"### {reading.capitalize()} ({mode}, ma16)"))
    display(Markdown(f"{MODE_NOTES[mode]}; {ACCOUNTANT_NOTES['ma16']}."))
    if claims.empty:
        display(HTML(sections.callout("No results tables: no claim could be checked.", "warning")))
        continue
    display(HTML(sections.html_table(sections.verdict_summary(claims))))
    display(HTML(sections.html_table(sections.claims_matrix(claims))))

# %% [markdown]
# ## 5. The figures
#
# One subsection per paper figure: what the paper's figure shows, the replicated figure
# (main reading first, then the per-round reading `-pr` and the tight accountant `-exact`),
# the paper's claim, what the replication shows and the verdicts of the claims check.
# Lines are means over repetitions with 95 % bootstrap bands; on gap figures the dashed and
# dotted lines are the theory of spec bounds.md B10, labelled "vacuous" where an upper bound
# exceeds ln 2 (the loss of θ = 0).

# %%
for fig_id, spec in FIGURES.items():
    display(Markdown(f"### Fig. {spec.number} — {spec.shows}"))
    display(Markdown(f"**What the paper's figure shows.** {spec.caption}"))
    for suffix in VARIANTS:
        name = f"{fig_id}{suffix}"
        display(Markdown(f"*{name}: {VARIANT_NAMES[suffix]}*"))
        path = FIGURE_FILES.get(name)
        if path and Path(path).is_file():
            display(
                Image(
                    filename=path, alt=f"Fig. {spec.number} ({VARIANT_NAMES[suffix]}): {spec.shows}"
                )
            )
        elif suffix in CONFIGURED_VARIANTS:
            display(
                HTML(
                    sections.callout(f"{name} is missing although its variant was run.", "warning")
                )
            )
        else:
            display(
                HTML(
                    sections.callout(
                        f"{name} was not built: the config does not run this variant.", "note"
                    )
                )
            )
    display(Markdown(f"**The paper's claim.** {spec.claim}"))
    observations = sections.figure_observations(spec, TABLES)
    display(
        Markdown(
            "**What the replication shows** (main reading; mean over repetitions at both ends of the x-axis):"
        )
    )
    display(HTML(sections.html_table(observations)))
    display(
        Markdown("\n".join(f"- {line}" for line in sections.figure_findings(spec, observations)))
    )
    for mode, claims in CLAIMS.items():
        rows, note = sections.figure_claims(claims, spec)
        label = "main reading" if mode == "local_then_aggregate" else "per-round reading"
        display(Markdown(f"**Verdict ({label}).** {note}"))
        if not rows.empty:
            display(HTML(sections.html_table(sections.claims_matrix(rows))))

# %% [markdown]
# ### Noise diagnostics (not a paper figure)
#
# The per-step noise std σ each run really used (spec bounds.md B9): against ε, against u,
# and the measured ratio σ_Jayaraman/σ_WD-DP against its theory (1 + u)/2.

# %%
path = FIGURE_FILES.get("noise_diagnostics")
if path and Path(path).is_file():
    display(
        Image(filename=path, alt="Noise diagnostics: noise std σ vs ε and u, and σ_J/σ_WD vs u")
    )
else:
    display(HTML(sections.callout("The noise diagnostics figure was not built.", "note")))
display(
    Markdown(
        "Realised size ratio n/(m n_(1)) of the random-size partitions (= σ_J/σ_WD of those runs):"
    )
)
display(HTML(sections.html_table(sections.size_ratios(TABLES))))

# %% [markdown]
# ## 6. Privacy ledger
#
# For every mechanism, mode and accountant: the noise std σ injected per step, the ε each
# run claims and the ε it really gives at δ, computed for the mechanism as implemented.
# The differences are expected and explained by the spec's inconsistency register:
#
# - **I-1.** Algorithm 1 as printed (`local_then_aggregate`) calibrates each party's noise to
#   the total n, but a party's local trajectory has sensitivity 2G/n_j. It is therefore only
#   (ε·n/n_(1), δ)-DP for the worst party (scope `worst_party`), above the claimed ε. The
#   per-round reading of the proof is exactly (ε, δ)-DP and identical to Wang–Ye–Xu.
# - **I-3.** The paper's constant c = 16 is what the proof needs, and it is conservative:
#   the tight accounting of the same noise gives about 0.7 ε (`ma16`); the `exact`
#   accountant calibrates σ tightly, so accounted ε = claimed ε for the aggregate.

# %%
display(HTML(sections.html_table(sections.privacy_ledger(TABLES))))

# %% [markdown]
# ## 7. Deviations and open choices
#
# The paper leaves many choices open. Items tagged **[REC]** are reconstructions: defensible
# defaults chosen for this replication, **not** verified against the paper. The tables list
# every such choice actually used (config, data preparation, code) and the inconsistencies of
# the spec's register that affect the figures.

# %%
display(Markdown("### Reconstructed and open choices used"))
display(HTML(sections.html_table(sections.reconstructed_choices(CFG, CARDS))))
display(Markdown("### Learning rates (spec E3.3, I-4)"))
display(HTML(sections.html_table(sections.learning_rates(TABLES))))
display(Markdown("### Inconsistencies of the paper that affect the figures"))
display(HTML(sections.html_table(sections.inconsistencies(CFG, TABLES))))

# %% [markdown]
# ### Table 1 of the paper, computed
#
# WD-DP's Table 1 gives noise and excess-risk rates in O-notation. Below they are evaluated
# with the explicit constants of spec bounds.md B4 at the real n, n_(1), m and p of the runs
# (ε-sweep settings at ε = 0.1; u-sweep settings at their own ε, smallest and largest u).
# Values are upper bounds on the excess empirical risk; anything above ln 2 ≈ 0.693 is
# vacuous. The last two columns compare WD-DP with Jayaraman et al.: the ratio of the explicit
# bounds and the factor the paper claims.

# %%
display(HTML(sections.html_table(sections.table1_summary(table1_frame(TABLES)))))

# %% [markdown]
# ## 8. Zhang & Zhu: ADMM with dual and primal variable perturbation (DVP, PVP)
#
# The second replicated paper (seed S-001; spec experiments.md E4, mechanisms.md M7–M10,
# bounds.md B7, inconsistency I-11). Numbers below are computed from
# `data/results/admm/<dataset>.parquet` when the report is built.

# %%
from mpdp.studies.admm import report as zz_report  # noqa: E402

ZZ = zz_report.load(CTX)
if ZZ is None:
    display(
        HTML(
            sections.callout(
                "The ADMM study did not run in this build (no `admm` section in the config, or "
                "Adult not available): no results for this paper.",
                "note",
            )
        )
    )
else:
    ZZ_CFG = CFG["admm"]
    ZZ_TABLE = ZZ["frame"]
    display(Markdown("### Method"))
    display(Markdown(zz_report.METHOD))
    display(Markdown(zz_report.I11.format(delta=ZZ_CFG["delta"])))
    display(Markdown("### What the replication shows"))
    display(Markdown("\n".join(f"- {line}" for line in zz_report.findings(ZZ_TABLE, ZZ_CFG["main_topology"]))))
    display(Markdown("### Tuned settings (ρ per α, η per algorithm; mean final training loss)"))
    display(HTML(sections.html_table(zz_report.settings(ZZ_TABLE))))
    display(Markdown("### Privacy ledger (per node; α per iteration and its composition)"))
    display(Markdown(zz_report.I11.format(delta=ZZ_CFG["delta"])))
    display(HTML(sections.html_table(zz_report.ledger(ZZ_TABLE))))

# %%
if ZZ is not None:
    display(Markdown("### Figures"))
    for zz_name, zz_caption in zz_report.CAPTIONS.items():
        zz_path = ZZ["figures"].get(zz_name)
        display(Markdown(f"**{zz_name}.** {zz_caption}"))
        if zz_path and Path(zz_path).is_file():
            display(Image(filename=zz_path, alt=f"{zz_name}: {zz_caption}"))
        else:
            display(HTML(sections.callout(f"{zz_name} was not built.", "warning")))
        display(Markdown("*" + zz_report.I11.format(delta=ZZ_CFG["delta"]) + "*"))
    display(Markdown("### Fitted trade-off model and α* (zz_table, spec B7)"))
    display(HTML(sections.html_table(zz_report.fit_table(ZZ.get("fit_table")))))

# %%
if ZZ is not None:
    display(Markdown("### Claims check (S-001)"))
    display(
        Markdown(
            "Each claim as a statistic per repetition, 95 % t-interval over repetitions, on the "
            f"main topology ({ZZ_CFG['main_topology']}). The seed contradicts itself on which "
            "algorithm is better (I-11): measured here, not assumed."
        )
    )
    display(HTML(sections.html_table(zz_report.claims(ZZ_TABLE, CFG))))
    display(Markdown("Spread across repetitions of the final loss (claim Z2):"))
    display(HTML(sections.html_table(zz_report.spread(ZZ_TABLE, ZZ_CFG["main_topology"]))))
    display(Markdown("### Deviations and [REC] choices of this study"))
    display(HTML(sections.html_table(zz_report.rec_choices(CFG))))
