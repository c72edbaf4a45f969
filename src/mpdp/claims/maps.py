"""Verdict map of a study (issue 33, item 7): every claim's cells coloured by cell verdict.

One row per claim (and reading), one panel per data set, one square per cell of that claim in the
order of the cells table (cells of different claims in the same column are not the same setting:
each claim ranges over its own cells). Colours: for (green), against (vermillion), no effect beyond the
margin (orange), underpowered (yellow), identical by construction (sky blue), uninformative (grey), no
data (pale blue); blank: the claim has no further cell. The row label carries the claim's verdict and
its counts (from the same cells, :func:`mpdp.claims.engine.claim_verdict` via verdicts.parquet).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from mpdp.claims.tables import reading_label  # noqa: E402
from mpdp.figures import style  # noqa: E402
from mpdp.figures.plot import save_figure  # noqa: E402
from mpdp.report import names as display  # noqa: E402

#: cell verdict -> (code, colour, legend text)
COLOURS: dict[str, tuple[int, str, str]] = {
    "for": (0, "#009E73", "for the claim"),
    "against": (1, "#D55E00", "against the claim"),
    "no_effect": (2, "#E69F00", "no effect beyond the margin"),
    "underpowered": (3, "#F0E442", "underpowered"),
    "identical": (4, "#56B4E9", "identical by construction"),
    "uninformative": (5, "#9E9E9E", "uninformative (at chance, or reference unconverged)"),
    "no_data": (6, "#BFDDF2", "no data"),
}


#: the widest map, inches: at 10 pt its text is still 80 % of the report's body text where shown
#: (mpdp.figures.check)
MAX_WIDTH_IN: float = 12.6

#: height of one claim's row, inches
ROW_IN: float = 0.36

#: with at most this many columns in all, every square is labelled with its cell
ANNOTATE_MAX: int = 12


def _row_label(claim_id: str, reading: str, cells: pd.DataFrame, verdict: str = "") -> str:
    counts = cells["cell_verdict"].value_counts()
    informative = int(sum(counts.get(v, 0) for v in ("for", "against", "no_effect", "underpowered")))
    name = claim_id if not reading_label(reading) else f"{claim_id} · {reading_label(reading)}"
    name += f" — {verdict}" if verdict else ""
    return (f"{name} ({int(counts.get('for', 0))} for, {int(counts.get('against', 0))} against, "
            f"{informative}/{len(cells)} informative)")


def matrices(cells: pd.DataFrame, study: str,
             verdicts: pd.DataFrame | None = None) -> tuple[list[str], dict[str, np.ndarray]]:
    """Row labels and, per data set, a (rows × cells) matrix of verdict codes (NaN: no such cell)."""
    labels, out, _ = _matrices(cells, study, verdicts)
    return labels, out


def _matrices(cells: pd.DataFrame, study: str, verdicts: pd.DataFrame | None = None
              ) -> tuple[list[str], dict[str, np.ndarray], dict[str, np.ndarray]]:
    mine = cells[cells["study"] == study]
    keys = list(dict.fromkeys(zip(mine["claim_id"], mine["reading"], strict=True)))
    datasets = list(dict.fromkeys(mine["dataset"]))
    labels, out = [], {}
    width = {ds: int(mine[mine["dataset"] == ds].groupby(["claim_id", "reading"]).size().max()) for ds in datasets}
    names: dict[str, np.ndarray] = {}
    for ds in datasets:
        out[ds] = np.full((len(keys), width[ds]), np.nan)
        names[ds] = np.full((len(keys), width[ds]), "", dtype=object)
    for i, (cid, reading) in enumerate(keys):
        rows = mine[(mine["claim_id"] == cid) & (mine["reading"] == reading)]
        verdict = ""
        if verdicts is not None and not verdicts.empty:
            hit = verdicts[(verdicts["study"] == study) & (verdicts["claim_id"] == cid)
                           & (verdicts["reading"] == reading)]
            verdict = str(hit["verdict"].iloc[0]) if not hit.empty else ""
        labels.append(_row_label(cid, reading, rows, verdict))
        for ds in datasets:
            mine_ds = rows[rows["dataset"] == ds]
            codes = [COLOURS[v][0] for v in mine_ds["cell_verdict"]]
            out[ds][i, : len(codes)] = codes
            names[ds][i, : len(codes)] = [str(c).split(": ")[-1] for c in mine_ds["cell"]]
    return labels, out, names


def figure(cells: pd.DataFrame, study: str, verdicts: pd.DataFrame | None = None, title: str = "") -> plt.Figure:
    """The verdict map of ``study`` (a message panel when it has no cells); ``verdicts`` adds each
    claim's verdict to its row label; ``title`` replaces the generic title (e.g. with the paper's name)."""
    labels, mats, names = _matrices(cells, study, verdicts)
    cmap = ListedColormap([c for _, c, _ in sorted(COLOURS.values())])
    if not mats:
        fig, ax = plt.subplots(figsize=(6, 1.5))
        ax.axis("off")
        ax.text(0.5, 0.5, "No claim cells for this study in this build.", ha="center", va="center")
        return fig
    least = max(3, int(np.ceil(0.12 * sum(m.shape[1] for m in mats.values()))))  # room for a panel's title
    widths = [max(m.shape[1], least) for m in mats.values()]
    total = sum(widths)
    fig_w = min(MAX_WIDTH_IN, max(10.0, 5.8 + 0.16 * total + 1.2 * len(mats)))
    ncol = 3
    fig_h = 2.3 + ROW_IN * len(labels)
    left = min(0.62, (max(map(len, labels)) * 0.075 + 0.3) / fig_w)  # the row labels' width (10 pt DejaVu Sans)
    panels_in = fig_w * (0.99 - left) * 0.96  # the panels' width, inches, less the gaps
    headings = {ds: "\n".join([*textwrap.wrap(display.dataset(ds), max(6, int(panels_in * w / total / 0.09))),
                                f"{int(np.isfinite(mat).sum())} cells"])
                for (ds, mat), w in zip(mats.items(), widths, strict=True)}
    heading_lines = max(h.count("\n") + 1 for h in headings.values())
    fig_h += 0.17 * (heading_lines - 2)
    fig, axes = plt.subplots(1, len(mats), figsize=(fig_w, fig_h), squeeze=False,
                             gridspec_kw={"width_ratios": widths, "wspace": 0.04})
    for j, (ax, (ds, mat)) in enumerate(zip(axes[0], mats.items(), strict=True)):
        sns.heatmap(pd.DataFrame(mat), ax=ax, cmap=cmap, vmin=-0.5, vmax=len(COLOURS) - 0.5, cbar=False,
                    linewidths=0.6, linecolor="white", square=False)
        square_in = fig_w * 0.55 / total  # width of one square, inches (approximately)
        lines = [part for text in names[ds].ravel() if text for part in str(text).split(", ")]
        tallest = max((str(t).count(", ") + 1 for t in names[ds].ravel() if t), default=0)
        if (total <= ANNOTATE_MAX and lines and max(map(len, lines)) * 0.085 <= square_in
                and tallest * 0.17 <= ROW_IN):  # every name fits its square, across and up

            for (r, c), text in np.ndenumerate(names[ds]):  # few cells: name each inside its square
                if text:
                    ax.text(c + 0.5, r + 0.5, str(text).replace(", ", "\n"), ha="center", va="center",
                            color="#222222")
        ax.set_title(headings[ds])
        ax.set_xticks([])
        ax.set_xlabel("")
        if j == 0:
            ax.set_yticks(np.arange(len(labels)) + 0.5)
            ax.set_yticklabels(labels, rotation=0)
        else:
            ax.set_yticks([])
        for spine in ax.spines.values():
            spine.set_visible(True)
            spine.set_color("#BBBBBB")
    handles = [Patch(facecolor=c, edgecolor="#888888", label=t) for _, c, t in sorted(COLOURS.values())]
    fig.legend(handles=handles, loc="lower center", ncol=ncol, frameon=False, bbox_to_anchor=(0.5, 0.0))
    fig.suptitle(title or "Every cell of every claim, coloured by its verdict (Holm across a claim's cells)",
                 y=1 - 0.08 / fig_h, va="top")
    legend_h = 0.3 * int(np.ceil(len(handles) / ncol)) + 0.2
    # below the title (one line, ~0.3 in) the panels' headings (~0.17 in a line): no overprinting
    top = 0.5 + 0.2 * heading_lines
    fig.subplots_adjust(left=left, right=0.99, top=1 - top / fig_h, bottom=legend_h / fig_h)
    return fig


def study_title(study_name: str) -> str:
    """The map's title naming its study (issue 59: no map without the paper it belongs to)."""
    return f"{study_name}: every cell of every claim, coloured by its verdict (Holm across a claim's cells)"


def write(cells: pd.DataFrame, study: str, out_png: str | Path, out_pdf: str | Path,
          verdicts: pd.DataFrame | None = None, title: str = "") -> None:
    """Draw and save the map as PNG and PDF (:func:`mpdp.figures.plot.save_figure`: atomically,
    without dates in the files, checked like every figure); ``title``: see :func:`figure`."""
    with plt.rc_context(style.RC):
        fig = figure(cells, study, verdicts, title)
        save_figure(fig, out_png, out_pdf)
        plt.close(fig)
