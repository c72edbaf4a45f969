"""The report's first screen: one verdict per claim, as a paper × claim matrix, and per paper a
plain-language conclusion (issue 35; claims contract of issue 33).

Everything here reads one frame: the claims engine's ``data/results/claims/verdicts.parquet``
(:data:`mpdp.claims.tables.VERDICT_COLUMNS`: one row per claim and reading, each verdict taken over
every cell of the grid where the claim is defined; read with :func:`mpdp.claims.tables.read_verdicts`).
A claim failing in any cell is FAILS or MIXED there, never hidden by a majority (docs/claims.md).

Nothing here knows a study: the sections (:class:`mpdp.report.scaffold.StudySection`) give the
paper names and the anchors the cells link to. No number is typed by hand: the conclusion's counts
and the facts it quotes come from the frame and from the studies' own tables.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping, Sequence

import pandas as pd

from mpdp.claims import tables

#: every verdict, worst first (the display order of the contract)
VERDICT_ORDER: tuple[str, ...] = ("FAILS", "MIXED", "VACUOUS", "IDENTICAL", "UNDERPOWERED", "UNINFORMATIVE",
                                  "HOLDS")

#: what each verdict means, for the matrix's legend
VERDICT_MEANING: dict[str, str] = {
    "HOLDS": "the claim holds wherever the data can decide it",
    "FAILS": "the opposite of the claim holds, or no effect beyond the claim's practical margin",
    "MIXED": "holds on some data sets or settings, fails on others",
    "VACUOUS": "true, but only because the bound or statement says nothing",
    "IDENTICAL": "the compared methods give bitwise-equal outputs: identical by construction, not evidence",
    "UNDERPOWERED": "neither an effect nor its absence shown: too few repetitions for the margin (the reason "
                    "says how many would do)",
    "UNINFORMATIVE": "nothing to compare: a method the claim needs is at chance, or its reference has not "
                     "converged (the reason says which)",
}

#: the legend's meaning of a verdict this module does not know (a newer claims engine's)
_OTHER_MEANING = "see the reason under the verdict"

#: verdicts that decide a claim: the matrix shows their support (cells for / against); the others
#: show the claims engine's ``reason`` in words when verdicts.parquet has it
DECISIVE: frozenset[str] = frozenset({"HOLDS", "FAILS", "MIXED"})

#: the most words a paper's conclusion may have (issue 35: at most ~120)
MAX_WORDS = 120


# --------------------------------------------------------------------------------------------
# the matrix
# --------------------------------------------------------------------------------------------


def verdict_counts(frame: pd.DataFrame) -> dict[str, int]:
    """How many claims have each verdict (worst first; verdicts with none left out)."""
    counts = frame["verdict"].astype(str).value_counts()
    order = [*VERDICT_ORDER, *(v for v in counts.index if v not in VERDICT_ORDER)]
    return {v: int(counts[v]) for v in order if counts.get(v, 0)}


def reading_label(reading: str) -> str:
    """The plain name of a reading in the matrix (empty for a study's only reading)."""
    return tables.reading_label(reading)


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def support(row: object) -> str:
    """How much evidence stands behind a verdict, in a few words (issue 46): the cells for or
    against it out of the cells where the claim is defined, both sides for MIXED, and for a verdict
    that decides nothing the claims engine's ``reason`` when the table has one.

    ``row`` is a verdicts.parquet row (an ``itertuples`` record or a Series)."""
    verdict = str(row.verdict)  # type: ignore[attr-defined]
    n_cells, n_for, n_against = (int(getattr(row, c)) for c in ("n_cells", "n_for", "n_against"))
    if verdict == "HOLDS":
        return f"{n_for}/{_count(n_cells, 'cell')} for"
    if verdict == "FAILS":
        return f"{n_against}/{_count(n_cells, 'cell')} against"
    if verdict == "MIXED":
        return f"in part: {n_for} for, {n_against} against"
    reason = getattr(row, "reason", None)
    if isinstance(reason, str) and reason.strip():  # its head only: the whole reason is in the tooltip
        head = reason.strip().split(":")[0].strip()
        needed = pd.to_numeric(getattr(row, "reps_needed", None), errors="coerce")
        if verdict == "UNDERPOWERED" and pd.notna(needed) and needed > 0:
            return f"{head}: ~{int(needed)} reps needed"
        return head
    n_informative = int(row.n_informative)  # type: ignore[attr-defined]
    if verdict == "VACUOUS":
        return f"bound says nothing in {n_informative}/{n_cells}"
    if verdict == "UNINFORMATIVE":
        return f"at chance in {n_cells - n_informative}/{n_cells}"
    if n_cells == 0:
        return "no cell with data"
    return f"undecided in {n_informative}/{n_cells}" if n_informative else f"no informative cell of {n_cells}"


def _short_claim(text: str) -> str:
    """A claim's text without its parenthesised scope (for tool-tips and conclusions), and without a
    leading "Paper:" that the text itself repeats ("WD-DP: WD-DP Alg. 1 beats …" reads "WD-DP Alg. 1
    beats …")."""
    short = re.sub(r"(?<!\bal)\.$", "", re.sub(r"\s*\([^)]*\)", "", str(text)).strip())
    return re.sub(r"^([^:]+): (?=\1\b)", "", short)


def verdict_matrix_html(
    frame: pd.DataFrame,
    papers: Mapping[str, str],
    anchor: Callable[[str, str, str], str],
    forest: Callable[[str, str, str], str | None] | None = None,
) -> str:
    """The verdict matrix: ``<div id="verdicts">``, one row per paper and reading, one coloured
    cell per claim (its id and verdict, the claim's text as tool-tip), each a link to
    ``anchor(study, reading, claim_id)``; then the legend of the verdicts.

    ``papers`` maps a study key to the paper's name and gives the row order; studies of the frame
    not in it follow under their key. Each cell also shows its :func:`support` (issue 46), and
    ``forest`` (study, reading, claim id -> the anchor of the claim's forest plot, or ``None``)
    adds a link "cells" to the picture of that evidence.
    """
    order = list(papers) + [s for s in dict.fromkeys(frame["study"]) if s not in papers]
    rows = []
    for study in order:
        sub = frame[frame["study"] == study]
        for reading, group in sub.groupby("reading", sort=False):
            label = html.escape(papers.get(study, study))
            sub_label = reading_label(reading)
            if sub_label:
                label += f'<br><span class="mpdp-reading">{html.escape(sub_label)}</span>'
            cells = "".join(_matrix_cell(study, reading, r, anchor, forest) for r in group.itertuples())
            rows.append(f'<div class="mpdp-vpaper">{label}</div><div class="mpdp-vrow">{cells}</div>')
    if not rows:
        body = '<p class="mpdp-callout note">No claim could be checked in this build.</p>'
    else:
        body = f'<div class="mpdp-vmatrix">{"".join(rows)}</div>'
    shown = [*VERDICT_ORDER, *(v for v in dict.fromkeys(frame["verdict"].astype(str)) if v not in VERDICT_ORDER)]
    legend = "".join(f'<li><span class="mpdp-vcell v-{html.escape(v)}"><span>{html.escape(v)}</span></span> '
                     f'{html.escape(VERDICT_MEANING.get(v, _OTHER_MEANING))}</li>' for v in shown)
    return f'<div id="verdicts">{body}<ul class="mpdp-vlegend">{legend}</ul></div>'


def _matrix_cell(study: str, reading: str, r: object, anchor: Callable[[str, str, str], str],
                 forest: Callable[[str, str, str], str | None] | None) -> str:
    """One cell: a link to the claim's row (id, verdict, support), and a link to its forest plot."""
    verdict, claim_id, where = str(r.verdict), str(r.claim_id), str(r.where)  # type: ignore[attr-defined]
    reason = _raw_reason(r)
    tip = (f"{_short_claim(r.claim)}: {verdict}" + (f" ({reason})" if reason else "")  # type: ignore[attr-defined]
           + (f" — {where}" if where else ""))
    cell = (f'<a class="mpdp-vcell v-{html.escape(verdict)}" href="#{html.escape(anchor(study, reading, claim_id))}" '
            f'title="{html.escape(tip)}"><b>{html.escape(claim_id)}</b><span>{html.escape(verdict)}</span>'
            f'<small class="mpdp-support">{html.escape(support(r))}</small></a>')
    target = forest(study, reading, claim_id) if forest else None
    if target:  # in the cell's corner, so that the row keeps its height
        cell = (f'<span class="mpdp-vwrap">{cell}<a class="mpdp-forest" href="#{html.escape(target)}" '
                f'title="forest plot: every cell of {html.escape(claim_id)}, its estimate and interval against '
                f'the margin">{FOREST_MARK}</a></span>')
    return cell


#: the mark in a matrix cell's corner that links the claim's forest plot
FOREST_MARK = "▦"


# --------------------------------------------------------------------------------------------
# the plain-language conclusion of one paper
# --------------------------------------------------------------------------------------------


def number_words(n: int) -> str:
    """Small counts in words (``3`` -> ``three``), larger ones as digits."""
    words = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    return words[n] if 0 <= n < len(words) else str(n)


def round_for_reading(x: float) -> str:
    """A number rounded for a reader: two significant digits, no exponent (36, 0.47, 1 200)."""
    if not pd.notna(x):
        return "—"
    magnitude = abs(float(x))
    if magnitude >= 100:
        return f"{round(float(x), -len(str(int(magnitude))) + 2):,.0f}".replace(",", " ")
    return f"{float(x):.2g}" if magnitude >= 1e-3 or magnitude == 0 else f"{float(x):.1e}"


def _claim_text(r: object) -> str:
    text = _short_claim(r.claim)  # type: ignore[attr-defined]
    first = text.split(" ", 1)[0]  # a plain capitalised word starts the sentence; a name stays as it is
    return text[0].lower() + text[1:] if first.isalpha() and first[1:].islower() else text


def _claim_list(rows: pd.DataFrame, counts: Callable[[object], str] | None = None) -> list[str]:
    """The claims' texts in reading order, each once (two claims with the same text are one item
    naming both ids), with ``counts(row)`` in brackets when given."""
    items: dict[str, list[object]] = {}
    for r in rows.itertuples():
        items.setdefault(_claim_text(r), []).append(r)
    out = []
    for text, same in items.items():
        ids = f" ({', '.join(str(r.claim_id) for r in same)})" if len(same) > 1 else ""  # type: ignore[attr-defined]
        shown = [counts(r) for r in same] if counts else []
        out.append(text + ids + (f" ({'; '.join(c for c in shown if c)})" if any(shown) else ""))
    return out


def _against(r: object) -> str:
    return f"fails in {r.n_against} of {_count(int(r.n_cells), 'cell')}" if r.n_cells > 1 else ""  # type: ignore[attr-defined]


def _in_part(r: object) -> str:
    return f"{r.n_for} cells for, {r.n_against} against"  # type: ignore[attr-defined]


def _weak(r: object) -> str:
    return f"on {r.n_for} of {_count(int(r.n_cells), 'cell')}"  # type: ignore[attr-defined]


def why(frame: pd.DataFrame) -> str:
    """One sentence saying why the paper's first reading comes out as it does, from its verdict rows
    alone (issue 46: every paper has one): the first claim that fails (worst first) and where, else
    the verdicts that decide nothing and their reasons, else how thin the support of a claim that
    holds is."""
    if frame.empty:
        return ""
    first = frame[frame["reading"] == frame["reading"].iloc[0]]
    for verdict in ("FAILS", "MIXED"):
        rows = first[first["verdict"] == verdict]
        if not rows.empty:
            r = next(rows.itertuples())
            place = _first_against(str(r.where))
            return (f"Why: the claim that {_claim_text(r)} fails in {r.n_against} of "
                    f"{_count(int(r.n_cells), 'cell')}" + (f", e.g. {place}" if place else "") + ".")
    undecided = first[~first["verdict"].isin(list(DECISIVE))]
    if not undecided.empty and len(undecided) * 2 >= len(first):
        reasons = [_reason(r) for r in undecided.itertuples()]
        common = max(dict.fromkeys(reasons), key=reasons.count)
        return (f"Why: {number_words(len(undecided))} of its {number_words(len(first))} claims decide "
                f"nothing, most often ({number_words(reasons.count(common))}): {common}.")
    holds = first[first["verdict"] == "HOLDS"]
    if not holds.empty:
        r = min(holds.itertuples(), key=lambda x: (x.n_for, -x.n_cells))
        return (f"Why: no cell goes against a claim that holds; the thinnest, {_claim_text(r)}, rests on "
                f"{r.n_for} of {_count(int(r.n_cells), 'cell')}.")
    return ""


#: why a verdict decides nothing, in words, when verdicts.parquet has no ``reason`` for it
_UNDECIDED_WHY: dict[str, str] = {
    "UNINFORMATIVE": "a method the claim needs is at chance, or its reference has not converged",
    "UNDERPOWERED": "too few repetitions to show an effect or its absence beyond the claim's margin",
    "IDENTICAL": "the compared methods are identical by construction",
    "VACUOUS": "the bound says nothing",
}


def _reason(r: object) -> str:
    """The claims engine's ``reason`` of a verdict, else what its verdict means in words."""
    reason = getattr(r, "reason", None)
    if isinstance(reason, str) and reason.strip():
        return reason.strip()
    verdict = str(r.verdict)  # type: ignore[attr-defined]
    return _UNDECIDED_WHY.get(verdict, verdict.lower())


def _first_against(where: str) -> str:
    """The first place named after "against:" in a verdict's ``where`` (empty when none)."""
    match = re.search(r"against: ([^;]+)", where)
    return match[1].strip() if match else ""


def _tally(rows: pd.DataFrame) -> str:
    return ", ".join(f"{number_words(k)} {_verdict_words(v, k)}{_why(rows, v)}"
                     for v, k in verdict_counts(rows).items())


def conclusion(frame: pd.DataFrame, paper: str, facts: Sequence[str] = ()) -> str:
    """A paper's conclusion in plain words, at most :data:`MAX_WORDS` words: how many claims hold,
    fail or stay undecided (its first reading), which ones with their support (a claim that holds
    in one cell of many says so), the ``facts`` its study computes (already rounded sentences) or,
    without any, :func:`why`, and for every further reading its tally. Lists are cut short ("and
    two more") to keep within the limit."""
    if frame.empty:
        return f"**{paper}.** No claim could be checked in this build."
    first = frame[frame["reading"] == frame["reading"].iloc[0]]
    n = len(first)
    head = f"**{paper}.** Of its {number_words(n)} claim{'s' if n != 1 else ''}{_reading_phrase(first)}, " \
           f"{_tally(first)}."
    reasons = [f for f in facts if f] or [why(frame)]

    def sentence(prefix: str, items: list[str], limit: int) -> str:
        if not items:
            return ""
        shown = items[:limit]
        more = len(items) - len(shown)
        return prefix + "; ".join(shown) + (f"; and {number_words(more)} more" if more else "") + "."

    others = []
    for reading, rows in frame.groupby("reading", sort=False):
        if reading == first["reading"].iloc[0]:
            continue
        others.append(f"{reading_label(reading).capitalize() or str(reading)}: {_tally(rows)}.")

    def compose(limit: int) -> str:
        fails = _claim_list(first[first["verdict"] == "FAILS"], _against)
        mixed = _claim_list(first[first["verdict"] == "MIXED"], _in_part)
        holds = _claim_list(first[first["verdict"] == "HOLDS"], _weak)
        return " ".join(filter(None, [head, sentence("Fails: ", fails, limit),
                                      sentence("Holds in part: ", mixed, limit),
                                      sentence("Holds: ", holds, limit), *others, *reasons]))

    for limit in (6, 4, 3, 2, 1, 0):
        text = compose(limit)
        if word_count(text) <= MAX_WORDS:
            return text
    return " ".join(filter(None, [head, *others, *reasons]))


#: verdict -> (the verb phrase for one claim, for several)
_VERDICT_WORDS: dict[str, tuple[str, str]] = {
    "FAILS": ("fails", "fail"), "MIXED": ("holds only in part", "hold only in part"),
    "VACUOUS": ("is vacuous", "are vacuous"),
    "IDENTICAL": ("compares identical methods", "compare identical methods"),
    "UNDERPOWERED": ("is underpowered", "are underpowered"),
    "UNINFORMATIVE": ("cannot be judged", "cannot be judged"),
    "HOLDS": ("holds", "hold"),
}


def _verdict_words(verdict: str, n: int) -> str:
    one, many = _VERDICT_WORDS.get(verdict, (f"is {verdict.lower()}", f"are {verdict.lower()}"))
    return one if n == 1 else many


def _raw_reason(row: object) -> str:
    """A verdict row's ``reason`` (verdicts.parquet), empty when it has none."""
    text = str(getattr(row, "reason", "") or "")
    return "" if text in ("nan", "<NA>", "None") else text


def _why(rows: pd.DataFrame, verdict: str) -> str:
    """The distinct reasons of the rows with an UNINFORMATIVE verdict, in words (``reason`` column):
    "at chance", "reference unconverged", "no data" — never a blanket "methods at chance"."""
    if verdict != "UNINFORMATIVE" or "reason" not in rows:
        return ""
    heads = [_raw_reason(r).split(" (")[0] for r in rows[rows["verdict"] == verdict].itertuples()]
    heads = list(dict.fromkeys(h for h in heads if h))
    return f" ({', '.join(heads)})" if heads else ""


def _reading_phrase(first: pd.DataFrame) -> str:
    label = reading_label(first["reading"].iloc[0])
    return f" ({label})" if label else ""


def word_count(text: str) -> int:
    """Words of a markdown sentence (markup and links' targets not counted)."""
    plain = re.sub(r"\]\([^)]*\)", "]", text)
    return len(re.findall(r"[\w.%×≥≤−+-]+", re.sub(r"[*_`\[\]]", "", plain)))
