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
# Four papers on multi-party differentially private empirical risk minimisation, replicated by
# one pipeline: Kang, Liu and Wang's weighted aggregation (WD-DP), Zhang and Zhu's ADMM with
# dual and primal variable perturbation, Hamm, Cao and Belkin's voting ERM, and a least-squares
# write-up; then every mechanism on one footing (cross-paper benchmark) and an empirical privacy
# audit. The report opens with what replicates and what does not, per paper; every study section
# has the same parts (method, figures, claims, privacy ledger, deviations and [REC] choices).
# Every number is computed from the pipeline's outputs when the report is built; a study that
# was not run says so.

# %%
# Setup: read the build context (written by mpdp.report.build.render_report).
import json
import os
from pathlib import Path

import pandas as pd
import yaml
from IPython.display import HTML, Markdown, display

from mpdp import config as mpdp_config
from mpdp.audit import section as audit_section
from mpdp.pipeline import planning
from mpdp.report import provenance, scaffold, sections
from mpdp.report.build import CONTEXT_ENV
from mpdp.studies.admm import report as zz_report
from mpdp.studies.admm import section as zz_section
from mpdp.studies.benchmark import section as xp_section
from mpdp.studies.ls import section as ls_section
from mpdp.studies.voting import section as voting_section
from mpdp.studies.wddp import report as wddp_report
from mpdp.studies.wddp import section as wddp_section
from mpdp.studies.wddp.claims import READINGS
from mpdp.studies.wddp.figure_spec import VARIANT_NAMES
from mpdp.studies.wddp.figures import load_tables

CTX = json.loads(Path(os.environ[CONTEXT_ENV]).read_text())
CFG = CTX["config"]
TABLES = load_tables(CTX["results"])
CARDS = provenance.read_cards(CTX["cards"])
UNAVAILABLE = CTX["unavailable"]
display(HTML(sections.REPORT_CSS))
warnings = wddp_report.data_warnings(CFG, CARDS, TABLES, UNAVAILABLE)
if warnings:
    display(HTML(sections.callout(warnings, "warning")))
CLAIMS = {reading: wddp_report.claims_check(TABLES, reading) for reading in READINGS}
WDDP = wddp_section.build(CTX, TABLES, CARDS, CLAIMS)
ZZ = zz_section.build(CTX, CFG)
VOTING = voting_section.build(CTX.get("voting"), CFG)
LS = ls_section.build(CTX.get("ls"), CFG)
XP = xp_section.build(CTX.get("xp"), CFG)
AUDIT = audit_section.build(CTX.get("audit"))
PAPERS = [WDDP, ZZ, VOTING, LS]
PVP_HEADLINE = audit_section.pvp_headline(CTX.get("audit"))  # a headline: also in the ADMM summary and the findings
if ZZ.ran and PVP_HEADLINE:
    ZZ.summary_note = " ".join(filter(None, [ZZ.summary_note, f"Privacy audit ([§ audit](#audit)): {PVP_HEADLINE}"]))
SECTIONS = [*PAPERS, XP, AUDIT]

# %%
display(scaffold.heading(2, "summary", "What replicates, paper by paper"))
display(Markdown(
    "Per paper, from its claims table: how many claims pass, fail or stay undecided, which ones "
    "replicate, and for each claim that does not, the failing statistic and the reason the check "
    "records; every claim links to its row in the study's claims table and to its figure."
))
for study in PAPERS:
    display(Markdown(scaffold.paper_summary(study)))

# %%
display(scaffold.heading(2, "findings", "Cross-paper findings"))
for study in (XP, AUDIT):
    display(Markdown(scaffold.paper_summary(study)))
if PVP_HEADLINE:
    display(audit_section.headline_note(PVP_HEADLINE))
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
display(Markdown("**Inconsistency register.** " + ("; ".join(REGISTER) + "." if REGISTER else
                                                   "No study with register entries ran in this build.")))
if ZZ.ran:
    I20 = zz_report.register_rows(ZZ.results["admm"])
    display(HTML(sections.html_table(I20, row_ids=[f"register-{scaffold.slug(i)}" for i in I20["id"]])))

# %%
display(scaffold.heading(2, "glance", "Claims at a glance"))
display(Markdown(
    "Every claim of every study, per reading: how many data sets or settings PASS, FAIL, are "
    "INCONCLUSIVE or UNINFORMATIVE (95 % t-interval over repetitions, paired within a "
    "repetition). Each id links to the claim's row in its section."
))
display(HTML(scaffold.glance(SECTIONS)))

# %%
for study in SECTIONS:
    for block in scaffold.render(study):
        display(block)

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
config_hash = mpdp_config.config_hash(CFG)
commands = f"""# everything: data, training, all figures and exactly this report
{INVOCATION.command()}

# one paper figure in all its variants (here Fig. 7), or one file of it
{INVOCATION.command("fig07")}
{INVOCATION.command("reports/figures/fig07-pr.png")}

# redraw a figure although nothing changed (-f forces only the target)
{INVOCATION.command("-f", "fig07")}

# this report only
{INVOCATION.command("reports/report.html")}
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
                f"No benchmark files under {CTX['benchmarks_dir']}: wall times were not recorded.",
                "note",
            )
        )
    )
else:
    display(HTML(sections.html_table(wall)))
