"""Figures of the least-squares study (spec E6, bounds.md B8): ``reports/figures/ls_1|ls_2|ls_3``.

Drawn from the experiment tables only (plotting never recomputes noise). Lines are medians
over noise draws with their distribution-free 95 % interval as a band (the mean excess risk
does not exist, B8); sample means are open markers. Overlays of B8: the delta method (dotted),
the write-up's printed closed form (dashed grey, "write-up formula (incorrect)", only where
positive: a log axis cannot show its negative values, which the report's table lists), and
the SGD bound's 1/ε shape scaled through its first point.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from mpdp.figures import style
from mpdp.figures.plot import legend_below, save_figure, wrap_title

#: colours and legend names of the curves (Okabe–Ito, from the project palette order)
CURVES: dict[str, tuple[str, str]] = {
    "independent": ("#0072B2", "SSP, independent party noise (algorithm)"),
    "write_up": ("#D55E00", "SSP, write-up's t·z noise model"),
    "permutation_zcdp": ("#009E73", "noisy SGD, permutation (zCDP)"),
    "bst_sampling": ("#CC79A7", "noisy SGD, sampling (BST)"),
    "nonprivate": ("#555555", "projected SGD without noise (floor set by C)"),
}
WRITEUP_LABEL = "write-up formula (incorrect)"
SYNTHETIC_NOTE = "synthetic by design (E6 verification experiment), not a stand-in for real data"


def _legend_under(ax: Axes) -> None:
    """The panel's legend under its x-axis label, its entries wrapped to the panel's width (issue 46:
    a long entry reached past the figure's left edge)."""
    width_in = ax.get_position().width * ax.get_figure().get_figwidth()
    chars = max(20, int(width_in * 72 / (style.RC["legend.fontsize"] * 0.62)))
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, [textwrap.fill(label, chars) for label in labels], loc="upper center",
              bbox_to_anchor=(0.5, -0.22), frameon=False)


def data_note(table: pd.DataFrame) -> str:
    """One line saying what the data is (synthetic by design, or the real diabetes set)."""
    row = table.iloc[0]
    if bool(row["synthetic"]):
        return f"{row['dataset']}: {SYNTHETIC_NOTE}"
    if str(row["dataset"]).endswith("_subsampled"):
        return f"real data: scikit-learn's diabetes set SUBSAMPLED to n = {int(row['n'])} (CI profile)"
    return "real data: scikit-learn's bundled diabetes set (442 × 10)"


def _band(ax: Axes, rows: pd.DataFrame, key: str, label: str | None, marker: str = "o") -> None:
    colour = CURVES[key][0]
    rows = rows.sort_values("epsilon")
    ax.plot(rows["epsilon"], rows["excess_median"], marker=marker, color=colour, label=label, lw=1.6)
    ax.fill_between(rows["epsilon"], rows["excess_median_lo"], rows["excess_median_hi"],
                    color=colour, alpha=0.2, lw=0)


def _ssp(table: pd.DataFrame, model: str, z2: bool = True) -> pd.DataFrame:
    return table[(table["mechanism"] == "ls_ssp") & (table["noise_model"] == model) & (table["z2"] == z2)]


def _log_axes(ax: Axes, title: str) -> None:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("privacy budget ε")
    ax.set_ylabel("excess risk L(θ) − L(θ*)")
    ax.set_title(title)


def plot_ls1(table: pd.DataFrame, tail: pd.DataFrame, out_png: Path, out_pdf: Path) -> None:
    """LS-1: median and mean excess vs ε per t with the B8 overlays; heavy-tail and t-scaling panels."""
    t_grid = sorted(int(t) for t in table["t"].dropna().unique())
    models = [m for m in ("independent", "write_up") if (table["noise_model"] == m).any()]
    with plt.rc_context(style.RC):
        fig, axes = plt.subplots(2, max(len(t_grid), 3), figsize=(12.6, 9.4), dpi=style.DPI)
        for ax in axes[1, 3:]:
            ax.axis("off")
        for ax, t in zip(axes[0], t_grid, strict=False):
            for model in models:
                rows = _ssp(table, model)
                rows = rows[rows["t"] == t].sort_values("epsilon")
                colour, name = CURVES[model]
                _band(ax, rows, model, f"median, {name}" if t == t_grid[0] else None)
                ax.plot(rows["epsilon"], rows["excess_mean"], ls="none", marker="o", mfc="none",
                        color=colour, label="mean over draws" if t == t_grid[0] and model == models[0] else None)
                ax.plot(rows["epsilon"], rows["delta_method_median"], ls=":", color=colour, lw=1.4,
                        label=f"delta method (B8), median, {model}" if t == t_grid[0] else None)
            rows = _ssp(table, models[0])
            rows = rows[rows["t"] == t].sort_values("epsilon")
            positive = rows["writeup_formula"].where(rows["writeup_formula"] > 0)
            ax.plot(rows["epsilon"], positive, ls="--", color="#555555", lw=1.4,
                    label=WRITEUP_LABEL if t == t_grid[0] else None)
            _log_axes(ax, f"t = {t} parties")
        # heavy tail: running mean over draws
        ax = axes[1, 0]
        for model, rows in tail.groupby("noise_model", sort=True):
            colour, name = CURVES[str(model)]
            running = np.cumsum(rows["excess"].to_numpy()) / rows["draw"].to_numpy()
            ax.plot(rows["draw"], running, color=colour, lw=1.2, label=f"running mean, {name}")
            ax.axhline(float(np.median(rows["excess"])), color=colour, ls="--", lw=1.0)
        t0, e0 = int(tail["t"].iloc[0]), float(tail["epsilon"].iloc[0])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("number of noise draws")
        ax.set_ylabel("running mean of the excess risk")
        ax.set_title(f"heavy tail: t = {t0}, ε = {e0:g} (dashed: median)")
        _legend_under(ax)
        # growth with t at the smallest epsilon
        ax = axes[1, 1]
        eps_min = float(table["epsilon"].min())
        for model in models:
            rows = _ssp(table, model)
            rows = rows[rows["epsilon"] == eps_min].sort_values("t")
            ax.plot(rows["t"], rows["excess_median"], marker="o", color=CURVES[model][0],
                    label=f"median, {model}")
        ref = _ssp(table, models[0])
        ref = ref[(ref["epsilon"] == eps_min) & (ref["t"] == t_grid[0])]["excess_median"]
        if not ref.empty:
            ts = np.array(t_grid, dtype=float)
            base = float(ref.iloc[0])
            ax.plot(ts, base * ts / ts[0], ls=":", color="black", label="∝ t")
            ax.plot(ts, base * (ts / ts[0]) ** 2, ls="--", color="black", label="∝ t²")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("number of parties t")
        ax.set_ylabel("median excess risk")
        ax.set_title(f"growth with t at ε = {eps_min:g}")
        _legend_under(ax)
        # sigma2 = 0 ablation
        ax = axes[1, 2]
        for model in models:
            rows = _ssp(table, model, z2=False)
            if rows.empty:
                continue
            rows = rows[rows["t"] == t_grid[-1]]
            _band(ax, rows, model, f"median, σ₂ = 0, {model}")
        neg = table[(table["mechanism"] == "ls_ssp") & (table["z2"] == False) & (table["writeup_formula"] < 0)]  # noqa: E712
        _log_axes(ax, f"σ₂ = 0 ablation, t = {t_grid[-1]}:\nprinted formula < 0 at {len(neg)} settings")
        _legend_under(ax)
        fig.suptitle(wrap_title(f"LS-1: naive sufficient-statistics perturbation (M14), d = 1 — {data_note(table)}",
                                100))
        legend_below(fig, [axes[0, 0]], ncol=2)
        save_figure(fig, out_png, out_pdf)
        plt.close(fig)


def plot_comparison(table: pd.DataFrame, experiment: str, out_png: Path, out_pdf: Path) -> None:
    """LS-2 / LS-3: SSP (independent noise) vs noisy SGD (both options) median excess vs ε per t,
    with the B8 SGD shape and the noise-free projected-SGD floor."""
    t_grid = sorted(int(t) for t in table["t"].dropna().unique())
    sgd = table[table["mechanism"] == "ls_sgd"]
    with plt.rc_context(style.RC):
        fig, axes = plt.subplots(1, len(t_grid), figsize=(12.6, 5.4), dpi=style.DPI, squeeze=False,
                                 sharey=True)
        for ax, t in zip(axes[0], t_grid, strict=True):
            first = t == t_grid[0]
            rows = _ssp(table, "independent")
            rows = rows[rows["t"] == t]
            _band(ax, rows, "independent", CURVES["independent"][1] if first else None)
            fallback = 100 * float(rows["pd_fallback"].mean()) if not rows.empty else float("nan")
            for option in ("permutation_zcdp", "bst_sampling"):
                rows = sgd[sgd["noise_model"] == option]
                if rows.empty:
                    continue
                _band(ax, rows, option, CURVES[option][1] + " (same for all t)" if first else None, marker="s")
                if option == "permutation_zcdp":
                    rows = rows.sort_values("epsilon")
                    e = rows["epsilon"].to_numpy()
                    ax.plot(e, rows["excess_median"].iloc[0] * e[0] / e, ls="--", color=CURVES[option][0],
                            lw=1.0, label="B8 SGD bound shape ∝ 1/ε (scaled)" if first else None)
            floor = sgd[sgd["noise_model"] == "nonprivate"]["excess_median"]
            if not floor.empty and float(floor.iloc[0]) > 0:
                ax.axhline(float(floor.iloc[0]), color=CURVES["nonprivate"][0], ls=":",
                           label=CURVES["nonprivate"][1] if first else None)
            _log_axes(ax, f"t = {t} parties\n(SSP: τI fallback in {fallback:.0f} % of draws)")
        d = int(table["d"].iloc[0])
        fig.suptitle(wrap_title(f"{experiment.upper().replace('_', '-')}: SSP (M14) vs noisy SGD (M15), d = {d} — "
                                f"{data_note(table)}", 100))
        legend_below(fig, [axes[0, 0]], ncol=3)
        save_figure(fig, out_png, out_pdf)
        plt.close(fig)
