"""The multiverse figure (issues 38, 48): claims × universes (the reseeded defaults, then the
alternatives), each cell the outcome of :func:`mpdp.multiverse.collect.outcome` (holds, flips,
weakens, uninformative, ...) or, where it applies, the coverage or reseeding assessment
(:func:`cell_value`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import seaborn as sns
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from mpdp.figures.plot import message_panel, save_figure
from mpdp.multiverse.collect import KEYS

#: colour and cell mark of each outcome (colour-blind safe; the mark repeats it without colour)
STYLE: dict[str, tuple[str, str]] = {
    "flips": ("#d55e00", "✕"),
    "weakens": ("#e69f00", "↓"),
    "uninformative": ("#cc79a7", "?"),
    "failed": ("#222222", "!"),
    "resolves": ("#56b4e9", "↑"),
    "within reseeding variation": ("#f0e442", "~"),
    "unchanged": ("#dddddd", "·"),
    "holds": ("#009e73", "="),
    "changes no cell": ("#ffffff", "0"),
    "reads no key": ("#ffffff", "–"),
    "equals the default": ("#ffffff", "≡"),
}
#: assessments (mpdp.multiverse.collect.ASSESSMENTS) shown as such; the others show their outcome
SHOWN_ASSESSMENTS = ("within reseeding variation", "changes no cell", "reads no key", "equals the default")


def cell_value(outcome: str, assessment: str) -> str:
    """What a figure cell shows: the coverage or reseeding assessment where it applies, else the outcome."""
    return assessment if assessment in SHOWN_ASSESSMENTS else outcome


def claim_label(study: str, claim_id: str, reading: str, default_verdict: str, headline: object = None) -> str:
    """Row label: ``study claim [reading] (default verdict)``, with the headline's verdict where it
    differs (``(MIXED; headline HOLDS: not tested)``)."""
    reading = "" if reading in ("-", "", None) else f" [{reading}]"
    differs = isinstance(headline, str) and headline != default_verdict
    return f"{study} {claim_id}{reading} ({default_verdict}" + (f"; headline {headline}: not tested)" if differs else ")")


def matrix(table: pd.DataFrame) -> pd.DataFrame:
    """What each claim (rows, in study/claim order) shows under each universe (columns: the reseeded
    defaults, then ``choice = value``): :func:`cell_value`."""
    headline = table["headline_verdict"].astype(object).where(table["headline_verdict"].notna(), None)
    t = table.assign(
        row=[claim_label(*r, h) for r, h in zip(table[[*KEYS, "default_verdict"]].itertuples(index=False),
                                                 headline, strict=True)],
        column=table["choice"] + " = " + table["value"],
        shown=[cell_value(o, a) for o, a in zip(table["outcome"], table["assessment"], strict=True)])
    rows = list(dict.fromkeys(t["row"]))
    cols = list(dict.fromkeys(t.sort_values("kind", key=lambda k: k != "reseed", kind="stable")["column"]))
    return t.pivot(index="row", columns="column", values="shown").reindex(index=rows, columns=cols)


def draw(table: pd.DataFrame) -> Figure:
    """The figure; a message panel when the table is empty (no choices declared)."""
    if table.empty:
        fig = Figure(figsize=(6, 2))
        message_panel(fig.add_subplot(), "Robustness to reconstructed choices",
                      "no alternatives declared in multiverse.choices")
        return fig
    m = matrix(table)
    names = list(STYLE)
    codes = m.apply(lambda col: col.map(names.index)).astype(float)
    fig = Figure(figsize=(max(7.0, 0.42 * m.shape[1] + 4.5), max(3.0, 0.3 * m.shape[0] + 2.6)))
    ax = fig.add_subplot()
    sns.heatmap(codes, ax=ax, cmap=ListedColormap([STYLE[n][0] for n in names]), vmin=-0.5,
                vmax=len(names) - 0.5, cbar=False, linewidths=0.5, linecolor="white",
                annot=m.map(lambda o: STYLE[o][1] if isinstance(o, str) else "").to_numpy(),
                fmt="", annot_kws={"fontsize": 8, "color": "black"})
    ax.set_xlabel("universe: the reseeded defaults, then one alternative each")
    ax.set_ylabel("claim (default verdict)")
    ax.set_xticklabels(ax.get_xticklabels(), rotation=90, ha="center", fontsize=8)
    ax.set_yticklabels(ax.get_yticklabels(), rotation=0, fontsize=8)
    present = [n for n in names if (m == n).to_numpy().any()]
    ax.legend(handles=[Patch(facecolor=STYLE[n][0], label=f"{STYLE[n][1]} {n}") for n in present],
              loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    ax.set_title("Does each verdict survive each reconstructed choice?", fontsize=10)
    fig.tight_layout()
    return fig


def write(table: pd.DataFrame, out_png: str | Path, out_pdf: str | Path) -> None:
    """Draw and save (PNG and PDF, atomically)."""
    save_figure(draw(table), out_png, out_pdf)



