"""Verdict map of a study (issue 33, item 7): every claim's cells coloured by cell verdict.

One row per claim (and reading), one panel per data set, one square per cell of that claim in the
order of the cells table (cells of different claims in the same column are not the same setting:
each claim ranges over its own cells). Colours: for (green), against (vermillion), not significant
(pale yellow), uninformative (grey), no data (pale blue); blank: the claim has no further cell. The row label carries the claim's verdict and
its counts (from the same cells, :func:`mpdp.claims.engine.claim_verdict` via verdicts.parquet).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from mpdp.figures import style  # noqa: E402
from mpdp.io import atomic_path  # noqa: E402

#: cell verdict -> (code, colour, legend text)
COLOURS: dict[str, tuple[int, str, str]] = {
    "for": (0, "#009E73", "for the claim"),
    "against": (1, "#D55E00", "against the claim"),
    "neutral": (2, "#F0E442", "not significant"),
    "uninformative": (3, "#9E9E9E", "uninformative (a method at its trivial baseline)"),
    "no_data": (4, "#BFDDF2", "no data"),
}


def _row_label(claim_id: str, reading: str, cells: pd.DataFrame) -> str:
    counts = cells["cell_verdict"].value_counts()
    informative = int(counts.get("for", 0) + counts.get("against", 0) + counts.get("neutral", 0))
    name = claim_id if reading in ("-", "") else f"{claim_id} · {reading}"
    return (f"{name}  ({int(counts.get('for', 0))} for, {int(counts.get('against', 0))} against, "
            f"{informative}/{len(cells)} informative)")


def matrices(cells: pd.DataFrame, study: str) -> tuple[list[str], dict[str, np.ndarray]]:
    """Row labels and, per data set, a (rows × cells) matrix of verdict codes (NaN: no such cell)."""
    mine = cells[cells["study"] == study]
    keys = list(dict.fromkeys(zip(mine["claim_id"], mine["reading"], strict=True)))
    datasets = list(dict.fromkeys(mine["dataset"]))
    labels, out = [], {}
    width = {ds: int(mine[mine["dataset"] == ds].groupby(["claim_id", "reading"]).size().max()) for ds in datasets}
    for ds in datasets:
        out[ds] = np.full((len(keys), width[ds]), np.nan)
    for i, (cid, reading) in enumerate(keys):
        rows = mine[(mine["claim_id"] == cid) & (mine["reading"] == reading)]
        labels.append(_row_label(cid, reading, rows))
        for ds in datasets:
            codes = [COLOURS[v][0] for v in rows.loc[rows["dataset"] == ds, "cell_verdict"]]
            out[ds][i, : len(codes)] = codes
    return labels, out


def figure(cells: pd.DataFrame, study: str) -> plt.Figure:
    """The verdict map of ``study`` (a message panel when it has no cells)."""
    labels, mats = matrices(cells, study)
    cmap = ListedColormap([c for _, c, _ in sorted(COLOURS.values())])
    if not mats:
        fig, ax = plt.subplots(figsize=(6, 1.5))
        ax.axis("off")
        ax.text(0.5, 0.5, f"No claim cells for {study} in this build.", ha="center", va="center")
        return fig
    widths = [max(m.shape[1], 3) for m in mats.values()]
    total = sum(widths)
    fig_w = min(18.0, 3.5 + 0.16 * total + 1.2 * len(mats))
    fig_h = 1.6 + 0.32 * len(labels)
    fig, axes = plt.subplots(1, len(mats), figsize=(fig_w, fig_h), squeeze=False,
                             gridspec_kw={"width_ratios": widths, "wspace": 0.04})
    for j, (ax, (ds, mat)) in enumerate(zip(axes[0], mats.items(), strict=True)):
        sns.heatmap(pd.DataFrame(mat), ax=ax, cmap=cmap, vmin=-0.5, vmax=len(COLOURS) - 0.5, cbar=False,
                    linewidths=0.6, linecolor="white", square=False)
        ax.set_title(f"{ds} ({int(np.isfinite(mat).sum())} cells)", fontsize=9)
        ax.set_xticks([])
        ax.set_xlabel("")
        if j == 0:
            ax.set_yticks(np.arange(len(labels)) + 0.5)
            ax.set_yticklabels(labels, rotation=0, fontsize=8)
        else:
            ax.set_yticks([])
        for spine in ax.spines.values():
            spine.set_visible(True)
            spine.set_color("#BBBBBB")
    handles = [Patch(facecolor=c, edgecolor="#888888", label=t) for _, c, t in sorted(COLOURS.values())]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8, frameon=False,
               bbox_to_anchor=(0.5, 0.0))
    fig.suptitle(f"Claims of the {study} study: every cell coloured by its verdict (Holm across a claim's cells)",
                 fontsize=10)
    fig.subplots_adjust(left=min(0.5, 4.2 / fig_w), right=0.99, top=1 - 0.55 / fig_h, bottom=0.55 / fig_h + 0.02)
    return fig


def write(cells: pd.DataFrame, study: str, out_png: str | Path) -> None:
    """Draw and save the map as PNG, atomically and without dates in the file."""
    with plt.rc_context(style.RC):
        fig = figure(cells, study)
        with atomic_path(out_png) as tmp:
            fig.savefig(tmp, format="png", dpi=style.DPI, metadata=style.PNG_METADATA)
        plt.close(fig)
