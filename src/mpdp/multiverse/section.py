"""The report's "Robustness to reconstructed choices" (issue 38), in plain words from the
multiverse table; and the mark a paper's summary puts on a fragile verdict.

Everything here is computed from ``data/results/claims/multiverse.parquet``
(:func:`mpdp.multiverse.collect.claim_summary`); the section exists only when that table does.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mpdp import results
from mpdp.errors import InputDataError
from mpdp.multiverse.collect import COLUMNS, WARNING_SEP, claim_summary

#: study key -> the paper as the report names it
PAPERS: dict[str, str] = {
    "wddp": "Kang, Liu and Wang (WD-DP)",
    "admm": "Zhang and Zhu (ADMM)",
    "voting": "Hamm, Cao and Belkin (voting)",
    "ls": "the least-squares write-up",
    "benchmark": "the cross-paper benchmark",
}
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
    """What was varied, how, and what the default here is."""
    alts = table.drop_duplicates("universe")
    choices = list(dict.fromkeys(alts["choice"]))
    failed = [uid for uid, g in table.groupby("universe", sort=False) if (g["outcome"] == "failed").all()]
    text = (f"Each of {_count(len(alts), 'alternative value')} of {_count(len(choices), 'reconstructed ([REC]) choice')} "
            f"({', '.join(f'`{c}`' for c in choices)}) was run alone, everything else at the defaults, "
            "through the same claims engine (`snakemake multiverse`, docs/multiverse.md). The comparison's "
            "default is the multiverse's own run with its reduced base (`multiverse.base`: fewer repetitions, "
            "smaller grids), so its verdicts can differ from the main tables above. A verdict is **robust** when "
            "every alternative gives it again, **fragile** when one flips it, weakens it to UNDERPOWERED or IDENTICAL or "
            "makes the claim uninformative.")
    if failed:
        text += f" Runs that failed (no verdicts; see their logs under data/multiverse/): {', '.join(failed)}."
    return text


def paper_paragraphs(table: pd.DataFrame) -> list[tuple[str, str]]:
    """(paper, plain-words paragraph) per study in the table: robust and fragile verdicts."""
    summary = claim_summary(table)
    out = []
    for study, paper in PAPERS.items():
        s = summary[summary["study"] == study]
        if s.empty:
            continue
        robust = s[s["status"] == "robust"]
        fragile = s[s["status"] == "fragile"]
        undecided = s[s["status"] == "undecided"]
        untested = s[s["status"] == "untested"]
        n_alt = int(s["n_alternatives"].max())
        parts = [f"{_count(len(s), 'claim verdict')} under {_count(n_alt, 'alternative')}."]
        if not robust.empty:
            parts.append(f"Robust to every alternative ({len(robust)}): "
                         + ", ".join(f"{_claim(r)} {r['default_verdict']}" for _, r in robust.iterrows()) + ".")
        elif fragile.empty and untested.empty:
            parts.append("None of its verdicts is decisive at the multiverse's default.")
        else:
            parts.append("No decisive verdict is robust to every alternative.")
        for _, r in fragile.iterrows():
            parts.append(f"**Fragile: {_claim(r)} {r['default_verdict']}** changes under {r['changed_by']}.")
        if not untested.empty:
            parts.append("Held wherever the alternatives ran, but some runs failed: "
                         + ", ".join(_claim(r) for _, r in untested.iterrows()) + ".")
        if not undecided.empty:
            groups = [f"{_count(len(g), verdict)} ({_ids(g)})" for verdict, g in undecided.groupby("default_verdict")]
            resolved = undecided[undecided["changed_by"] != ""]
            parts.append("Undecided at the default: " + "; ".join(groups) + (
                ". Decided under an alternative: "
                + "; ".join(f"{_claim(r)}: {r['changed_by']}" for _, r in resolved.iterrows())
                if not resolved.empty else "") + ".")
        out.append((paper, " ".join(parts)))
    return out


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


def markdown(table: pd.DataFrame) -> str:
    """The section's text (under its heading): intro, one paragraph per paper, the runs' warnings."""
    if table.empty:
        return "No alternatives are declared in `multiverse.choices`: nothing was varied."
    warned = warnings_paragraph(table)
    return "\n\n".join([intro(table), *(f"**{paper[0].upper() + paper[1:]}.** {text}" for paper, text in paper_paragraphs(table)),
                         *([warned] if warned else [])])


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
