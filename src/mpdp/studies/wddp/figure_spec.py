"""The WD-DP figure list as data (spec experiments.md E3.4, bounds.md B10).

Sixteen figures, each with five panels (a)-(e), one per data set. A figure is a metric
(test accuracy or optimal gap) against ε (random party sizes, spec E2.1) or against the size
unevenness u = n_max/n_min (two-group design, spec E2.2) at a fixed number of parties m (and
a fixed ε for the u-sweeps). Each figure is drawn in four *variants*: the main reading
(Algorithm 1 as printed with the paper's c = 16), the per-round reading of the proof
(spec mechanisms.md M3.2, I-1), the tight ``exact`` accountant (spec I-3) and the
equal-privacy reading ``-eq`` (every method really (ε, δ)-DP at the plotted ε, spec I-1).
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol

from mpdp.data.registry import DATASETS

Metric = Literal["accuracy", "optimal_gap"]
XAxis = Literal["epsilon", "u"]

#: default folder of the figure files (relative to the working directory)
FIGURE_DIR = "reports/figures"


class Variant(NamedTuple):
    """How the distributed mechanisms run (spec E7 #1) and how σ is calibrated (spec E7 #3).

    ``central_accountant`` is that of the centralised runs (Wang–Ye–Xu); None: the same.
    """

    mode: str
    accountant: str
    central_accountant: str | None = None

    @property
    def wyx_accountant(self) -> str:
        """The accountant of the centralised runs shown with this variant."""
        return self.central_accountant or self.accountant


#: figure-name suffix -> (mode, accountant) of WD-DP and Jayaraman on that variant. ``-eq``
#: is the equal-privacy reading: every curve really (ε, δ)-DP at its ε under the tight
#: accountant (literal mode calibrated per party to its own n_j, Wang–Ye–Xu with ``exact``).
VARIANTS: dict[str, Variant] = {
    "": Variant("local_then_aggregate", "ma16"),
    "-pr": Variant("per_round", "ma16"),
    "-exact": Variant("local_then_aggregate", "exact"),
    "-eq": Variant("local_then_aggregate", "exact_per_party", "exact"),
}

#: suffix -> readable name of the variant (figure titles, report headings)
VARIANT_NAMES: dict[str, str] = {
    "": "main: Algorithm 1 as printed, c = 16",
    "-pr": "per-round reading of the proof, c = 16",
    "-exact": "Algorithm 1 as printed, exact (tight) accountant",
    "-eq": "equal privacy: each party calibrated to its own n_j, exact accountant",
}

#: mode id -> what it means, for subtitles and the report (spec mechanisms.md M3.1, M3.2)
MODE_NOTES: dict[str, str] = {
    "local_then_aggregate": "mode local_then_aggregate: T local noisy steps per party, one aggregation "
    "(Algorithm 1 as printed, spec M3.1)",
    "per_round": "mode per_round: one noisy aggregate step per round (the reading of the proof, "
    "spec M3.2; WD-DP = WYX in distribution)",
}

#: accountant id -> what it means (spec mechanisms.md C1, guides/tooling.md)
ACCOUNTANT_NOTES: dict[str, str] = {
    "ma16": "accountant ma16: σ² = 16 G² T ln(1/δ)/(n_eff² ε²), the paper's constant c = 16 (spec C1)",
    "exact": "accountant exact: smallest σ that is (ε, δ)-DP for T Gaussian steps (tight)",
    "ma_tight": "accountant ma_tight: σ² = (8 ln(1/δ) + 4ε) G² T/(n_eff² ε²) (spec C1)",
    "ma_int": "accountant ma_int: integer moment order (spec C1)",
    "rdp": "accountant rdp: Rényi-DP calibration",
    "zcdp_code": "accountant zcdp_code: zCDP calibration of Jayaraman et al.'s code (spec C2)",
    "exact_per_party": "accountant exact_per_party: party j's σ_j is the exact σ for its own "
    "n_j, so each party and the aggregate are (ε, δ)-DP; Wang–Ye–Xu exact",
}


def variants_for(cfg: dict[str, Any]) -> dict[str, Variant]:
    """The variants a validated config trains: those whose mode and accountant it runs."""
    from mpdp.studies.wddp.plan import accountants_for

    w = cfg["wddp"]
    return {
        suffix: var
        for suffix, var in VARIANTS.items()
        if var.mode in w["modes"] and var.accountant in accountants_for(cfg, "wddp", var.mode)
    }


@dataclass(frozen=True)
class Panel:
    """One panel position of every figure: its letter and the data set's display name."""

    letter: str
    name: str


#: data set id -> panel, in the registry's order: the paper's (a)-(e) (spec E1, E3.4), then any
#: data set added after them
DATASET_PANELS: dict[str, Panel] = {
    dataset: Panel(letter, info.display_name)
    for letter, (dataset, info) in zip(string.ascii_lowercase, DATASETS.items(), strict=False)
}


@dataclass(frozen=True)
class Overlay:
    """A theory line drawn on gap figures (spec bounds.md B10).

    ``column`` is the results column holding the bound per run (computed by training);
    the line is its mean over repetitions for the rows of ``mechanisms``.
    """

    key: str
    column: str
    mechanisms: tuple[str, ...]
    label: str
    linestyle: str
    spec_ref: str
    upper_bound: bool  # an upper bound on the gap (vacuous above ln 2) or a prediction/floor
    marker: str = ""  # drawn on the points too (a floor that is 0 at u = 1 has one point > 0)


#: overlay key -> overlay (spec bounds.md B1′, B3, B1‴)
OVERLAYS: dict[str, Overlay] = {
    "B1prime": Overlay(
        "B1prime", "bound_gap", ("wddp", "wyx"), "B1′ upper bound", "--", "bounds.md B1′", True
    ),
    "B3": Overlay("B3", "bound_gap", ("jayaraman",), "B3 bound", "--", "bounds.md B3", True),
    "B1triple": Overlay(
        "B1triple",
        "predicted_gap",
        ("wddp", "wyx", "jayaraman"),
        "B1‴ predicted noise floor",
        ":",
        "bounds.md B1‴",
        False,
    ),
    "bias_floor": Overlay(
        "bias_floor",
        "aggregation_bias",
        ("jayaraman",),
        "B3 aggregation-bias floor b_F",
        "-.",
        "bounds.md B3",
        False,
        "x",
    ),
}

_GAP_EPS_OVERLAYS = ("B1prime", "B3", "B1triple")
_GAP_U_OVERLAYS = ("B1prime", "B3", "B1triple", "bias_floor")


class JobLike(Protocol):
    """What :meth:`FigureSpec.uses_job` needs of a training job (mpdp.studies.wddp.plan.Job)."""

    experiment: str
    m: int | None
    eps: float | None


@dataclass(frozen=True)
class FigureSpec:
    """One WD-DP figure (spec experiments.md E3.4)."""

    fig_id: str
    number: int
    metric: Metric
    x: XAxis
    m: int
    epsilon: float | None  # fixed ε of u-sweep figures; None for ε-sweeps
    overlays: tuple[str, ...]
    pair: str  # the accuracy/gap companion figure
    caption: str  # the paper's caption, in our words

    @property
    def experiment(self) -> str:
        """Results-table ``experiment`` of the figure: eps_sweep or u_sweep."""
        return "eps_sweep" if self.x == "epsilon" else "u_sweep"

    @property
    def setting(self) -> str:
        """The fixed setting as text, e.g. ``m = 16, ε = 0.05``."""
        if self.epsilon is None:
            return f"m = {self.m}"
        return f"m = {self.m}, ε = {self.epsilon:g}"

    @property
    def shows(self) -> str:
        """What the figure shows, in words (figure titles)."""
        metric = "test accuracy" if self.metric == "accuracy" else "optimal gap"
        against = "privacy budget ε" if self.x == "epsilon" else "size unevenness u"
        return f"{metric} vs {against}, {self.setting}"

    def uses_job(self, job: JobLike) -> bool:
        """Whether the figure reads the results of training job ``job``.

        ε-sweep figures read the job of their m and the centralised job (m = None, WYX);
        u-sweep figures read the job of their (m, ε), which holds every u.
        """
        if job.experiment != self.experiment:
            return False
        if self.epsilon is None:
            return job.m is None or job.m == self.m
        return job.m == self.m and job.eps is not None and math.isclose(job.eps, self.epsilon)

    @property
    def claim(self) -> str:
        """The paper's claim about this figure (spec E3.4 "Claims to check")."""
        better = "higher accuracy" if self.metric == "accuracy" else "a smaller optimal gap"
        if self.x == "epsilon":
            return (
                f"WD-DP reaches {better} than Jayaraman et al. and stays close to the "
                "centralised Wang–Ye–Xu method; every method improves as ε grows."
            )
        return (
            f"WD-DP stays steady as the party sizes become uneven (u grows) while Jayaraman "
            f"et al. degrade quickly or fluctuate; at u = 1 (equal sizes) the two coincide, and "
            f"WD-DP keeps {better}."
        )


def _spec(
    number: int, metric: Metric, x: XAxis, m: int, eps: float | None, pair: int
) -> FigureSpec:
    if metric == "accuracy":
        overlays: tuple[str, ...] = ()
        what = "Test accuracy"
    else:
        overlays = _GAP_EPS_OVERLAYS if x == "epsilon" else _GAP_U_OVERLAYS
        what = "Optimal gap L_D(θ) − L_D(θ*) (log scale)"
    if x == "epsilon":
        how = (
            f"against the privacy budget ε from 0.01 to 0.25, with m = {m} parties whose data-set "
            "sizes are drawn at random above a minimum-size threshold"
        )
    else:
        how = (
            f"against the unevenness u = n_max/n_min of the party sizes (two groups of equal-size "
            f"parties), with m = {m} parties and ε = {eps:g}"
        )
    caption = (
        f"{what} of WD-DP, Jayaraman et al. and the centralised Wang–Ye–Xu method {how}, "
        "on the five data sets."
    )
    return FigureSpec(
        fig_id=f"fig{number:02d}",
        number=number,
        metric=metric,
        x=x,
        m=m,
        epsilon=eps,
        overlays=overlays,
        pair=f"fig{pair:02d}",
        caption=caption,
    )


#: fig id -> figure (spec experiments.md E3.4 table)
FIGURES: dict[str, FigureSpec] = {
    s.fig_id: s
    for s in (
        _spec(1, "accuracy", "epsilon", 32, None, 3),
        _spec(2, "accuracy", "u", 16, 0.05, 12),
        _spec(3, "optimal_gap", "epsilon", 32, None, 1),
        _spec(4, "accuracy", "epsilon", 2, None, 5),
        _spec(5, "optimal_gap", "epsilon", 2, None, 4),
        _spec(6, "accuracy", "epsilon", 4, None, 7),
        _spec(7, "optimal_gap", "epsilon", 4, None, 6),
        _spec(8, "accuracy", "epsilon", 8, None, 9),
        _spec(9, "optimal_gap", "epsilon", 8, None, 8),
        _spec(10, "accuracy", "epsilon", 16, None, 11),
        _spec(11, "optimal_gap", "epsilon", 16, None, 10),
        _spec(12, "optimal_gap", "u", 16, 0.05, 2),
        _spec(13, "accuracy", "u", 32, 0.1, 14),
        _spec(14, "optimal_gap", "u", 32, 0.1, 13),
        _spec(15, "accuracy", "u", 8, 0.01, 16),
        _spec(16, "optimal_gap", "u", 8, 0.01, 15),
    )
}

_NAME_RE = re.compile(r"^(?P<fig>fig\d\d)(?P<variant>-[a-z]+)?$")


def figure_name(fig_id: str, variant: str) -> str:
    """File stem and Snakemake target of one figure variant, e.g. ``fig07-pr``."""
    if fig_id not in FIGURES:
        raise KeyError(f"unknown figure {fig_id!r}; known: {', '.join(FIGURES)}")
    if variant not in VARIANTS:
        raise KeyError(f"unknown figure variant {variant!r}; known: {sorted(VARIANTS)}")
    return f"{fig_id}{variant}"


def parse_figure_name(name: str) -> tuple[str, str]:
    """Inverse of :func:`figure_name`: ``"fig07-pr"`` -> ``("fig07", "-pr")``."""
    match = _NAME_RE.match(name)
    if match is None:
        raise KeyError(f"not a figure name: {name!r} (expected e.g. 'fig07' or 'fig07-pr')")
    fig_id, variant = match["fig"], match["variant"] or ""
    figure_name(fig_id, variant)  # validates both parts
    return fig_id, variant


def figure_targets(
    variants: Iterable[str] = tuple(VARIANTS),
    root: str | Path = FIGURE_DIR,
    exts: Iterable[str] = ("png", "pdf"),
) -> list[str]:
    """Paths of every figure file for ``variants``: ``<root>/<fig><variant>.<ext>``.

    Ordered by figure, then variant, then extension, so the list is stable for Snakemake.
    """
    variants = list(variants)
    exts = list(exts)
    return [
        str(Path(root) / f"{figure_name(fig_id, variant)}.{ext}")
        for fig_id in FIGURES
        for variant in variants
        for ext in exts
    ]
