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


#: the minor ticks of a log axis that may carry a label (matplotlib picks which, on a short axis)
MINOR_LABELS = frozenset({1, 2, 3, 5})

_SUPERSCRIPT = str.maketrans("-−0123456789", "⁻⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def plain_log_label(label: str) -> str:
    """A log formatter's mathtext label in plain text at the full font size: ``$\\mathdefault{10^{-2}}$``
    → "10⁻²", ``$\\mathdefault{2\\times10^{-2}}$`` → "2×10⁻²" (matplotlib draws the exponent as a
    superscript at 70 % of the font: 7 pt, issue 59)."""
    import re

    text = label.strip("$").replace("\\mathdefault", "").replace("\\times", "×").replace("{", "").replace("}", "")
    text = re.sub(r"\^([-−]?\d+)", lambda m: m[1].translate(_SUPERSCRIPT), text).replace("\\,", "")
    text = re.sub(r"×10⁰$", "", text)
    return {"10⁰": "1", "10¹": "10"}.get(text, text)


def readable_log_ticks(fig: Any) -> None:
    """Every log axis of ``fig`` labels its ticks in plain text ("10⁻²") instead of mathtext, so that
    no exponent is drawn smaller than the figure's text (:func:`mpdp.figures.plot.save_figure` and the
    layout check apply it to every figure). Which ticks are labelled stays matplotlib's choice; an axis
    with a formatter of its own keeps it."""
    from matplotlib.ticker import LogFormatterSciNotation

    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() != "log":
                continue
            for get, put in ((axis.get_major_formatter, axis.set_major_formatter),
                             (axis.get_minor_formatter, axis.set_minor_formatter)):
                current = get()
                if type(current) is LogFormatterSciNotation:
                    plain = _PlainLogFormatter(base=current._base, labelOnlyBase=current.labelOnlyBase,
                                               minor_thresholds=current.minor_thresholds,
                                               linthresh=current._linthresh)
                    put(plain)


def _plain_log_formatter() -> type:
    from matplotlib.ticker import LogFormatterSciNotation

    class PlainLogFormatter(LogFormatterSciNotation):
        """matplotlib's log tick labels, in plain text (:func:`plain_log_label`)."""

        def __call__(self, x: float, pos: int | None = None) -> str:
            return plain_log_label(super().__call__(x, pos))

        def set_locs(self, locs: Any = None) -> None:
            """matplotlib's choice of labelled ticks, at most 1, 2, 3 and 5 of each decade: the eight
            labels 2–9 of a short axis ran into each other and into the decade's label."""
            super().set_locs(locs)
            if self._sublabels is not None:
                self._sublabels = {c for c in self._sublabels if round(float(c)) in MINOR_LABELS} or {1}

    return PlainLogFormatter


_PlainLogFormatter = _plain_log_formatter()
