"""Draw the WD-DP figures from the results tables (spec experiments.md E3.4, bounds.md B4, B9, B10).

Each figure has five panels, one per data set (spec E1 order), in a 2 × 3 grid whose sixth
cell holds the shared legend and the notes. Curves are the mean over repetitions with a 95 %
bootstrap confidence band of the mean; gap figures use a log-scale y-axis and carry the
theory overlays of spec B10, taken from the per-run theory columns written by training
(``bound_gap``, ``predicted_gap``, ``aggregation_bias``; see :mod:`mpdp.results`). A panel
whose data set is missing says why instead of vanishing.

Output is byte-reproducible: fixed size and DPI, no dates or versions in the PNG/PDF
metadata, a fixed SVG hash salt and a seeded bootstrap (guides/tooling.md).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.legend import Legend as MplLegend
from matplotlib.lines import Line2D
from matplotlib.ticker import NullLocator

from mpdp import bounds, results
from mpdp.errors import InputDataError
from mpdp.figures import style
from mpdp.figures.plot import axes_texts, message_panel, png_bytes, save_figure, wrap_title
from mpdp.studies.wddp.figure_spec import (
    ACCOUNTANT_NOTES,
    DATASET_PANELS,
    FIGURES,
    MODE_NOTES,
    OVERLAYS,
    VARIANT_NAMES,
    VARIANTS,
    FigureSpec,
    Overlay,
    Variant,
)

#: mechanisms that are references, not methods of the paper's figures (spec E3.1 "+ref")
REFERENCE_MECHANISMS = frozenset({"nonprivate"})

#: seaborn bootstrap settings of the confidence band (seeded: identical bytes on every render)
N_BOOT = 1000
BOOT_SEED = 0

X_LABELS = {"epsilon": "privacy budget ε", "u": "size unevenness u = n_max/n_min"}
Y_LABELS = {
    "accuracy": "test accuracy",
    "optimal_gap": "optimal gap L_D(θ) − L_D(θ*) (log scale)",
}
BAND_NOTE = "Lines: mean over repetitions; bands: 95 % bootstrap CI of the mean."
OVERLAY_NOTE = (
    "Dashed/dotted lines: theory evaluated per run by training (mean over repetitions; "
    "spec bounds.md B1′, B3, B1‴). Upper bounds above ln 2 say nothing (vacuous)."
)
NOISE_NOTE = (
    "WD-DP and Wang–Ye–Xu are both calibrated to the pooled n, so their σ coincide and do "
    "not depend on m; Jayaraman et al. use m·n_(1) and need n/(m n_(1)) times more noise."
)
_LN2_STYLE = {"color": "#777777", "linewidth": 0.8, "linestyle": (0, (1, 3))}
_LN2_LABEL = "ln 2 = loss of θ = 0 (bounds above it are vacuous)"
#: a log panel's top is this many times its largest value (or ln 2); theory lines above are marked
OFF_SCALE_HEADROOM = 5.0
OFF_SCALE_LABEL = "theory line above the top of the panel (vacuous there), marked where it is"


@dataclass(frozen=True)
class PanelSummary:
    """What one panel shows (returned for tests and the report)."""

    dataset: str
    status: str  # plotted | unavailable | empty
    message: str  # the text shown instead of curves ("" when plotted)
    mechanisms: tuple[str, ...]
    n_runs: int
    texts: tuple[str, ...]  # every text of the axes (title, notes, messages)


@dataclass(frozen=True)
class FigureSummary:
    """What a rendered figure contains."""

    name: str
    title: str
    subtitle: str
    panels: dict[str, PanelSummary]
    legend: tuple[str, ...]


@dataclass
class _OverlayLine:
    """One theory line of one panel (mechanisms whose lines coincide are merged)."""

    overlay: Overlay
    mechanisms: tuple[str, ...]
    values: pd.Series  # x -> mean of the theory column


@dataclass
class _Legend:
    """Legend entries collected over the panels of a figure."""

    mechanisms: set[str]
    overlays: dict[tuple[str, tuple[str, ...]], tuple[_OverlayLine, list[str]]]
    ln2: bool = False
    references: set[str] = field(default_factory=set)
    off_scale: bool = False  # a theory line above the top of a panel (marked, not drawn to scale)


# --------------------------------------------------------------------------------------------
# loading and selecting rows
# --------------------------------------------------------------------------------------------


def load_tables(paths: Mapping[str, str | Path | None]) -> dict[str, pd.DataFrame | None]:
    """Read the per-data-set results tables (``None`` stays ``None``: data set unavailable)."""
    return {ds: (None if path is None else results.read(path)) for ds, path in paths.items()}


def _eq(column: pd.Series, value: object) -> np.ndarray:
    """``column == value`` as a plain boolean array (missing values compare False)."""
    return (column == value).fillna(False).to_numpy(dtype=bool)


#: reference lines of accuracy panels (issue 11): label -> line style. The floor (predict the
#: majority class of the test set) and the ceilings (non-private ERM optimum θ*, and the
#: non-private GD of spec M1b after the same T steps, at the step of wddp.reference_step: by default
#: η = 1/L, so that it converges to θ*; issue 33)
REFERENCE_STYLES: dict[str, dict[str, object]] = {
    "majority class (floor)": {"color": "#999999", "linestyle": (0, (1, 2)), "linewidth": 1.1},
    "θ* non-private optimum (ceiling)": {"color": "#222222", "linestyle": "-.", "linewidth": 1.0},
    "non-private GD, same T": {"color": "#555555", "linestyle": (0, (5, 2)), "linewidth": 1.0},
}


def reference_lines(table: pd.DataFrame, rows: pd.DataFrame, spec: FigureSpec) -> dict[str, pd.Series]:
    """Floor and ceilings of an accuracy panel, as mean test accuracy per x (issue 11).

    ``rows`` are the panel's runs (:func:`select_rows`); the majority-class rate and θ*'s
    accuracy are their mean per x, the non-private GD is the mean accuracy of the table's
    ``nonprivate`` runs of the same experiment (ε-sweep: one value for every ε; u-sweep: per u
    at the figure's m).
    """
    lines: dict[str, pd.Series] = {}
    labels = list(REFERENCE_STYLES)
    for label, column in ((labels[0], "majority_rate"), (labels[1], "optimal_accuracy")):
        if column in rows and rows[column].notna().any():
            lines[label] = rows.groupby("x")[column].mean().dropna()
    ref = table[
        _eq(table["experiment"], spec.experiment)
        & table["mechanism"].isin(REFERENCE_MECHANISMS).to_numpy(dtype=bool)
    ]
    xs = np.unique(rows["x"].to_numpy(dtype=float))
    if spec.x == "u":
        ref = ref[_eq(ref["m"], spec.m)]
        values = ref.groupby(ref["u"].astype("float64"))["accuracy"].mean()
    elif not ref.empty:
        values = pd.Series(float(ref["accuracy"].mean()), index=xs)
    else:
        values = pd.Series(dtype=float)
    if not values.dropna().empty:
        lines[labels[2]] = values.dropna()
    return lines


def _draw_references(ax: Axes, table: pd.DataFrame, rows: pd.DataFrame, spec: FigureSpec,
                     legend: _Legend) -> None:
    for label, values in reference_lines(table, rows, spec).items():
        ax.plot(values.index.to_numpy(dtype=float), values.to_numpy(dtype=float),
                **REFERENCE_STYLES[label])  # type: ignore[arg-type]
        legend.references.add(label)


#: overlays proved for one noisy aggregate step per round (labelled "per-round theory" on
#: figures of the literal local-then-aggregate mode)
PER_ROUND_THEORY = ("B1prime", "B3")


def select_rows(table: pd.DataFrame, spec: FigureSpec, variant: Variant) -> pd.DataFrame:
    """The runs one panel of ``spec`` shows under ``variant`` (spec E3.1, E3.4).

    * WD-DP, Jayaraman (and any other distributed mechanism): the variant's mode and
      accountant, the figure's m (and ε for u-sweeps);
    * centralised mechanisms (mode ``central``, i.e. Wang–Ye–Xu): the variant's central
      accountant (:attr:`Variant.wyx_accountant`, the variant's accountant unless it differs);
      in ε-sweeps the rows without m (WYX does not depend on m), in u-sweeps the rows of the
      figure's m (n_eff changes with u).

    Reference mechanisms (non-private) are left out: they belong to the optional "+ref"
    figures, not to the paper's. Adds a float column ``x`` (ε or u). Raises
    :class:`InputDataError` if a run appears twice (a table mixing variants would otherwise
    be averaged silently).
    """
    central_acc = variant.wyx_accountant
    t = table[
        _eq(table["experiment"], spec.experiment)
        & (_eq(table["accountant"], variant.accountant) | _eq(table["accountant"], central_acc))
        & ~table["mechanism"].isin(REFERENCE_MECHANISMS).to_numpy(dtype=bool)
    ]
    central = _eq(t["mode"], "central") & _eq(t["accountant"], central_acc)
    distributed = _eq(t["mode"], variant.mode) & _eq(t["accountant"], variant.accountant)
    m_match = _eq(t["m"], spec.m)
    if spec.epsilon is None:
        keep = (distributed & m_match) | (central & t["m"].isna().to_numpy(dtype=bool))
    else:
        eps_match = np.isclose(t["epsilon"].to_numpy(dtype=float), spec.epsilon)
        keep = (distributed | central) & m_match & eps_match
    out = t[keep].copy()
    dup = out.duplicated(subset=["mechanism", "m", "u", "epsilon", "rep"], keep=False)
    if dup.any():
        example = out.loc[dup, ["dataset", "mechanism", "m", "u", "epsilon", "rep"]].iloc[0]
        raise InputDataError(
            f"{int(dup.sum())} runs of {spec.fig_id} appear more than once (e.g. "
            f"{example.to_dict()}): the table mixes variants (noise_sharing, dtype, …) or "
            "repeats a training job; filter it to one variant before plotting"
        )
    out["x"] = out[spec.x].astype("float64")
    return out.reset_index(drop=True)


# --------------------------------------------------------------------------------------------
# overlays
# --------------------------------------------------------------------------------------------


def overlay_lines(rows: pd.DataFrame, spec: FigureSpec) -> list[_OverlayLine]:
    """Theory lines of one panel: mean of the overlay column per x, per mechanism (spec B10).

    Lines of one overlay that coincide for several mechanisms (e.g. B1′ of WD-DP and WYX
    when both use the same η) are drawn once and labelled with all of them.
    """
    lines: list[_OverlayLine] = []
    for key in spec.overlays:
        overlay = OVERLAYS[key]
        merged: list[_OverlayLine] = []
        for mech in overlay.mechanisms:
            values = rows[rows["mechanism"] == mech].groupby("x")[overlay.column].mean().dropna()
            if values.empty:
                continue
            for line in merged:
                if line.values.index.equals(values.index) and np.allclose(
                    line.values.to_numpy(), values.to_numpy(), rtol=1e-9, atol=0.0
                ):
                    line.mechanisms = (*line.mechanisms, mech)
                    break
            else:
                merged.append(_OverlayLine(overlay, (mech,), values))
        lines.extend(merged)
    return lines


def overlay_label(
    overlay: Overlay, mechanisms: tuple[str, ...], mode: str, vacuous_in: list[str], n_panels: int
) -> str:
    """Legend label of a theory line, saying in which panels an upper bound is vacuous.

    B1′ and B3 are proved for full-data DP-GD with one noisy aggregate step per round (WYX and
    the per-round readings, spec B1 and B3 caveats), so on ``local_then_aggregate`` figures
    they are labelled "per-round theory".
    """
    names = "/".join(style.mechanism_short(m) for m in mechanisms)
    if overlay.key in PER_ROUND_THEORY and mode == "local_then_aggregate":
        names += "; per-round theory"
    label = f"{overlay.label} ({names})"
    if vacuous_in:
        where = (
            "in every panel" if len(vacuous_in) == n_panels else "in panel " + ", ".join(vacuous_in)
        )
        label += f" — vacuous, > ln 2 {where}"
    return label


# --------------------------------------------------------------------------------------------
# panels
# --------------------------------------------------------------------------------------------


def panel_problem(
    dataset: str, tables: Mapping[str, pd.DataFrame | None], unavailable: Mapping[str, str]
) -> tuple[str, str] | None:
    """``(status, text)`` for a data set whose panel cannot be drawn, ``None`` if it has a table."""
    name = DATASET_PANELS[dataset].name
    if dataset in unavailable:
        reason = unavailable[dataset].strip()
        text = f"{name}: raw data not available — see README."
        return "unavailable", f"{text} {reason}" if reason else text
    if dataset not in tables:
        return "empty", f"{name}: not part of this run (config key 'datasets')."
    table = tables[dataset]
    if table is None or table.empty:
        return "empty", f"{name}: no results table for this data set."
    return None


def _draw_curves(ax: Axes, rows: pd.DataFrame, metric: str) -> tuple[str, ...]:
    """Mean line with a 95 % bootstrap band per mechanism; returns the mechanisms drawn."""
    mechanisms = tuple(sorted(rows["mechanism"].unique(), key=style.mechanism_sort_key))
    data = pd.DataFrame(
        {
            "x": rows["x"].to_numpy(dtype=float),
            "y": rows[metric].to_numpy(dtype=float),
            "mechanism": rows["mechanism"].astype(str).to_numpy(),
        }
    )
    sns.lineplot(
        data=data,
        x="x",
        y="y",
        hue="mechanism",
        hue_order=list(mechanisms),
        palette=style.palette_for(mechanisms),
        estimator="mean",
        errorbar=("ci", 95),
        n_boot=N_BOOT,
        seed=BOOT_SEED,
        marker="o",
        markersize=4,
        linewidth=1.6,
        legend=False,
        ax=ax,
    )
    return mechanisms


def _draw_overlays(
    ax: Axes, rows: pd.DataFrame, spec: FigureSpec, letter: str, legend: _Legend
) -> None:
    """Theory lines, the ln 2 reference and a note on hidden non-positive means (gap figures)."""
    for line in overlay_lines(rows, spec):
        ax.plot(
            line.values.index.to_numpy(dtype=float),
            line.values.to_numpy(dtype=float),
            color=style.palette_for(line.mechanisms)[line.mechanisms[0]],
            linestyle=line.overlay.linestyle,
            marker=line.overlay.marker or None,
            markersize=4,
            linewidth=1.2,
            alpha=0.9,
        )
        _, vacuous_in = legend.overlays.setdefault((line.overlay.key, line.mechanisms), (line, []))
        if line.overlay.upper_bound and bool(np.all(bounds.is_vacuous(line.values.to_numpy()))):
            vacuous_in.append(letter)
    legend.ln2 = True
    ax.axhline(bounds.LOSS_AT_ZERO, **_LN2_STYLE)
    means = rows.groupby(["mechanism", "x"])[spec.metric].mean()
    hidden = int((means <= 0).sum())
    if hidden:
        ax.text(
            0.02,
            0.02,
            f"{hidden} mean gap(s) ≤ 0 not drawn (log scale)",
            transform=ax.transAxes,
            color="#aa0000",
        )


def _clip_to_data(ax: Axes, rows: pd.DataFrame, metric: str, lines: Sequence[_OverlayLine]) -> bool:
    """Keep a log panel's scale to its curves (and ln 2): the top is :data:`OFF_SCALE_HEADROOM`
    times the largest positive value of ``metric`` or ln 2, whichever is higher; a theory line
    above it is marked by a triangle of its colour at the top edge, at each x where it is off the
    scale (issue 46: bounds of up to 10⁶ squashed the curves). Returns whether any line is."""
    values = rows[metric].to_numpy(dtype=float)
    positive = values[np.isfinite(values) & (values > 0)]
    if not positive.size:
        return False
    top = max(float(positive.max()), bounds.LOSS_AT_ZERO) * OFF_SCALE_HEADROOM
    off = 0
    for line in lines:
        y = line.values.to_numpy(dtype=float)
        above = np.isfinite(y) & (y > top)
        if above.any():
            off += 1  # each line's marks one step lower, so that two lines' marks do not hide each other
            ax.plot(line.values.index.to_numpy(dtype=float)[above], np.full(int(above.sum()), top / 1.3 ** off),
                    linestyle="", marker="^", markersize=6, color=style.palette_for(line.mechanisms)[line.mechanisms[0]])
    ax.set_ylim(top=top)
    return bool(off)


def accounted_ratios(rows: pd.DataFrame) -> dict[str, float]:
    """Median over runs of ``eps_accounted / eps_claimed`` per mechanism (privacy ledger).

    On a figure whose x-axis is the claimed ε this says how much privacy each curve really
    spends (spec §0.5, I-1); runs without a ledger value (NaN) are left out.
    """
    ratio = rows["eps_accounted"].astype(float) / rows["eps_claimed"].astype(float)
    medians = ratio.groupby(rows["mechanism"].astype(str)).median().dropna()
    return {m: float(medians[m]) for m in sorted(medians.index, key=style.mechanism_sort_key)}


def accounted_note(rows: pd.DataFrame) -> str:
    """Each curve's median accounted/claimed ε ratio, as two lines shown under an ε-axis panel's
    x-axis label (outside the axes: it never covers a curve); empty when no run has a ledger value."""
    ratios = accounted_ratios(rows)
    if not ratios:
        return ""
    return "accounted ÷ plotted ε (median):\n" + ", ".join(
        f"{style.mechanism_short(m)} {r:.3g}×" for m, r in ratios.items())


def spaced_log_ticks(xs: np.ndarray, min_decades: float = 0.25) -> list[float]:
    """The grid values to label on a narrow log axis: from the smallest up, each at least
    ``min_decades`` above the last one kept, the largest always kept (the one before it dropped
    when too close), so written ε values never overlap (0.1, 0.15, 0.2, 0.25 → 0.1, 0.25)."""
    kept: list[float] = []
    for x in sorted(float(v) for v in xs if v > 0):
        if not kept or np.log10(x) - np.log10(kept[-1]) >= min_decades:
            kept.append(x)
    top = float(max(xs)) if len(xs) else None
    if top is not None and top > 0 and kept[-1] != top:
        while kept and np.log10(top) - np.log10(kept[-1]) < min_decades:
            kept.pop()
        kept.append(top)
    return kept


def _format_axes(ax: Axes, spec: FigureSpec, rows: pd.DataFrame, note: str = "") -> None:
    ax.set_xlabel(X_LABELS[spec.x] + (f"\n{note}" if note else ""))
    ax.set_ylabel(Y_LABELS[spec.metric])
    xs = np.unique(rows["x"].to_numpy(dtype=float))
    ax.set_xticks(xs)
    ax.set_xticklabels([f"{x:g}" for x in xs])
    if spec.metric == "optimal_gap":
        ax.set_yscale("log", nonpositive="mask")


def _draw_legend(
    ax: Axes, spec: FigureSpec, variant: Variant, legend: _Legend, n_plotted: int,
    absent: Sequence[str] = (),
) -> tuple[str, ...]:
    """Shared legend and notes in the legend panel (``absent``: why a data set has no panel, said
    once here); returns the legend labels."""
    ax.axis("off")
    handles: list[Line2D] = []
    labels: list[str] = []
    for mech in sorted(legend.mechanisms, key=style.mechanism_sort_key):
        colour = style.palette_for([mech])[mech]
        handles.append(Line2D([], [], color=colour, marker="o", markersize=4, linewidth=1.6))
        labels.append(style.mechanism_label(mech))
    entries = sorted(
        legend.overlays.items(),
        key=lambda kv: (
            spec.overlays.index(kv[0][0]),
            [style.mechanism_sort_key(m) for m in kv[0][1]],
        ),
    )
    for (_, mechs), (line, vacuous_in) in entries:
        handles.append(
            Line2D(
                [],
                [],
                color=style.palette_for(mechs)[mechs[0]],
                linestyle=line.overlay.linestyle,
                marker=line.overlay.marker or None,
                markersize=4,
                linewidth=1.2,
            )
        )
        labels.append(overlay_label(line.overlay, mechs, variant.mode, vacuous_in, n_plotted))
    if legend.ln2:
        handles.append(Line2D([], [], **_LN2_STYLE))
        labels.append(_LN2_LABEL)
    if legend.off_scale:
        handles.append(Line2D([], [], color="#444444", marker="^", linestyle=""))
        labels.append(OFF_SCALE_LABEL)
    for label, line_style in REFERENCE_STYLES.items():
        if label in legend.references:
            handles.append(Line2D([], [], **line_style))  # type: ignore[arg-type]
            labels.append(label)
    box = None
    if handles:
        wrapped = ["\n".join(textwrap.wrap(label, 42)) for label in labels]
        box = ax.legend(handles, wrapped, loc="upper left", frameon=False, title="Curves",
                        borderaxespad=0.0, handlelength=2.6)
    notes = [BAND_NOTE] + ([OVERLAY_NOTE] if spec.overlays else []) + list(absent)
    _notes_below(ax, box, "\n".join("\n".join(textwrap.wrap(note, 46)) for note in notes))
    return tuple(labels)


def _notes_below(ax: Axes, legend: MplLegend | None, text: str) -> None:
    """Notes under the legend of a legend panel (anchored to its lower edge: they never overlap)."""
    if legend is None:
        ax.text(0.0, 1.0, text, transform=ax.transAxes, va="top", color="#333333")
        return
    ax.annotate(text, xy=(0.0, 0.0), xycoords=legend, xytext=(0, -10), textcoords="offset points",
                va="top", ha="left", color="#333333")


# --------------------------------------------------------------------------------------------
# figures
# --------------------------------------------------------------------------------------------


def _panel_grid(n: int) -> tuple[Figure, list[Axes], Axes]:
    """A figure with ``n`` data panels and the legend panel, without an empty cell: up to five
    panels in three columns (four: two by two, the legend panel beside them)."""
    cols = {0: 1, 1: 2, 2: 3, 3: 2}.get(n, 3)
    rows = 2 if n == 4 else -(-(n + 1) // cols)
    height = style.PANEL_FIGSIZE[1] if rows > 1 else style.PANEL_FIGSIZE[1] * 0.55
    fig = Figure(figsize=(style.PANEL_FIGSIZE[0], height), dpi=style.DPI, layout="constrained")
    grid = fig.add_gridspec(rows, cols)
    if n == 4:
        axes = [fig.add_subplot(grid[i // 2, i % 2]) for i in range(4)]
        return fig, axes, fig.add_subplot(grid[:, 2])
    cells = [fig.add_subplot(grid[i // cols, i % cols]) for i in range(n + 1)]
    return fig, cells[:n], cells[n]


def variant_subtitle(variant: str) -> str:
    """Two lines saying how the distributed methods ran and how σ was calibrated."""
    var = VARIANTS[variant]
    return "\n".join(
        (
            MODE_NOTES.get(var.mode, f"mode {var.mode}"),
            ACCOUNTANT_NOTES.get(var.accountant, f"accountant {var.accountant}"),
        )
    )


def render_figure(
    fig_id: str,
    variant: str,
    tables: Mapping[str, pd.DataFrame | None],
    out_png: str | Path,
    out_pdf: str | Path,
    unavailable: Mapping[str, str] | None = None,
) -> FigureSummary:
    """Draw figure ``fig_id`` (spec E3.4) in ``variant`` (a key of :data:`VARIANTS`).

    ``tables`` maps data set -> results table (``None``: no table; a data set missing from
    the mapping is "not part of this run"); ``unavailable`` maps data set -> why its raw data
    could not be obtained. Writes a PNG and a PDF atomically and returns what each panel
    shows.
    """
    if fig_id not in FIGURES:
        raise KeyError(f"unknown figure {fig_id!r}; known: {', '.join(FIGURES)}")
    if variant not in VARIANTS:
        raise KeyError(f"unknown figure variant {variant!r}; known: {sorted(VARIANTS)}")
    spec, var = FIGURES[fig_id], VARIANTS[variant]
    unavailable = dict(unavailable or {})
    title = f"Fig. {spec.number} ({VARIANT_NAMES[variant]}) — {spec.shows}"
    subtitle = variant_subtitle(variant)
    legend = _Legend(set(), {})
    panels: dict[str, PanelSummary] = {}

    shown = {}  # data set -> panel; a data set not in this run (or without raw data) gets none
    for dataset, panel in DATASET_PANELS.items():
        problem = panel_problem(dataset, tables, unavailable)
        if problem is not None and (problem[0] == "unavailable" or dataset not in tables):
            panels[dataset] = PanelSummary(dataset, *problem, (), 0, ())
        else:
            shown[dataset] = panel
    with matplotlib.rc_context(style.RC):
        fig, axes, legend_ax = _panel_grid(len(shown))
        absent = [p.message for p in panels.values()]
        fig.suptitle(wrap_title(f"{title}\n{subtitle}", 110))
        for ax, (dataset, panel) in zip(axes, shown.items(), strict=True):
            panel_title = f"({panel.letter}) {panel.name}"
            problem = panel_problem(dataset, tables, unavailable)
            rows = pd.DataFrame()
            if problem is None:
                rows = select_rows(tables[dataset], spec, var)  # type: ignore[arg-type]
                if rows.empty:
                    problem = (
                        "empty",
                        f"{panel.name}: no runs for this setting ({spec.setting}, mode "
                        f"{var.mode}, accountant {var.accountant}) in the results table.",
                    )
            if problem is not None:
                message_panel(ax, panel_title, problem[1])
                panels[dataset] = PanelSummary(dataset, *problem, (), 0, axes_texts(ax))
                continue
            ax.set_title(panel_title, loc="left")
            mechanisms = _draw_curves(ax, rows, spec.metric)
            legend.mechanisms.update(mechanisms)
            if spec.metric == "optimal_gap":
                _draw_overlays(ax, rows, spec, panel.letter, legend)
            if spec.metric == "accuracy":
                _draw_references(ax, tables[dataset], rows, spec, legend)  # type: ignore[arg-type]
            _format_axes(ax, spec, rows, accounted_note(rows) if spec.x == "epsilon" else "")
            if spec.metric == "optimal_gap":
                legend.off_scale |= _clip_to_data(ax, rows, spec.metric, overlay_lines(rows, spec))
            panels[dataset] = PanelSummary(
                dataset, "plotted", "", mechanisms, len(rows), axes_texts(ax)
            )
        panels = {ds: panels[ds] for ds in DATASET_PANELS if ds in panels}
        n_plotted = sum(p.status == "plotted" for p in panels.values())
        labels = _draw_legend(legend_ax, spec, var, legend, n_plotted, absent)
        save_figure(fig, out_png, out_pdf)
    return FigureSummary(f"{fig_id}{variant}", title, subtitle, panels, labels)


# --------------------------------------------------------------------------------------------
# noise diagnostics (spec B9)
# --------------------------------------------------------------------------------------------


def noise_rows(table: pd.DataFrame, variant: Variant, experiment: str) -> pd.DataFrame:
    """Runs of one experiment under ``variant`` with a ``level`` column naming the setting."""
    t = table[
        _eq(table["experiment"], experiment)
        & _eq(table["accountant"], variant.accountant)
        & table["mode"].isin([variant.mode, "central"]).to_numpy(dtype=bool)
        & ~table["mechanism"].isin(REFERENCE_MECHANISMS).to_numpy(dtype=bool)
    ].copy()
    if experiment == "eps_sweep":
        t["level"] = [("pooled (no m)" if pd.isna(m) else f"m = {int(m)}") for m in t["m"]]
        t["x"] = t["epsilon"].astype("float64")
    else:
        t["level"] = [f"m = {int(m)}, ε = {e:g}" for m, e in zip(t["m"], t["epsilon"], strict=True)]
        t["x"] = t["u"].astype("float64")
    return t.reset_index(drop=True)


def _level_key(level: str) -> tuple[int, float, str]:
    """Sort key of a setting label: pooled first, then by m, then by ε."""
    if not level.startswith("m = "):
        return (0, 0.0, level)
    parts = level.removeprefix("m = ").split(", ε = ")
    return (int(parts[0]), float(parts[1]) if len(parts) > 1 else 0.0, level)


_LEVEL_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")


def sigma_ratio(rows: pd.DataFrame) -> pd.DataFrame:
    """Measured σ_Jayaraman / σ_WD-DP per u-sweep setting and u, with the theory (1+u)/2 (spec B9)."""
    means = rows.groupby(["level", "x", "mechanism"])["sigma"].mean().unstack("mechanism")
    if not {"wddp", "jayaraman"} <= set(means.columns):
        return pd.DataFrame(columns=["level", "u", "ratio", "theory"])
    out = (
        (means["jayaraman"] / means["wddp"])
        .rename("ratio")
        .reset_index()
        .rename(columns={"x": "u"})
    )
    out["theory"] = bounds.two_group_noise_ratio(out["u"].to_numpy(dtype=float))
    return out.dropna(subset=["ratio"])


@dataclass(frozen=True)
class _NoiseStyle:
    """Colours per mechanism and markers per setting, shared by every diagnostics panel."""

    mechanisms: list[str]
    levels: list[str]
    palette: dict[str, str]
    markers: dict[str, str]


def _noise_style(rows_by_ds: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]]) -> _NoiseStyle:
    frames = [frame for pair in rows_by_ds.values() for frame in pair]
    levels = sorted({lv for f in frames for lv in f["level"]}, key=_level_key)
    mechanisms = sorted({m for f in frames for m in f["mechanism"]}, key=style.mechanism_sort_key)
    markers = {lv: _LEVEL_MARKERS[i % len(_LEVEL_MARKERS)] for i, lv in enumerate(levels)}
    return _NoiseStyle(mechanisms, levels, style.palette_for(mechanisms), markers)


def _sigma_panel(ax: Axes, rows: pd.DataFrame, xlabel: str, look: _NoiseStyle) -> None:
    """σ per mechanism (colour) and setting (marker) against ε or u, log scale."""
    if rows.empty:
        ax.text(0.5, 0.5, "no runs", ha="center", transform=ax.transAxes)
        return
    present = set(rows["mechanism"]), set(rows["level"])
    sns.lineplot(
        data=rows.assign(sigma=rows["sigma"].astype(float)),
        x="x",
        y="sigma",
        hue="mechanism",
        hue_order=[m for m in look.mechanisms if m in present[0]],
        palette=look.palette,
        style="level",
        style_order=[lv for lv in look.levels if lv in present[1]],
        markers=look.markers,
        dashes=False,
        estimator="mean",
        errorbar=None,
        linewidth=1.2,
        legend=False,
        ax=ax,
    )
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("noise std σ per coordinate and step (log)")


#: the factor in u between the settings' markers of the ratio panel (drawn side by side)
RATIO_DODGE = 1.08


def _ratio_panel(ax: Axes, u_rows: pd.DataFrame, look: _NoiseStyle) -> None:
    """Measured σ_J/σ_WD per u-sweep setting against the two-group theory (1+u)/2."""
    ratio = sigma_ratio(u_rows)
    levels = list(dict.fromkeys(ratio["level"])) if not ratio.empty else []
    for level, sub in ratio.groupby("level"):
        # the settings' ratios coincide (σ follows its formula): side by side, 8 % apart in u, so that
        # no marker hides another (mpdp.figures.check)
        dodge = RATIO_DODGE ** (levels.index(level) - (len(levels) - 1) / 2)
        ax.plot(
            sub["u"] * dodge,
            sub["ratio"],
            marker=look.markers[str(level)],
            color=style.PALETTE["jayaraman"],
            linestyle="none",
        )
    if not ratio.empty:
        theory = ratio.drop_duplicates("u").sort_values("u")
        ax.plot(theory["u"], theory["theory"], color="black", linestyle="--", linewidth=1.0)
    ax.set_xlabel(X_LABELS["u"])
    ax.set_ylabel("σ_Jayaraman / σ_WD-DP")


def _noise_legend(ax: Axes, look: _NoiseStyle, absent: Sequence[str] = ()) -> tuple[str, ...]:
    """The legend panel of the noise diagnostics, with the notes (``absent``: why a data set has no
    column, said once)."""
    ax.axis("off")
    handles = [Line2D([], [], color=look.palette[m], linewidth=1.6) for m in look.mechanisms]
    labels = [style.mechanism_label(m) for m in look.mechanisms]
    for level in look.levels:
        handles.append(
            Line2D([], [], color="#555555", marker=look.markers[level], linestyle="none")
        )
        labels.append(f"setting {level}")
    handles.append(Line2D([], [], color="black", linestyle="--", linewidth=1.0))
    labels.append("theory (1 + u)/2 = n/(m n_(1))\n(spec B9)")
    handles.append(Line2D([], [], color=style.PALETTE["jayaraman"], marker="o", linestyle="none"))
    labels.append("measured σ_J/σ_WD (row 3;\nsettings side by side)")
    box = ax.legend(handles, labels, loc="upper left", frameon=False, title="Curves and settings")
    _notes_below(ax, box, "\n".join("\n".join(textwrap.wrap(note, 34)) for note in [NOISE_NOTE, *absent]))
    return tuple(labels)


def render_noise_diagnostics(
    tables: Mapping[str, pd.DataFrame | None],
    out_png: str | Path,
    out_pdf: str | Path,
    variant: str = "",
    unavailable: Mapping[str, str] | None = None,
) -> FigureSummary:
    """Diagnostic figure of spec B9: the noise std σ each run really used.

    Row 1: σ vs ε per mechanism and m (ε-sweeps; WD-DP and WYX do not depend on m, Jayaraman
    grows as n/(m n_(1))). Row 2: σ vs u per u-sweep setting. Row 3: the measured ratio
    σ_J/σ_WD vs u against the theory (1+u)/2 of the two-group design. One column per data set.
    """
    var = VARIANTS[variant]
    unavailable = dict(unavailable or {})
    rows_by_ds = {
        ds: (noise_rows(table, var, "eps_sweep"), noise_rows(table, var, "u_sweep"))
        for ds in DATASET_PANELS
        if panel_problem(ds, tables, unavailable) is None and (table := tables[ds]) is not None
    }
    look = _noise_style(rows_by_ds)
    title = f"Noise diagnostics ({VARIANT_NAMES[variant]}) — per-step noise std σ actually used"
    subtitle = variant_subtitle(variant)
    panels: dict[str, PanelSummary] = {}

    shown = [ds for ds in DATASET_PANELS if ds in rows_by_ds]
    for dataset in DATASET_PANELS:  # a data set without runs gets no column; the legend panel says why
        if dataset not in rows_by_ds:
            problem = panel_problem(dataset, tables, unavailable) or (
                "empty", f"{DATASET_PANELS[dataset].name}: no results table for this data set.")
            panels[dataset] = PanelSummary(dataset, *problem, (), 0, ())
    with matplotlib.rc_context(style.RC):
        fig = Figure(figsize=(13.0, 10.5), dpi=style.DPI, layout="constrained")
        grid = fig.add_gridspec(3, len(shown) + 1, width_ratios=[1] * len(shown) + [1.15])
        fig.suptitle(wrap_title(f"{title}\n{subtitle}", 110))
        for col, dataset in enumerate(shown):
            panel = DATASET_PANELS[dataset]
            axes = [fig.add_subplot(grid[r, col]) for r in range(3)]
            panel_title = "\n".join(textwrap.wrap(f"({panel.letter}) {panel.name}", 22))
            for ax in axes:
                ax.set_title(panel_title, loc="left")
            eps_rows, u_rows = rows_by_ds[dataset]
            _sigma_panel(axes[0], eps_rows, X_LABELS["epsilon"], look)
            axes[0].set_xscale("log")
            if not eps_rows.empty:  # ticks at the grid's ε, written plainly (no 6×10⁻² over 10⁻¹)
                xs = spaced_log_ticks(np.unique(eps_rows["x"].to_numpy(dtype=float)))
                axes[0].set_xticks(xs, [f"{x:g}" for x in xs])
                axes[0].xaxis.set_minor_locator(NullLocator())
            _sigma_panel(axes[1], u_rows, X_LABELS["u"], look)
            _ratio_panel(axes[2], u_rows, look)
            for ax in axes:  # labels wrapped to a narrow panel; the y-label once per row
                ax.set_xlabel("\n".join(textwrap.wrap(ax.get_xlabel(), 20)))
                ax.set_ylabel("\n".join(textwrap.wrap(ax.get_ylabel(), 26)) if col == 0 else "")
            mechanisms = tuple(
                m
                for m in look.mechanisms
                if m in set(eps_rows["mechanism"]) | set(u_rows["mechanism"])
            )
            panels[dataset] = PanelSummary(
                dataset,
                "plotted",
                "",
                mechanisms,
                len(eps_rows) + len(u_rows),
                axes_texts(axes[0]),
            )
        panels = {ds: panels[ds] for ds in DATASET_PANELS if ds in panels}
        absent = [panels[ds].message for ds in DATASET_PANELS if ds not in rows_by_ds]
        labels = _noise_legend(fig.add_subplot(grid[:, len(shown)]), look, absent)
        save_figure(fig, out_png, out_pdf)
    return FigureSummary(f"noise{variant}", title, subtitle, panels, labels)


# --------------------------------------------------------------------------------------------
# Table 1 (spec B4)
# --------------------------------------------------------------------------------------------


def _settings(table: pd.DataFrame) -> pd.DataFrame:
    """One row per (experiment, m, u, ε) setting of the distributed runs, with n, n_(1), p, …

    n_(1) varies over repetitions in the ε-sweeps (random sizes); its median is used.
    """
    rows = table[
        table["mechanism"].isin(["wddp", "jayaraman"]).to_numpy(dtype=bool)
        & table["experiment"].isin(["eps_sweep", "u_sweep"]).to_numpy(dtype=bool)
    ]
    keys = ["experiment", "m", "u", "epsilon"]
    grouped = rows.groupby(keys, dropna=False).agg(
        n=("n", "median"),
        n_min=("n_min", "median"),
        p=("p", "first"),
        delta=("delta", "first"),
        lam=("lambda", "first"),
        G=("G", "first"),
        T=("T", "first"),
    )
    return grouped.reset_index()


def table1_frame(tables: Mapping[str, pd.DataFrame | None], epsilon: float = 0.1) -> pd.DataFrame:
    """WD-DP Table 1 (spec B4, via :func:`mpdp.bounds.table1`) at the real settings of the runs.

    One block of five rows (the methods of Table 1) per data set and setting: each ε-sweep m
    evaluated at ``epsilon`` (Table 1 is a formula in ε; default the CV reference ε = 0.1),
    and each u-sweep (m, ε, u) at its own ε. n, n_(1), p, δ, λ, G and T are those of the
    runs (median n_(1) over repetitions for random sizes).
    """
    blocks = []
    order = [ds for ds in DATASET_PANELS if ds in tables] + [
        ds for ds in tables if ds not in DATASET_PANELS
    ]
    for dataset in order:
        table = tables[dataset]
        if table is None or table.empty:
            continue
        settings = _settings(table)
        eps_sweep = settings[settings["experiment"] == "eps_sweep"].drop_duplicates(["m"])
        eps_sweep = eps_sweep.assign(epsilon=float(epsilon))
        settings = pd.concat([eps_sweep, settings[settings["experiment"] == "u_sweep"]])
        for s in settings.itertuples(index=False):
            block = bounds.table1(
                n=int(s.n),
                m=int(s.m),
                n_min=int(s.n_min),
                p=int(s.p),
                eps=float(s.epsilon),
                delta=float(s.delta),
                lam=float(s.lam),
                G=float(s.G),
                T=int(s.T),
            )
            block.insert(0, "dataset", dataset)
            block.insert(1, "experiment", s.experiment)
            block.insert(2, "m", int(s.m))
            block.insert(3, "u", float(s.u) if pd.notna(s.u) else np.nan)
            block.insert(4, "epsilon", float(s.epsilon))
            block.insert(5, "n", int(s.n))
            block.insert(6, "n_min", int(s.n_min))
            block.insert(7, "p", int(s.p))
            blocks.append(block)
    if not blocks:
        return pd.DataFrame()
    return pd.concat(blocks, ignore_index=True)


# --------------------------------------------------------------------------------------------
# cross-validation curves (spec E3.3, issue 11)
# --------------------------------------------------------------------------------------------

_ACCOUNTANT_LINES = {"ma16": "-", "exact": "--", "exact_per_party": ":"}


def cv_curves_figure(scores: pd.DataFrame, chosen: pd.DataFrame) -> Figure:
    """The CV curves: mean validation accuracy ± 1 SE against η, one panel per data set.

    One line per selection group (colour: mechanism and mode; line style: accountant); the
    chosen η (one-SE rule; with a selection per repetition, the η most repetitions chose, the
    curves averaged over the repetitions) is circled. One legend under all panels (never over a panel or another
    legend, issue 46). ``scores`` and ``chosen`` come from :func:`mpdp.studies.wddp.report.cv_scores`.
    """
    datasets = [d for d in DATASET_PANELS if d in set(scores["dataset"])]
    groups = sorted({(m, mo) for m, mo in zip(scores["mechanism"], scores["mode"], strict=True)},
                    key=lambda k: (style.mechanism_sort_key(k[0]), k[1]))
    colours = dict(zip(groups, sns.color_palette("colorblind", len(groups)).as_hex(), strict=True))
    n_rows = (len(datasets) + 2) // 3
    fig = Figure(figsize=(12.6, 4.2 * n_rows + 1.6), dpi=style.DPI, layout="constrained")
    axes = fig.subplots(n_rows, 3, squeeze=False).ravel()
    handles: dict[str, Line2D] = {}
    for ax, ds in zip(axes, datasets, strict=False):
        data = scores[scores["dataset"] == ds]
        for (mech, mode, acc), g in data.groupby(["mechanism", "mode", "accountant"]):
            g = g.sort_values("eta")
            label = f"{style.mechanism_short(mech)} {mode} · {acc}"
            linestyle = _ACCOUNTANT_LINES.get(acc, "-")
            se = g["se"].to_numpy(dtype=float)
            ax.errorbar(g["eta"], g["mean_accuracy"], yerr=np.where(np.isfinite(se), se, 0.0), capsize=2,
                        marker="o", markersize=3, color=colours[(mech, mode)], linestyle=linestyle)
            handles.setdefault(label, Line2D([], [], color=colours[(mech, mode)], linestyle=linestyle,
                                             marker="o", markersize=3))
            pick = chosen[(chosen["dataset"] == ds) & (chosen["mechanism"] == mech)
                          & (chosen["mode"] == mode) & (chosen["accountant"] == acc)]
            if not pick.empty:  # a selection per repetition (issue 60): the η chosen most often
                eta = float(pick["eta"].mode().min())
                y = float(g.loc[np.isclose(g["eta"], eta), "mean_accuracy"].iloc[0])
                ax.plot([eta], [y], marker="o", markersize=9, markerfacecolor="none",
                        color=colours[(mech, mode)], linestyle="")
        ax.set_xscale("log")
        ax.set_xlabel("learning rate η")
        ax.set_ylabel("validation accuracy (mean ± 1 SE)")
        ax.set_title(f"({DATASET_PANELS[ds].letter}) {DATASET_PANELS[ds].name}", loc="left")
    for ax in axes[len(datasets):]:
        ax.axis("off")
    handles["η chosen (one-SE rule)"] = Line2D([], [], marker="o", markersize=9, markerfacecolor="none",
                                                color="#333333", linestyle="")
    fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncol=3, frameon=False)
    return fig


def cv_curves_png(scores: pd.DataFrame, chosen: pd.DataFrame, record_as: str | Path | None = None) -> bytes:
    """:func:`cv_curves_figure` as PNG bytes for the report, its layout checked and, with
    ``record_as``, recorded (:func:`mpdp.figures.plot.png_bytes`)."""
    with matplotlib.rc_context(style.RC):
        return png_bytes(cv_curves_figure(scores, chosen), record_as)
