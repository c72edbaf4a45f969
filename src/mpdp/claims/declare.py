"""Declarations of claims (issue 33; spec experiments.md E3.4, E4, E5, E6, E10): a claim is data,
evaluated by :mod:`mpdp.claims.engine`.

A study states each claim of its paper once as a :class:`Claim` — what it says, the seed passage it
tests, the metric, the compared methods, the claimed direction, a practical margin, the scale of the
effect and the summary over repetitions — and hands the engine a tidy frame of per-repetition
observations (:data:`OBSERVATION_COLUMNS`) and its trivial baselines (:data:`BASELINE_COLUMNS`).
The engine computes every statistic; a study never writes one (docs/claims.md).

Kinds (what one cell's per-repetition statistic is):

* ``compare``: two methods paired by repetition within a cell, ``a − b`` (``difference``) or
  ``log(a / b)`` (``log_ratio``), ``methods = (a, b)``;
* ``trend``: one method along an axis (the observations' ``x``) within a cell, the OLS fitted
  change over the axis' range per repetition (of ``log`` the metric on the ``log_ratio`` scale);
* ``bound``: an observed quantity against a theoretical bound given per draw (the
  observations' ``bound``): the fraction of draws above it, claimed at most ``margin``; a bound
  whose observed slack exceeds ``vacuous_factor`` in every cell cannot fail (VACUOUS);
* ``one_sample``: a per-repetition statistic of one method (e.g. a fitted exponent minus its
  target) against 0 or ``±margin``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["compare", "trend", "bound", "one_sample"]
Direction = Literal["greater", "less", "equivalence"]
EffectScale = Literal["difference", "log_ratio"]
Summary = Literal["mean", "median", "trimmed"]

KINDS: tuple[str, ...] = ("compare", "trend", "bound", "one_sample")
DIRECTIONS: tuple[str, ...] = ("greater", "less", "equivalence")
SUMMARIES: tuple[str, ...] = ("mean", "median", "trimmed")
SCALES: tuple[str, ...] = ("difference", "log_ratio")


@dataclass(frozen=True)
class Metric:
    """A metric the observations can carry: which way is better, and whether it is a loss.

    A *loss* (log-loss, optimality gap, excess risk, training loss) spans orders of magnitude
    across settings: claims comparing or trending a loss must use the ``log_ratio`` scale, so no
    raw losses of settings with different scales are ever averaged (issue 33, item 3).
    """

    name: str
    better: Literal["higher", "lower"]
    loss: bool = False
    text: str = ""


#: every metric a claim may declare (name -> :class:`Metric`); a study adding a metric adds it here
METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("accuracy", "higher", text="test accuracy"),
    Metric("test_error", "lower", text="test error"),
    Metric("mer", "lower", text="misclassification error rate"),
    Metric("mer_iter", "lower", text="misclassification error rate, mean over the mechanism's own iterations"),
    Metric("optimal_gap", "lower", loss=True, text="optimality gap L(θ) − L(θ*)"),
    Metric("log_loss", "lower", loss=True, text="test log-loss"),
    Metric("train_loss", "lower", loss=True, text="training (empirical) loss"),
    Metric("final_loss", "lower", loss=True, text="final training loss"),
    Metric("excess_risk", "lower", loss=True, text="least-squares excess risk"),
    Metric("accuracy_spread", "lower", text="standard deviation of test accuracy across u"),
    Metric("oscillation", "lower", loss=True, text="mean |Δ log loss| per iteration"),
    Metric("log_loss_sqdev", "lower", text="squared deviation of log loss from its mean over repetitions"),
    Metric("settle_iter", "lower", loss=True, text="settling iteration"),
    Metric("g_drift", "lower", text="change of log(L_DVP / L_ADMM) between the first and last Fig. 4 iterations"),
    Metric("gap_to_ensemble", "lower", text="test error of Alg. 2 minus that of the non-private ensemble"),
    Metric("risk_gap", "lower", text="weighted risk gap R_S(w_p) − R_S(w_s)"),
    Metric("rel_error", "lower", text="relative error of a prediction against the measurement"),
    Metric("exponent_error", "lower", text="fitted growth exponent minus its target"),
)}


@dataclass(frozen=True)
class Claim:
    """One claim of a paper, evaluated per cell by :func:`mpdp.claims.engine.evaluate`.

    ``cells`` restricts the claim to these cell keys and ``cell_match`` to the keys matching a
    regular expression (None: every cell where its observations exist — the default, so a claim
    is never scored at one configured point only);
    ``readings`` likewise. ``guard_metric`` is the metric on which informativeness is judged
    (default: ``metric``; a metric without a trivial baseline needs one, e.g. the final loss);
    ``guard_methods`` the methods that must beat their trivial baseline (default: ``methods``).
    ``uses`` names methods the claim depends on besides ``methods`` (e.g. a non-private
    reference): a cell where one of them is marked unusable is uninformative.
    """

    study: str
    claim_id: str
    text: str
    source: str  # seed file and section, e.g. "S-000 wddp.md §5"
    metric: str
    methods: tuple[str, ...]
    kind: Kind
    direction: Direction
    margin: float = 0.0
    effect_scale: EffectScale = "difference"
    summary: Summary = "mean"
    cells: tuple[str, ...] | None = None
    cell_match: str | None = None  # a regular expression the cell keys must match (re.search)
    readings: tuple[str, ...] | None = None
    guard_metric: str | None = None
    guard_methods: tuple[str, ...] | None = None
    uses: tuple[str, ...] = ()
    vacuous_factor: float = 10.0
    floor: float = 1e-10  # values below it are raised to it before a log (GAP_FLOOR)

    def __post_init__(self) -> None:
        for field_name, value, allowed in (("kind", self.kind, KINDS), ("direction", self.direction, DIRECTIONS),
                                           ("summary", self.summary, SUMMARIES),
                                           ("effect_scale", self.effect_scale, SCALES)):
            if value not in allowed:
                raise ValueError(f"claim {self.claim_id}: {field_name} must be one of {allowed}, got {value!r}")
        for metric in (self.metric, self.guard_metric):
            if metric is not None and metric not in METRICS:
                raise ValueError(f"claim {self.claim_id}: unknown metric {metric!r} (declare it in METRICS)")
        n = {"compare": 2, "trend": 1, "bound": 1, "one_sample": 1}[self.kind]
        if len(self.methods) != n:
            raise ValueError(f"claim {self.claim_id}: a {self.kind} claim names {n} method(s), got {self.methods}")
        if self.kind in ("compare", "trend") and METRICS[self.metric].loss and self.effect_scale != "log_ratio":
            raise ValueError(f"claim {self.claim_id}: {self.metric} is a loss; compare losses on the log_ratio "
                             "scale (raw losses of settings whose scale differs by orders are never averaged)")
        if self.direction == "equivalence" and not self.margin > 0:
            raise ValueError(f"claim {self.claim_id}: an equivalence claim needs a margin > 0")
        if self.margin < 0:
            raise ValueError(f"claim {self.claim_id}: margin must be ≥ 0")

    @property
    def guard(self) -> str:
        """The metric informativeness is judged on."""
        return self.guard_metric or self.metric

    @property
    def guarded(self) -> tuple[str, ...]:
        """The methods that must beat their trivial baseline in a cell."""
        return self.methods if self.guard_methods is None else self.guard_methods


#: the tidy per-repetition observations a study hands the engine (one row per value)
OBSERVATION_COLUMNS: dict[str, str] = {
    "dataset": "string",
    "reading": "string",  # the study's reading ("-" when it has one)
    "cell": "string",  # human-readable cell key, e.g. "m=8, ε=0.1" (without a trend's axis)
    "rep": "int64",  # repetition (or draw) index: the unit of pairing
    "method": "string",
    "metric": "string",  # a key of METRICS
    "value": "float64",
    "x": "float64",  # the axis of a trend claim (NaN otherwise)
    "bound": "float64",  # a bound claim's theoretical bound for this draw (NaN otherwise)
}

#: optional observation columns: a study-given interval for a cell that has no per-repetition values
#: (one row per cell: ``value`` the estimate, ``lo``/``hi`` its 95 % interval)
GIVEN_COLUMNS: tuple[str, ...] = ("lo", "hi")

#: the trivial baselines: per data set (``cell`` "*": every cell) or per cell, one value per metric
BASELINE_COLUMNS: dict[str, str] = {
    "dataset": "string",
    "cell": "string",  # "*": every cell of the data set
    "metric": "string",
    "value": "float64",
    "baseline": "string",  # what it is, e.g. "majority rate", "releasing θ = 0"
}

#: methods that cannot be used in a cell (e.g. a non-private reference that has not converged)
UNUSABLE_COLUMNS: dict[str, str] = {"dataset": "string", "cell": "string", "method": "string", "note": "string"}
