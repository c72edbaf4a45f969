"""Figure ``audit_eps``: the audit's lower bound ε̂ against the claimed and the accounted ε.

Left panel: x = claimed ε; a point above the diagonal *refutes the claim* (with probability
≥ 1 − β). Right panel: x = ε accounted by the mechanism's ledger; a point above the diagonal
would be an accounting bug. Each point is ε̂ with its one-sided 95 % interval [ε̂, ∞) drawn
as an upward arrow; a cross marks ε_up, the exact ε of the implemented noise on the audited
pair (the most any attack on that pair can show). Planted-bug rows are hollow; diamonds are
the literal local mode (M3.1, M4.1), triangles the many-draws N-L2 release.
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

#: ε̂ = 0 is drawn at this value on the log axis (labelled "0")
FLOOR = 1e-2

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


def _panel(ax, table: pd.DataFrame, x_column: str, title: str) -> None:
    x = table[x_column].to_numpy(float)
    up = table["eps_up"].to_numpy(float)
    y = np.maximum(table["eps_lower"].to_numpy(float), FLOOR)
    hi = float(np.nanmax(np.concatenate([x, y, up[np.isfinite(up)]]))) * 3
    lo = FLOOR / 1.5
    ax.plot([lo, hi], [lo, hi], color="#444444", lw=1, ls="--", zorder=1)
    # no horizontal jitter: a shifted point could look above the diagonal when it is not
    for (mech, bug), rows in table.groupby(["mechanism", "planted_bug"], sort=True):
        xs = rows[x_column].to_numpy(float)
        ys = np.maximum(rows["eps_lower"].to_numpy(float), FLOOR)
        colour = family_style(str(mech))[1]
        ax.errorbar(xs, ys, yerr=[np.zeros_like(ys), ys * 0.6], lolims=True, fmt=marker(str(mech)),
                    color=colour, ms=6, capsize=0, lw=1, zorder=3,
                    mfc="white" if bool(bug) else colour)
        ax.scatter(xs, rows["eps_up"].to_numpy(float), marker="x", color=colour, s=28, zorder=2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_title(title, loc="left")
    ax.set_ylabel("ε̂ (95 % lower bound; 0 drawn at 0.01)")


def render_audit_figure(table: pd.DataFrame, out_png: str | Path, out_pdf: str | Path) -> None:
    """Draw ``audit_eps`` from the audit table (PNG and PDF, atomic, byte-reproducible)."""
    mechanisms = sorted(table["mechanism"].astype(str).unique())
    with matplotlib.rc_context(style.RC):
        fig = Figure(figsize=(12.0, 7.0), dpi=style.DPI, layout="constrained")
        axes = fig.subplots(1, 2)
        if table.empty:
            for ax in axes:
                ax.text(0.5, 0.5, "no audit rows", ha="center", va="center", transform=ax.transAxes)
        else:
            _panel(axes[0], table, "eps_claimed", "(a) vs the claimed ε: above the diagonal = claim refuted")
            axes[0].set_xlabel("claimed ε")
            _panel(axes[1], table, "eps_accounted", "(b) vs the accounted ε: above = accounting bug")
            axes[1].set_xlabel("ε accounted by the mechanism's ledger")
        families = dict.fromkeys(family_style(m) for m in mechanisms)  # one entry per colour
        handles = [Line2D([], [], color=colour, lw=6, label=name) for name, colour in families]
        handles += [Line2D([], [], color="#444444", marker=m, ls="", label=text) for m, text in MARKERS
                    if any(marker(mech) == m for mech in mechanisms)]
        handles += [
            Line2D([], [], color="#444444", marker="o", mfc="white", ls="", label="planted bug (hollow)"),
            Line2D([], [], color="#444444", marker="x", ls="", label="ε_up: exact ε of the noise on the pair"),
            Line2D([], [], color="#444444", ls="--", label="diagonal ε̂ = ε"),
        ]
        fig.legend(handles=handles, loc="outside lower center", ncols=3, frameon=False)
        fig.suptitle("Empirical privacy audit: 95 % lower bounds ε̂ (arrows: the interval [ε̂, ∞))")
        save_figure(fig, out_png, out_pdf)
