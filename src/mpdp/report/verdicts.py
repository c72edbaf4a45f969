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

#: study -> (reading name -> short label shown in the matrix); unknown readings are shown as they are
_READING_LABELS: dict[str, str] = {"paper's reading": "as printed", "paper": "as printed",
                                   "eq": "equal privacy", "-": "", "": ""}

#: the most words a paper's conclusion may have (issue 35: at most ~120)
MAX_WORDS = 120


# --------------------------------------------------------------------------------------------
# the matrix
# --------------------------------------------------------------------------------------------


def verdict_counts(frame: pd.DataFrame) -> dict[str, int]:
    """How many claims have each verdict (worst first; verdicts with none left out)."""
    counts = frame["verdict"].value_counts()
    return {v: int(counts[v]) for v in VERDICT_ORDER if counts.get(v, 0)}


def reading_label(reading: str) -> str:
    """The short label of a reading in the matrix (empty for a study's only reading)."""
    return _READING_LABELS.get(str(reading), str(reading))


def _short_claim(text: str) -> str:
    """A claim's text without its parenthesised scope (for tool-tips and conclusions)."""
    return re.sub(r"(?<!\bal)\.$", "", re.sub(r"\s*\([^)]*\)", "", str(text)).strip())


def verdict_matrix_html(
    frame: pd.DataFrame,
    papers: Mapping[str, str],
    anchor: Callable[[str, str, str], str],
) -> str:
    """The verdict matrix: ``<div id="verdicts">``, one row per paper and reading, one coloured
    cell per claim (its id and verdict, the claim's text as tool-tip), each a link to
    ``anchor(study, reading, claim_id)``; then the legend of the verdicts.

    ``papers`` maps a study key to the paper's name and gives the row order; studies of the frame
    not in it follow under their key.
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
            cells = "".join(
                f'<a class="mpdp-vcell v-{html.escape(r.verdict)}" href="#{html.escape(anchor(study, reading, r.claim_id))}" '
                f'title="{html.escape(_short_claim(r.claim))}: {html.escape(r.verdict)}'
                f'{" (" + html.escape(_reason(r)) + ")" if _reason(r) else ""}'
                f'{" — " + html.escape(str(r.where)) if str(r.where) else ""}">'
                f'<b>{html.escape(r.claim_id)}</b><span>{html.escape(r.verdict)}</span></a>'
                for r in group.itertuples())
            rows.append(f'<div class="mpdp-vpaper">{label}</div><div class="mpdp-vrow">{cells}</div>')
    if not rows:
        body = '<p class="mpdp-callout note">No claim could be checked in this build.</p>'
    else:
        body = f'<div class="mpdp-vmatrix">{"".join(rows)}</div>'
    legend = "".join(f'<li><span class="mpdp-vcell v-{v}"><span>{v}</span></span> {html.escape(VERDICT_MEANING[v])}</li>'
                     for v in VERDICT_ORDER)
    return f'<div id="verdicts">{body}<ul class="mpdp-vlegend">{legend}</ul></div>'


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


def _claim_list(rows: pd.DataFrame, with_where: bool) -> list[str]:
    items = []
    for r in rows.itertuples():
        text = _short_claim(r.claim)
        text = text[0].lower() + text[1:] if text[:2].isalpha() and not text[:2].isupper() else text
        if with_where and r.n_cells > 1:
            text += f" (fails on {r.n_against} of {r.n_cells})"
        items.append(text)
    return items


def conclusion(frame: pd.DataFrame, paper: str, facts: Sequence[str] = ()) -> str:
    """A paper's conclusion in plain words, at most :data:`MAX_WORDS` words: how many claims hold,
    fail or stay undecided (its first reading), which ones, and the ``facts`` its study computes
    (already rounded sentences), and for every further reading its tally. Lists are cut short
    ("and two more") to keep within the limit."""
    if frame.empty:
        return f"**{paper}.** No claim could be checked in this build."
    first = frame[frame["reading"] == frame["reading"].iloc[0]]
    counts = verdict_counts(first)
    n = len(first)
    tally = ", ".join(f"{number_words(k)} {_VERDICT_WORDS[v]}{_why(first, v)}" for v, k in counts.items())
    head = f"**{paper}.** Of its {number_words(n)} claims{_reading_phrase(first)}, {tally}."

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
        tally_other = ", ".join(f"{number_words(k)} {_VERDICT_WORDS[v]}" for v, k in verdict_counts(rows).items())
        others.append(f"{reading_label(reading).capitalize() or str(reading)}: {tally_other}.")

    def compose(limit: int) -> str:
        holds = _claim_list(first[first["verdict"] == "HOLDS"], with_where=False)
        fails = _claim_list(first[first["verdict"].isin(["FAILS", "MIXED"])], with_where=True)
        return " ".join(filter(None, [head, sentence("Fails: ", fails, limit),
                                      sentence("Holds: ", holds, limit), *others, *facts]))

    for limit in (6, 4, 3, 2, 1, 0):
        text = compose(limit)
        if word_count(text) <= MAX_WORDS:
            return text
    return " ".join(filter(None, [head, *others, *facts]))


_VERDICT_WORDS = {"FAILS": "fail", "MIXED": "hold only in part", "VACUOUS": "are vacuous",
                  "IDENTICAL": "compare identical methods", "UNDERPOWERED": "are underpowered",
                  "UNINFORMATIVE": "cannot be judged", "HOLDS": "hold"}


def _reason(row: object) -> str:
    """A verdict row's ``reason`` (verdicts.parquet), empty when it has none."""
    text = str(getattr(row, "reason", "") or "")
    return "" if text in ("nan", "<NA>", "None") else text


def _why(rows: pd.DataFrame, verdict: str) -> str:
    """The distinct reasons of the rows with an UNINFORMATIVE verdict, in words (``reason`` column):
    "at chance", "reference unconverged", "no data" — never a blanket "methods at chance"."""
    if verdict != "UNINFORMATIVE" or "reason" not in rows:
        return ""
    heads = [_reason(r).split(" (")[0] for r in rows[rows["verdict"] == verdict].itertuples()]
    heads = list(dict.fromkeys(h for h in heads if h))
    return f" ({', '.join(heads)})" if heads else ""


def _reading_phrase(first: pd.DataFrame) -> str:
    label = reading_label(first["reading"].iloc[0])
    return f" ({label})" if label else ""


def word_count(text: str) -> int:
    """Words of a markdown sentence (markup and links' targets not counted)."""
    plain = re.sub(r"\]\([^)]*\)", "]", text)
    return len(re.findall(r"[\w.%×≥≤−+-]+", re.sub(r"[*_`\[\]]", "", plain)))
