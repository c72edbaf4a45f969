"""Figures of the voting study (spec experiments.md E5 H-1…H-4, bounds.md B5, B6, B10).

Curves are the mean over repetitions with a 95 % Student-t band (:func:`mpdp.claims.intervals.t_interval`);
non-private controls are horizontal reference lines (or curves vs M). Party-level and
record-level ε are never mixed silently (spec I-12): record-level methods are dashed and the
ε-axis title names both units.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from mpdp.claims.intervals import t_interval
from mpdp.figures import style
from mpdp.figures.plot import save_figure
from mpdp.studies.voting.plan import (
    CONTROLS,
    EXTRA_COLUMNS,
    SWEEP_MECHANISMS,
    main_rows,
    majority_error,
    sweep_rows,
)

#: legend names (spec M5, M6a, M6b, M11, M12, M13 and the E5 controls)
LABELS: dict[str, str] = {
    "hamm_vote": "Hamm Alg. 1 (majority vote)",
    "hamm_soft": "Hamm Alg. 2 (soft vote)",
    "param_avg": "param. averaging (party)",
    "pathak": "Pathak (record level)",
    "jayaraman_output": "Jayaraman output pert. (record level)",
    "pooled_output": "B.1 pooled softmax ERM (record level)",
    "pooled_lr": "non-private pooled LR",
    "local_mean": "non-private local classifiers (mean)",
    "ensemble": "non-private voted ensemble",
    "hamm_vote_np": "Alg. 1 without noise",
    "hamm_soft_np": "Alg. 2 without noise",
    "param_avg_np": "param. averaging without noise",
}
MULTICLASS_LABELS = {"hamm_vote": "B.2 majority vote", "hamm_soft": "B.3 soft labels (55)",
                     "param_avg": "B.4 softmax averaging"}
RECORD_LEVEL = frozenset({"pathak", "jayaraman_output", "pooled_output"})
FIGURE_IDS = ("hamm_h1", "hamm_h2", "hamm_h3", "hamm_h4", "hamm_b5", "hamm_lambda")


def figure_tables(fig_id: str, tables: list[str]) -> list[str]:
    """The tables figure ``fig_id`` reads: H-3 the multiclass ones, H-1/H-2/H-4 the binary ones, B5 and λ all."""
    if fig_id == "hamm_h3":
        return [t for t in tables if t.endswith("_multiclass")]
    if fig_id in ("hamm_b5", "hamm_lambda"):
        return list(tables)
    return [t for t in tables if not t.endswith("_multiclass")]


def figure_files(exts: tuple[str, ...] = ("png", "pdf")) -> list[str]:
    """Workflow outputs of the study's figures."""
    return [f"reports/figures/{fig}.{ext}" for fig in FIGURE_IDS for ext in exts]


EPS_AXIS = "privacy budget ε — party level (solid); record level (dashed), not comparable (I-12)"
PARTY_EPS_AXIS = "party-level privacy budget ε"
_COLOURS = dict(zip(
    ("hamm_soft", "hamm_vote", "param_avg", "pathak", "jayaraman_output", "pooled_lr", "local_mean",
     "ensemble", "hamm_vote_np", "hamm_soft_np", "param_avg_np", "pooled_output"),
    ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#000000", "#999999", "#56B4E9",
     "#D55E00", "#0072B2", "#009E73", "#000000"), strict=True))


def load_tables(paths: Mapping[str, str | Path | None]) -> dict[str, pd.DataFrame]:
    """Voting tables by table id; missing files are left out."""
    from mpdp import results

    return {t: results.read(p, EXTRA_COLUMNS) for t, p in paths.items() if p and Path(p).is_file()}


def summary(rows: pd.DataFrame, x: str, y: str) -> pd.DataFrame:
    """Mean and 95 % t-interval of ``y`` over repetitions at each ``x``."""
    out = []
    for xv, grp in rows.groupby(x):
        mean, lo, hi = t_interval(grp[y].to_numpy())
        out.append({x: float(xv), "mean": mean, "lo": lo, "hi": hi, "n": len(grp)})
    return pd.DataFrame(out).sort_values(x)


def _curve(ax: Axes, rows: pd.DataFrame, x: str, y: str, mech: str, label: str, band: str = "t", **kw) -> None:
    """Mean curve with a band: 95 % t-interval (``band="t"``) or min–max over repetitions
    (``band="range"``, for log-scale axes where a symmetric interval can cross 0)."""
    s = summary(rows, x, y)
    if s.empty:
        return
    if band == "range":
        g = rows.groupby(x)[y]
        s["lo"], s["hi"] = g.min().to_numpy(), g.max().to_numpy()
    colour = _COLOURS.get(mech, "#333333")
    ls = "--" if mech in RECORD_LEVEL or mech.endswith("_np") else "-"
    ax.plot(s[x], s["mean"], ls, color=colour, marker="o", ms=3, label=label, **kw)
    lo, hi = s["lo"].fillna(s["mean"]), s["hi"].fillna(s["mean"])
    if y == "test_error":  # an error rate lies in [0, 1]
        lo, hi = lo.clip(0.0, 1.0), hi.clip(0.0, 1.0)
    ax.fill_between(s[x], lo, hi, color=colour, alpha=0.15)


def _hline(ax: Axes, value: float, mech: str, label: str) -> None:
    ax.axhline(value, color=_COLOURS.get(mech, "#333333"), lw=1.0,
               ls=":" if mech in ("pooled_lr", "ensemble") else "-.", label=label)


def _at_M(table: pd.DataFrame, M: int) -> tuple[pd.DataFrame, int]:
    """Rows at M (or, if M was not feasible, at the largest feasible M below it)."""
    Ms = sorted(int(m) for m in table["M"].dropna().unique())
    chosen = max([m for m in Ms if m <= M] or Ms[:1])
    return table[table["M"] == chosen], chosen


#: height of one row of a legend under the panels, inches (10 pt text)
LEGEND_ROW_IN = 0.26


def _panels(n: int, rows: int = 1) -> tuple[Figure, list[list[Axes]]]:
    # at most 12.6 in wide: the report shows it without shrinking its text below legibility
    width = min(max(4.6 * max(n, 1) + 1.0, 8.0), 12.6)  # one panel: room for a two-column legend
    fig = Figure(figsize=(width, 3.6 * rows + 0.8 + (0.8 if n > 2 else 0)), dpi=style.DPI, layout="constrained")
    grid = fig.add_gridspec(rows, max(n, 1))
    return fig, [[fig.add_subplot(grid[r, c]) for c in range(max(n, 1))] for r in range(rows)]


def _fit(ax: Axes, text: str) -> str:
    """``text`` wrapped line by line to the width of ``ax``'s panel at the base font size (titles
    and axis labels of narrow panels are not cut)."""
    width_in = ax.get_position().width * ax.get_figure().get_figwidth()
    chars = max(16, int(width_in * 72 / (style.RC["font.size"] * 0.6)))
    return "\n".join(textwrap.fill(line, chars) for line in str(text).splitlines())


def _suptitle(fig: Figure, text: str) -> None:
    """Figure title wrapped to the figure's width (single-panel figures are narrow)."""
    fig.suptitle(textwrap.fill(text, width=int(fig.get_figwidth() * 10)))


def _legend(fig: Figure, axes: list[Axes]) -> None:
    handles, labels = {}, {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(lab, h)
            labels[lab] = lab
    if handles:
        ncols = 3 if fig.get_figwidth() > 10 else 2 if fig.get_figwidth() > 7 else 1
        # the legend takes its rows from the figure's height: add them, so the panels keep theirs
        fig.set_figheight(fig.get_figheight() + LEGEND_ROW_IN * -(-len(handles) // ncols))
        fig.legend(list(handles.values()), list(labels), loc="outside lower center", ncols=ncols)


def _empty(ax: Axes, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", wrap=True, transform=ax.transAxes)
    ax.set_axis_off()


def _binary(tables: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    return {t: df for t, df in tables.items() if not t.endswith("_multiclass")}


def h1(tables: Mapping[str, pd.DataFrame], cfg: Mapping) -> Figure:
    """H-1: test error vs ε at M = h1_M, one panel per binary data set, every method."""
    return _error_vs_eps(_binary(tables), cfg, LABELS, "H-1: test error vs ε")


def h3(tables: Mapping[str, pd.DataFrame], cfg: Mapping) -> Figure:
    """H-3: multiclass KDDCup99 test error vs ε (B.2–B.4 and the non-private references)."""
    multi = {t: df for t, df in tables.items() if t.endswith("_multiclass")}
    return _error_vs_eps(multi, cfg, {**LABELS, **MULTICLASS_LABELS}, "H-3: multiclass test error vs ε (spec M13)")


def _error_vs_eps(tables: Mapping[str, pd.DataFrame], cfg: Mapping, labels: Mapping[str, str], title: str) -> Figure:
    fig, grid = _panels(len(tables))
    axes = grid[0]
    if not tables:
        _empty(axes[0], "no results table for this figure (data set not available)")
    for ax, (table, df) in zip(axes, sorted(tables.items()), strict=False):
        rows, M = _at_M(df, cfg["voting"]["h1_M"])
        private = rows[rows["privacy_unit"] != "none"]
        for mech in sorted(private["mechanism"].unique(), key=list(labels).index):
            _curve(ax, private[private["mechanism"] == mech], "epsilon", "test_error", mech, labels[mech])
        for mech in CONTROLS:
            ctrl = rows[rows["mechanism"] == mech]
            if not ctrl.empty:
                _hline(ax, float(ctrl["test_error"].mean()), mech, labels[mech])
        ax.set_xscale("log")
        ax.set_title(_fit(ax, f"{table} (M = {M}, n_classes = {int(rows['n_classes'].iloc[0])})"), loc="left")
        ax.set_xlabel(_fit(ax, EPS_AXIS if (private["privacy_unit"] == "record").any() else PARTY_EPS_AXIS))
        ax.set_ylabel("test error rate")
    _suptitle(fig, f"{title} — mean over repetitions, 95 % t-band; lines: non-private controls")
    _legend(fig, axes)
    return fig


def h2(tables: Mapping[str, pd.DataFrame], cfg: Mapping) -> Figure:
    """H-2: test error vs M at ε = h2_eps (controls vs M as dash-dotted curves)."""
    binary = _binary(tables)
    fig, grid = _panels(len(binary))
    axes = grid[0]
    eps = float(cfg["voting"]["h2_eps"])
    if not binary:
        _empty(axes[0], "no results table for this figure (data set not available)")
    for ax, (table, df) in zip(axes, sorted(binary.items()), strict=False):
        private = df[np.isclose(df["epsilon"], eps)]
        for mech in sorted(private["mechanism"].unique(), key=list(LABELS).index):
            _curve(ax, private[private["mechanism"] == mech], "M", "test_error", mech, LABELS[mech])
        for mech in CONTROLS:
            ctrl = df[df["mechanism"] == mech]
            if not ctrl.empty:
                _curve(ax, ctrl, "M", "test_error", mech, LABELS[mech], lw=1.0)
        ax.set_xscale("log")
        ax.set_title(_fit(ax, f"{table} (ε = {eps:g}: party level for Hamm/averaging, record level dashed)"), loc="left")
        ax.set_xlabel(_fit(ax, "number of parties M"))
        ax.set_ylabel("test error rate")
    _suptitle(fig, "H-2: test error vs M — mean over repetitions, 95 % t-band")
    _legend(fig, axes)
    return fig


def quantile_summary(rows: pd.DataFrame, x: str, q: float) -> pd.DataFrame:
    """Per ``x``: the q-quantile and the mean of ``risk_gap`` and the bound columns (B6 overlay)."""
    g = rows.groupby(x)
    return pd.DataFrame({
        "quantile": g["risk_gap"].quantile(q), "mean": g["risk_gap"].mean(),
        "lemma6": g["lemma6_bound"].mean(), "expected": g["lemma6_expected"].mean(),
    }).reset_index()


def h4(tables: Mapping[str, pd.DataFrame], cfg: Mapping) -> Figure:
    """H-4: weighted empirical-risk gap vs ε and vs M with the Lemma 6 lines; Theorem 4 (B6)."""
    binary = _binary(tables)
    v = cfg["voting"]
    q = 1.0 - float(v["delta_p"])
    fig, grid = _panels(len(binary), rows=3)
    if not binary:
        _empty(grid[0][0], "no results table for this figure (data set not available)")
    for col, (table, df) in enumerate(sorted(binary.items())):
        rows_M, M = _at_M(df, v["h1_M"])
        at_eps = df[np.isclose(df["epsilon"], float(v["h2_eps"]))]
        for row, (sub, x, xlabel) in enumerate(((rows_M, "epsilon", PARTY_EPS_AXIS), (at_eps, "M", "number of parties M"))):
            ax = grid[row][col]
            for mech in ("hamm_soft", "hamm_vote"):
                s = quantile_summary(sub[sub["mechanism"] == mech], x, q)
                if s.empty:
                    continue
                c = _COLOURS[mech]
                ax.plot(s[x], s["quantile"], "o-", color=c, ms=3, label=f"{LABELS[mech]}: {q:.0%} quantile of gap")
                ax.plot(s[x], s["mean"], "s:", color=c, ms=3, label=f"{LABELS[mech]}: mean gap")
                ax.plot(s[x], s["lemma6"], "-", color=c, lw=2.2, alpha=0.5, label=f"{LABELS[mech]}: Lemma 6 (δ_p = {v['delta_p']:g})")
                ax.plot(s[x], s["expected"], "--", color=c, lw=1.5, alpha=0.6, label=f"{LABELS[mech]}: expected-gap bound")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel(_fit(ax, xlabel))
            ax.set_ylabel("R_S(w_p) − R_S(w_s) (log)")
            ax.set_title(_fit(ax, f"{table}: gap vs {'ε at M = ' + str(M) if x == 'epsilon' else 'M at ε = ' + format(v['h2_eps'], 'g')}"), loc="left")
        ax = grid[2][col]
        soft = rows_M[rows_M["mechanism"] == "hamm_soft"]
        if not soft.empty:
            _curve(ax, soft, "epsilon", "heldout_risk", "hamm_soft",
                   "Alg. 2: held-out weighted risk R(w_p) (band: min–max)", band="range")
            b = soft.groupby("epsilon")["thm4_bound"].mean()
            ax.plot(b.index, b.to_numpy(), "-", color="#000000", lw=2, alpha=0.5,
                    label=f"Theorem 4 bound (δ_p = δ_s = {v['delta_thm4']:g})")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(_fit(ax, PARTY_EPS_AXIS))
        ax.set_ylabel("held-out weighted risk (log)")
        ax.set_title(_fit(ax, f"{table}: Theorem 4 at M = {M}"), loc="left")
    _suptitle(fig, "H-4: weighted empirical-risk gap with Lemma 6 and Theorem 4 (spec B6)")
    _legend(fig, [a for r in grid for a in r])
    return fig


def lambda_tradeoff(tables: Mapping[str, pd.DataFrame], cfg: Mapping) -> Figure:
    """Test error vs λ at M = h1_M for the ε of ``lambda_sweep_eps``: the noise/regularisation trade-off.

    One row of panels per table, one column per ε; Alg. 1, Alg. 2 and parameter averaging at
    every λ of the grid (mean, 95 % t-band), the majority-class error as a line, and the λ the
    selection chose at that (M, ε) (the most frequent over repetitions: the party-level mechanisms
    choose per repetition) as a marker on each curve.
    """
    sweeps = {t: sweep_rows(df) for t, df in sorted(tables.items()) if not sweep_rows(df).empty}
    eps_list = sorted({float(e) for df in sweeps.values() for e in df["epsilon"].unique()})
    fig, grid = _panels(max(len(eps_list), 1), rows=max(len(sweeps), 1))
    if not sweeps:
        _empty(grid[0][0], "no λ-sweep rows in the results tables")
    for r, (table, sw) in enumerate(sweeps.items()):
        main = main_rows(tables[table])
        M = int(sw["M"].iloc[0])
        labels = {**LABELS, **MULTICLASS_LABELS} if table.endswith("_multiclass") else LABELS
        for c, eps in enumerate(eps_list):
            ax = grid[r][c]
            at = sw[np.isclose(sw["epsilon"], eps)]
            for mech in SWEEP_MECHANISMS:
                sub = at[at["mechanism"] == mech]
                _curve(ax, sub, "lambda", "test_error", mech, labels[mech])
                chosen = main[(main["mechanism"] == mech) & (main["M"] == M) & np.isclose(main["epsilon"], eps)]
                if not chosen.empty:
                    lam = float(chosen["lambda"].mode().iloc[0])  # a grid value (per-rep choices differ)
                    s = summary(sub[np.isclose(sub["lambda"], lam)], "lambda", "test_error")
                    if not s.empty:
                        ax.plot(s["lambda"], s["mean"], "*", ms=12, color=_COLOURS[mech], mec="black",
                                label=f"λ chosen by the selection ({chosen['lambda_source'].iloc[0]})")
            ax.axhline(majority_error(sw), color="#555555", ls="--", lw=1.2,
                       label="majority class (always predict it)")
            ax.set_xscale("log")
            ax.set_xlabel(_fit(ax, "regulariser λ (global for Alg. 1/2, local for averaging)"))
            ax.set_ylabel("test error rate")
            ax.set_title(_fit(ax, f"{table}: M = {M}, ε = {eps:g} (party level)"), loc="left")
    _suptitle(fig, "Test error vs λ: output noise ∝ 1/λ against regularisation bias — mean over repetitions, "
              "95 % t-band; star: the λ chosen on the private validation error")
    _legend(fig, [a for row in grid for a in row])
    return fig


def b5(tables: Mapping[str, pd.DataFrame], cfg: Mapping) -> Figure:
    """B5 bound over the averaging baselines: excess pooled risk vs ε at M = h1_M."""
    fig, grid = _panels(len(tables))
    axes = grid[0]
    if not tables:
        _empty(axes[0], "no results table for this figure (data set not available)")
    for ax, (table, df) in zip(axes, sorted(tables.items()), strict=False):
        rows, M = _at_M(df, cfg["voting"]["h1_M"])
        for mech in ("param_avg", "pathak", "jayaraman_output"):
            sub = rows[rows["mechanism"] == mech]
            if sub.empty:
                continue
            _curve(ax, sub, "epsilon", "excess_risk", mech, LABELS[mech], band="range")
            b = sub.groupby("epsilon")["b5_bound"].mean()
            ax.plot(b.index, b.to_numpy(), "-", color=_COLOURS[mech], lw=2.2, alpha=0.45,
                    label=f"B5 bound: {LABELS[mech]}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        record = (rows["privacy_unit"] == "record").any()
        ax.set_xlabel(_fit(ax, EPS_AXIS if record else PARTY_EPS_AXIS))
        ax.set_ylabel("J(θ_p) − J* on pooled private data (log)")
        ax.set_title(_fit(ax, f"{table} (M = {M})"), loc="left")
    _suptitle(fig, "Output perturbation: excess risk of the averaging baselines (mean, min–max band) and the B5 bound")
    _legend(fig, axes)
    return fig


BUILDERS: dict[str, Callable[[Mapping[str, pd.DataFrame], Mapping], Figure]] = {
    "hamm_h1": h1, "hamm_h2": h2, "hamm_h3": h3, "hamm_h4": h4, "hamm_b5": b5,
}
#: figures drawn from the whole table (main and λ-sweep rows); the others see the main rows only
WHOLE_TABLE = {"hamm_lambda": lambda_tradeoff}


def render(fig_id: str, tables: Mapping[str, pd.DataFrame], cfg: Mapping, out_png: Path, out_pdf: Path) -> None:
    """Draw figure ``fig_id`` and save it (PNG + PDF, byte-reproducible)."""
    with matplotlib.rc_context(style.RC):
        if fig_id in WHOLE_TABLE:
            fig = WHOLE_TABLE[fig_id](tables, cfg)
        else:
            fig = BUILDERS[fig_id]({t: main_rows(df) for t, df in tables.items()}, cfg)
        save_figure(fig, out_png, out_pdf)
