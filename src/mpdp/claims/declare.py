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
    #: a rate over one test set (k / n_test, or a difference of two): its resolution is one test record
    #: (1/n_test, the observations' ``n_test``)
    per_record: bool = False
    #: the guard's practical margin (:func:`mpdp.claims.resolution.guard_margin`): the largest of this many
    #: test records, this share of |baseline − converged reference| and this share of |baseline|
    guard_records: float = 0.0
    guard_share: float = 0.0
    guard_relative: float = 0.0
    #: the practical margin ±δ of an effect on the ``difference`` scale when a claim gives none (the TOST's)
    effect_margin: float = 0.0
    #: one line: why :attr:`effect_margin` is the smallest effect that matters
    margin_reason: str = ""


#: the guard's practical margin on a rate (accuracy, test error, MER): at least this many test records …
GUARD_RECORDS: float = 10.0
#: … and at least this share of the gap between the trivial baseline and the converged non-private reference
GUARD_SHARE: float = 0.25
#: the guard's margin when no reference is known: this share of the baseline itself (losses, the MER of ADMM)
GUARD_RELATIVE: float = 0.01
#: the practical margin ±δ of a difference of rates (accuracy, error) when a claim declares none: 1 point
RATE_MARGIN: float = 0.01
#: … of a log10-ratio (a loss): a factor 10^0.05 ≈ 1.12
LOG_MARGIN: float = 0.05

#: every metric a claim may declare (name -> :class:`Metric`); a study adding a metric adds it here
METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("accuracy", "higher", text="test accuracy", per_record=True, guard_records=GUARD_RECORDS,
           guard_share=GUARD_SHARE, effect_margin=RATE_MARGIN,
           margin_reason="1 point of a rate: smaller differences do not change which method a practitioner picks"),
    Metric("test_error", "lower", text="test error", per_record=True, guard_records=GUARD_RECORDS,
           guard_share=GUARD_SHARE, effect_margin=RATE_MARGIN,
           margin_reason="1 point of a rate: smaller differences do not change which method a practitioner picks"),
    Metric("mer", "lower", text="misclassification error rate", per_record=True, guard_records=GUARD_RECORDS,
           guard_share=GUARD_SHARE, guard_relative=GUARD_RELATIVE, effect_margin=RATE_MARGIN,
           margin_reason="1 point of a rate: smaller differences do not change which method a practitioner picks"),
    Metric("mer_iter", "lower", text="misclassification error rate, mean over the mechanism's own iterations",
           effect_margin=RATE_MARGIN,
           margin_reason="1 point of a rate: smaller differences do not change which method a practitioner picks"),
    Metric("optimal_gap", "lower", loss=True, text="optimality gap L(θ) − L(θ*)", guard_share=GUARD_SHARE),
    Metric("log_loss", "lower", loss=True, text="test log-loss", guard_share=GUARD_SHARE,
           guard_relative=GUARD_RELATIVE),
    Metric("train_loss", "lower", loss=True, text="training (empirical) loss", guard_share=GUARD_SHARE,
           guard_relative=GUARD_RELATIVE),
    Metric("final_loss", "lower", loss=True, text="final training loss", guard_share=GUARD_SHARE,
           guard_relative=GUARD_RELATIVE),
    Metric("excess_risk", "lower", loss=True, text="least-squares excess risk", guard_share=GUARD_SHARE),
    Metric("accuracy_spread", "lower", text="standard deviation of test accuracy across u",
           effect_margin=RATE_MARGIN / 2,
           margin_reason="half a point of accuracy's spread across u: half the rate margin, a spread is smaller than a level"),
    Metric("oscillation", "lower", loss=True, text="mean |Δ log loss| per iteration"),
    Metric("settle_iter", "lower", loss=True, text="settling iteration"),
    Metric("g_drift", "lower", text="change of log(L_DVP / L_ADMM) between the first and last Fig. 4 iterations"),
    Metric("gap_to_ensemble", "lower", text="test error of Alg. 2 minus that of the non-private ensemble",
           per_record=True, effect_margin=RATE_MARGIN,
           margin_reason="1 point of a rate: smaller differences do not change which method a practitioner picks"),
    Metric("risk_gap", "lower", text="weighted risk gap R_S(w_p) − R_S(w_s)"),
    Metric("rel_error", "lower", text="relative error of a prediction against the measurement"),
    Metric("exponent_error", "lower", text="fitted growth exponent minus its target"),
    Metric("log_var_ratio", "lower", text="log10 of the ratio of two mechanisms' variances of ln(loss) over "
           "repetitions (Zhang–Zhu Z6: DVP / PVP)", effect_margin=0.09691001300805642,  # log10(1.25)
           margin_reason="a variance ratio of 1.25 (standard deviations 12 % apart): a smaller reduction leaves a "
                         "single run's loss about as uncertain, and is below what variance bars over 20 runs show"),
    Metric("log_gap_spread", "lower", text="standard deviation across u of log10 optimal gap",
           effect_margin=0.04845500650402821,  # log10(1.25) / 2
           margin_reason="half of the gap claims' factor 1.25 (a twentieth of a decade): half the level margin, as "
                         "for accuracy's spread, since a spread is smaller than a level"),
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
    practical_margin: float | None = None  # ±δ of the TOST of a directional claim (default: the metric's)
    guard_reason: str = ""  # why ``guarded`` are the methods that must be above chance (default: the rule's)
    margin_reason: str = ""  # one line: why ±δ is the smallest effect that matters (default: the metric's)
    hedge: str = ""  # the paper's own qualifier of the claim (e.g. "for most values of α"), shown with the verdict

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
        if self.practical_margin is not None and not self.practical_margin > 0:
            raise ValueError(f"claim {self.claim_id}: practical_margin must be > 0")
        if (self.direction != "equivalence" and self.kind != "bound" and self.effect_scale == "difference"
                and self.practical_margin is None and not max(self.margin, METRICS[self.metric].effect_margin) > 0):
            raise ValueError(f"claim {self.claim_id}: {self.metric} has no default practical margin: declare a "
                             "practical_margin (the ±δ of its equivalence test and power statement)")
        if self.guard_methods is not None and not self.guard_reason:
            raise ValueError(f"claim {self.claim_id}: guard_methods needs a guard_reason (why these must be above "
                             "chance)")

    @property
    def guard(self) -> str:
        """The metric informativeness is judged on."""
        return self.guard_metric or self.metric

    @property
    def claimed_better(self) -> str | None:
        """The method a directional ``compare`` claim says is better ("A beats B": A), else None."""
        if self.kind != "compare" or self.direction == "equivalence":
            return None
        higher = METRICS[self.metric].better == "higher"
        return self.methods[0] if (self.direction == "greater") == higher else self.methods[1]

    @property
    def guarded(self) -> tuple[str, ...]:
        """The methods that must beat their trivial baseline in a cell (docs/claims.md, "Which method must
        be above chance"): the declared ``guard_methods``; else for "A beats B" A only (B at chance is
        what A beats), for an equivalence both (two methods at chance are equivalent trivially), for a
        one-method claim its method."""
        if self.guard_methods is not None:
            return self.guard_methods
        better = self.claimed_better
        return (better,) if better is not None else self.methods

    @property
    def guarded_why(self) -> str:
        """Why :attr:`guarded` must be above chance (the declaration's ``guard_reason`` or the rule's)."""
        if self.guard_reason:
            return self.guard_reason
        if self.claimed_better is not None:
            return (f"a claim that {self.claimed_better} beats the other needs {self.claimed_better} above chance; "
                    "the other at chance is what it beats")
        if self.kind == "compare":
            return "two methods at chance are equivalent trivially: both must be above it"
        return f"a claim about {self.methods[0]} alone needs it above chance"

    @property
    def delta_reason(self) -> str:
        """Why ±δ (:attr:`delta`) is the smallest effect that matters: the declaration's ``margin_reason``,
        else the metric's, else the default of the claim's scale."""
        if self.margin_reason:
            return self.margin_reason
        if self.direction == "equivalence" or self.kind == "bound" or self.practical_margin is not None:
            return "declared with the claim"
        if self.effect_scale == "log_ratio":
            return "a factor 10^0.05 ≈ 1.12: smaller ratios of a loss are within run-to-run tuning noise"
        return METRICS[self.metric].margin_reason or "the metric's default practical margin"

    @property
    def delta(self) -> float:
        """The practical margin ±δ of the claim's statistic (the TOST's and the power statement's): an
        equivalence claim's or bound's ``margin``, else ``practical_margin``, else the metric's default on
        the claim's scale (:data:`LOG_MARGIN` for a log-ratio)."""
        if self.direction == "equivalence" or self.kind == "bound":
            return float(self.margin)
        if self.practical_margin is not None:
            return float(self.practical_margin)
        if self.effect_scale == "log_ratio":
            return LOG_MARGIN
        return max(float(self.margin), METRICS[self.metric].effect_margin)


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

#: optional observation column: the test-set size behind a per-record metric's value (its resolution is
#: one record, 1/n_test; without it a rate's resolution is the relative float one)
RESOLUTION_COLUMN: str = "n_test"

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
#: optional baseline column: the converged non-private reference of the metric (e.g. θ*'s accuracy), which
#: sets the guard's practical margin as a share of |baseline − reference|
REFERENCE_COLUMN: str = "reference"

#: methods that cannot be used in a cell (e.g. a non-private reference that has not converged)
UNUSABLE_COLUMNS: dict[str, str] = {"dataset": "string", "cell": "string", "method": "string", "note": "string"}
#: optional unusable column: the most the reference's own gap could move the claim's statistic (on its
#: scale); the reference stays usable when that is at most :data:`REFERENCE_SHARE` of the claim's ±δ
EFFECT_COLUMN: str = "effect"
#: a reference gap is material when it could move the claim's statistic by more than this share of ±δ
REFERENCE_SHARE: float = 0.25
