"""One visual language for every figure: mechanism colours and names, rc settings, output metadata.

A mechanism has the same colour and legend name in all 16 figures × 3 variants, in the
diagnostics and in the report (spec experiments.md E3.1 lists the three methods on every panel).
The rc settings and metadata make PNG and PDF output byte-reproducible
(guides/tooling.md "Deterministic figures").
"""

from __future__ import annotations

from typing import Any

#: mechanism id -> legend name (spec experiments.md E3.1, mechanisms.md M1-M4)
MECHANISM_LABELS: dict[str, str] = {
    "wddp": "WD-DP (weighted avg.)",
    "jayaraman": "Jayaraman et al. (simple avg.)",
    "wyx": "Wang–Ye–Xu (centralised)",
    "nonprivate": "non-private optimum θ*",
    "admm": "non-private ADMM (Zhang–Zhu Alg. 1)",
    "dvp": "DVP (dual variable perturbation)",
    "pvp": "PVP (primal variable perturbation)",
}

#: mechanism id -> short name used inside bound labels
MECHANISM_SHORT: dict[str, str] = {
    "wddp": "WD-DP",
    "jayaraman": "Jayaraman",
    "wyx": "WYX",
    "nonprivate": "non-private",
    "admm": "ADMM",
    "dvp": "DVP",
    "pvp": "PVP",
}

#: the single palette of the project (Okabe–Ito, readable for colour-blind readers)
PALETTE: dict[str, str] = {
    "wddp": "#0072B2",
    "jayaraman": "#D55E00",
    "wyx": "#009E73",
    "nonprivate": "#555555",
    "admm": "#000000",
    "dvp": "#0072B2",
    "pvp": "#D55E00",
}

#: colours handed out, in this order, to mechanisms not listed in :data:`PALETTE`
_SPARE_COLOURS = ("#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")

#: order in which mechanisms appear in legends
MECHANISM_ORDER = ("wddp", "jayaraman", "wyx", "nonprivate")

#: fixed output geometry: every figure has the same size in pixels
DPI = 110
PANEL_FIGSIZE = (12.6, 10.6)

#: PNG and PDF metadata without dates or library versions (byte-reproducible output)
PNG_METADATA: dict[str, Any] = {"Software": None}
PDF_METADATA: dict[str, Any] = {"CreationDate": None, "Producer": None, "Creator": None}

#: rc settings applied while a figure is drawn and saved
RC: dict[str, Any] = {
    "svg.hashsalt": "mpdp",
    "font.family": "DejaVu Sans",
    "font.size": 10.0,
    "axes.titlesize": 11.0,
    "axes.labelsize": 10.0,
    "legend.fontsize": 10.0,
    "legend.title_fontsize": 10.0,
    "xtick.labelsize": 10.0,
    "ytick.labelsize": 10.0,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "pdf.fonttype": 42,
    "path.simplify": False,
}


def mechanism_label(mechanism: str) -> str:
    """Legend name of ``mechanism``; unknown ids are shown as they are."""
    return MECHANISM_LABELS.get(mechanism, mechanism)


def mechanism_short(mechanism: str) -> str:
    """Short name of ``mechanism`` for bound labels."""
    return MECHANISM_SHORT.get(mechanism, mechanism)


def mechanism_sort_key(mechanism: str) -> tuple[int, str]:
    """Sort key putting the paper's methods first, then others alphabetically."""
    if mechanism in MECHANISM_ORDER:
        return (MECHANISM_ORDER.index(mechanism), mechanism)
    return (len(MECHANISM_ORDER), mechanism)


def palette_for(mechanisms: list[str] | tuple[str, ...] | set[str]) -> dict[str, str]:
    """Colours for ``mechanisms``: the fixed palette, spare colours for unknown ids.

    Spare colours are assigned in sorted order of the unknown ids, so the mapping does not
    depend on the order in which rows appear.
    """
    colours = {m: PALETTE[m] for m in mechanisms if m in PALETTE}
    unknown = sorted(m for m in mechanisms if m not in PALETTE)
    for i, mech in enumerate(unknown):
        colours[mech] = _SPARE_COLOURS[i % len(_SPARE_COLOURS)]
    return colours
