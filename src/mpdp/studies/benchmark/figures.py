"""Figures of the cross-paper benchmark (spec experiments.md E10; issue 10 "Outputs").

- ``xp_eps``, ``xp_m``, ``xp_u``: test accuracy (top row) and optimality gap against the pooled
  θ* of the same λ (bottom row, log scale) versus ε, m or u, the other two held at the reference
  cell ``benchmark.reference``; one column per data set; every mechanism, mean over repetitions
  with a 95 % t-band. Party-level mechanisms (Hamm, party-level averaging) are dashed and marked
  "(party-level ε)", Hamm's methods also "(public data)"; the non-private θ* is a grey line.
- ``xp_rank``: per data set a heat map over the grid (rows ε, columns (m, u)), colour = the best
  mechanism on the primary metric, the number = how many mechanisms are tied with it (not
  significantly worse, paired test over repetitions, Holm), hatched "u" = uninformative cell;
  read from the ranking table (:mod:`mpdp.studies.benchmark.ranking`).

- ``xp_glance`` (issue 56): the benchmark at a glance — per data set, test log-loss (the primary
  metric; mean and 95 % band, log scale) versus ε at the reference m and u, every private mechanism
  beside two references drawn distinctly: objective perturbation (``objpert``, the standard one-shot
  baseline; a thick wine-coloured curve with its band, square marks) and the non-private θ* (a grey
  dotted line), with the constant base-rate predictor (dash-dot); the rows of the headline
  selection protocol, i.e. at equal end-to-end accounted privacy where the tables carry it
  (:func:`glance_reading` says which, and the report's caption is generated from it).

Every title states the data size (private records, and the ``max_train_records`` cap).
"""

from __future__ import annotations

import logging
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402
from matplotlib.patches import Patch, Rectangle  # noqa: E402

from mpdp.errors import InputDataError  # noqa: E402
from mpdp.figures import style  # noqa: E402
from mpdp.figures.bands import summarise  # noqa: E402
from mpdp.figures.plot import save_figure  # noqa: E402
from mpdp.report import names  # noqa: E402
from mpdp.studies.benchmark import ranking  # noqa: E402
from mpdp.studies.benchmark.tables import read_ranking, read_tables  # noqa: E402

FIGURES = ("xp_eps", "xp_m", "xp_u", "xp_rank", "xp_glance")
#: the axis of each sweep figure: (column, label, log scale)
SWEEPS: dict[str, tuple[str, str, bool]] = {
    "xp_eps": ("epsilon", "privacy budget ε (record level, δ = {delta:g}; accounted = target)", True),
    "xp_m": ("m", "number of parties m", True),
    "xp_u": ("u", "size unevenness u = n_max / n_min", False),
}
#: one hue per paper a mechanism comes from (Okabe–Ito, at most eight; the id's first word picks
#: it), the mechanisms of one hue told apart by their line style (:data:`_LINESTYLES`)
_HUES: dict[str, str] = {"wddp": "#0072B2", "jayaraman": "#D55E00", "wyx": "#009E73", "dpsgd": "#CC79A7",
                         "pathak": "#E69F00", "param": "#E69F00", "hamm": "#56B4E9", "dvp": "#000000",
                         "pvp": "#000000"}
_SPARE = ("#F0E442", "#777777")
#: distinct colours of the ranking heat map, where a colour names one mechanism (not a family)
_CELL_COLOURS = plt.get_cmap("tab20").colors
_LINESTYLES = ("-", "--", ":", "-.")
#: the most mechanisms' curves in one panel (issue 35: a reader can tell at most ~8 apart)
MAX_CURVES = 7



def _legend_entries(axes: np.ndarray) -> tuple[list[Any], list[str]]:
    """Every panel's legend entries once, in the order they first appear."""
    handles: list[Any] = []
    labels: list[str] = []
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    return handles, labels

def catalogue(table: pd.DataFrame) -> pd.DataFrame:
    """Per mechanism of the rows, in table order (= ``benchmark.mechanisms`` order): its label
    with the privacy-unit / public-data marks, line style, colour and whether it is a reference.

    Everything a figure says about a mechanism comes from its rows (what it declared through
    :mod:`mpdp.studies.benchmark.interface`), so a new mechanism needs no figure code.
    """
    first = table.drop_duplicates("mechanism").set_index("mechanism")
    rows, used, spare = [], {}, {}
    for i, (mech, r) in enumerate(first.iterrows()):
        marks = (["party-level ε"] if r["privacy_unit"] == "party" else []) + \
            (["public data"] if bool(r["public_data"]) else [])
        base = r["label"] if isinstance(r["label"], str) else mech
        key = str(mech).split("_", 1)[0]
        colour = _HUES.get(key) or spare.setdefault(key, _SPARE[len(spare) % len(_SPARE)])
        rows.append({"mechanism": mech, "label": base + (f" ({', '.join(marks)})" if marks else ""),
                     "linestyle": _LINESTYLES[used.get(colour, 0) % len(_LINESTYLES)],
                     "colour": colour, "cell_colour": _CELL_COLOURS[i % len(_CELL_COLOURS)],
                     "reference": r["family"] == "reference", "family": r["family"]})
        used[colour] = used.get(colour, 0) + 1
    return pd.DataFrame(rows).set_index("mechanism")


def panel_groups(cat: pd.DataFrame, limit: int = MAX_CURVES) -> list[list[str]]:
    """The mechanisms (no reference) split into panels of at most ``limit`` curves: each family, in
    table order, joins the first panel it fits in whole (a family larger than ``limit`` is cut)."""
    groups: list[list[str]] = []
    for _family, members in cat[~cat["reference"]].groupby("family", sort=False):
        names = list(members.index)
        while names:
            part, names = names[:limit], names[limit:]
            target = next((g for g in groups if len(g) + len(part) <= limit), None)
            if target is None:
                groups.append(part)
            else:
                target.extend(part)
    return groups or [[]]


def _at_reference(table: pd.DataFrame, reference: Mapping[str, Any], free: str) -> pd.DataFrame:
    """Rows with every cell coordinate but ``free`` at the reference value."""
    keep = np.ones(len(table), dtype=bool)
    for col in ("epsilon", "m", "u"):
        if col != free:
            keep &= np.isclose(table[col].astype(float), float(reference[col]))
    return table[keep]


#: panel width and height (inches); at most :data:`_MAX_COLUMNS` data sets side by side, further
#: ones in another block of rows, and the legend under the panels: the figure stays at most 12.6 in
#: wide, so the report shows it with its 10 pt text legible (issue 46: four data sets side by side
#: were shown at 0.47 scale)
_PANEL_W, _PANEL_H, _MAX_COLUMNS = 3.9, 3.3, 3


def _columns(n: int) -> int:
    """Data sets per block of rows: at most :data:`_MAX_COLUMNS`, the blocks as even as possible."""
    blocks = -(-max(n, 1) // _MAX_COLUMNS)
    return -(-max(n, 1) // blocks)


def data_sizes(table: pd.DataFrame, cap: int | None) -> dict[str, str]:
    """Per data set, "n = <private records> (cap <max_train_records>)" from the rows' ``n``."""
    note = f", cap {cap}" if cap is not None else ""
    return {ds: f"n = {int(sub['n'].max())} private records{note}" for ds, sub in table.groupby("dataset")}


def _axis(ax: plt.Axes, values: Sequence[float], log: bool, base: int) -> None:
    """An x axis with ticks at the grid values written plainly (no 2×10⁰ labels, no minor ticks)."""
    vals = sorted({float(v) for v in values})
    if log:
        ax.set_xscale("log", base=base)
    ax.set_xticks(vals, [f"{v:g}" for v in vals])
    ax.minorticks_off()


def plot_sweep(table: pd.DataFrame, name: str, reference: Mapping[str, Any], delta: float,
               png: Path, pdf: Path, cap: int | None = None) -> None:
    """``xp_eps`` / ``xp_m`` / ``xp_u``: accuracy and optimality gap vs the sweep's axis."""
    x, xlabel, logx = SWEEPS[name]
    datasets = sorted(table["dataset"].unique())
    sizes = data_sizes(table, cap)
    cat = catalogue(table)
    groups = panel_groups(cat)
    cols = _columns(len(datasets))
    blocks = -(-len(datasets) // cols)
    width = _PANEL_W * cols + 0.8
    panels = [(metric, group) for group in groups for metric in ("accuracy", "optimal_gap")]
    with matplotlib.rc_context(style.RC):
        fig, axes = plt.subplots(blocks * len(panels), cols, squeeze=False, layout="constrained",
                                 figsize=(width, blocks * len(panels) * _PANEL_H + 2.2))
        for ax in axes[-len(panels):, (len(datasets) - 1) % cols + 1:].flat:  # the last block's unused columns
            ax.remove()
        for index, ds in enumerate(datasets):
            block, c = divmod(index, cols)
            rows = _at_reference(table[table["dataset"] == ds], reference, x)
            for r, (metric, group) in enumerate(panels):
                ax = axes[block * len(panels) + r, c]
                for mech, info in cat.iterrows():
                    if not info["reference"] and mech not in group:
                        continue
                    runs = rows[rows["mechanism"] == mech].dropna(subset=[metric])
                    if runs.empty:
                        continue
                    s = summarise(runs.assign(**{x: runs[x].astype(float)}), [x], metric)
                    if metric == "accuracy":  # a band of an accuracy stays inside [0, 1]
                        s = s.assign(lo=s["lo"].clip(0.0, 1.0), hi=s["hi"].clip(0.0, 1.0))
                    if info["reference"]:
                        if metric == "accuracy":
                            ax.plot(s[x], s["mean"], color="#555555", lw=1.2, ls=":", label=info["label"])
                        continue
                    ax.plot(s[x], s["mean"], color=info["colour"], ls=info["linestyle"], marker="o", ms=3,
                            label=info["label"])
                    ax.fill_between(s[x], s["lo"], s["hi"], color=info["colour"], alpha=0.15, linewidth=0)
                if not rows.empty and metric == "accuracy":
                    ax.axhline(float(rows["majority_rate"].iloc[0]), color="#999999", lw=0.8, ls="-.",
                               label="majority class (floor)")
                if not rows.empty:
                    _axis(ax, rows[x].astype(float).unique(), logx, 2 if x == "m" else 10)
                if metric == "optimal_gap":
                    ax.set_yscale("log")
                ax.set_xlabel(textwrap.fill(xlabel.format(delta=delta), 36))
                ax.set_ylabel("test accuracy" if metric == "accuracy" else "optimality gap L(θ) − L(θ*)")
                held = ", ".join(f"{'ε' if k == 'epsilon' else k} = {reference[k]:g}"
                                 for k in ("epsilon", "m", "u") if k != x)
                part = f", mechanisms {r // 2 + 1} of {len(groups)}" if len(groups) > 1 else ""
                ax.set_title(textwrap.fill(f"{names.dataset(ds)} ({held}){part}", 40) + f"\n{sizes[ds]}")
        handles, labels = _legend_entries(axes)
        fig.legend(handles, [textwrap.fill(lab, 40) for lab in labels], loc="outside lower center", ncol=cols,
                   frameon=False)
        title = textwrap.fill(f"All mechanisms on one footing: replace-one record-level (ε, δ = {delta:g}), "
                              "whole transcript accounted; mean and 95 % band over repetitions; "
                              + "; ".join(f"{ds}: {n}" for ds, n in sizes.items()), int(9 * width))
        fig.suptitle(title)
        save_figure(fig, png, pdf)
        plt.close(fig)


def plot_rank(ranked: pd.DataFrame, cat: pd.DataFrame, png: Path, pdf: Path,
              sizes: Mapping[str, str] | None = None) -> None:
    """``xp_rank``: per cell the best mechanism on the primary metric and how many are tied with it.

    Reads the per-cell ranking table (:func:`mpdp.studies.benchmark.ranking.ranking_table`);
    uninformative cells (no mechanism's accuracy significantly above the majority rate) are hatched.
    """
    if ranked.empty:
        raise InputDataError("the benchmark ranking table has no cells: nothing to plot")
    metric = str(ranked["primary_metric"].iloc[0])
    sizes = dict(sizes or {})
    mechs = [m for m in cat.index if m in set(ranked["best_mechanism"])]
    code = {m: i for i, m in enumerate(mechs)}
    cmap = ListedColormap([cat.loc[m, "cell_colour"] for m in mechs])
    datasets = sorted(ranked["dataset"].unique())
    cols = min(len(datasets), 2)  # a cell's count and the m, u labels at 10 pt need the room
    blocks = -(-len(datasets) // cols)
    width = max(6.0 * cols + 0.6, 8.0)
    with matplotlib.rc_context(style.RC):
        fig, grid = plt.subplots(blocks, cols, figsize=(width, 5.0 * blocks + 2.4), squeeze=False,
                                 layout="constrained")
        for ax in grid.flat[len(datasets):]:
            ax.remove()
        axes = [list(grid.flat[: len(datasets)])]
        for ax, ds in zip(axes[0], datasets, strict=True):
            sel = ranked[ranked["dataset"] == ds].copy()
            sel["mu"] = [f"m={int(m)}, u={float(u):g}" for m, u in zip(sel["m"], sel["u"], strict=True)]
            order = sorted(sel["mu"].unique(), key=lambda s: tuple(float(v.split("=")[1]) for v in s.split(", ")))
            cells = sel.pivot(index="epsilon", columns="mu", values="best_mechanism").reindex(columns=order)
            n_tied = sel.pivot(index="epsilon", columns="mu", values="n_tied").reindex(columns=order)
            flat = sel.pivot(index="epsilon", columns="mu", values="uninformative").reindex(columns=order)
            values = cells.apply(lambda col: col.map(code)).to_numpy(dtype=float)
            ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=-0.5, vmax=len(mechs) - 0.5, aspect="auto")
            for i in range(values.shape[0]):
                for j in range(values.shape[1]):
                    if not np.isfinite(values[i, j]):
                        continue
                    text = f"{int(n_tied.iloc[i, j])}"
                    if bool(flat.iloc[i, j]):
                        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///",
                                               edgecolor="#444444", linewidth=0))
                        text += " u"
                    ax.text(j, i, text, ha="center", va="center",
                            bbox={"facecolor": "white", "alpha": 0.8, "linewidth": 0, "pad": 1})
            ax.set_xticks(range(len(order)), order, rotation=60, ha="right")
            ax.set_yticks(range(len(cells.index)), [f"{e:g}" for e in cells.index])
            ax.set_ylabel("ε")
            ax.set_title(f"{ds}\n{sizes[ds]}" if ds in sizes else ds)
            ax.grid(False)
        patches = [Patch(color=cat.loc[m, "cell_colour"], label=textwrap.fill(cat.loc[m, "label"], 44)) for m in mechs]
        patches.append(Patch(facecolor="white", edgecolor="#444444", hatch="///",
                             label="u: uninformative cell (no accuracy\nabove the majority rate)"))
        fig.legend(handles=patches, loc="outside lower center", ncol=2 if width >= 10 else 1, frameon=False)
        title = textwrap.fill(
            f"Best mechanism per cell on the primary metric ({ranking.PRIMARY_METRICS[metric]}; lower is "
            "better); number = mechanisms not significantly worse (incl. the best; paired t-test over "
            f"repetitions, Holm, α = {ranking.ALPHA:g})", int(9 * width))
        fig.suptitle(title)
        save_figure(fig, png, pdf)
        plt.close(fig)


#: the standard one-shot baseline ``xp_glance`` draws as a reference curve, not as a competitor
GLANCE_BASELINE = "objpert"
_GLANCE_BASELINE_COLOUR = "#882255"  # in no mechanism's hue (:data:`_HUES`, :data:`_SPARE`)
_GLANCE_REFERENCE_COLOUR = "#555555"
_GLANCE_BASE_RATE_COLOUR = "#999999"
#: the reading of each selection protocol (mirrors :data:`mpdp.studies.benchmark.ranking.READINGS`)
_READING_TEXT = {"end_to_end": "end-to-end: hyper-parameter selection included",
                 "final_run": "final run only: selection not accounted"}
_READING_SHORT = {"end_to_end": "end to end", "final_run": "final run only"}


def glance_rows(table: pd.DataFrame, reference: Mapping[str, Any]) -> pd.DataFrame:
    """The rows ``xp_glance`` draws: every ε at the reference m and u (the table's headline protocol)."""
    return _at_reference(table, reference, "epsilon")


def glance_reading(rows: pd.DataFrame) -> dict[str, Any]:
    """What privacy the rows of ``xp_glance`` are drawn at, from those rows: the selection protocol,
    its reading, and the largest ratio of the accounted ε (end to end where finite, else of the final
    run) to the target over the private rows drawn."""
    private = rows[rows["family"] != ranking.REFERENCE_FAMILY]
    protocol = (", ".join(sorted(private["selection"].dropna().unique())) if "selection" in private
                else "oracle")
    reading = ranking.READINGS.get(protocol, "final_run")
    column = "eps_end_to_end" if reading == "end_to_end" else "eps_total"
    eps = private[column].astype(float) if column in private else pd.Series(dtype=float)
    finite = np.isfinite(eps) & (private["epsilon"] > 0)
    ratio = float((eps[finite] / private.loc[finite, "epsilon"]).max()) if finite.any() else float("nan")
    return {"protocol": protocol, "reading": reading, "text": _READING_TEXT[reading],
            "short": _READING_SHORT[reading], "column": column,
            "ratio": ratio, "mechanisms": int(private["mechanism"].nunique()), "runs": len(private)}


def _base_rate(rows: pd.DataFrame) -> float:
    """The constant base-rate predictor's test log-loss (the ranking's trivial baseline), mean over repetitions."""
    return float(np.mean(ranking.base_rate_logloss(rows["majority_rate"].astype(float).to_numpy())))


def _floored(s: pd.DataFrame, floor: float) -> pd.DataFrame:
    """A summary's band with its lower edge at least ``floor`` (the panel's smallest log-loss > 0)."""
    return s.assign(lo=s["lo"].clip(lower=floor))


def plot_glance(table: pd.DataFrame, reference: Mapping[str, Any], delta: float, png: Path, pdf: Path,
                cap: int | None = None) -> None:
    """``xp_glance``: test log-loss vs ε per data set, every private mechanism against ``objpert``
    and the non-private θ* (module docstring)."""
    rows_all = glance_rows(table, reference)
    if rows_all.empty:
        raise InputDataError("xp_glance: the benchmark tables have no rows at the reference cell")
    datasets = sorted(rows_all["dataset"].unique())
    sizes = data_sizes(table, cap)
    cat = catalogue(table)
    groups = panel_groups(cat[cat.index != GLANCE_BASELINE])
    reading = glance_reading(rows_all)
    cols = _columns(len(datasets))
    blocks = -(-len(datasets) // cols)
    width = max(_PANEL_W * cols + 0.8, 8.4)  # one data set: a wide panel, the legend in two columns
    ncol = max(cols, 2)
    drawn = set(rows_all["mechanism"])
    entries = sum(m in drawn for m in cat.index if not cat.loc[m, "reference"]) + 2  # + θ*, base rate
    legend_h = 0.5 * -(-entries // ncol) + 0.4  # wrapped labels take up to two lines
    with matplotlib.rc_context(style.RC):
        fig, axes = plt.subplots(blocks * len(groups), cols, squeeze=False, layout="constrained",
                                 figsize=(width, blocks * len(groups) * _PANEL_H + 1.6 + legend_h))
        for ax in axes[-len(groups):, (len(datasets) - 1) % cols + 1:].flat:  # the last block's unused columns
            ax.remove()
        for index, ds in enumerate(datasets):
            block, c = divmod(index, cols)
            rows = rows_all[(rows_all["dataset"] == ds)].dropna(subset=["test_logloss"])
            rows = rows.assign(epsilon=rows["epsilon"].astype(float))
            for g, group in enumerate(groups):
                ax = axes[block * len(groups) + g, c]
                floor = float(rows["test_logloss"].min()) if not rows.empty else 0.0  # a log axis: bands > 0
                for mech in group:
                    runs = rows[rows["mechanism"] == mech]
                    if runs.empty:
                        continue
                    s = summarise(runs, ["epsilon"], "test_logloss").pipe(_floored, floor)
                    info = cat.loc[mech]
                    ax.plot(s["epsilon"], s["mean"], color=info["colour"], ls=info["linestyle"], marker="o", ms=3,
                            label=info["label"])
                    ax.fill_between(s["epsilon"], s["lo"], s["hi"], color=info["colour"], alpha=0.12, linewidth=0)
                base = rows[rows["mechanism"] == GLANCE_BASELINE]
                if not base.empty:
                    s = summarise(base, ["epsilon"], "test_logloss").pipe(_floored, floor)
                    ax.plot(s["epsilon"], s["mean"], color=_GLANCE_BASELINE_COLOUR, lw=2.6, marker="s", ms=4,
                            label=f"{cat.loc[GLANCE_BASELINE, 'label']} — reference", zorder=4, gid="objpert")
                    ax.fill_between(s["epsilon"], s["lo"], s["hi"], color=_GLANCE_BASELINE_COLOUR, alpha=0.2,
                                    linewidth=0)
                for mech in cat.index[cat["reference"]]:
                    ref = rows[rows["mechanism"] == mech]
                    if not ref.empty:
                        ax.axhline(float(ref["test_logloss"].mean()), color=_GLANCE_REFERENCE_COLOUR, lw=1.6,
                                   ls=":", label=f"{cat.loc[mech, 'label']} (no privacy)", gid="reference")
                if not rows.empty:
                    ax.axhline(_base_rate(rows), color=_GLANCE_BASE_RATE_COLOUR, lw=0.9, ls="-.",
                               label="constant base-rate predictor (chance)", gid="base_rate")
                    _axis(ax, rows["epsilon"].unique(), True, 10)
                ax.set_yscale("log")
                ax.set_xlabel(textwrap.fill(f"privacy budget ε (record level, δ = {delta:g}, {reading['short']})", 40))
                ax.set_ylabel("test log-loss (lower is better)")
                part = f", mechanisms {g + 1} of {len(groups)}" if len(groups) > 1 else ""
                ax.set_title(textwrap.fill(f"{names.dataset(ds)} (m = {reference['m']:g}, u = {reference['u']:g}){part}", 40)
                             + f"\n{sizes[ds]}")
        handles, labels = _legend_entries(axes)
        first = [i for i, h in enumerate(handles) if h.get_gid() in ("objpert", "reference", "base_rate")]
        order = first + [i for i in range(len(handles)) if i not in first]  # the references lead the legend
        handles, labels = [handles[i] for i in order], [labels[i] for i in order]
        fig.legend(handles, [textwrap.fill(lab, 40) for lab in labels], loc="outside lower center", ncol=ncol,
                   frameon=False)
        fig.suptitle(textwrap.fill(
            f"The benchmark at a glance: test log-loss of every private mechanism against objective perturbation "
            f"and the non-private θ*, at equal accounted privacy ({reading['text']}); mean and 95 % band over "
            "repetitions", int(9 * width)))
        save_figure(fig, png, pdf)
        plt.close(fig)


def build(name: str, cfg: Mapping[str, Any], tables: Sequence[Path], png: Path, pdf: Path,
          log: logging.Logger, ranking_tables: Sequence[Path] = ()) -> None:
    """Draw benchmark figure ``name`` from the data sets' tables (xp_rank: from the ranking table)."""
    if name not in FIGURES:
        raise InputDataError(f"unknown benchmark figure {name!r}; known: {FIGURES}")
    table = read_tables(tables)
    b = cfg["benchmark"]
    cap = b.get("max_train_records")
    if name == "xp_rank":
        if not ranking_tables:
            raise InputDataError("xp_rank needs data/results/benchmark/ranking.parquet (rule benchmark_ranking)")
        plot_rank(ranking.headline(read_ranking(ranking_tables[0])), catalogue(table), png, pdf, data_sizes(table, cap))
    elif name == "xp_glance":
        plot_glance(table, b["reference"], float(b["delta"]), png, pdf, cap)
    else:
        plot_sweep(table, name, b["reference"], float(b["delta"]), png, pdf, cap)
    log.info("%s: %d rows of %d data sets", name, len(table), table["dataset"].nunique())
