"""The parts every study's report section is made of: HTML tables, call-outs, claims summaries.

Study-agnostic (spec experiments.md E3.4, §16): each study's ``report`` module computes its
tables and sentences from its results; this module only formats them. No number is typed by
hand here.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from mpdp.report import names, verdicts

# --------------------------------------------------------------------------------------------
# claims tables
# --------------------------------------------------------------------------------------------


#: columns of a claims summary row (from verdicts.parquet, :mod:`mpdp.claims.tables`): the verdict, what it
#: is made of in words and in counts (issue 59), where its cells lie
SUMMARY_COLUMNS: list[str] = ["id", "claim", "verdict", "in words", "for", "against", "no effect", "underpowered",
                              "uninformative", "cells", "where"]


def verdict_summary(claims: pd.DataFrame) -> pd.DataFrame:
    """Per claim (verdict rows of one reading): its verdict over all its cells, what it is made of
    (:func:`mpdp.report.verdicts.support`, the counts of :data:`mpdp.report.verdicts.COMPOSITION`) and
    where its cells lie (display names, :func:`mpdp.report.names.prose`). A claim the paper itself
    qualifies carries the hedge after its text.

    The verdict is the claims engine's (:func:`mpdp.claims.engine.claim_verdict`): never a
    majority over data sets.
    """
    if claims.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    rows = verdicts.with_composition(claims).reset_index(drop=True)
    claim = [f"{c} — the paper: “{h}”" if h else str(c) for c, h in zip(rows["claim"], rows["hedge"], strict=True)]
    return pd.DataFrame({
        "id": rows["claim_id"], "claim": claim, "verdict": rows["verdict"],
        "in words": [verdicts.support(r) for r in rows.itertuples()],
        "for": rows["n_for"], "against": rows["n_against"], "no effect": rows["n_no_effect"],
        "underpowered": rows["n_underpowered"], "uninformative": rows["n_uninformative"], "cells": rows["n_cells"],
        "where": [names.prose(str(w)) for w in rows["where"]],
    })[SUMMARY_COLUMNS]


def studies_at_a_glance(claims_by_study: Mapping[str, pd.DataFrame | None]) -> pd.DataFrame:
    """One row per (study, claim): its verdict and counts (:func:`verdict_summary`).

    ``claims_by_study`` maps a study's name to its verdict rows (verdicts.parquet); a study
    that did not run (None or empty) gets one row saying so, so the glance table never hides a
    missing study.
    """
    frames = []
    for study, claims in claims_by_study.items():
        if claims is None or claims.empty:
            frames.append(pd.DataFrame([{"study": study, "id": "—", "claim": "not run in this build",
                                         "verdict": "—"}]))
            continue
        counts = verdict_summary(claims)
        counts.insert(0, "study", study)
        frames.append(counts)
    if not frames:
        return pd.DataFrame(columns=["study", *SUMMARY_COLUMNS])
    return pd.concat(frames, ignore_index=True)



def _grouped(value: float) -> str:
    """A whole number with thin-space thousands separators (494 000, not 4.940e+05)."""
    return f"{round(value):,d}".replace(",", "\u2009")


def format_number(value: Any) -> str:
    """Numbers for HTML tables: magnitudes from 10 000 on as whole numbers with thousands separators,
    others to 4 significant digits; scientific notation only for magnitudes below 10⁻³."""
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return _grouped(int(value)) if abs(int(value)) >= 10_000 else str(int(value))
    if isinstance(value, float | np.floating):
        if math.isnan(value):
            return "—"
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        if abs(value) >= 1e4:  # no exponent: 45 990, not 4.599e+04
            return _grouped(float(value))
        if value != 0 and abs(value) < 1e-3:
            return f"{value:.3e}"
        return f"{value:.4g}"
    return "—" if value is None or value is pd.NA else str(value)


# --------------------------------------------------------------------------------------------
# HTML snippets
# --------------------------------------------------------------------------------------------

#: CSS of the report's tables and call-outs (inline: the report loads nothing)
REPORT_CSS = """
<style>
.mpdp-scroll { max-width: 100%; overflow-x: auto; margin: 0.4em 0 1em 0; }
.mpdp-table { border-collapse: collapse; font-size: 0.85em; margin: 0; }
.mpdp-table td { max-width: 32em; overflow-wrap: anywhere; }
.jp-RenderedHTMLCommon .mpdp-table th, .jp-RenderedHTMLCommon .mpdp-table td,
.mpdp-table th, .mpdp-table td { border: 1px solid #d0d0d0; padding: 3px 7px; text-align: left;
  vertical-align: top; }
.mpdp-table th { background: #f3f3f3; }
.mpdp-table td.v-PASS, .mpdp-table td.v-HOLDS, .mpdp-table td.v-for { background: #e3f4e6; }
.mpdp-table td.v-FAIL, .mpdp-table td.v-FAILS, .mpdp-table td.v-against { background: #fbe3e3; }
.mpdp-table td.v-MIXED { background: #f9d9c4; }
.mpdp-table td.v-VACUOUS { background: #e6e0f3; }
.mpdp-table td.v-UNDERPOWERED, .mpdp-table td.v-underpowered { background: #fff5d6; }
.mpdp-table td.v-no_effect { background: #f7e6da; }
.mpdp-table td.v-IDENTICAL, .mpdp-table td.v-identical { background: #e0ecf4; }
.mpdp-table td.v-UNINFORMATIVE, .mpdp-table td.v-uninformative { background: #ececec; color: #555; }
.v-HOLDS { background: #cdebd3; color: #10381a; }
.v-FAILS { background: #f4b6b6; color: #4d0b0b; }
.v-MIXED { background: #f9d3a5; color: #4a2a00; }
.v-VACUOUS { background: #dcd0ef; color: #2c1a4d; }
.v-UNDERPOWERED { background: #fff0b3; color: #3d3200; }
.v-IDENTICAL { background: #d3e3ef; color: #12304a; }
.v-UNINFORMATIVE { background: #e3e3e3; color: #333; }
div.mpdp-vmatrix { display: grid; grid-template-columns: minmax(5em, 8.5em) 1fr;
  gap: 3px 10px; align-items: center; margin: 0.4em 0; }
.mpdp-vpaper { font-weight: 600; line-height: 1.15; font-size: 0.9em; }
.mpdp-reading { font-weight: 400; font-size: 0.9em; color: #555; white-space: nowrap; }
.mpdp-vrow { display: flex; flex-wrap: wrap; gap: 3px; }
a.mpdp-vcell, span.mpdp-vcell { display: inline-flex; flex-direction: column; align-items: stretch;
  min-width: 4.6em; padding: 1px 14px 2px 4px; border-radius: 4px; text-decoration: none; font-size: 0.74em;
  line-height: 1.2; border: 1px solid rgba(0,0,0,0.15); box-sizing: border-box; }
a.mpdp-vcell > b, a.mpdp-vcell > span { white-space: nowrap; }
a.mpdp-vcell:hover { outline: 2px solid #1f5fa8; }
.mpdp-comp { display: flex; height: 6px; margin-top: 2px; background: #fff; border: 1px solid rgba(0,0,0,0.25);
  border-radius: 2px; overflow: hidden; }
.mpdp-comp i { display: block; min-width: 2px; }
/* composition bars */
i.mpdp-swatch { display: inline-block; width: 14px; height: 8px; border: 1px solid rgba(0,0,0,0.25); }
sup.mpdp-hedge { font-weight: 400; }
.v-IDENTICAL, .v-UNDERPOWERED { background: #f0ead8; color: #3d3200; }
span.mpdp-vwrap { display: inline-flex; position: relative; }
a.mpdp-forest { position: absolute; top: 1px; right: 2px; font-size: 0.72em; line-height: 1; color: #1f5fa8;
  text-decoration: none; }
a.mpdp-forest:hover { outline: 1px solid #1f5fa8; }
ul.mpdp-vlegend { list-style: none; padding: 0; margin: 0.2em 0 0.2em 0; font-size: 0.8em; line-height: 1.25;
  display: flex; flex-wrap: wrap; gap: 1px 14px; }
ul.mpdp-vlegend li { display: flex; align-items: center; gap: 5px; }
ul.mpdp-vlegend .mpdp-vcell { padding: 0 4px; min-width: 0; }
ul.mpdp-clegend { margin-bottom: 0.8em; color: #333; }
.mpdp-callout { border-left: 6px solid #1f5fa8; background: #eef4fb; padding: 8px 14px;
  margin: 0.6em 0; }
.mpdp-callout.warning { border-color: #c62828; background: #fdecea; font-weight: 600; font-size: 0.9em;
  line-height: 1.35; padding: 5px 12px; }
.mpdp-callout.note { border-color: #8a6d00; background: #fff8e1; }
pre.mpdp-pre { background: #f7f7f7; padding: 8px; font-size: 0.85em; overflow-x: auto; }
</style>
""".replace("/* composition bars */", verdicts.bar_css())  # the verdict maps' colours (mpdp.report.verdicts)

#: a cell that starts with a verdict (claim verdicts, the audit's PASS/FAIL) or is a cell verdict
_VERDICT_CELL = re.compile(r"<td>(HOLDS|FAILS|MIXED|VACUOUS|PASS|FAIL|IDENTICAL|UNDERPOWERED|UNINFORMATIVE)(?=[<:\s])"
                           r"|<td>(for|against|no_effect|no effect|underpowered|identical|uninformative)(?=</td>)")


def html_table(
    frame: pd.DataFrame,
    row_ids: Sequence[str | None] | None = None,
    links: Mapping[str, Sequence[str | None]] | None = None,
) -> str:
    """A results table as escaped HTML; verdict cells are coloured.

    ``row_ids`` gives each body row an ``id`` (an anchor; None: no id); ``links`` maps a column
    to one ``href`` per row, and that column's cells become links (None: plain text).
    """
    if frame.empty:
        return '<p class="mpdp-callout note">No rows.</p>'
    cells = frame.map(lambda value: html.escape(format_number(value)))
    for column, hrefs in (links or {}).items():
        cells[column] = [
            f'<a href="{html.escape(href)}">{cell}</a>' if href else cell
            for cell, href in zip(cells[column], hrefs, strict=True)
        ]
    text = cells.to_html(index=False, escape=False, border=0, classes="mpdp-table")
    if row_ids is not None:
        head, body = text.split("<tbody>", 1)
        rows = body.split("<tr>")
        rows[1:] = [
            (f'<tr id="{html.escape(rid)}">' if rid else "<tr>") + row
            for rid, row in zip(row_ids, rows[1:], strict=True)
        ]
        text = head + "<tbody>" + "".join(rows)
    text = _VERDICT_CELL.sub(lambda m: f'<td class="v-{(m[1] or m[2]).replace(" ", "_")}">{m[1] or m[2]}', text)
    return f'<div class="mpdp-scroll">{text}</div>'  # a wide table scrolls inside the column


def callout(lines: list[str] | str, kind: str = "info") -> str:
    """A highlighted box (``info``, ``note`` or ``warning``) with escaped text, one line per item."""
    items = [lines] if isinstance(lines, str) else lines
    body = "<br>".join(html.escape(line) for line in items)
    return f'<div class="mpdp-callout {kind}">{body}</div>'


def pre(text: str) -> str:
    """Preformatted, escaped text (commands, config)."""
    return f'<pre class="mpdp-pre">{html.escape(text)}</pre>'


def details(summary: str, body_html: str) -> str:
    """A collapsed block (no script needed) with an escaped summary line."""
    return f"<details><summary>{html.escape(summary)}</summary>{body_html}</details>"
