"""Figures of the cross-paper benchmark (spec experiments.md E10; issue 10 "Outputs").

- ``xp_eps``, ``xp_m``, ``xp_u``: test accuracy (top row) and optimality gap against the pooled
  θ* of the same λ (bottom row, log scale) versus ε, m or u, the other two held at the reference
  cell ``benchmark.reference``; one column per data set; every mechanism, mean over repetitions
  with a 95 % t-band. Party-level mechanisms (Hamm, party-level averaging) are dashed and marked
  "(party-level ε)", Hamm's methods also "(public data)"; the non-private θ* is a grey line.
- ``xp_rank``: per data set a heat map over the grid (rows ε, columns (m, u)), colour = the best
  mechanism by mean accuracy, the number = how many mechanisms are tied with it (not
  significantly worse, paired test over repetitions, Holm, :mod:`mpdp.studies.benchmark.ranking`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

from mpdp import results  # noqa: E402
from mpdp.errors import InputDataError  # noqa: E402
from mpdp.figures import style  # noqa: E402
from mpdp.figures.bands import summarise  # noqa: E402
from mpdp.figures.plot import save_figure  # noqa: E402
from mpdp.studies.benchmark import ranking  # noqa: E402
from mpdp.studies.benchmark.schema import EXTRA_COLUMNS, MECHANISM_BY_ID, MECHANISMS  # noqa: E402

FIGURES = ("xp_eps", "xp_m", "xp_u", "xp_rank")
#: the axis of each sweep figure: (column, label, log scale)
SWEEPS: dict[str, tuple[str, str, bool]] = {
    "xp_eps": ("epsilon", "privacy budget ε (record level, δ = {delta:g}; accounted = target)", True),
    "xp_m": ("m", "number of parties m", True),
    "xp_u": ("u", "size unevenness u = n_max / n_min", False),
}
_COLOURS = dict(zip([m.id for m in MECHANISMS], plt.get_cmap("tab20").colors, strict=False))


def read_tables(paths: Sequence[Path | str]) -> pd.DataFrame:
    """The benchmark tables of the data sets, concatenated (schema-checked on read)."""
    frames = [results.read(p, extra=_extra(p)) for p in paths]
    if not frames:
        raise InputDataError("no benchmark tables to plot")
    return pd.concat(frames, ignore_index=True)


def _extra(path: Path | str) -> dict[str, str]:
    """The benchmark's extra columns plus whatever further columns the table carries."""
    columns = results.read_parquet(path, "benchmark table").columns
    extra = dict(EXTRA_COLUMNS)
    for col in columns:
        if col not in results.COLUMNS and col not in extra:
            extra[col] = "object"
    return extra


def label(mechanism: str) -> str:
    """Legend label: the catalogue's label plus the privacy unit / public-data marks."""
    mech = MECHANISM_BY_ID.get(mechanism)
    if mech is None:
        return mechanism
    marks = []
    if mech.privacy_unit == "party":
        marks.append("party-level ε")
    if mech.public_data:
        marks.append("public data")
    return mech.label + (f" ({', '.join(marks)})" if marks else "")


def _linestyle(mechanism: str) -> str:
    mech = MECHANISM_BY_ID.get(mechanism)
    return "--" if mech is not None and mech.privacy_unit == "party" else "-"


def _at_reference(table: pd.DataFrame, reference: Mapping[str, Any], free: str) -> pd.DataFrame:
    """Rows with every cell coordinate but ``free`` at the reference value."""
    keep = np.ones(len(table), dtype=bool)
    for col in ("epsilon", "m", "u"):
        if col != free:
            keep &= np.isclose(table[col].astype(float), float(reference[col]))
    return table[keep]


def plot_sweep(table: pd.DataFrame, name: str, reference: Mapping[str, Any], delta: float,
               png: Path, pdf: Path) -> None:
    """``xp_eps`` / ``xp_m`` / ``xp_u``: accuracy and optimality gap vs the sweep's axis."""
    x, xlabel, logx = SWEEPS[name]
    datasets = sorted(table["dataset"].unique())
    mechs = [m.id for m in MECHANISMS if m.id in set(table["mechanism"])]
    with matplotlib.rc_context(style.RC):
        fig, axes = plt.subplots(2, len(datasets), figsize=(4.4 * len(datasets), 7.6), squeeze=False)
        for c, ds in enumerate(datasets):
            rows = _at_reference(table[table["dataset"] == ds], reference, x)
            for r, metric in enumerate(("accuracy", "optimal_gap")):
                ax = axes[r, c]
                for mech in mechs:
                    runs = rows[rows["mechanism"] == mech].dropna(subset=[metric])
                    if runs.empty:
                        continue
                    s = summarise(runs.assign(**{x: runs[x].astype(float)}), [x], metric)
                    if mech == "nonprivate":
                        if metric == "accuracy":
                            ax.plot(s[x], s["mean"], color="#555555", lw=1.2, ls=":", label=label(mech))
                        continue
                    colour = _COLOURS[mech]
                    ax.plot(s[x], s["mean"], color=colour, ls=_linestyle(mech), marker="o", ms=3, label=label(mech))
                    ax.fill_between(s[x], s["lo"], s["hi"], color=colour, alpha=0.15, linewidth=0)
                if not rows.empty and metric == "accuracy":
                    ax.axhline(float(rows["majority_rate"].iloc[0]), color="#999999", lw=0.8, ls="-.",
                               label="majority class (floor)")
                if logx:
                    ax.set_xscale("log")
                if metric == "optimal_gap":
                    ax.set_yscale("log")
                ax.set_xlabel(xlabel.format(delta=delta))
                ax.set_ylabel("test accuracy" if metric == "accuracy" else "optimality gap L(θ) − L(θ*)")
                held = ", ".join(f"{'ε' if k == 'epsilon' else k} = {reference[k]:g}"
                                 for k in ("epsilon", "m", "u") if k != x)
                ax.set_title(f"{ds} ({held})")
        handles, labels = axes[0, 0].get_legend_handles_labels()
        for ax in axes.flat:
            for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
        fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=7.5, frameon=False)
        fig.suptitle(f"All mechanisms on one footing: replace-one record-level (ε, δ = {delta:g}), whole "
                     "transcript accounted; mean and 95 % band over repetitions", fontsize=10)
        fig.tight_layout(rect=(0, 0.13, 1, 0.96))
        save_figure(fig, png, pdf)
        plt.close(fig)


def plot_rank(table: pd.DataFrame, png: Path, pdf: Path) -> None:
    """``xp_rank``: the best mechanism of each cell, and how many are tied with it."""
    ranked = ranking.cell_ranking(table)
    if ranked.empty:
        raise InputDataError("no competing mechanisms in the benchmark tables: nothing to rank")
    best = ranked[ranked["best"]].copy()
    ties = ranked.groupby(ranking.CELL[:1] + ranking.CELL[1:])["tied"].sum().rename("n_tied").reset_index()
    best = best.merge(ties, on=ranking.CELL)
    mechs = [m.id for m in MECHANISMS if m.id in set(best["mechanism"])]
    code = {m: i for i, m in enumerate(mechs)}
    cmap = ListedColormap([_COLOURS[m] for m in mechs])
    datasets = sorted(best["dataset"].unique())
    with matplotlib.rc_context(style.RC):
        fig, axes = plt.subplots(1, len(datasets), figsize=(4.6 * len(datasets), 4.2), squeeze=False)
        for ax, ds in zip(axes[0], datasets, strict=True):
            sel = best[best["dataset"] == ds].copy()
            sel["mu"] = [f"m={int(m)}, u={float(u):g}" for m, u in zip(sel["m"], sel["u"], strict=True)]
            order = sorted(sel["mu"].unique(), key=lambda s: tuple(float(v.split("=")[1]) for v in s.split(", ")))
            grid = sel.pivot(index="epsilon", columns="mu", values="mechanism").reindex(columns=order)
            n_tied = sel.pivot(index="epsilon", columns="mu", values="n_tied").reindex(columns=order)
            values = grid.apply(lambda col: col.map(code)).to_numpy(dtype=float)
            ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=-0.5, vmax=len(mechs) - 0.5, aspect="auto")
            for i in range(values.shape[0]):
                for j in range(values.shape[1]):
                    if np.isfinite(values[i, j]):
                        ax.text(j, i, f"{int(n_tied.iloc[i, j])}", ha="center", va="center", fontsize=7)
            ax.set_xticks(range(len(order)), order, rotation=60, ha="right", fontsize=7)
            ax.set_yticks(range(len(grid.index)), [f"{e:g}" for e in grid.index])
            ax.set_ylabel("ε")
            ax.set_title(ds)
            ax.grid(False)
        fig.legend(handles=[Patch(color=_COLOURS[m], label=label(m)) for m in mechs], loc="lower center",
                   ncol=3, fontsize=7.5, frameon=False)
        fig.suptitle("Best mechanism per cell (highest mean accuracy); number = mechanisms not significantly "
                     f"worse (incl. the best; paired t-test over repetitions, Holm, α = {ranking.ALPHA:g})",
                     fontsize=9.5)
        fig.tight_layout(rect=(0, 0.16, 1, 0.94))
        save_figure(fig, png, pdf)
        plt.close(fig)


def build(name: str, cfg: Mapping[str, Any], tables: Sequence[Path], png: Path, pdf: Path,
          log: logging.Logger) -> None:
    """Draw benchmark figure ``name`` from the data sets' tables (one figure file pair out)."""
    if name not in FIGURES:
        raise InputDataError(f"unknown benchmark figure {name!r}; known: {FIGURES}")
    table = read_tables(tables)
    b = cfg["benchmark"]
    if name == "xp_rank":
        plot_rank(table, png, pdf)
    else:
        plot_sweep(table, name, b["reference"], float(b["delta"]), png, pdf)
    log.info("%s: %d rows of %d data sets", name, len(table), table["dataset"].nunique())
