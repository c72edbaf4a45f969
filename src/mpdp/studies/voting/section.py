"""The Hamm–Cao–Belkin voting study's report section, in the anatomy of :mod:`mpdp.report.scaffold`.

Tables come from :mod:`mpdp.studies.voting.report`; this module arranges them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from mpdp.report.scaffold import FigureItem, StudySection, md, table
from mpdp.studies.voting import report as vr

KEY = "voting"
TITLE = "Output perturbation and voting (Hamm, Cao, Belkin)"
PAPER = "Hamm et al. voting"
INTRO = (
    "A separate study (spec experiments.md E5): M parties train local classifiers; a trusted "
    "curator labels an unlabeled auxiliary pool by their majority vote (Algorithm 1) or soft "
    "vote (Algorithm 2), solves the ERM exactly and releases it with N-L2 output noise. The "
    "baselines average the local minimisers (party-level parameter averaging, Pathak et al. and "
    "Jayaraman et al.'s output perturbation at record level). **Units (I-12):** Hamm's ε "
    "protects a whole party, Pathak's and Jayaraman's one record; the two are not comparable, "
    "and the figures say which is which. Hamm's experimental setup was not recovered, so the "
    "whole protocol is a reconstruction [REC]."
)


def build(ctx: Mapping[str, Any] | None, cfg: Mapping[str, Any]) -> StudySection:
    """The voting section from the report context key ``voting`` (absent: not run)."""
    loaded = vr.load(ctx)
    section = StudySection(KEY, TITLE, PAPER, INTRO)
    if not loaded.tables:
        section.not_run = ("the voting study was not run (no data/results/voting tables): "
                           "run `snakemake --cores all hamm`.")
        return section
    section.results = {f"{KEY}/{name}": frame for name, frame in loaded.tables.items()}
    v = cfg["voting"]
    claims = vr.claims_table(loaded.tables, cfg)
    section.claims_tables = {"": claims}
    section.summary_note = vr.reading_sentence(loaded.tables, cfg)
    section.method = [
        md("**Privacy of the whole procedure.** " + vr.reading_sentence(loaded.tables, cfg)),
        table(vr.reading_changes(loaded.tables, cfg)),
        md("**Methods, privacy units and sensitivities.**"), table(vr.methods_table()),
        md("**Pools.**"), table(vr.pools(loaded.tables)),
        md(f"**λ chosen with the noise in the loop (M = {v['h1_M']}).** Per (M, ε, method), the λ of "
           "the grid with the lowest validation error of *private* releases, drawn from tuning streams "
           "disjoint from the repetitions. " + vr.SELECTION_PRIVACY
           + " Grid edges: see [Deviations](#voting-deviations)."),
        table(vr.lambdas(loaded.tables, cfg)),
        md(f"**When each method beats the majority class (M = {v['h1_M']}).** The smallest ε whose "
           "test error is significantly below the majority-class error (95 % t-interval over "
           "repetitions)."),
        table(vr.beats_majority(loaded.tables, cfg)),
        md(f"**Test error at M = {v['h1_M']}, ε = 1** (controls: no noise)."),
        table(vr.error_summary(loaded.tables, v["h1_M"], 1.0).reset_index(names="method").round(4)),
    ]
    section.figures = [FigureItem(fig, f"voting study figure {fig}", loaded.figures.get(fig),
                                  missing=f"Figure {fig} was not built.", missing_kind="note")
                       for fig in vr.FIGURE_IDS]
    section.figures.append(md("**What the figures show.**\n\n" + vr.figure_findings(loaded.tables, cfg)))
    section.claims = [
        md("Paired within a repetition (same partition and local classifiers), 95 % t-intervals "
           "over repetitions; the Lemma 6 claim uses a Clopper–Pearson interval for the fraction "
           "of draws above the line. V1 and V2 average over the ε at which one of the two compared "
           "methods is significantly below the majority-class error; a claim with no such setting "
           "compares classifiers no better than always predicting the majority class and is "
           "UNINFORMATIVE."),
        table(claims),
        md(vr.claims_text(claims)),
    ]
    section.ledger = [
        md("For every private mechanism: the unit, the sensitivity and the N-L2 parameter "
           "β = ε/Δ actually used, and the ε really given (a party's or a record's)."),
        table(vr.ledger(loaded.tables)),
    ]
    section.deviations = [table(pd.DataFrame(vr.DEVIATIONS, columns=["item", "tag", "choice"]))]
    section.tuning_edges = vr.edges(loaded.tables, cfg)
    return section
