"""Figure ``audit_eps``: the audit's lower bound ε̂ against the claimed and the accounted ε.

One row per audited setting (grouped by mechanism family). Left panel: ε̂ over the claimed ε; a
point right of 1 *refutes the claim* (with probability ≥ 1 − β). Right panel: ε̂ over the ε
accounted by the mechanism's ledger; a point right of 1 would be an accounting bug. Each point is ε̂
with its one-sided 95 % interval [ε̂, ∞) drawn as an arrow to the right; a cross marks ε_up, the exact
ε of the implemented noise on the audited pair (the most any attack on that pair can show), just above
the row's point.
Planted-bug rows are hollow; diamonds are the literal local mode (M3.1, M4.1), triangles the
many-draws releases. Settings have rows of their own, so that no marker hides another (issue 59:
about 40 settings at ε = 1 were drawn on one spot of a log–log plot).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from mpdp.figures import style
from mpdp.figures.plot import save_figure

_ADAPTER_LABELS = {
    "wyx": "WYX (central)",
    "wddp_per_round": "WD-DP per round",
    "wddp_literal": "WD-DP Alg. 1 (literal)",
    "jayaraman_per_round": "Jayaraman per round",
    "jayaraman_literal": "Jayaraman (literal)",
    "nl2_output": "N-L2 output perturbation",
    "jayaraman_output": "Jayaraman output perturbation",
    "pathak": "Pathak averaging",
    "param_avg": "party-level averaging",
    "hamm_vote": "Hamm Alg. 1 (vote)",
    "hamm_soft": "Hamm Alg. 2 (soft vote)",
    **{f"xp_{k}": f"benchmark: {v}" for k, v in (
        ("wyx", "WYX"), ("wddp_per_round", "WD-DP per round"), ("wddp_literal", "WD-DP literal, σ_j per party"),
        ("jayaraman_per_round", "Jayaraman per round"), ("jayaraman_literal", "Jayaraman literal, σ_j per party"))},
    "pvp": "PVP (one iteration)",
    "pvp_history": "PVP (release given its history)",
    "dvp": "DVP (first iteration)",
    "private_selection": "private hyper-parameter selection",
    "dpsgd": "DP-SGD",
}


#: adapters of one cheap release (many-draws audit), drawn as triangles
_MANY_DRAWS = ("nl2_output", "jayaraman_output", "pathak", "param_avg", "hamm_vote", "hamm_soft", "pvp",
               "pvp_history", "dvp")


#: palette family -> (legend name, colour): one hue per family of mechanisms (Okabe–Ito, at most
#: eight), the variants of a family told apart by the marker (:func:`marker`)
FAMILIES: dict[str, tuple[str, str]] = {
    "wddp": ("WD-DP (study and benchmark)", "#0072B2"),
    "jayaraman": ("Jayaraman et al. (gradient and output)", "#D55E00"),
    "wyx": ("Wang–Ye–Xu (central)", "#009E73"),
    "dpsgd": ("DP-SGD", "#CC79A7"),
    "nl2": ("output perturbation, averaging", "#E69F00"),
    "pathak": ("output perturbation, averaging", "#E69F00"),
    "param": ("output perturbation, averaging", "#E69F00"),
    "hamm": ("Hamm et al. voting", "#56B4E9"),
    "pvp": ("ADMM: DVP, PVP", "#000000"),
    "private": ("private hyper-parameter selection", "#777777"),
    "dvp": ("ADMM: DVP, PVP", "#000000"),
}
#: the markers and what they mean
MARKERS = (("o", "gradient mechanism, per round or central"), ("D", "literal local mode (Alg. 1 as printed)"),
           ("^", "one release, many draws"))


def family_style(mechanism: str) -> tuple[str, str]:
    """(legend name, colour) of a mechanism's family (unknown ids: their own name, grey)."""
    key = mechanism.removeprefix("xp_").split("_", 1)[0]
    return FAMILIES.get(key, (adapter_label(mechanism), "#777777"))


def adapter_label(mechanism: str) -> str:
    """Legend name of an audited mechanism."""
    return _ADAPTER_LABELS.get(mechanism, mechanism)


def family(mechanism: str) -> str:
    """The mechanism id of the project palette behind an adapter id (``wddp_literal`` → wddp)."""
    mechanism = mechanism.removeprefix("xp_")
    return mechanism.split("_", 1)[0] if mechanism.split("_", 1)[0] in style.PALETTE else mechanism


def marker(mechanism: str) -> str:
    """Diamond for the literal local mode, triangle for many-draws releases, else a circle."""
    if mechanism.endswith("_literal"):
        return "D"
    return "^" if mechanism in _MANY_DRAWS else "o"


#: ε̂ = 0 is drawn at this ratio on the log axis (labelled "0")
RATIO_FLOOR = 1e-3
#: height of one setting's row, inches
ROW_IN = 0.2
#: the cross of ε_up sits this far (in rows) above its row's point
UP_OFFSET = 0.3


def _row_label(row: pd.Series) -> str:
    """A setting's row: the mechanism's display name, its claimed ε and whether a bug is planted."""
    bug = " · planted bug" if bool(row["planted_bug"]) else ""
    return f"{adapter_label(str(row['mechanism']))}, ε = {float(row['eps_claimed']):g}{bug}"


def _order(table: pd.DataFrame) -> pd.DataFrame:
    """The settings in rows, grouped by family (the legend's order), then mechanism, ε and bug."""
    keys = list(dict.fromkeys(family_style(str(m))[0] for m in sorted(table["mechanism"].astype(str))))
    out = table.assign(_family=[keys.index(family_style(str(m))[0]) for m in table["mechanism"].astype(str)])
    return out.sort_values(["_family", "mechanism", "eps_claimed", "planted_bug", "setting"], kind="stable")


def _panel(ax, table: pd.DataFrame, x_column: str, title: str) -> None:
    """One row per setting (top down): ε̂ / ε with its interval [ε̂, ∞) as an arrow to the right, and ε_up / ε
    as a cross, against the line ratio = 1 (a point right of it: ε̂ exceeds that ε). Rows never share a
    position, so no marker hides another (issue 59: 40 settings at ε = 1 were drawn on one spot)."""
    ref = table[x_column].to_numpy(float)
    ratio = np.maximum(table["eps_lower"].to_numpy(float) / ref, RATIO_FLOOR)
    up = table["eps_up"].to_numpy(float) / ref
    y = np.arange(len(table))[::-1]
    hi = max(float(np.nanmax(np.concatenate([ratio, up[np.isfinite(up)], [1.0]]))) * 3, 3.0)
    ax.axvline(1.0, color="#444444", lw=1, ls="--", zorder=1)
    for i, (_, row) in enumerate(table.iterrows()):
        colour = family_style(str(row["mechanism"]))[1]
        bug = bool(row["planted_bug"])
        ax.annotate("", xy=(min(ratio[i] * 2.2, hi), y[i]), xytext=(ratio[i], y[i]),
                    arrowprops={"arrowstyle": "->", "color": colour, "lw": 1}, zorder=2)
        ax.plot([ratio[i]], [y[i]], marker=marker(str(row["mechanism"])), color=colour, ms=6, ls="",
                mfc="white" if bug else colour, zorder=3)
        if np.isfinite(up[i]):  # just above the row's point, so that a bound at its ceiling hides neither
            ax.plot([up[i]], [y[i] + UP_OFFSET], marker="x", color=colour, ms=5, ls="", zorder=2)
    ax.set_xscale("log")
    ax.set_xlim(RATIO_FLOOR / 1.5, hi)
    ax.set_ylim(-0.7, len(table) - 0.3)
    ax.set_title(title, loc="left")
    ax.grid(axis="y", visible=False)


def render_audit_figure(table: pd.DataFrame, out_png: str | Path, out_pdf: str | Path) -> None:
    """Draw ``audit_eps`` from the audit table (PNG and PDF, atomic, byte-reproducible): one row per
    audited setting, two panels — (a) ε̂ over the claimed ε, (b) ε̂ over the accounted ε; right of 1 in (a)
    the claim is refuted, in (b) the accounting is wrong."""
    mechanisms = sorted(table["mechanism"].astype(str).unique())
    rows = _order(table) if not table.empty else table
    with matplotlib.rc_context(style.RC):
        height = 2.6 + ROW_IN * max(len(rows), 4)
        fig = Figure(figsize=(12.0, height), dpi=style.DPI, layout="constrained")
        axes = fig.subplots(1, 2, sharey=True)
        if table.empty:
            for ax in axes:
                ax.text(0.5, 0.5, "no audit rows", ha="center", va="center", transform=ax.transAxes)
        else:
            _panel(axes[0], rows, "eps_claimed", "(a) ε̂ / claimed ε: right of 1 = claim refuted")
            axes[0].set_xlabel("ε̂ / claimed ε (95 % lower bound; 0 drawn at 0.001)")
            _panel(axes[1], rows, "eps_accounted", "(b) ε̂ / accounted ε: right of 1 = accounting bug")
            axes[1].set_xlabel("ε̂ / ε accounted by the mechanism's ledger")
            axes[0].set_yticks(np.arange(len(rows))[::-1])
            axes[0].set_yticklabels([_row_label(r) for _, r in rows.iterrows()])
            axes[1].tick_params(axis="y", labelleft=False)
        families = dict.fromkeys(family_style(m) for m in mechanisms)  # one entry per colour
        handles = [Line2D([], [], color=colour, lw=6, label=name) for name, colour in families]
        handles += [Line2D([], [], color="#444444", marker=m, ls="", label=text) for m, text in MARKERS
                    if any(marker(mech) == m for mech in mechanisms)]
        handles += [
            Line2D([], [], color="#444444", marker="o", mfc="white", ls="", label="planted bug (hollow)"),
            Line2D([], [], color="#444444", marker="x", ls="", label="ε_up: exact ε of the noise on the pair"),
            Line2D([], [], color="#444444", ls="--", label="ratio 1: ε̂ equals that ε"),
        ]
        fig.legend(handles=handles, loc="outside lower center", ncols=3, frameon=False)
        fig.suptitle("Empirical privacy audit: 95 % lower bounds ε̂ (arrows: the interval [ε̂, ∞)), per setting")
        save_figure(fig, out_png, out_pdf)
