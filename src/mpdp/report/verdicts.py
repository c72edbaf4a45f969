"""The report's first screen: one verdict per claim, as a paper × claim matrix, and per paper a
plain-language conclusion (issue 35; claims contract of issue 33).

Everything here reads one frame with the columns of ``data/results/claims/verdicts.parquet``
(:data:`VERDICT_COLUMNS`: one row per claim and reading). Where that file exists the report reads
it (:func:`load_verdicts`); until the claims engine writes it, :func:`verdicts_from_claims_tables`
— the one adapter, nowhere else — derives the same frame from the per-study claims tables
(:data:`mpdp.claims.COLUMNS`, one row per claim and data set or setting):

* PASS on some data sets and FAIL on none: HOLDS; FAIL on some and PASS on none: FAILS; both:
  MIXED. A claim failing anywhere is never shown as holding because it passes on more data sets;
* neither PASS nor FAIL: INCONCLUSIVE if some cell is inconclusive, else UNINFORMATIVE.

Nothing here knows a study: the sections (:class:`mpdp.report.scaffold.StudySection`) give the
paper names and the anchors the cells link to. No number is typed by hand: the conclusion's counts
and the facts it quotes come from the frame and from the studies' own tables.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from mpdp.errors import InputDataError

#: where the claims engine writes the verdicts (claims contract, issue 33)
VERDICTS_PATH = "data/results/claims/verdicts.parquet"

#: the required columns of the verdicts frame, in the contract's order
VERDICT_COLUMNS: tuple[str, ...] = (
    "study", "claim_id", "reading", "claim", "source", "verdict",
    "n_cells", "n_informative", "n_for", "n_against", "where",
)

#: every verdict, worst first (the display order of the contract)
VERDICT_ORDER: tuple[str, ...] = ("FAILS", "MIXED", "VACUOUS", "INCONCLUSIVE", "UNINFORMATIVE", "HOLDS")

#: what each verdict means, for the matrix's legend
VERDICT_MEANING: dict[str, str] = {
    "HOLDS": "the claim holds wherever the data can decide it",
    "FAILS": "the opposite of the claim holds",
    "MIXED": "holds on some data sets or settings, fails on others",
    "VACUOUS": "true, but only because the bound or statement says nothing",
    "INCONCLUSIVE": "the data cannot decide (interval straddles the threshold, or too few repetitions)",
    "UNINFORMATIVE": "the compared methods are no better than guessing the majority class",
}

#: study -> (reading name -> short label shown in the matrix); unknown readings are shown as they are
_READING_LABELS: dict[str, str] = {"paper's reading": "as printed", "paper": "as printed",
                                   "eq": "equal privacy", "-": "", "": ""}

#: the most words a paper's conclusion may have (issue 35: at most ~120)
MAX_WORDS = 120


# --------------------------------------------------------------------------------------------
# the frame: from verdicts.parquet, or (until it exists) from the per-study claims tables
# --------------------------------------------------------------------------------------------


def aggregate_verdict(cell_verdicts: Sequence[str]) -> str:
    """One claim's verdict from its per-data-set verdicts (PASS/FAIL/INCONCLUSIVE/UNINFORMATIVE).

    A FAIL anywhere makes it FAILS or MIXED, never HOLDS (see the module docstring).
    """
    counts = pd.Series(list(cell_verdicts), dtype=object).value_counts()
    passed, failed = int(counts.get("PASS", 0)), int(counts.get("FAIL", 0))
    if failed and passed:
        return "MIXED"
    if failed:
        return "FAILS"
    if passed:
        return "HOLDS"
    return "INCONCLUSIVE" if counts.get("INCONCLUSIVE", 0) else "UNINFORMATIVE"


def _where(rows: pd.DataFrame) -> str:
    """Plain words: on which data sets / settings the claim fails and holds."""
    parts = []
    for verdict, word in (("FAIL", "fails on"), ("PASS", "holds on")):
        places = [str(d) for d in rows.loc[rows["verdict"] == verdict, "dataset"]]
        if places:
            parts.append(f"{word} {', '.join(dict.fromkeys(places))}")
    return "; ".join(parts)


def verdicts_from_claims_tables(sections: Sequence[object]) -> pd.DataFrame:
    """ADAPTER, until ``data/results/claims/verdicts.parquet`` exists: the verdicts frame
    (:data:`VERDICT_COLUMNS`) from the studies' own claims tables.

    ``sections`` are :class:`~mpdp.report.scaffold.StudySection` objects; each of their
    ``claims_tables`` (reading -> :data:`mpdp.claims.COLUMNS` frame) gives one row per claim and
    reading, aggregated over data sets by :func:`aggregate_verdict`. Sections that did not run or
    have no claims table give no row.
    """
    rows = []
    for section in sections:
        if not section.ran:
            continue
        for reading, claims in section.claims_tables.items():
            if claims is None or claims.empty:
                continue
            for claim_id, group in claims.groupby("claim_id", sort=False):
                informative = group["verdict"].isin(["PASS", "FAIL"]) | (
                    (group["verdict"] == "INCONCLUSIVE") & (group.get("n_reps", 1) != 0))
                rows.append({
                    "study": section.key, "claim_id": str(claim_id), "reading": reading,
                    "claim": str(group["claim"].iloc[0]),
                    "source": section.paper,
                    "verdict": aggregate_verdict(group["verdict"]),
                    "n_cells": len(group), "n_informative": int(informative.sum()),
                    "n_for": int((group["verdict"] == "PASS").sum()),
                    "n_against": int((group["verdict"] == "FAIL").sum()),
                    "where": _where(group),
                })
    return pd.DataFrame(rows, columns=list(VERDICT_COLUMNS))


def read_verdicts_file(path: str | Path) -> pd.DataFrame:
    """``verdicts.parquet`` with its required columns checked (the claims engine's reader
    ``mpdp.claims.tables.read_verdicts`` when it is installed, else the same check here)."""
    try:
        from mpdp.claims.tables import read_verdicts  # type: ignore[import-not-found]
    except ImportError:
        read_verdicts = None
    if read_verdicts is not None:
        return read_verdicts(path)
    try:
        frame = pd.read_parquet(path)
    except Exception as exc:  # noqa: BLE001 - any damage: one message with the rebuild command
        raise InputDataError(f"{path} cannot be read ({type(exc).__name__}: {exc}); rebuild it with "
                             "`snakemake --cores all claims`") from None
    missing = [c for c in VERDICT_COLUMNS if c not in frame.columns]
    if missing:
        raise InputDataError(f"{path} lacks the columns {missing}; rebuild it with "
                             "`snakemake --cores all claims`")
    unknown = sorted(set(frame["verdict"]) - set(VERDICT_ORDER))
    if unknown:
        raise InputDataError(f"{path} has unknown verdicts {unknown}; expected {list(VERDICT_ORDER)}")
    return frame


def load_verdicts(path: str | Path | None, sections: Sequence[object]) -> tuple[pd.DataFrame, str]:
    """The verdicts frame and where it came from: ``path`` (``verdicts.parquet``) when that file
    exists, else :func:`verdicts_from_claims_tables` of ``sections``."""
    if path is not None and Path(path).is_file():
        return read_verdicts_file(path), f"read from `{VERDICTS_PATH}`"
    return verdicts_from_claims_tables(sections), "computed from each study's claims table"


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
    tally = ", ".join(f"{number_words(k)} {_VERDICT_WORDS[v]}" for v, k in counts.items())
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
                  "INCONCLUSIVE": "stay undecided", "UNINFORMATIVE": "cannot be judged (methods at chance)",
                  "HOLDS": "hold"}


def _reading_phrase(first: pd.DataFrame) -> str:
    label = reading_label(first["reading"].iloc[0])
    return f" ({label})" if label else ""


def word_count(text: str) -> int:
    """Words of a markdown sentence (markup and links' targets not counted)."""
    plain = re.sub(r"\]\([^)]*\)", "]", text)
    return len(re.findall(r"[\w.%×≥≤−+-]+", re.sub(r"[*_`\[\]]", "", plain)))
