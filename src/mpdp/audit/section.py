"""The empirical privacy audit's report section, in the anatomy of :mod:`mpdp.report.scaffold`.

Tables and sentences come from :mod:`mpdp.audit.report` (spec audit.md); this module arranges them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
from IPython.display import HTML

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
    "Bonferroni-corrected), or by many draws of one canary coordinate over many independent "
    "trainings (method `canary_draws`); the N-L2 output-perturbation release by many noise draws "
    "on worst-case neighbours with Clopper–Pearson intervals (Jagielski et al. 2020; Nasr et al. "
    "2021), the threshold chosen on a separate split. Gradient mechanisms run through the trainer "
    "and calibrations that produce the WD-DP and benchmark tables, with the canaries added by the "
    "trainer's audit hook: the data set gives the party sizes n_j (which set the noise), the "
    "canaries are the audited records, and the real records, zero on the canary coordinates, do "
    "not affect them. The N-L2 pairs are the synthetic worst cases of spec A3 and a real one (a "
    "training set with one label flipped, column \"setting\" names it). PVP is also attacked on a "
    "release that follows a worst-case released history, where its unreleased hidden state "
    "differs between the neighbours (spec I-20). The \"GDP fit\" column is a Gaussian-DP point "
    "estimate from the same scores — a diagnostic, never a bound. Planted-bug rows run the same "
    "code with a deliberate bug: the noise std scaled down, or the largest party's σ given to "
    "every party of the literal mode. Column δ is the δ of each bound: the benchmark's δ for "
    "Gaussian mechanisms and for DVP/PVP transcripts, 0 for single pure-DP releases."
)


def _table(ctx: Mapping[str, Any] | None) -> pd.DataFrame | None:
    path = (ctx or {}).get("table")
    return audit_table.read(path) if path and Path(path).is_file() else None


def headline_note(line: str) -> HTML:
    """The PVP headline (:func:`mpdp.audit.report.pvp_headline`) as a call-out: a warning when the
    claim is proved false."""
    return note(line.replace("**", ""), "warning" if "false" in line else "note")


def pvp_headline(ctx: Mapping[str, Any] | None) -> str:
    """:func:`mpdp.audit.report.pvp_headline` of the audit table (empty: no audit or no PVP attack).

    A headline result: the report repeats it in the ADMM paper's summary and the cross-paper findings.
    """
    frame = _table(ctx)
    return "" if frame is None else ar.pvp_headline(frame)


def pvp_fact(ctx: Mapping[str, Any] | None, rounded: Callable[[float], str]) -> str:
    """The attack on PVP's hidden state (spec I-20) in plain words, for the ADMM paper's
    conclusion (``rounded`` formats numbers for reading); empty: no such attack in this build."""
    frame = _table(ctx)
    if frame is None:
        return ""
    rows = frame[(frame["mechanism"] == "pvp_history") & ~frame["planted_bug"].astype(bool)]
    if rows.empty:
        return ""
    r = rows.loc[(rows["eps_lower"] - rows["eps_claimed"]).idxmax()]
    if r["eps_lower"] > r["eps_claimed"]:
        return (f"Its primal-perturbation variant is not as private as claimed: an attack proves a "
                f"privacy loss of at least {rounded(r['eps_lower'])} per release (95 % confidence), "
                f"above the {rounded(r['eps_claimed'])} it claims.")
    return ("An attack on its primal-perturbation variant did not show more privacy loss than "
            "claimed in this build.")


def build(ctx: Mapping[str, Any] | None) -> StudySection:
    """The audit section from the report context key ``audit`` (absent: not run)."""
    ctx = ctx or {}
    section = StudySection(KEY, TITLE, PAPER, INTRO)
    frame = _table(ctx)
    if frame is None:
        section.not_run = "the audit was not run: no audit table."
        return section
    exceptions = ar.exceptions(frame)
    headline = ar.pvp_headline(frame)
    section.summary_note = " ".join([headline, *ar.findings(frame)] if headline else ar.findings(frame))
    section.method = [md(METHOD)]
    figure = ctx.get("figure")
    section.figures = [FigureItem("audit_eps", "Audit: lower bounds on ε against the claimed and the accounted ε",
                                  figure if figure and Path(figure).is_file() else None)]
    section.claims = [bullets(ar.findings(frame))]
    if headline:
        section.claims.insert(0, headline_note(headline))
    if exceptions:
        section.claims.insert(0, note(["Correctly calibrated mechanisms with ε̂ above their accounted ε:",
                                       *exceptions], "warning"))
    section.ledger = [md("Claimed, accounted and audited ε per mechanism and setting:"), table(ar.summary(frame))]
    section.deviations = [md("Audit parameters (canaries, draws, confidence) are set in the config's "
                             "`audit:` section; see spec audit.md.")]
    return section
