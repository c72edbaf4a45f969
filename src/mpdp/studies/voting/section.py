"""The Hamm–Cao–Belkin voting study's report section, in the anatomy of :mod:`mpdp.report.scaffold`.

Tables come from :mod:`mpdp.studies.voting.report`; this module arranges them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from mpdp.report import claims_view
from mpdp.report.scaffold import FigureItem, StudySection, md, table
from mpdp.studies.voting import claims as voting_claims
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
    "and the figures say which is which. λ is chosen on a validation split outside the private pool; "
    "under the default private selection every row is (ε, 0)-DP end to end both for a member of the "
    "pool in its unit (`eps_end_to_end`) and for one validation record, whose scores are noised "
    "(`eps_validation_record`). Hamm's experimental setup was not recovered, so the "
    "whole protocol is a reconstruction [REC]."
)


def build(ctx: Mapping[str, Any] | None, cfg: Mapping[str, Any],
          view: claims_view.ClaimsTables = claims_view.EMPTY) -> StudySection:
    """The voting section from its entry of the report context (``ctx["studies"]["voting"]``) and
    the claims tables (absent: not run)."""
    loaded = vr.load(ctx)
    section = StudySection(KEY, TITLE, PAPER, INTRO)
    if not loaded.tables:
        section.not_run = ("the voting study was not run (no data/results/voting tables): "
                           "run `snakemake --cores all hamm`.")
        return section
    section.results = {f"{KEY}/{name}": frame for name, frame in loaded.tables.items()}
    v = cfg["voting"]
    section.claims_tables = claims_view.study_readings(view, KEY, figures=voting_claims.FIGURES)
    section.claims_map = view.maps.get(KEY)
    section.summary_note = vr.reading_sentence(loaded.tables, view.verdicts)
    section.method = [
        md("**Privacy of the whole procedure.** " + vr.reading_sentence(loaded.tables, view.verdicts)),
        table(vr.reading_changes(view.verdicts)),
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
    captions = vr.captions(cfg)
    section.figures = [FigureItem(fig, captions[fig], loaded.figures.get(fig),
                                  missing=f"Figure {fig} was not built.", missing_kind="note")
                       for fig in vr.FIGURE_IDS]
    section.figures.append(md("**What the figures show.**\n\n" + vr.figure_findings(loaded.tables, cfg)))
    section.claims = [
        md("Scored by the claims engine (docs/claims.md) in every (M, ε) cell of every table (V3: every ε "
           "along M), paired within a repetition (same partition and local classifiers), Holm across a "
           "claim's cells. A cell is informative only if the method the claim says is better (Alg. 2) has a "
           "test error significantly below the majority-class error by the practical margin (docs/claims.md): "
           "a comparator at chance is what Alg. 2 beats, so V1/V2 are decided exactly where the paper's claim "
           "applies. V4 counts the draws above the Lemma 6 line per cell (Clopper–Pearson) and is "
           "VACUOUS when the bound's observed slack exceeds an order of magnitude in every cell."),
        table(claims_view.significant_cells(view, KEY)),
    ]
    section.ledger = [
        md("For every private mechanism: the unit, the sensitivity and the N-L2 parameter "
           "β = ε/Δ actually used, and the ε really given (a party's or a record's), end to end, and "
           "for one validation record (the selection's noised scores)."),
        table(vr.ledger(loaded.tables)),
    ]
    section.deviations = [table(pd.DataFrame(vr.DEVIATIONS, columns=["item", "tag", "choice"]))]
    section.tuning_edges = vr.edges(loaded.tables, cfg)
    return section
