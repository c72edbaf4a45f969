"""One anatomy for every study's report section, and the one renderer that draws it (spec E3.4, §16).

Every study (``studies/<study>/section.py``, the audit in ``audit/section.py``) builds a
:class:`StudySection` from its results: its method, its figures, its claims, its privacy
ledger, its deviations and [REC] choices, and its tuning-edge warnings
(:func:`mpdp.tuning.edge_warnings`). :func:`render` turns it into the report's display
objects, always in that order and with stable anchors:

* ``#<key>`` the section, ``#<key>-method`` … ``#<key>-deviations`` its parts;
* ``#fig-<name>`` every figure (``<name>`` is the figure file's stem);
* ``#claim-<key>-<id>`` every claim row of the study's claims table (``#claim-<key>-<reading>-<id>``
  for the readings after the first).

Each part is collapsed under its heading (details one click away); the report opens with the
verdicts of :mod:`mpdp.report.verdicts`. The HTML headings and figures carry ``data-toc`` so that :mod:`mpdp.report.build` lists them in the
report's table of contents. Nothing here knows a study.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from IPython.display import HTML, Markdown

from mpdp.claims.tables import VERDICT_ORDER, paper_order
from mpdp.report import images, names, verdicts
from mpdp.report.sections import callout, details, html_table, verdict_summary

Block = HTML | Markdown

#: the parts of a section, in the order every section shows them: (attribute, anchor, heading)
PARTS: tuple[tuple[str, str, str], ...] = (
    ("method", "method", "Method"),
    ("figures", "figures", "Figures"),
    ("claims", "claims", "Claims"),
    ("ledger", "ledger", "Privacy ledger"),
    ("deviations", "deviations", "Deviations and [REC] choices"),
)


def md(text: str) -> Markdown:
    """A markdown block."""
    return Markdown(text)


def raw(text: str) -> HTML:
    """An HTML block (already escaped)."""
    return HTML(text)


def table(frame: pd.DataFrame) -> HTML:
    """A table block (:func:`mpdp.report.sections.html_table`)."""
    return HTML(html_table(frame))


def note(lines: list[str] | str, kind: str = "info") -> HTML:
    """A call-out block (:func:`mpdp.report.sections.callout`)."""
    return HTML(callout(lines, kind))


def bullets(lines: Sequence[str]) -> Markdown:
    """A markdown bullet list."""
    return Markdown("\n".join(f"- {line}" for line in lines))


def slug(text: str) -> str:
    """A stable anchor fragment: lower case; runs of characters other than a-z, 0-9, _ become ``-``."""
    return re.sub(r"[^a-z0-9_]+", "-", str(text).lower()).strip("-") or "x"


def heading(level: int, anchor: str, text: str, toc: bool = True) -> HTML:
    """An HTML heading with a stable id (listed in the table of contents when ``toc``)."""
    mark = f' data-toc="{level}"' if toc else ""
    return HTML(f'<h{level} id="{anchor}"{mark}>{html.escape(text)}</h{level}>')


@dataclass(frozen=True)
class FigureItem:
    """One figure of a section: a PNG file (or its bytes), its caption and what follows it."""

    name: str  # file stem, the anchor is ``fig-<name>``
    caption: str  # plain text: shown under the image and used as its alt text
    path: str | None = None
    data: bytes | None = None  # PNG bytes of a figure drawn in memory
    missing: str = ""  # shown instead of the image when there is none
    missing_kind: str = "warning"
    after: tuple[Block, ...] = ()  # blocks shown under the figure (observations, verdicts)

    def image(self) -> bytes | None:
        if self.data is not None:
            return self.data
        if self.path and Path(self.path).is_file():
            return Path(self.path).read_bytes()
        return None


@dataclass
class StudySection:
    """What one study shows in the report, part by part (see the module docstring)."""

    key: str  # stable anchor of the section: "wddp", "admm", …
    title: str  # the section's heading
    paper: str  # the paper, as the summaries name it
    intro: str = ""  # markdown under the heading
    not_run: str = ""  # non-empty: the study did not run in this build, and why
    method: list[Block | FigureItem] = field(default_factory=list)
    figures: list[Block | FigureItem] = field(default_factory=list)
    #: reading -> the study's verdict rows of that reading (data/results/claims/verdicts.parquet,
    #: :func:`mpdp.report.claims_view.study_readings`); the first reading is the paper's
    claims_tables: Mapping[str, pd.DataFrame | None] = field(default_factory=dict)
    claims: list[Block | FigureItem] = field(default_factory=list)  # the study's own claim tables
    ledger: list[Block | FigureItem] = field(default_factory=list)
    deviations: list[Block | FigureItem] = field(default_factory=list)
    #: :func:`mpdp.tuning.edge_warnings` of the study's tuning; None: the study tunes nothing
    tuning_edges: pd.DataFrame | None = None
    #: a verdict row's ``figures`` cell -> the names of the figures it refers to
    figure_names: Callable[[str], list[str]] | None = None
    #: a sentence the summary adds after the verdicts (e.g. what survives another reading)
    summary_note: str = ""
    #: plain-language sentences for the paper's conclusion on the first screen (numbers rounded,
    #: no spec or seed ids; :func:`mpdp.report.verdicts.conclusion`)
    facts: list[str] = field(default_factory=list)
    #: the results tables the section was computed from, by name (the provenance section lists
    #: how their rows were computed, :func:`mpdp.report.provenance.engine_paths`)
    results: dict[str, pd.DataFrame] = field(default_factory=dict)
    #: the study's verdict map (reports/figures/claims_map_<study>.png), linked from the summary
    claims_map: str | None = None
    #: the study's forest plots, one per claim and reading: (name, PNG path, caption)
    #: (:func:`mpdp.report.claims_view.forest_items`), under the map in the Claims part
    forests: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def ran(self) -> bool:
        return not self.not_run

    def claim_anchor(self, claim_id: str, reading: int = 0) -> str:
        """Anchor of a claim's row (reading index 0 is the paper's)."""
        readings = list(self.claims_tables)
        middle = f"{slug(readings[reading])}-" if reading and reading < len(readings) else ""
        return f"claim-{self.key}-{middle}{slug(claim_id)}"

    def figures_of(self, cell: str) -> list[str]:
        """Names of this section's figures a claims table's ``figures`` cell refers to."""
        parts = (self.method, self.figures, self.claims, self.ledger, self.deviations)
        shown = {item.name for part in parts for item in part if isinstance(item, FigureItem)}
        if self.figure_names is not None:
            names = self.figure_names(cell)
        else:
            names = [part.strip() for part in re.split(r"[,;]", str(cell))]
        return [name for name in names if name in shown]


# --------------------------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------------------------


def block_html(block: Block) -> str:
    """The HTML of one block (markdown rendered by nbconvert's own renderer, as in the page)."""
    if isinstance(block, Markdown):
        from nbconvert.filters.markdown_mistune import markdown2html_mistune

        return markdown2html_mistune(block.data)
    return block.data


def pdf_href(item: FigureItem, report_dir: str | Path | None) -> str | None:
    """The link to a figure's PDF (next to its PNG), relative to the report's folder; None: no PDF."""
    if not item.path:
        return None
    pdf = Path(item.path).with_suffix(".pdf")
    if not pdf.is_file():
        return None
    if report_dir is None:
        return pdf.resolve().as_uri()
    return Path(os.path.relpath(pdf.resolve(), Path(report_dir).resolve())).as_posix()


def figure_html(item: FigureItem, report_dir: str | Path | None = None) -> str:
    """``<figure id="fig-<name>">`` with the image embedded (:func:`mpdp.report.images.data_uri`).

    The figure is listed in the table of contents (``data-toc="4"``); a click on the image shows it
    at full size (the report's inline script), and the caption links the PDF when there is one
    (relative to ``report_dir``, the report's folder; None: an absolute ``file:`` link).
    """
    png = item.image()
    anchor = f"fig-{slug(item.name)}"
    caption = html.escape(item.caption)
    toc = f'data-toc="4" data-toc-label="{html.escape(item.name)}"'
    if png is None:
        message = item.missing or f"{item.name} was not built."
        return f'<figure id="{anchor}" class="mpdp-figure" {toc}>{callout(message, item.missing_kind)}</figure>'
    pdf = pdf_href(item, report_dir)
    links = ' <span class="mpdp-figlinks">(click the image to enlarge' + (
        f'; <a href="{html.escape(pdf)}">PDF</a>' if pdf else "") + ")</span>"
    return (
        f'<figure id="{anchor}" class="mpdp-figure" {toc}><img class="mpdp-zoomable" '
        f'src="{images.data_uri(png)}" alt="{caption}" title="click to enlarge">'
        f'<figcaption><b>{html.escape(item.name)}.</b> {caption}{links}</figcaption></figure>'
    )


#: caption of every study's verdict map (reports/figures/claims_map_<study>.png, :mod:`mpdp.claims.maps`)
MAP_CAPTION = ("Verdict map: one row per claim (and reading), one square per cell of the grid where the claim "
               "is defined, coloured by the cell's verdict after Holm's correction across the claim's cells; "
               "grey: uninformative (the method that must be above chance is not, by the practical margin; or an "
               "unconverged reference), blue: the compared methods bitwise identical, orange: no effect beyond "
               "the claim's margin, yellow: underpowered. Columns of "
               "different rows are different cells.")


def claims_rows_html(section: StudySection) -> str:
    """Per reading: one anchored row per claim, its verdict over all its cells, the counts and where."""
    parts = []
    for index, (reading, claims) in enumerate(section.claims_tables.items()):
        label = f"<p><b>{html.escape(reading)}</b></p>" if reading else ""
        if claims is None or claims.empty:
            parts.append(label + callout("No claims check: no results.", "note"))
            continue
        counts = verdict_summary(claims)
        ids = [section.claim_anchor(cid, index) for cid in counts["id"]]
        parts.append(label + html_table(counts, row_ids=ids))
    return "".join(parts)


def tuning_html(edges: pd.DataFrame | None) -> str:
    """The tuning-edge check as a short sentence and, when values sit on an edge, a table."""
    if edges is None:
        return "<p><b>Tuning.</b> No tuning-edge check is reported by this study's report module.</p>"
    if edges.empty:
        return "<p><b>Tuning.</b> No tuned value lies on an edge of its grid.</p>"
    frame = pd.DataFrame({
        "parameter": edges["parameter"], "setting": edges["setting"], "value": edges["value"],
        "edge": edges["edge"],
        "grid": [f"[{lo:g}, {hi:g}]" for lo, hi in zip(edges["grid_min"], edges["grid_max"], strict=True)],
    })
    return (f'<p><b>Tuning — warning: {len(frame)} tuned value{"s" if len(frame) != 1 else ""} on an edge of '
            "the grid</b> (the optimum may lie outside it):</p>" + html_table(frame))


def part_html(section: StudySection, attribute: str, anchor: str, title: str,
              report_dir: str | Path | None = None) -> str:
    """One part of a section as a collapsed ``<details>`` whose summary is the part's heading."""
    inner: list[str] = []
    if attribute == "claims":
        inner.append(claims_rows_html(section))
        if section.claims_map:
            inner.append(figure_html(FigureItem(f"claims_map_{section.key}", MAP_CAPTION, section.claims_map),
                                     report_dir))
        if section.forests:
            plots = "".join(figure_html(FigureItem(name, caption, png), report_dir)
                            for name, png, caption in section.forests)
            inner.append(details(f"Forest plots: the evidence of each claim, cell by cell "
                                 f"({len(section.forests)})", plots))
    if attribute == "deviations":
        inner.append(tuning_html(section.tuning_edges))
    for item in getattr(section, attribute):
        if isinstance(item, FigureItem):
            inner.append(figure_html(item, report_dir))
            inner.extend(block_html(block) for block in item.after)
        else:
            inner.append(block_html(item))
    count = sum(isinstance(item, FigureItem) for item in getattr(section, attribute))
    hint = f' <span class="mpdp-count">({count} figure{"s" if count != 1 else ""})</span>' if count else ""
    head = heading(3, f"{section.key}-{anchor}", title).data
    return (f'<details class="mpdp-part"><summary>{head}{hint}</summary>'
            f'<div class="mpdp-part-body">{"".join(inner)}</div></details>')


def render(section: StudySection, report_dir: str | Path | None = None) -> list[Block]:
    """The section's display objects: heading, intro, then every part in :data:`PARTS` order, each
    collapsed under its heading (:func:`part_html`: details one click away)."""
    out: list[Block] = [heading(2, section.key, section.title)]
    if section.intro:
        out.append(md(section.intro))
    if not section.ran:
        out.append(note(section.not_run, "note"))
        return out
    out.extend(raw(part_html(section, attribute, anchor, title, report_dir)) for attribute, anchor, title in PARTS)
    return out


# --------------------------------------------------------------------------------------------
# summaries computed from the claims tables
# --------------------------------------------------------------------------------------------


def _claim_link(section: StudySection, claim_id: str, text: str) -> str:
    return f"[{claim_id}](#{section.claim_anchor(claim_id)}) ({text.rstrip('.')})"


def _figure_links(section: StudySection, row: pd.Series) -> str:
    if "figures" not in row or not str(row["figures"]).strip():  # a claim that names no figure
        return ""
    return ", ".join(f"[{n}](#fig-{slug(n)})" for n in section.figures_of(row["figures"]))


def claim_outcome(rows: pd.DataFrame) -> str:
    """The verdict of a claim (its verdict row; the worst if several rows are given).

    The engine's verdict spans all the claim's cells (:mod:`mpdp.claims.engine`); a FAILS or
    MIXED claim is never outvoted by data sets where it holds.
    """
    verdicts = [str(v) for v in rows["verdict"]]
    return min(verdicts, key=lambda v: VERDICT_ORDER.index(v) if v in VERDICT_ORDER else len(VERDICT_ORDER))


def paper_summary(section: StudySection) -> str:
    """A few sentences on what replicates and what does not, from the paper's verdict rows.

    The claims are listed worst first (:func:`mpdp.claims.tables.paper_order`): every claim that
    FAILS or is MIXED anywhere comes before any that HOLDS, with where its cells against lie;
    then the undecided ones; then what replicates. Each claim links to its row and figures, and
    the study's verdict map is linked.
    """
    link = f"[§ {section.title}](#{section.key})"
    if not section.ran:
        return f"**{section.paper}.** Not run in this build ({link}): {section.not_run}"
    reading, claims = next(iter(section.claims_tables.items()), ("", None))
    if claims is None or claims.empty:
        return f"**{section.paper}** ({link}). {section.summary_note or 'No claim could be checked.'}"
    ordered = paper_order(claims)
    totals = {v: int((ordered["verdict"] == v).sum()) for v in VERDICT_ORDER}
    where = f" on {reading}" if reading else ""
    map_link = f"; [verdict map](#fig-claims_map_{slug(section.key)})" if section.claims_map else ""
    sentences = [f"**{section.paper}.** {len(ordered)} claims checked{where} ({link}{map_link}): "
                 + ", ".join(f"{n} {v}" for v, n in totals.items() if n) + "."]

    ordered = verdicts.with_composition(ordered)

    def described(row: pd.Series) -> str:
        figures = _figure_links(section, row)
        return (_claim_link(section, str(row["claim_id"]), str(row["claim"]))
                + f" — {row['verdict']}: {verdicts.support(row)} ({verdicts.composition_words(row)}; "
                  f"{names.prose(str(row['where']))})"
                + (f"; see {figures}" if figures else ""))

    bad = [described(r) for _, r in ordered.iterrows() if r["verdict"] in ("FAILS", "MIXED")]
    if bad:
        sentences.append("Does not replicate everywhere: " + "; ".join(bad) + ".")
    open_claims = [f"[{r['claim_id']}](#{section.claim_anchor(str(r['claim_id']))}) ({r['verdict']}: "
                   f"{verdicts.support(r)})"
                   for _, r in ordered.iterrows()
                   if r["verdict"] in ("VACUOUS", "IDENTICAL", "UNDERPOWERED", "UNINFORMATIVE")]
    if open_claims:
        sentences.append("Not decided by the data (vacuous, identical by construction, underpowered or "
                         "uninformative, with the reason): "
                         + ", ".join(open_claims) + ".")
    held = [described(r) for _, r in ordered.iterrows() if r["verdict"] == "HOLDS"]
    if held:
        sentences.append("Replicates: " + "; ".join(held) + ".")
    if section.summary_note:
        sentences.append(section.summary_note)
    return " ".join(sentences)


def glance(sections: Sequence[StudySection]) -> str:
    """Claims at a glance, all studies and readings: one row per claim, linked to its row."""
    frames = []
    for section in sections:
        if not section.ran or not section.claims_tables:
            frames.append(pd.DataFrame([{"study": section.paper, "reading": "—", "id": "—",
                                         "claim": section.not_run or "no claims check", "verdict": "—"}]))
            continue
        for index, (reading, claims) in enumerate(section.claims_tables.items()):
            if claims is None or claims.empty:
                continue
            counts = verdict_summary(claims)
            counts.insert(0, "reading", reading or "—")
            counts.insert(0, "study", section.paper)
            counts["_anchor"] = [section.claim_anchor(cid, index) for cid in counts["id"]]
            frames.append(counts)
    if not frames:
        return callout("No study ran: no claim to show.", "note")
    frame = pd.concat(frames, ignore_index=True)
    column = frame.pop("_anchor") if "_anchor" in frame else [None] * len(frame)
    anchors = [f"#{a}" if isinstance(a, str) else None for a in column]
    return html_table(frame, links={"id": anchors})
