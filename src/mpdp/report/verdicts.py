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

from mpdp.claims.maps import COLOURS as MAP_COLOURS
from mpdp.report import names

#: every verdict, worst first (the display order of the contract)
VERDICT_ORDER: tuple[str, ...] = ("FAILS", "MIXED", "VACUOUS", "IDENTICAL", "UNDERPOWERED", "UNINFORMATIVE",
                                  "HOLDS")

#: what each verdict means, for the matrix's legend: the claims engine's counting rules
#: (docs/claims.md "Verdicts"; a cell is *for* when its interval excludes effects smaller than the
#: claim's margin δ in the claimed direction, *against* beyond δ the other way, *no effect* within ±δ)
VERDICT_MEANING: dict[str, str] = {
    "HOLDS": "cells for the claim, none against it or with no effect",
    "FAILS": "cells against the claim or with no effect, none for it",
    "MIXED": "cells for the claim, and cells against it or with no effect",
    "VACUOUS": "true, but only because the bound says nothing",
    "IDENTICAL": "the compared methods give bitwise-equal outputs: identical by construction, not evidence",
    "UNDERPOWERED": "no cell decides: too few repetitions for the claim's margin (the reason says how many "
                    "would do)",
    "UNINFORMATIVE": "nothing to compare: a method the claim needs is at chance, or its reference has not "
                     "converged",
}

#: the legend's meaning of a verdict this module does not know (a newer claims engine's)
_OTHER_MEANING = "see the reason under the verdict"

#: verdicts that decide a claim (cells for, against or with no effect)
DECISIVE: frozenset[str] = frozenset({"HOLDS", "FAILS", "MIXED"})

#: the most words a paper's conclusion may have (issue 35: at most ~120)
MAX_WORDS = 120

#: what a verdict is made of (issue 59): cell verdict -> (count column, words), in bar order
_PARTS: dict[str, tuple[str, str]] = {
    "for": ("n_for", "for"),
    "against": ("n_against", "against"),
    "no_effect": ("n_no_effect", "no effect"),
    "underpowered": ("n_underpowered", "underpowered"),
    "identical": ("n_identical", "identical"),
    "uninformative": ("n_uninformative", "uninformative"),
}
#: cell verdict -> (count column, bar colour, words): the colours are the verdict maps' own
#: (:data:`mpdp.claims.maps.COLOURS`, the one source), so a bar and a map square of a verdict agree
COMPOSITION: dict[str, tuple[str, str, str]] = {v: (column, MAP_COLOURS[v][1], words)
                                                for v, (column, words) in _PARTS.items()}
#: the count columns of a verdict row the report reads (the engine's, else counted from the cells)
COUNT_COLUMNS: tuple[str, ...] = (*(c for c, _, _ in COMPOSITION.values()), "n_no_data")


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
    return names.reading(reading)


def with_composition(verdicts: pd.DataFrame, cells: pd.DataFrame | None = None) -> pd.DataFrame:
    """``verdicts`` with every column of :data:`COUNT_COLUMNS` and a ``hedge`` column.

    A column verdicts.parquet has is kept; one it lacks (an older claims engine's) is counted from
    ``cells`` (cells.parquet: the rows of each claim and reading with that cell verdict), and
    without cells ``n_uninformative`` is what is left of ``n_cells`` after the informative, identical
    and no-data cells. ``hedge`` (the paper's own qualifier of a claim) is empty where absent."""
    out = verdicts.copy()
    key = ["study", "claim_id", "reading"]
    counted = None
    if cells is not None and not cells.empty and not out.empty:
        counted = (cells.assign(_n=1).pivot_table(index=key, columns="cell_verdict", values="_n", aggfunc="sum",
                                                  fill_value=0, observed=True))
    for verdict, column in [*((v, c) for v, (c, _, _) in COMPOSITION.items()), ("no_data", "n_no_data")]:
        if column in out and out[column].notna().all():
            out[column] = out[column].astype(int)
            continue
        if counted is not None:
            values = counted[verdict] if verdict in counted else pd.Series(0, index=counted.index)
            found = [int(values.get(tuple(k), 0)) for k in out[key].astype(str).itertuples(index=False)]
            fresh = pd.Series(found, index=out.index)
        elif column == "n_uninformative":
            rest = out["n_cells"].astype(int) - out["n_informative"].astype(int)
            rest -= out["n_identical"].astype(int) if "n_identical" in out else 0
            rest -= out["n_no_data"].astype(int) if "n_no_data" in out else 0
            fresh = rest.clip(lower=0)
        else:
            fresh = pd.Series(0, index=out.index)
        out[column] = (out[column].fillna(fresh) if column in out else fresh).astype(int)
    hedge = out["hedge"] if "hedge" in out else pd.Series("", index=out.index)
    out["hedge"] = hedge.map(lambda h: "" if not isinstance(h, str) else h.strip())
    return out


def _n(row: object, column: str) -> int:
    value = getattr(row, column, 0)
    return int(value) if pd.notna(value) else 0


def bar_css() -> str:
    """The CSS of the composition bars' segments and swatches (class ``c-<cell verdict>``), in the colours
    of :data:`COMPOSITION`."""
    return "\n".join(f".c-{v} {{ background: {colour}; }}" for v, (_, colour, _) in COMPOSITION.items())


def composition(row: object) -> list[tuple[str, int]]:
    """(cell verdict, count) of a verdict row, in :data:`COMPOSITION` order, counts > 0 only."""
    return [(v, _n(row, c)) for v, (c, _, _) in COMPOSITION.items() if _n(row, c) > 0]


def composition_words(row: object) -> str:
    """The counts in words: "18 for, 5 against, 36 underpowered, 1 uninformative" (no-data cells too)."""
    parts = [f"{k} {COMPOSITION[v][2]}" for v, k in composition(row)]
    if _n(row, "n_no_data"):
        parts.append(f"{_n(row, 'n_no_data')} without data")
    return ", ".join(parts) or "no cell"


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def support(row: object) -> str:
    """What a verdict is made of, in plain words a reader outside DP can read (issue 59): "holds in
    18 of 59 cells that can decide; 36 need more repetitions".

    The cells that can decide are the informative ones (for, against, no effect, underpowered);
    ``row`` is a verdicts.parquet row after :func:`with_composition` (an ``itertuples`` record or a
    Series)."""
    verdict = str(row.verdict)  # type: ignore[attr-defined]
    n_cells, n_inf = _n(row, "n_cells"), _n(row, "n_informative")
    n_for, n_against, n_none = _n(row, "n_for"), _n(row, "n_against"), _n(row, "n_no_effect")
    n_under, n_uninf, n_ident = _n(row, "n_underpowered"), _n(row, "n_uninformative"), _n(row, "n_identical")
    of = f"of {n_inf} cell{'s' if n_inf != 1 else ''} that can decide"
    fails = f"{n_against} against, {n_none} with no effect"
    if verdict == "HOLDS":
        head = f"holds in {n_for} {of}"
    elif verdict == "FAILS":
        head = f"fails in {n_against + n_none} {of} ({fails}), holds in none"
    elif verdict == "MIXED":
        head = f"holds in {n_for} {of}, fails in {n_against + n_none} ({fails})"
    elif verdict == "UNDERPOWERED":
        needed = pd.to_numeric(getattr(row, "reps_needed", None), errors="coerce")
        head = f"no cell decides: {n_under} {of} need more repetitions" + (
            f" (about {int(needed)} each)" if pd.notna(needed) and needed > 0 else "")
        n_under = 0
    elif verdict == "IDENTICAL":
        head = f"the compared methods are identical by construction in {n_ident} of {_count(n_cells, 'cell')}"
        n_ident = 0
    elif verdict == "VACUOUS":
        head = f"the bound says nothing in any of the {n_inf} cells that can decide"
    elif verdict == "UNINFORMATIVE":
        why = names.prose(_raw_reason(row), verdict)
        head = (f"none of its {_count(n_cells, 'cell')} can be judged" if n_cells else "no cell with data") + (
            f": {why}" if why and why != "no data" else "")
        n_uninf = 0
    else:
        why = names.prose(_raw_reason(row), verdict)
        head = why or f"{n_inf} {of.removeprefix('of ')}"
    tail = [f"{n_under} need{'s' if n_under == 1 else ''} more repetitions" if n_under else "",
            f"{n_uninf} cannot be judged" if n_uninf else "",
            f"{n_ident} identical by construction" if n_ident else "",
            f"{_n(row, 'n_no_data')} without data" if _n(row, "n_no_data") and verdict != "UNINFORMATIVE" else ""]
    return "; ".join([head, *(t for t in tail if t)])


def _short_claim(text: str) -> str:
    """A claim's text without its parenthesised scope (for tool-tips and conclusions), and without a
    leading "Paper:" that the text itself repeats ("WD-DP: WD-DP Alg. 1 beats …" reads "WD-DP Alg. 1
    beats …")."""
    short = re.sub(r"(?<!\bal)\.$", "", re.sub(r"\s*\([^)]*\)", "", str(text)).strip())
    return re.sub(r"^([^:]+): (?=\1\b)", "", short)


def composition_html(row: object) -> str:
    """The stacked bar of a verdict's composition: one segment per cell verdict, as wide as its
    count, each with its count as tool-tip (:data:`COMPOSITION`)."""
    parts = composition(row)
    segments = "".join(f'<i class="c-{v}" style="flex-grow:{k}" title="{k} {html.escape(COMPOSITION[v][2])}"></i>'
                       for v, k in parts)
    return (f'<span class="mpdp-comp" role="img" aria-label="{html.escape(composition_words(row))}">'
            f"{segments}</span>")


def legend_html(verdicts_shown: Sequence[str]) -> str:
    """The legend: every verdict with its rule, then the colours of the composition bars."""
    items = "".join(f'<li><span class="mpdp-vcell v-{html.escape(v)}"><span>{html.escape(v)}</span></span> '
                    f'{html.escape(VERDICT_MEANING.get(v, _OTHER_MEANING))}</li>' for v in verdicts_shown)
    bars = "".join(f'<li><i class="mpdp-swatch c-{v}"></i>{html.escape(words)}</li>'
                   for v, (_, _, words) in COMPOSITION.items())
    return (f'<ul class="mpdp-vlegend">{items}</ul><ul class="mpdp-vlegend mpdp-clegend"><li>Bar under each '
            f"cell, its cells:</li>{bars}<li>(for: the interval excludes effects smaller than the claim's margin "
            "in the claimed direction; against: beyond it the other way; no effect: within the margin; "
            "underpowered: none of these)</li></ul>")


def verdict_matrix_html(
    frame: pd.DataFrame,
    papers: Mapping[str, str],
    anchor: Callable[[str, str, str], str],
    forest: Callable[[str, str, str], str | None] | None = None,
) -> str:
    """The verdict matrix: ``<div id="verdicts">``, one row per paper and reading, one coloured
    cell per claim (its id, its verdict and the stacked bar of its composition; tool-tip: the
    claim's text, its hedge, the counts and :func:`support`), each a link to
    ``anchor(study, reading, claim_id)``; then the legend of the verdicts and of the bars.

    ``papers`` maps a study key to the paper's name and gives the row order; studies of the frame
    not in it follow under their key. ``forest`` (study, reading, claim id -> the anchor of the
    claim's forest plot, or ``None``) adds a link to the picture of that evidence.
    """
    frame = with_composition(frame)
    order = list(papers) + [s for s in dict.fromkeys(frame["study"]) if s not in papers]
    rows = []
    for study in order:
        sub = frame[frame["study"] == study]
        for reading, group in sub.groupby("reading", sort=False):
            label = html.escape(papers.get(study, study))
            sub_label = reading_label(reading)
            if sub_label:
                label += f' <span class="mpdp-reading">{html.escape(sub_label)}</span>'
            cells = "".join(_matrix_cell(study, reading, r, anchor, forest) for r in group.itertuples())
            rows.append(f'<div class="mpdp-vpaper">{label}</div><div class="mpdp-vrow">{cells}</div>')
    if not rows:
        body = '<p class="mpdp-callout note">No claim could be checked in this build.</p>'
    else:
        body = f'<div class="mpdp-vmatrix">{"".join(rows)}</div>'
    shown = [*VERDICT_ORDER, *(v for v in dict.fromkeys(frame["verdict"].astype(str)) if v not in VERDICT_ORDER)]
    return f'<div id="verdicts">{body}{legend_html(shown)}</div>'


def _matrix_cell(study: str, reading: str, r: object, anchor: Callable[[str, str, str], str],
                 forest: Callable[[str, str, str], str | None] | None) -> str:
    """One cell: a link to the claim's row (id, verdict, composition bar), and a link to its forest plot."""
    verdict, claim_id, where = str(r.verdict), str(r.claim_id), str(r.where)  # type: ignore[attr-defined]
    hedge = str(getattr(r, "hedge", "") or "")
    where = names.prose(where)
    tip = (f"{_short_claim(r.claim)}" + (f" — the paper: “{hedge}”" if hedge else "")  # type: ignore[attr-defined]
           + f"\n{verdict}: {support(r)}\ncells: {composition_words(r)}" + (f"\n{where}" if where else ""))
    mark = '<sup class="mpdp-hedge" title="the paper qualifies this claim">*</sup>' if hedge else ""
    cell = (f'<a class="mpdp-vcell v-{html.escape(verdict)}" href="#{html.escape(anchor(study, reading, claim_id))}" '
            f'title="{html.escape(tip)}"><b>{html.escape(claim_id)}{mark}</b><span>{html.escape(verdict)}</span>'
            f"{composition_html(r)}</a>")
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
    text = text[0].lower() + text[1:] if first.isalpha() and first[1:].islower() else text
    hedge = str(getattr(r, "hedge", "") or "").strip()
    return f"{text} ({hedge}, the paper says)" if hedge else text


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


def _decide(r: object) -> str:
    n = _n(r, "n_informative")
    return f"{n} cell{'s' if n != 1 else ''} that can decide"


def _against(r: object) -> str:
    n = _n(r, "n_against") + _n(r, "n_no_effect")
    return f"fails in {n} of {_decide(r)}" if _n(r, "n_informative") > 1 else ""


def _in_part(r: object) -> str:
    return (f"{_n(r, 'n_for')} cells for, {_n(r, 'n_against')} against, {_n(r, 'n_no_effect')} with no effect, "
            f"of {_decide(r)}")


def _weak(r: object) -> str:
    return f"in {_n(r, 'n_for')} of {_decide(r)}"


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
            place = names.prose(_first_against(str(r.where)))
            return (f"Why: the claim that {_claim_text(r)} fails in {_n(r, 'n_against') + _n(r, 'n_no_effect')} "
                    f"of {_decide(r)}" + (f", e.g. {place}" if place else "") + ".")
    undecided = first[~first["verdict"].isin(list(DECISIVE))]
    if not undecided.empty and len(undecided) * 2 >= len(first):
        reasons = [_reason(r) for r in undecided.itertuples()]
        common = max(dict.fromkeys(reasons), key=reasons.count)
        return (f"Why: {number_words(len(undecided))} of its {number_words(len(first))} claims decide "
                f"nothing, most often ({number_words(reasons.count(common))}): {common}.")
    holds = first[first["verdict"] == "HOLDS"]
    if not holds.empty:
        r = min(holds.itertuples(), key=lambda x: (x.n_for, -x.n_informative))
        return (f"Why: no cell goes against a claim that holds; the thinnest, {_claim_text(r)}, rests on "
                f"{r.n_for} of {_decide(r)}.")
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
    verdict = str(r.verdict)  # type: ignore[attr-defined]
    reason = names.prose(_raw_reason(r), verdict)
    if reason:
        return reason
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
    heads = [names.prose(_raw_reason(r).split(" (")[0], verdict) for r in rows[rows["verdict"] == verdict].itertuples()]
    heads = list(dict.fromkeys(h for h in heads if h))
    return f" ({', '.join(heads)})" if heads else ""


def _reading_phrase(first: pd.DataFrame) -> str:
    label = reading_label(first["reading"].iloc[0])
    return f" ({label})" if label else ""


def word_count(text: str) -> int:
    """Words of a markdown sentence (markup and links' targets not counted)."""
    plain = re.sub(r"\]\([^)]*\)", "]", text)
    return len(re.findall(r"[\w.%×≥≤−+-]+", re.sub(r"[*_`\[\]]", "", plain)))
