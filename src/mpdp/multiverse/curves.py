"""The specification curves of the multiverse (issue 48; Simonsohn, Simmons and Nelson 2020): per
claim, every universe's claim-level estimate and interval (:mod:`.effect`), sorted by estimate,
with the default, the reseeded defaults and the headline (the main build) marked, so a choice's
effect is read against the spread that reseeding alone gives."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from mpdp.claims.tables import reading_label
from mpdp.figures.plot import message_panel, save_figure
from mpdp.multiverse.collect import KEYS

#: universe kind -> (colour, marker, legend name); Okabe–Ito colours, the marker repeats them
MARKS: dict[str, tuple[str, str, str]] = {
    "choice": ("#0072B2", "o", "alternative (one choice)"),
    "joint": ("#CC79A7", "^", "joint combination"),
    "reseed": ("#D55E00", "s", "reseeded default"),
    "default": ("#000000", "D", "default (reduced grid)"),
    "headline": ("#009E73", "*", "headline (main build)"),
}
COLUMNS = 3
FONT = 10


def points(table: pd.DataFrame) -> dict[tuple[str, str, str], pd.DataFrame]:
    """Per claim: one row per universe (``kind``, ``universe``, ``estimate``, ``lo``, ``hi``) with a
    finite estimate, the default and the headline included, sorted by estimate (ties: by kind)."""
    out = {}
    for key, g in table.groupby(KEYS, sort=False):
        first = g.iloc[0]
        rows = [("default", "default", first["default_estimate"], first["default_lo"], first["default_hi"]),
                ("headline", "headline", first["headline_estimate"], first["headline_lo"], first["headline_hi"])]
        rows += [(k, u, e, lo, hi) for k, u, e, lo, hi in
                 g[["kind", "universe", "estimate", "lo", "hi"]].itertuples(index=False)]
        frame = pd.DataFrame(rows, columns=["kind", "universe", "estimate", "lo", "hi"])
        frame["estimate"] = frame["estimate"].astype(float)
        frame = frame[np.isfinite(frame["estimate"])]
        out[key] = frame.assign(_k=frame["kind"].map(list(MARKS).index)).sort_values(
            ["estimate", "_k"], kind="stable").drop(columns="_k").reset_index(drop=True)
    return out


def _title(key: tuple[str, str, str], verdict: str) -> str:
    study, claim_id, reading = key
    name = reading_label(reading)
    return f"{study} {claim_id}" + (f" ({name})" if name else "") + f": {verdict}"


def draw(table: pd.DataFrame) -> Figure:
    """One panel per claim; a message panel when the table is empty or a claim has no estimate."""
    if table.empty:
        fig = Figure(figsize=(6, 2))
        message_panel(fig.add_subplot(), "Specification curves", "no alternatives declared in multiverse.choices")
        return fig
    curves = points(table)
    verdicts = table.groupby(KEYS, sort=False)["default_verdict"].first()
    n_rows = math.ceil(len(curves) / COLUMNS)
    fig = Figure(figsize=(12.6, 2.9 * n_rows + 1.6))
    axes = fig.subplots(n_rows, COLUMNS, squeeze=False).ravel()
    for ax, (key, frame) in zip(axes, curves.items(), strict=False):
        title = _title(key, str(verdicts[key]))
        if frame.empty:
            message_panel(ax, "", "no informative cell in any universe", width=30)
            ax.set_title(title, fontsize=FONT)
            continue
        x = np.arange(len(frame))
        for kind, (colour, marker, _) in MARKS.items():
            sel = frame["kind"] == kind
            if not sel.any():
                continue
            est, lo, hi = (frame.loc[sel, c].astype(float).to_numpy() for c in ("estimate", "lo", "hi"))
            err = np.vstack([np.nan_to_num(est - lo), np.nan_to_num(hi - est)]).clip(min=0)
            ax.errorbar(x[sel.to_numpy()], est, yerr=err, fmt=marker, color=colour, ecolor=colour, elinewidth=1,
                        markersize=9 if kind == "headline" else 5, capsize=0)
        ax.axhline(0.0, color="#999999", linewidth=0.6, zorder=0)
        ax.set_title(title, fontsize=FONT)
        ax.set_xticks([])
        ax.tick_params(axis="y", labelsize=FONT)
    for ax in axes[len(curves):]:
        ax.set_visible(False)
    fig.legend(handles=[Line2D([], [], color=c, marker=m, linestyle="none", label=name) for c, m, name in MARKS.values()],
               loc="lower center", ncol=3, fontsize=FONT, frameon=False)
    fig.suptitle("Specification curves: each universe's claim-level estimate (median over informative cells; bars: "
                 "range of their intervals), sorted", fontsize=FONT + 1)
    fig.tight_layout(rect=(0, 1.0 / fig.get_figheight(), 1, 1 - 0.5 / fig.get_figheight()))
    return fig


def write(table: pd.DataFrame, out_png: str | Path, out_pdf: str | Path) -> None:
    """Draw and save (PNG and PDF, atomically; the layout is checked by :func:`save_figure`)."""
    save_figure(draw(table), out_png, out_pdf)
