"""The report's "Robustness to reconstructed choices" (issues 38, 48), in plain words from the
multiverse table; and the mark a paper's summary puts on a fragile verdict.

Everything here is computed from ``data/results/claims/multiverse.parquet``
(:func:`mpdp.multiverse.collect.claim_summary`); the section exists only when that table does.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from mpdp import results
from mpdp.errors import InputDataError
from mpdp.multiverse.collect import COLUMNS, STATUSES, WARNING_SEP, claim_summary

TITLE = "Robustness to reconstructed choices"
ANCHOR = "robustness"
REBUILD = "snakemake --cores all multiverse"


def read(path: str | Path) -> pd.DataFrame | None:
    """The multiverse table, or None when it was not built (the section is then left out)."""
    path = Path(path)
    if not path.is_file():
        return None
    table = results.read_parquet(path, "multiverse table")  # damaged: one line naming the rebuild
    missing = [c for c in COLUMNS if c not in table]
    if missing:
        raise InputDataError(f"{path} lacks columns {missing}: rebuild it with `{REBUILD}`")
    return table


def _claim(row: pd.Series) -> str:
    reading = "" if row["reading"] in ("-", "") else f" ({row['reading']} reading)"
    return f"{row['claim_id']}{reading}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 or noun.isupper() else "s")


def _ids(rows: pd.DataFrame) -> str:
    """Claim ids with their readings (``C1 [paper/eq], V2``)."""
    out = []
    for claim_id, g in rows.groupby("claim_id", sort=False):
        readings = [r for r in g["reading"] if r not in ("-", "")]
        out.append(f"{claim_id} [{'/'.join(readings)}]" if readings else str(claim_id))
    return ", ".join(out)


def intro(table: pd.DataFrame) -> str:
    """What was varied, how, on which grid, against which baseline, and how the reduced default
    compares with the headline (the main build)."""
    alts = table[(table["kind"] == "choice") & (table["outcome"] != "skipped")].drop_duplicates("universe")
    reseeds = table[(table["kind"] == "reseed") & (table["outcome"] != "skipped")].drop_duplicates("universe")
    choices = list(dict.fromkeys(alts["choice"]))
    joint = table[table["kind"] == "joint"].drop_duplicates("universe")
    failed = [uid for uid, g in table.groupby("universe", sort=False) if (g["outcome"] == "failed").all()]
    text = (f"Each of {_count(len(alts), 'alternative value')} of {_count(len(choices), 'reconstructed ([REC]) choice')} "
            f"({', '.join(f'`{c}`' for c in choices)}) was run alone, everything else at the defaults, "
            "through the same claims engine (`snakemake multiverse`, docs/multiverse.md).")
    if not joint.empty:
        text += f" Jointly: {joint['source'].iloc[0]}, counted as alternatives."
    full = "grid" in table.columns and (table["grid"] == "full").any()  # a table from before issue 48 has none
    if full:
        text += (" Every universe runs the headline's own grid (`multiverse.full_grid`): the default universe is the "
                 "main build itself, its tables the main tables above.")
    else:
        text += (" For the time budget every "
                 "universe runs a **reduced grid** (`multiverse.base`: fewer repetitions, fewer ε, m and data sets), so "
                 "the comparison's default is that reduced grid rerun, not the main tables above.")
    summary = claim_summary(table)
    head = summary[summary["headline_verdict"].notna()]
    if not full and head.empty:
        text += (" The main build's verdicts were not there when the table was collected, so the reduced default "
                 "is not compared with the headline.")
    elif not full:
        same = int((head["headline_verdict"] == head["default_verdict"]).sum())
        text += (f" The reduced default gives the headline's verdict for {same} of {_count(len(head), 'claim verdict')}; "
                 "a claim where they differ is **not tested by the robustness run** (both verdicts are shown below).")
    if reseeds.empty:
        text += (" No reseeded default ran (`multiverse.reseeds` is empty), so a verdict change cannot be told from "
                 "the random streams' own variation.")
    else:
        verb = "reruns" if len(reseeds) == 1 else "rerun"
        text += (f" {_count(len(reseeds), 'reseeded default')} ({'; '.join(f'`{v}`' for v in reseeds['value'])}) "
                 f"{verb} the default with other random streams: a verdict change under a choice is **fragile** "
                 "only when no reseeded default already gives the same verdict or a change of the estimate at least as "
                 "large; otherwise it is **within reseeding variation**.")
    text += (" A decisive verdict is **robust** only when every alternative gives it again and at least one of them "
             "changes one of its cells; an alternative that changes no cell of a claim did not test it.")
    if failed:
        text += f" Runs that failed (no verdicts; see their logs under data/multiverse/): {', '.join(failed)}."
    return text


def coverage_paragraph(table: pd.DataFrame) -> str:
    """The alternatives that reached nothing: those whose run reran no job that writes results (no key of the reduced
    grid read) and those that change no cell of any claim ('' when every alternative reached one)."""
    alts = table[table["kind"] != "reseed"]
    no_key = [uid for uid, g in alts.groupby("universe", sort=False) if g["reads_no_key"].all()]
    no_cell = [uid for uid, g in alts.groupby("universe", sort=False)
               if uid not in no_key and (g["assessment"] == "changes no cell").all()]
    repeated = [uid for uid, g in table.groupby("universe", sort=False) if (g["outcome"] == "skipped").all()]
    parts = []
    if repeated:
        parts.append("equal to the default, so not run (a planning warning; not counted): "
                     + ", ".join(f"`{u}`" for u in repeated))
    if no_key:
        parts.append("reran no job that writes results, so no data set or study of the reduced grid reads its key "
                     "(not counted): "
                     + ", ".join(f"`{u}`" for u in no_key))
    if no_cell:
        parts.append("changes no cell of any claim: " + ", ".join(f"`{u}`" for u in no_cell))
    return ("**Coverage.** " + "; ".join(parts) + ".") if parts else ""


def paper_paragraphs(table: pd.DataFrame, papers: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(paper, plain-words paragraph) per study in the table, by :data:`mpdp.multiverse.collect.STATUSES`:
    the studies of ``papers`` (study key -> the paper as the report names it, from the study registry;
    this layer names no study) in its order, then every other study of the table under its key, so
    that no study of the table is left out."""
    summary = claim_summary(table)
    names = dict(papers or {})
    order = [*names, *(k for k in dict.fromkeys(summary["study"].astype(str)) if k not in names)]
    out = []
    for study in order:
        paper = names.get(study, study)
        s = summary[summary["study"] == study]
        if s.empty:
            continue
        by = {status: s[s["status"] == status] for status in STATUSES}
        n_alt = int(s["n_alternatives"].max())
        parts = [f"{_count(len(s), 'claim verdict')} under {_count(n_alt, 'alternative')}."]
        if not by["not tested"].empty:
            parts.append("Not tested by the robustness run (the reduced default differs from the headline): "
                         + ", ".join(f"{_claim(r)} (headline {r['headline_verdict']}, reduced default "
                                     f"{r['default_verdict']})" for _, r in by["not tested"].iterrows()) + ".")
        if not by["robust"].empty:
            parts.append(f"Robust to every alternative ({len(by['robust'])}): "
                         + ", ".join(f"{_claim(r)} {r['default_verdict']} (reached by {r['n_reaching']})"
                                     for _, r in by["robust"].iterrows()) + ".")
        for _, r in by["fragile"].iterrows():
            parts.append(f"**Fragile: {_claim(r)} {r['default_verdict']}** changes under {r['changed_by']} "
                         f"(reseeded defaults: {r['reseed_verdicts'] or 'none'}).")
        if not by["within reseeding variation"].empty:
            parts.append("Changed only within reseeding variation: "
                         + "; ".join(f"{_claim(r)} {r['default_verdict']} under {r['within_reseeding']} "
                                     f"(reseeded: {r['reseed_verdicts']})"
                                     for _, r in by["within reseeding variation"].iterrows()) + ".")
        if not by["not reached"].empty:
            parts.append("Decisive, but no alternative changes any of their cells (not tested by any choice): "
                         + ", ".join(f"{_claim(r)} {r['default_verdict']}" for _, r in by["not reached"].iterrows())
                         + ".")
        if not by["untested"].empty:
            parts.append("Held wherever the alternatives ran, but some runs failed: "
                         + ", ".join(_claim(r) for _, r in by["untested"].iterrows()) + ".")
        undecided = by["undecided"]
        if not undecided.empty:
            groups = [f"{_count(len(g), verdict)} ({_ids(g)})" for verdict, g in undecided.groupby("default_verdict")]
            resolved = undecided[undecided["changed_by"] != ""]
            parts.append("Undecided at the default: " + "; ".join(groups) + (
                ". Decided under an alternative: "
                + "; ".join(f"{_claim(r)}: {r['changed_by']}" for _, r in resolved.iterrows())
                if not resolved.empty else "") + ".")
        out.append((paper, " ".join(parts)))
    return out


def _number(x: float) -> str:
    return "–" if pd.isna(x) else f"{x:+.3g}"


def summary_table(table: pd.DataFrame) -> str:
    """The fragility summary as a Markdown table, one row per claim: both verdicts, the status, and
    kept apart the largest change of the estimate (alternatives vs reseeded defaults), the largest
    loss of informative cells and the changes of verdict class."""
    lines = ["| claim | headline | reduced default | status | reseeded defaults | estimate (default) | "
             "largest estimate change: alternatives / reseeds | informative cells lost | verdict class changes |",
             "|---|---|---|---|---|---|---|---|---|"]
    for _, r in claim_summary(table).iterrows():
        headline = r["headline_verdict"] if pd.notna(r["headline_verdict"]) else "–"
        estimate = "–" if pd.isna(r["default_estimate"]) else f"{r['default_estimate']:.3g}"
        lines.append(f"| {r['study']} {_claim(r)} | {headline} | {r['default_verdict']} | {r['status']} | "
                     f"{r['reseed_verdicts'] or '–'} | {estimate} | {_number(r['max_estimate_change'])} / "
                     f"{_number(r['reseed_estimate_change'])} | {int(r['max_informative_loss'])} | "
                     f"{r['class_changes'] or '–'} |")
    return "\n".join(lines)


def warnings_paragraph(table: pd.DataFrame) -> str:
    """The universes' planning warnings (issue 47): the default's once, then each alternative's
    own (those the default does not have); '' when no run warned."""
    sep = WARNING_SEP
    default = [w for w in str(table["default_warnings"].iloc[0]).split(sep) if w] if len(table) else []
    parts = []
    if default:
        parts.append("the default: " + "; ".join(default))
    for uid, g in table.groupby("universe", sort=False):
        own = [w for w in str(g["warnings"].iloc[0]).split(sep) if w and w not in default]
        if own:
            parts.append(f"`{uid}`: " + "; ".join(own))
    if not parts:
        return ""
    return ("**Warnings of the runs** (planning warnings of each universe; its log under logs/multiverse/ "
            "has them too): " + " — ".join(parts) + ".")


def markdown(table: pd.DataFrame, papers: Mapping[str, str] | None = None) -> str:
    """The section's text (under its heading): intro, one paragraph per paper (:func:`paper_paragraphs`,
    ``papers`` naming them), the fragility summary table, coverage and the runs' warnings."""
    if table.empty:
        return "No alternatives are declared in `multiverse.choices`: nothing was varied."
    extra = [p for p in (coverage_paragraph(table), warnings_paragraph(table)) if p]
    return "\n\n".join([intro(table), *(f"**{paper[0].upper() + paper[1:]}.** {text}" for paper, text in paper_paragraphs(table, papers)),
                         "**Fragility summary** (`data/results/claims/multiverse.parquet`; the estimate is the median "
                         "over a claim's informative cells, docs/multiverse.md):", summary_table(table), *extra])


def fragile_note(table: pd.DataFrame | None, study: str) -> str:
    """One line for a paper's summary naming its fragile verdicts and the choices that change
    them ('' when the multiverse was not run or nothing of this study is fragile)."""
    if table is None or table.empty:
        return ""
    s = claim_summary(table)
    fragile = s[(s["study"] == study) & (s["status"] == "fragile")]
    if fragile.empty:
        return ""
    items = "; ".join(f"{_claim(r)} {r['default_verdict']} (changes under {r['changed_by']})"
                      for _, r in fragile.iterrows())
    return f"**Fragile verdicts** ([§ robustness](#{ANCHOR})): {items}."
