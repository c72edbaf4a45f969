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
# # Replication report: multi-party differentially private ERM
#
# Four papers on multi-party differentially private learning replicated by one pipeline, every
# method compared on equal terms, and an empirical privacy audit. The verdicts come first; every
# detail is one click away in each paper's section. Every number is computed from this build.

# %%
# This file is the report's source, not a notebook to run by hand: mpdp.report.build executes it
# with a build context (written by the `report_html` rule). To explore the results tables, use
# notebooks/explore.py.
import os
from pathlib import Path

import pandas as pd
import yaml
from IPython.display import HTML, Markdown, display

from mpdp import config as mpdp_config
from mpdp import io as mpdp_io
from mpdp.audit import section as audit_section
from mpdp.data import splits
from mpdp.multiverse import reseeding
from mpdp.multiverse import section as multiverse_section
from mpdp.multiverse import spec as multiverse_spec
from mpdp.pipeline import planning
from mpdp.report import claims_view, provenance, scaffold, sections, verdicts
from mpdp.report.build import CONTEXT_ENV
from mpdp.studies.admm import report as zz_report
from mpdp.studies.registry import STUDIES
from mpdp.studies.wddp import report as wddp_report
from mpdp.studies.wddp.figure_spec import VARIANT_NAMES
from mpdp.studies.wddp.figures import load_tables

CTX = mpdp_io.read_json(os.environ[CONTEXT_ENV], "report context")
CFG = CTX["config"]
REPORT_DIR = CTX.get("report_dir")  # where the report is written: the figures' PDF links are relative to it
TABLES = load_tables(CTX["results"])
CARDS = provenance.read_cards(CTX["cards"])
UNAVAILABLE = CTX["unavailable"]
display(HTML(sections.REPORT_CSS))
warnings = wddp_report.data_warnings(CFG, CARDS, TABLES, UNAVAILABLE)
if warnings:
    display(HTML(sections.callout(warnings, "warning")))
# every verdict comes from the claims tables (data/results/claims/, rule claims_tables; docs/claims.md)
CLAIMS_TABLES = claims_view.load(CTX.get("claims"))
# one section per study of the registry (mpdp.studies.registry), in its order: the papers, then the rest
STUDY_SECTIONS = {study.id: study.section(CTX, CFG, CLAIMS_TABLES) for study in STUDIES}
PAPERS = [STUDY_SECTIONS[s.id] for s in STUDIES if s.paper]
OTHERS = [STUDY_SECTIONS[s.id] for s in STUDIES if not s.paper]
WDDP, ZZ, VOTING = STUDY_SECTIONS["wddp"], STUDY_SECTIONS["admm"], STUDY_SECTIONS["voting"]
AUDIT = audit_section.build(CTX.get("audit"))
SECTIONS = [*PAPERS, *OTHERS, AUDIT]
for _section in SECTIONS:  # every claim's forest plot, under its study's verdict map (issue 46)
    _section.forests = claims_view.forest_items(CLAIMS_TABLES, _section.key)
WDDP.facts.append(wddp_report.printed_eps_fact(TABLES, verdicts.round_for_reading))
ZZ.facts.append(audit_section.pvp_fact(CTX.get("audit"), verdicts.round_for_reading))
# robustness to the [REC] choices (issue 38): only when `snakemake multiverse` has been run
MULTIVERSE = multiverse_section.read(Path(CTX["repo_root"]) / multiverse_spec.TABLE_PATH)
# the reseeding check (issue 60; docs/claims.md): per study with claims, its table once it has been run
RESEEDED = {s: reseeding.read(CTX["repo_root"], s) for s in dict.fromkeys(CLAIMS_TABLES.verdicts["study"].astype(str))}

# %%
display(scaffold.heading(2, "verdicts-heading", "Verdicts: what replicates and what does not"))
# one row per claim and reading: the claims engine's data/results/claims/verdicts.parquet
VERDICTS = CLAIMS_TABLES.verdicts
BY_KEY = {study.key: study for study in SECTIONS}


def claim_anchor(study: str, reading: str, claim_id: str) -> str:
    """The anchor of a claim's row in its study's section (the section itself if unknown)."""
    section = BY_KEY.get(study)
    if section is None:
        return "verdicts"
    readings = list(section.claims_tables)
    index = readings.index(reading) if reading in readings else 0
    return section.claim_anchor(claim_id, index)


display(Markdown(
    "One cell per claim, its verdict over every setting where it is defined; the bar shows what the verdict is "
    f"made of. Click a cell for the claim's row, {verdicts.FOREST_MARK} for its forest plot; hover for the claim "
    f"and its counts; * marks a claim the paper itself qualifies. In every study but the synthetic ones "
    f"{splits.short(CFG)}."))
display(HTML(verdicts.verdict_matrix_html(
    VERDICTS, {s.key: s.paper for s in [*PAPERS, *OTHERS]}, claim_anchor, CLAIMS_TABLES.forest_anchor)))
for study in [*PAPERS, *OTHERS]:
    if not study.ran:
        display(Markdown(f"**{study.paper}.** Not run in this build ([why](#{study.key}))."))
        continue
    rows = VERDICTS[VERDICTS["study"] == study.key]
    display(Markdown(verdicts.conclusion(rows, study.paper, [f for f in study.facts if f])
                     + f" [Details](#{study.key})."))
    if FRAGILE := multiverse_section.fragile_note(MULTIVERSE, study.key):
        display(Markdown(FRAGILE))
    if study.key in RESEEDED:  # issue 60: the share of claim-readings a reseed changes, beside the verdicts
        display(Markdown(reseeding.report_note(RESEEDED[study.key], VERDICTS, study.key)))

# %%
display(scaffold.heading(2, "findings", "Details of the verdicts, the audit and the register"))
DETAILS = "".join(scaffold.block_html(Markdown(scaffold.paper_summary(study))) for study in SECTIONS)
display(HTML(sections.details("Per paper: the failing statistic and the reason of every claim that "
                              "does not replicate", DETAILS)))
REGISTER = []
if WDDP.ran:
    REGISTER.append(
        f"{len(wddp_report.inconsistencies(CFG, TABLES))} inconsistencies of the WD-DP paper affect its "
        "figures ([table](#wddp-inconsistencies)); its privacy ledger shows what Algorithm 1 as printed "
        "really gives ([WD-DP ledger](#wddp-ledger))")
if ZZ.ran:
    REGISTER.append("Zhang–Zhu's per-iteration accounting (I-11) is composed over iterations in the "
                    "[ADMM ledger](#admm-ledger)")
if VOTING.ran:
    REGISTER.append("the voting study's party- and record-level units (I-12) are kept apart in the "
                    "[voting ledger](#voting-ledger)")
if ZZ.ran:
    REGISTER.append("PVP's unreleased hidden state (I-20): the ε its releases really give, in the "
                    "[row below](#register-i-20) and the [ADMM ledger](#admm-ledger)")
REGISTER_HTML = scaffold.block_html(Markdown(
    "**Inconsistency register.** " + ("; ".join(REGISTER) + "." if REGISTER else
                                      "No study with register entries ran in this build.")))
if ZZ.ran:
    I20 = zz_report.register_rows(ZZ.results["admm"])
    REGISTER_HTML += sections.html_table(I20, row_ids=[f"register-{scaffold.slug(i)}" for i in I20["id"]])
display(HTML(sections.details("The inconsistency register: where each entry is resolved",
                              REGISTER_HTML)))

# %%
display(scaffold.heading(3, "glance", "Claims at a glance"))
display(Markdown(
    "Every claim of every study, per reading: its verdict (HOLDS, FAILS, MIXED, VACUOUS, IDENTICAL, UNDERPOWERED, "
    "UNINFORMATIVE; docs/claims.md), what it is made of in words and in counts (cells for, against, with no "
    "effect, underpowered, uninformative, of all its cells), and where they lie. Each id links to the claim's "
    "row in its section."
))
display(HTML(sections.details("Counts per claim and data set", scaffold.glance(SECTIONS))))

# %%
for study in SECTIONS:
    for block in scaffold.render(study, REPORT_DIR):
        display(block)

# %%
if MULTIVERSE is not None:
    display(scaffold.heading(2, multiverse_section.ANCHOR, multiverse_section.TITLE))
    display(Markdown(multiverse_section.markdown(MULTIVERSE, {s.key: s.paper for s in [*PAPERS, *OTHERS]})))
    display(HTML(scaffold.figure_html(scaffold.FigureItem(
        "multiverse", "Each claim's verdict under each reseeded default and each alternative value of a "
        "reconstructed choice, one at a time, against the multiverse's default run (reduced grid); '~' marks a change "
        "within reseeding variation, '0' an alternative that changes none of the claim's cells.",
        path=str(Path(CTX["repo_root"]) / multiverse_spec.FIGURE_PNG),
        missing="The multiverse figure was not built: run `snakemake multiverse`."))))
    display(HTML(scaffold.figure_html(scaffold.FigureItem(
        "multiverse_curves", "Specification curves (issue 48): per claim, every universe's claim-level estimate "
        "(the median over its informative cells) with the range of those cells' intervals, sorted; the reduced "
        "default, the reseeded defaults and the headline (main build) are marked.",
        path=str(Path(CTX["repo_root"]) / multiverse_spec.CURVES_PNG),
        missing="The specification curves were not built: run `snakemake multiverse`."))))

# %%
display(scaffold.heading(2, "data", "Data cards"))
display(HTML(sections.html_table(wddp_report.data_card_table(CARDS, UNAVAILABLE))))
notes = wddp_report.parsing_notes(CARDS)
if not notes.empty:
    display(Markdown("What the preparation dropped or imputed:"))
    display(HTML(sections.html_table(notes)))

display(scaffold.heading(3, "data-settings", "Settings the data did not allow (all studies)"))
PLANNING_WARNINGS = planning.warnings(CFG, [ds for ds, p in CTX["cards"].items() if p], CTX["cards"])
display(Markdown("\n".join(f"- {line}" for line in PLANNING_WARNINGS)
                 or "None: every configured setting ran as configured."))

# %%
display(scaffold.heading(2, "reproduce", "How to reproduce it"))
INVOCATION = provenance.Invocation.from_dict(CTX["invocation"])
ROOT = CTX["repo_root"]  # the commands run in the project's folder; the mirror is named relative to it
config_hash = mpdp_config.config_hash(CFG)
commands = f"""# everything: data, training, all figures and exactly this report
{INVOCATION.command(root=ROOT)}

# one paper figure in all its variants (here Fig. 7), or one file of it
{INVOCATION.command("fig07", root=ROOT)}
{INVOCATION.command("reports/figures/fig07-pr.png", root=ROOT)}

# redraw one figure file although nothing changed (--force reruns the job that writes it)
{INVOCATION.command("--force", "reports/figures/fig07.png", root=ROOT)}

# this report only
{INVOCATION.command("reports/report.html", root=ROOT)}
"""
display(
    Markdown(
        f"{INVOCATION.describe()} Profile `{CFG.get('profile')}`, "
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

# %%
display(scaffold.heading(2, "provenance", "Provenance"))
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

ENGINE_TABLES = {name: frame for study in PAPERS for name, frame in study.results.items()}
engine_paths = provenance.engine_paths(ENGINE_TABLES)
display(Markdown("**Engine** (how the rows of the results tables were computed): "
                 + provenance.engine_sentence(engine_paths)))
display(HTML(sections.html_table(engine_paths)))

display(
    Markdown("**Raw files** (SHA-256 of the uncompressed file each data card was prepared from):")
)
display(HTML(sections.html_table(provenance.raw_checksums(CARDS))))

display(
    Markdown("**Wall time per pipeline stage** (summed over the jobs' Snakemake benchmark files):")
)
wall = provenance.stage_wall_times(CTX["benchmarks_dir"], CTX.get("benchmark_files"))
if wall.empty:
    display(
        HTML(
            sections.callout(
                f"No benchmark files under {provenance.relative_path(CTX['benchmarks_dir'], ROOT)}: wall times "
                "were not recorded.",
                "note",
            )
        )
    )
else:
    display(HTML(sections.html_table(wall)))
