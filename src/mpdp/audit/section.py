"""The empirical privacy audit's report section, in the anatomy of :mod:`mpdp.report.scaffold`.

Tables and sentences come from :mod:`mpdp.audit.report` (spec audit.md); this module arranges them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mpdp.audit import report as ar
from mpdp.audit import table as audit_table
from mpdp.report.scaffold import FigureItem, StudySection, bullets, md, note, table

KEY = "audit"
TITLE = "Empirical privacy audit"
PAPER = "privacy audit"
INTRO = (
    "An audit can only **falsify** a privacy claim (spec audit.md): it returns ε̂, a lower bound "
    "on the true ε that holds with probability ≥ 95 %. ε̂ above the claimed ε proves the claim "
    "false; ε̂ below it proves nothing."
)

METHOD = (
    "Gradient mechanisms are audited in one run with white-box Dirac gradient canaries on extra "
    "coordinates (Steinke, Nasr, Jagielski 2023; guess counts fixed in advance, "
    "Bonferroni-corrected); the N-L2 output-perturbation release by many noise draws on worst-case "
    "neighbours with Clopper–Pearson intervals (Jagielski et al. 2020; Nasr et al. 2021), the "
    "threshold chosen on a separate split. The data: for gradient mechanisms the data set gives "
    "the party sizes n_j (which set the noise), the canaries are the audited records, and only "
    "the canary coordinates are simulated (the real records are zero there, so they do not affect "
    "them); the N-L2 pairs are the synthetic worst cases of spec A3 and a real one (a training set "
    "with one label flipped, column \"setting\" names it). The \"GDP fit\" column is a Gaussian-DP "
    "point estimate from the same scores — a diagnostic, never a bound. Planted-bug rows run the "
    "same code with the noise std scaled down."
)


def build(ctx: Mapping[str, Any] | None) -> StudySection:
    """The audit section from the report context key ``audit`` (absent: not run)."""
    ctx = ctx or {}
    section = StudySection(KEY, TITLE, PAPER, INTRO)
    path = ctx.get("table")
    if not path or not Path(path).is_file():
        section.not_run = "the audit was not run: no audit table."
        return section
    frame = audit_table.read(path)
    exceptions = ar.exceptions(frame)
    section.summary_note = " ".join(ar.findings(frame))
    section.method = [md(METHOD)]
    figure = ctx.get("figure")
    section.figures = [FigureItem("audit_eps", "Audit: lower bounds on ε against the claimed and the accounted ε",
                                  figure if figure and Path(figure).is_file() else None)]
    section.claims = [bullets(ar.findings(frame))]
    if exceptions:
        section.claims.insert(0, note(["Correctly calibrated mechanisms with ε̂ above their accounted ε:",
                                       *exceptions], "warning"))
    section.ledger = [md("Claimed, accounted and audited ε per mechanism and setting:"), table(ar.summary(frame))]
    section.deviations = [md("Audit parameters (canaries, draws, confidence) are set in the config's "
                             "`audit:` section; see spec audit.md.")]
    return section
