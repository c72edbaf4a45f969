"""Forest plot of one claim (issue 46): the evidence behind its verdict, cell by cell.

One tidy table in (the cells of ``data/results/claims/cells.parquet`` of one claim and reading), one
figure out: per informative cell its estimate with its 95 % interval (the engine's, docs/claims.md
rule 1), coloured by the cell's verdict after Holm (for, against, no effect beyond the margin, underpowered), cells grouped
by data set (one panel each, sharing the x-axis), against the thresholds the engine tests
(:func:`thresholds`: the claim's margin and the line of no effect). Cells the engine does not score
(uninformative, no data) are counted in the subtitle, not drawn. The verdict and its support come
from the verdict row (verdicts.parquet).
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from mpdp.claims.tables import reading_label  # noqa: E402
from mpdp.figures import style  # noqa: E402
from mpdp.figures.check import renderer_of  # noqa: E402
from mpdp.figures.plot import save_figure  # noqa: E402

#: drawn cell verdict -> (colour, marker, legend text); the map's colours (mpdp.claims.maps), the
#: underpowered one darker so that a point on white stays visible
DRAWN: dict[str, tuple[str, str, str]] = {
    "for": ("#009E73", "o", "for the claim"),
    "against": ("#D55E00", "s", "against the claim"),
    "no_effect": ("#E69F00", "D", "no effect beyond the margin"),
    "underpowered": ("#B8860B", "^", "underpowered"),
}
#: the figure's width (inches): at :data:`mpdp.figures.style.DPI` narrower than the report's column,
#: so it is shown at full size
WIDTH_IN = 9.0
#: height of one cell's row and of a panel's title and axis, inches
ROW_IN = 0.24
PANEL_IN = 0.55
#: what the estimate of each effect scale is (the x-axis label)
SCALES: dict[str, str] = {
    "difference": "difference",
    "log_ratio": "log₁₀ ratio",
}


def name(study: str, reading: str, claim_id: str) -> str:
    """File stem (and report anchor ``fig-<name>``) of a claim's forest plot."""
    parts = [study, *([] if reading in ("", "-") else [reading]), claim_id]
    return "forest_" + "_".join(re.sub(r"[^A-Za-z0-9]+", "-", str(p)).strip("-").lower() for p in parts)


def thresholds(kind: str, direction: str, margin: float) -> list[tuple[float, str]]:
    """The lines the engine tests a cell's estimate against (mpdp.claims.engine._thresholds) and the line
    of no effect: (value, label). ``margin`` is the claim's practical margin δ (a bound's allowed share):
    a directional cell is ``for`` beyond δ on the claimed side, ``against`` beyond δ on the other and
    without effect within ±δ (issue 55), so ±δ is drawn for every claim that has one."""
    if kind == "bound":
        return [(margin, f"allowed share above the bound ({margin:g})")]
    m = abs(float(margin))
    if direction == "equivalence":  # within ±m: for; beyond it: against
        return [(-m, f"equivalence margin ±{m:g}"), (m, "")]
    return [(0.0, "no effect"), (-m, f"practical margin ±{m:g}"), (m, "")]


def _x_label(verdict: pd.Series) -> str:
    if str(verdict.get("kind", "")) == "bound":
        return "share of draws above the bound (95 % Clopper–Pearson interval)"
    scale = SCALES.get(str(verdict.get("effect_scale", "")), str(verdict.get("effect_scale", "")) or "estimate")
    metric = str(verdict.get("metric", "") or "")
    summary = str(verdict.get("summary", "") or "")
    kind = str(verdict.get("kind", ""))
    if kind == "one_sample":  # a per-repetition statistic of one method, tested against 0 or ±margin
        what = f"{metric.replace('_', ' ')}, one-sample statistic" + (" (log₁₀)" if scale != "difference" else "")
    elif kind == "trend":
        what = f"fitted change in {metric.replace('_', ' ')} over the axis' range" + (
            " (log₁₀)" if scale != "difference" else "")
    else:
        what = f"{scale} in {metric.replace('_', ' ')}" if metric else scale
    return f"{what} ({summary or 'estimate'} over repetitions, 95 % interval)"


def _cell_label(cell: str) -> str:
    """A cell's setting without the data set the panel already names."""
    return str(cell).split(": ", 1)[-1]


def subtitle(verdict: pd.Series, cells: pd.DataFrame) -> str:
    """The verdict, its support and the cells not drawn."""
    counts = cells["cell_verdict"].value_counts()
    left = [f"{int(counts.get(v, 0))} {what}" for v, what in (("uninformative", "uninformative"),
                                                                ("identical", "identical by construction"),
                                                                ("no_data", "without data")) if counts.get(v, 0)]
    drawn = int(sum(counts.get(v, 0) for v in DRAWN))
    text = (f"{verdict['verdict']}: {int(counts.get('for', 0))} for, {int(counts.get('against', 0))} against, "
            f"{int(counts.get('no_effect', 0))} no effect, {int(counts.get('underpowered', 0))} underpowered "
            f"of {drawn} informative cells")
    return text + (f"; not drawn: {', '.join(left)}" if left else "")


def figure(cells: pd.DataFrame, verdict: pd.Series) -> Figure:
    """The forest plot of one claim and reading (``cells``: its rows of cells.parquet)."""
    drawn = cells[cells["cell_verdict"].isin(list(DRAWN)) & np.isfinite(cells["estimate"].astype(float))]
    datasets = list(dict.fromkeys(drawn["dataset"].astype(str)))
    reading = str(verdict.get("reading", ""))
    title = f"{verdict['claim_id']}" + (f" ({reading_label(reading)})" if reading_label(reading) else "")
    title += f": {verdict['claim']}"
    head = "\n".join(textwrap.wrap(title, 100)) + "\n" + "\n".join(textwrap.wrap(subtitle(verdict, cells), 110))
    delta = pd.to_numeric(verdict.get("delta", np.nan), errors="coerce")
    kind = str(verdict.get("kind", ""))
    lines = thresholds(kind, str(verdict.get("direction", "")),
                       float(verdict.get("margin", 0.0) or 0.0) if kind == "bound" or not np.isfinite(delta)
                       else float(delta))
    sizes = [int((drawn["dataset"] == ds).sum()) for ds in datasets]
    n_head = head.count("\n") + 1
    height = 0.3 + 0.2 * n_head + sum(PANEL_IN + ROW_IN * n for n in sizes) + 1.2
    fig = Figure(figsize=(WIDTH_IN, max(height, 2.6)), dpi=style.DPI, layout="constrained")
    fig.suptitle(head, ha="left", x=0.01, fontsize=10)
    if not datasets:
        ax = fig.add_subplot()
        ax.axis("off")
        ax.text(0.5, 0.5, "No informative cell: nothing to draw.", ha="center", va="center", transform=ax.transAxes)
        return fig
    axes = fig.subplots(len(datasets), 1, sharex=True, squeeze=False,
                        gridspec_kw={"height_ratios": [max(n, 1) + 1.2 for n in sizes]})[:, 0]
    for ax, ds in zip(axes, datasets, strict=True):
        rows = drawn[drawn["dataset"].astype(str) == ds].reset_index(drop=True)
        y = np.arange(len(rows))[::-1]
        est = rows["estimate"].to_numpy(float)
        lo, hi = rows["lo"].to_numpy(float), rows["hi"].to_numpy(float)
        has_ci = np.isfinite(lo) & np.isfinite(hi)
        ax.hlines(y[has_ci], lo[has_ci], hi[has_ci], color="#555555", linewidth=1.2)
        frame = pd.DataFrame({"estimate": est, "y": y, "verdict": rows["cell_verdict"].astype(str)})
        sns.scatterplot(data=frame, x="estimate", y="y", hue="verdict", style="verdict",
                        hue_order=list(DRAWN), style_order=list(DRAWN),
                        palette={k: c for k, (c, _, _) in DRAWN.items()},
                        markers={k: m for k, (_, m, _) in DRAWN.items()}, s=36, legend=False, ax=ax, zorder=3)
        for value, _ in lines:
            ax.axvline(value, color="#222222" if value == 0 else "#0072B2", linewidth=1.0,
                       linestyle="-" if value == 0 else "--", zorder=1)
        ax.set_yticks(y)
        ax.set_yticklabels([_cell_label(c) for c in rows["cell"]])
        ax.set_ylim(-0.7, len(rows) - 0.3)
        ax.set_ylabel("")
        ax.set_xlabel("")
        ax.set_title(f"{ds} ({len(rows)} informative cell{'s' if len(rows) != 1 else ''})", loc="left")
        ax.grid(axis="y", visible=False)
    axes[-1].set_xlabel(_x_label(verdict))
    handles = [Line2D([], [], color=c, marker=m, linestyle="", markersize=7) for c, m, _ in DRAWN.values()]
    labels = [t for _, _, t in DRAWN.values()]
    for value, label in lines:
        if label:
            handles.append(Line2D([], [], color="#222222" if value == 0 else "#0072B2",
                                  linestyle="-" if value == 0 else "--"))
            labels.append(label)
    _legend(fig, handles, labels)
    return fig


def _legend(fig: Figure, handles: list[Line2D], labels: list[str]) -> None:
    """The legend below the panels in as many columns (at most five) as fit the figure's width."""
    renderer = renderer_of(fig)
    for ncol in range(min(len(labels), 5), 0, -1):
        legend = fig.legend(handles, labels, loc="outside lower center", ncol=ncol, frameon=False)
        if ncol == 1 or legend.get_window_extent(renderer).width <= 0.97 * fig.bbox.width:
            return
        legend.remove()


def write_study(cells: pd.DataFrame, verdicts: pd.DataFrame, study: str, out_dir: str | Path) -> list[str]:
    """One forest plot (PNG and PDF) per claim and reading of ``study`` into ``out_dir``; returns
    the names written (:func:`name`)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    mine = verdicts[verdicts["study"] == study]
    for _, verdict in mine.iterrows():
        part = cells[(cells["study"] == study) & (cells["claim_id"] == verdict["claim_id"])
                     & (cells["reading"] == verdict["reading"])]
        stem = name(study, str(verdict["reading"]), str(verdict["claim_id"]))
        with matplotlib.rc_context(style.RC):
            fig = figure(part, verdict)
            save_figure(fig, out_dir / f"{stem}.png", out_dir / f"{stem}.pdf")
        written.append(stem)
    return written
