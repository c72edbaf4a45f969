"""Figures of the ADMM study (spec E4 Z-F3, Z-F4, Z-F5, Z-T; bounds.md B7).

Every curve is the mean over repetitions with a 95 % Student-t band (:func:`summarise`); every
figure carries the I-11 note: α is a per-node, per-iteration budget and the seed gives no
composition over iterations, so the cumulative loss (basic tα and the optimal PLD composition
at δ) is drawn or printed next to it.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from mpdp.errors import InputDataError  # noqa: E402
from mpdp.figures import style  # noqa: E402
from mpdp.figures.bands import summarise  # noqa: E402
from mpdp.figures.plot import legend_below, save_figure, wrap_title  # noqa: E402
from mpdp.io import atomic_path  # noqa: E402
from mpdp.mechanisms import admm as zz  # noqa: E402
from mpdp.studies.admm.tradeoff import alpha_star, fit_g, fit_table  # noqa: E402
from mpdp.studies.admm.train import read_table  # noqa: E402

PRIVATE = ("dvp", "pvp")
I11_NOTE = ("α is per node and per iteration (\u201cdynamic α-DP\u201d); the paper gives no composition "
            "over iterations (I-11): cumulative loss shown as tα (basic) and PLD at δ = {delta:g}")


def checkpoint_iterations(wanted: list[int], available: np.ndarray) -> list[int]:
    """The recorded iterations closest to ``wanted`` (unique, ascending; clipped to T)."""
    available = np.sort(np.unique(available))
    picked = [int(available[np.argmin(np.abs(available - t))]) for t in wanted]
    return sorted(set(picked))


def _alpha_colours(alphas: list[float]) -> dict[float, Any]:
    cmap = plt.get_cmap("viridis")
    return {a: cmap(i / max(len(alphas) - 1, 1) * 0.9) for i, a in enumerate(sorted(alphas))}


def _band(ax: Any, s: pd.DataFrame, x: str, colour: Any, label: str, **kw: Any) -> None:
    ax.plot(s[x], s["mean"], color=colour, label=label, **kw)
    ax.fill_between(s[x], s["lo"], s["hi"], color=colour, alpha=0.2, linewidth=0)


def _reference(table: pd.DataFrame, topology: str) -> tuple[float, float, float]:
    """Final loss and MER of non-private ADMM and the centralised optimum's loss (its ρ)."""
    runs = table[(table["mechanism"] == "admm") & (table["topology"] == topology)]
    if runs.empty:
        return np.nan, np.nan, np.nan
    last = runs[runs["iteration"] == runs["iteration"].max()]
    return float(last["train_loss"].mean()), float(last["mer"].mean()), float(last["optimal_loss"].mean())


def plot_f3(table: pd.DataFrame, cfg: dict[str, Any], png: Path, pdf: Path) -> None:
    """Z-F3: total empirical loss vs iteration (DVP, PVP at several α; non-private ADMM),
    cumulative privacy loss on the right axis."""
    a = cfg["admm"]
    tops = [t for t in a["topologies"] if t in set(table["topology"])]
    alphas = [float(x) for x in a["f3_alphas"] if float(x) in set(table["alpha"].dropna())]
    if not alphas:
        alphas = sorted(table["alpha"].dropna().unique())[:: max(1, table["alpha"].nunique() // 3)]
    colours = _alpha_colours(alphas)
    with matplotlib.rc_context(style.RC):
        fig, axes = plt.subplots(len(tops), 2, figsize=(12, 4.2 * len(tops)), squeeze=False)
        for r, top in enumerate(tops):
            admm = table[(table["mechanism"] == "admm") & (table["topology"] == top)]
            for c, mech in enumerate(PRIVATE):
                ax = axes[r, c]
                twin = ax.twinx()
                for al in alphas:
                    runs = table[(table["mechanism"] == mech) & (table["topology"] == top) & (table["alpha"] == al)]
                    if runs.empty:
                        continue
                    _band(ax, summarise(runs, ["iteration"], "train_loss"), "iteration", colours[al], f"α = {al:g}")
                    eps = runs.groupby("iteration")[["eps_cumulative_basic", "eps_cumulative_pld"]].first()
                    twin.plot(eps.index, eps["eps_cumulative_basic"], color=colours[al], ls="--", lw=0.8)
                    twin.plot(eps.index, eps["eps_cumulative_pld"], color=colours[al], ls=":", lw=1.0)
                if not admm.empty:
                    s = admm.groupby("iteration")["train_loss"].mean()
                    ax.plot(s.index, s.values, color=style.PALETTE["admm"], lw=1.6, label="non-private ADMM")
                    # per repetition each split has its own optimum: their median (the fixed split: the one)
                    ax.axhline(float(admm["optimal_loss"].median()), color="#555555", ls="-.", lw=1.0,
                               label=f"centralised optimum (ρ = {float(admm['rho'].iloc[0]):g})")
                ax.set_yscale("log")
                twin.set_yscale("log")
                ax.set_xlabel("iteration t")
                ax.set_ylabel("total empirical loss\n(sum over nodes, each node's weight)")
                twin.set_ylabel("cumulative privacy loss per node")
                twin.grid(False)
                ax.set_title(f"{style.mechanism_label(mech)} — {top}")
        fig.suptitle(wrap_title("Zhang–Zhu Fig. 3 (replicated): convergence of DVP and PVP, Adult\n"
                                + I11_NOTE.format(delta=a["delta"]), 100))
        keys = ([Line2D([], [], color="#777777", ls="--", lw=0.8), Line2D([], [], color="#777777", ls=":", lw=1.0)],
                ["right axis, dashed: cumulative tα (basic)", "right axis, dotted: cumulative ε (PLD)"])
        legend_below(fig, list(axes.flat), ncol=3, extra=keys)
        save_figure(fig, png, pdf)
        plt.close(fig)


def f_perturbation(rows: pd.DataFrame, P: int, T: int) -> pd.DataFrame:
    """The perturbation a release's noise induces on the node's primal f, per row (bounds.md B7).

    The two mechanisms' noises live on different scales: PVP's ε is added to f itself, DVP's
    ε enters the objective as the linear term (C^R/B_p)εᵀf, which moves the minimiser by at
    most (C^R/B_p)‖ε‖/(κ_p + Φ) (strong convexity; κ_p = ρ/P + 2ηV_p). Both are ≈ 2d/(B_pκ_pα)
    on average, so this, not ‖ε‖, is comparable across them. PVP's release T is a DVP step.
    Columns: ``alpha``, ``expected`` (from E‖ε‖ = d/ζ) and ``drawn`` (from the mean ‖ε‖ drawn).
    """
    degree = rows["topology"].map({top: len(zz.neighbours(top, P)[0]) for top in zz.TOPOLOGIES}).to_numpy()
    kap = zz.kappa(rows["rho"].to_numpy(), P, rows["admm_penalty"].to_numpy(), degree)
    dvp_step = (rows["mechanism"].to_numpy() == "dvp") | (rows["iteration"].to_numpy() == T)
    scale = np.where(dvp_step, rows["C_R"].to_numpy() / (rows["n_min"].to_numpy() * (kap + rows["phi"].to_numpy())), 1.0)
    return pd.DataFrame({"alpha": rows["alpha"].to_numpy(), "expected": scale * rows["noise_norm_expected"].to_numpy(),
                         "drawn": scale * rows["noise_norm"].to_numpy()})


def plot_f4(table: pd.DataFrame, cfg: dict[str, Any], png: Path, pdf: Path) -> None:
    """Z-F4: loss vs α at t ∈ f4_iterations (DVP top row, PVP bottom row) with the fitted g(α),
    α* and, on a twin axis, the B7 noise diagnostic as the perturbation it induces on f
    (:func:`f_perturbation`)."""
    a = cfg["admm"]
    top = a["main_topology"]
    rows = table[(table["topology"] == top) & table["mechanism"].isin(PRIVATE)]
    iters = checkpoint_iterations(a["f4_iterations"], rows["iteration"].to_numpy()) if not rows.empty else []
    with matplotlib.rc_context(style.RC):
        fig, axes = plt.subplots(2, max(len(iters), 1), figsize=(min(4.2 * max(len(iters), 1), 12.6), 9.0),
                                 squeeze=False)
        for r, mech in enumerate(PRIVATE):
            for c, t in enumerate(iters):
                ax = axes[r, c]
                at = rows[(rows["mechanism"] == mech) & (rows["iteration"] == t)]
                if at.empty:
                    ax.text(0.5, 0.5, "no runs", ha="center", transform=ax.transAxes)
                    continue
                s = summarise(at, ["alpha"], "train_loss")
                colour = style.PALETTE[mech]
                ax.errorbar(s["alpha"], s["mean"], yerr=[s["mean"] - s["lo"], s["hi"] - s["mean"]], fmt="o",
                            color=colour, capsize=3, label="mean ± 95 % CI")
                fit = fit_g(at["alpha"].to_numpy(), at["train_loss"].to_numpy())
                grid = np.geomspace(at["alpha"].min(), at["alpha"].max(), 200)
                if np.isfinite(fit.kappa1):
                    ax.plot(grid, fit(grid), color=colour, lw=1.2,
                            label=f"g(α) = {fit.kappa1:.3g}e^(−{fit.kappa2:.3g}α) + {fit.kappa3:.3g}")
                    star = alpha_star(fit, a["utility_q"], float(at["alpha"].min()), float(at["alpha"].max()))
                    ax.axvline(star, color="#555555", ls=":", lw=1.0, label=f"α* = {star:.3g}")
                twin = ax.twinx()
                noise = f_perturbation(at, a["P"], int(rows["iteration"].max())).groupby("alpha").mean()
                twin.plot(noise.index, noise["expected"], color="#999999", lw=0.9, ls="--",
                          label="perturbation of f from E‖ε‖ (B7)")
                twin.plot(noise.index, noise["drawn"], "x", color="#999999", label="… from the ‖ε‖ drawn")
                twin.set_yscale("log")
                twin.grid(False)
                if c == len(iters) - 1:
                    twin.set_ylabel("noise's perturbation of f (twin axis)")
                ax.set_xscale("log")
                ax.set_xlabel("α per node per iteration (cumulative: tα basic)")
                ax.set_ylabel("total empirical loss")
                ax.set_title(f"{style.mechanism_short(mech)}, t = {t} (cumulative tα = {t}α)")
                h1, l1 = ax.get_legend_handles_labels()
                h2, l2 = twin.get_legend_handles_labels()
                ax.legend(h1 + h2, l1 + l2, loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)
        fig.suptitle(wrap_title(f"Zhang–Zhu Fig. 4 (replicated): privacy–accuracy trade-off, Adult, {top}\n"
                                + I11_NOTE.format(delta=a["delta"]), 100))
        fig.tight_layout()
        save_figure(fig, png, pdf)
        plt.close(fig)


def plot_f5(table: pd.DataFrame, cfg: dict[str, Any], png: Path, pdf: Path) -> None:
    """Z-F5: final classifier, empirical loss vs α and test MER vs α, DVP vs PVP with bands."""
    a = cfg["admm"]
    top = a["main_topology"]
    rows = table[(table["topology"] == top) & table["mechanism"].isin(PRIVATE)]
    final = rows[rows["iteration"] == rows["iteration"].max()] if not rows.empty else rows
    ref_loss, ref_mer, opt = _reference(table, top)
    with matplotlib.rc_context(style.RC):
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
        for ax, metric, label, ref in ((axes[0], "train_loss", "total empirical loss", ref_loss),
                                       (axes[1], "mer", "test misclassification rate (MER)", ref_mer)):
            for mech in PRIVATE:
                runs = final[final["mechanism"] == mech]
                if not runs.empty:
                    _band(ax, summarise(runs, ["alpha"], metric), "alpha", style.PALETTE[mech],
                          style.mechanism_label(mech), marker="o")
            if np.isfinite(ref):
                ax.axhline(ref, color=style.PALETTE["admm"], lw=1.2, label="non-private ADMM")
            if metric == "train_loss" and np.isfinite(opt):
                ax.axhline(opt, color="#555555", ls="-.", lw=1.0, label="centralised optimum")
            ax.set_xscale("log")
            ax.set_xlabel("α per node per iteration")
            ax.set_ylabel(label)
        t = int(final["iteration"].max()) if not final.empty else a["T"]
        fig.suptitle(wrap_title(f"Zhang–Zhu Fig. 5 (replicated): final classifier (t = {t}), Adult, {top}; bands: "
                                f"95 % CI over repetitions\n" + I11_NOTE.format(delta=a["delta"]), 100))
        legend_below(fig, list(axes), ncol=4)
        save_figure(fig, png, pdf)
        plt.close(fig)


def zz_table(table: pd.DataFrame, cfg: dict[str, Any]) -> pd.DataFrame:
    """Z-T: fitted κ per algorithm, topology and iteration, and α* (spec B7)."""
    a = cfg["admm"]
    iters = checkpoint_iterations(a["f4_iterations"], table["iteration"].to_numpy())
    return fit_table(table, iters, a["utility_q"])


def build(cfg: dict[str, Any], table_path: Path, outputs: list[Path], log: logging.Logger) -> None:
    """Draw the figure (or write the table) that ``outputs`` names."""
    table = read_table(table_path)
    if table.empty:
        raise InputDataError(f"{table_path} has no rows; rerun `snakemake zz`")
    name = outputs[0].stem
    if name == "zz_table":
        frame = zz_table(table, cfg)
        with atomic_path(outputs[0]) as tmp:
            frame.to_csv(tmp, index=False, float_format="%.6g")
        log.info("zz_table: %d rows", len(frame))
        return
    png = next(p for p in outputs if p.suffix == ".png")
    pdf = next(p for p in outputs if p.suffix == ".pdf")
    plot = {"zz_f3": plot_f3, "zz_f4": plot_f4, "zz_f5": plot_f5}[name]
    plot(table, cfg, png, pdf)
    log.info("%s: drawn from %d rows", name, len(table))
