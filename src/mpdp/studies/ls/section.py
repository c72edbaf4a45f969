"""The least-squares write-up's report section, in the anatomy of :mod:`mpdp.report.scaffold`.

Tables and sentences come from :mod:`mpdp.studies.ls.report`; this module arranges them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpdp.report import claims_view
from mpdp.report.scaffold import FigureItem, StudySection, bullets, heading, md, note, table
from mpdp.studies.ls import claims as ls_claims
from mpdp.studies.ls import report as lr

KEY = "ls"
TITLE = "Least-squares write-up (seed 002): what it gets right and wrong"
PAPER = "least-squares write-up"
INTRO = (
    "A short unpublished write-up proposes two multi-party protocols for private least squares: "
    "**naive sufficient-statistics perturbation** (each of t parties adds Gaussian noise to its "
    "XᵀX and Xᵀy, the aggregator solves the summed system; spec M14) and a **multi-party noisy "
    "SGD** (spec M15), and analyses the first one's expected excess risk. The replication "
    "implements both protocols as written and corrected, measures the excess risk over many noise "
    "draws, and checks the write-up's statements against the corrected analysis of spec bounds.md "
    "B8. LS-1 and LS-2 use synthetic data **by design** (spec E6: verification experiments with "
    "known structure; they are not stand-ins for real data); LS-3 uses scikit-learn's bundled "
    "diabetes regression set."
)

ANALYSIS = (
    "**The corrected analysis (bounds.md B8).** For any output θ, L(θ) − L(θ*) = "
    "(θ − θ*)ᵀXᵀX(θ − θ*) exactly. With a Gaussian in the denominator the expectation of this "
    "excess is **infinite**, so the figures show the **median** (with a distribution-free 95 % "
    "interval) and the sample mean only as markers. The delta method linearises "
    "θ − θ* ≈ (XᵀX)⁻¹(z₂ − Z₁θ*): for d = 1 the excess is then (s₂² + θ*²s₁²)/c(D) × χ²₁, whose "
    "median is 0.455 × that mean. The aggregated noise std is s = √t·σ for t independent parties "
    "(the algorithm) and t·σ in the write-up's analysis."
)

CAPTIONS = {
    "ls_1": ("LS-1 (d = 1, synthetic by design): median (line, band) and mean (open markers) excess "
             "risk vs ε per t, delta-method medians (dotted), the printed formula (dashed, incorrect); "
             "bottom: running mean over draws (heavy tail), growth with t, σ₂ = 0 ablation"),
    "ls_2": "LS-2 (d = 10, synthetic by design): SSP vs noisy SGD, median excess vs ε",
    "ls_3": "LS-3 (diabetes, real data): SSP vs noisy SGD, median excess vs ε",
}

NEGATIVE = (
    "Settings of LS-1's σ₂ = 0 ablation (noise on XᵀX only; not a private configuration, it "
    "isolates the term the write-up gets wrong) and any private setting where the write-up's "
    "closed form is negative, against the measured excess risk, which is always positive."
)

CLAIMS = (
    "Same engine and verdict rules as every study (docs/claims.md); the tables keep per-setting "
    "summaries, so each cell's interval is the study's own (the median's distribution-free interval, "
    "the mean's normal one). **LS1-formula**: the printed closed form equals "
    "the measured mean excess (expected FAIL). **LS1-delta**: the delta-method median equals the "
    "measured median where s₁ ≤ κ·c(D). **LS1-t**, **LS1-t2**, **LS1-t-writeup**: fitted exponent "
    "of the median excess in t. **LS-sgd**: noisy SGD has a smaller median excess than SSP, per ε "
    "(measured, not asserted); a cell is informative only if both beat releasing θ = 0."
)


def build(ctx: Mapping[str, Any] | None, cfg: Mapping[str, Any],
          view: claims_view.ClaimsTables = claims_view.EMPTY) -> StudySection:
    """The least-squares section from its entry of the report context (``ctx["studies"]["ls"]``) and
    the claims tables (absent: not run)."""
    res = lr.load(dict(ctx) if ctx else None)
    section = StudySection(KEY, TITLE, PAPER, INTRO)
    if res is None:
        section.not_run = ("the least-squares study was not run (no `ls:` section in the config, "
                           "or its outputs are absent).")
        return section
    section.claims_tables = claims_view.study_readings(view, KEY, figures=ls_claims.FIGURES)
    section.claims_map = view.maps.get(KEY)
    section.method = [note(lr.data_lines(res), "info"), md("**What the write-up claims and what is wrong.**"),
                      table(lr.issues_table()), md(ANALYSIS)]
    section.figures = [FigureItem(exp, caption, res.figures.get(exp), missing=f"Figure {exp} was not built.",
                                  missing_kind="note") for exp, caption in CAPTIONS.items()]
    section.figures += [md("**What the measurements show.**"), bullets(lr.findings(res)),
                        heading(4, f"{KEY}-negative", "Where the printed closed form is negative", toc=False),
                        md(NEGATIVE), table(lr.negative_table(res))]
    section.claims = [
        md(CLAIMS),
        md(f"Margins: LS1-formula ±{100 * ls_claims.FORMULA_MARGIN:g} %, LS1-delta "
           f"±{100 * ls_claims.DELTA_MARGIN:g} %, exponents ±{ls_claims.SLOPE_MARGIN:g}; "
           f"κ = {cfg['ls']['validity_ratio']:g}."),
        md("Cells significantly for or against a claim (Holm across each claim's cells):"),
        table(claims_view.significant_cells(view, KEY, limit=80)),
    ]
    section.ledger = [table(lr.ledger(res))]
    section.deviations = [table(lr.reconstructed_choices(dict(cfg)))]
    return section
