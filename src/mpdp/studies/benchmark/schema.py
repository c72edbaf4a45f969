"""The benchmark's mechanism catalogue and table columns (spec experiments.md E10).

Tables ``data/results/benchmark/<dataset>.parquet`` hold one row per (mechanism, ε, m, u,
repetition) in the common schema :data:`mpdp.results.COLUMNS` (``experiment = "benchmark"``;
``epsilon``/``delta`` the common target; ``accuracy``; ``optimal_gap`` against the pooled θ* of the
same λ) plus :data:`EXTRA_COLUMNS`. Repetition ``rep`` of every mechanism in a cell uses the same
data split and partition, so repetitions pair across mechanisms (the ranking's paired test).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BenchmarkMechanism:
    """One mechanism of the benchmark: its id, label, family and privacy unit (spec E10)."""

    id: str
    label: str  # legend label a reader understands without the paper
    spec: str  # spec section of the mechanism
    family: str  # reference | gradient | output | voting | admm
    paper: str  # study whose paper proposes or uses it
    privacy_unit: str  # record | party (a party-level guarantee implies the record-level one)
    public_data: bool = False  # needs a public unlabeled auxiliary pool (Hamm)
    calibration: str = ""  # how its whole transcript is calibrated (the ``calibration`` column)


_GAUSS = "composed Gaussian, exact accountant"
_GAUSS_PARTY = "composed Gaussian per party, exact accountant (worst party)"
_NL2 = "one N-L2 release, pure ε"
_ADMM = "per-release pure α, PLD composition over T"
#: PVP's noise is calibrated to its hidden-state bound (spec I-20; the legend says so too)
PVP_CALIBRATION = "noise to the hidden-state bound Δp/(1−r)"

#: every mechanism of the benchmark, in legend order (spec E10 "Mechanisms")
MECHANISMS: tuple[BenchmarkMechanism, ...] = (
    BenchmarkMechanism("nonprivate", "non-private ERM θ*", "M1", "reference", "all", "record",
                       calibration="none (reference)"),
    BenchmarkMechanism("wyx", "WYX centralised DP-GD", "M2", "gradient", "wddp", "record",
                       calibration=_GAUSS),
    BenchmarkMechanism("wddp_per_round", "WD-DP per-round", "M3.2", "gradient", "wddp", "record",
                       calibration=_GAUSS),
    BenchmarkMechanism("wddp_literal", "WD-DP Alg. 1 (per-party calibrated)", "M3.1", "gradient",
                       "wddp", "record",
                       calibration=_GAUSS_PARTY),
    BenchmarkMechanism("jayaraman_per_round", "Jayaraman gradient, per-round", "M4.2", "gradient",
                       "wddp", "record",
                       calibration=_GAUSS),
    BenchmarkMechanism("jayaraman_literal", "Jayaraman gradient, local", "M4.1", "gradient", "wddp",
                       "record",
                       calibration=_GAUSS_PARTY),
    BenchmarkMechanism("jayaraman_output", "Jayaraman output perturbation", "M5", "output", "voting",
                       "record",
                       calibration=_NL2),
    BenchmarkMechanism("pathak", "Pathak parameter averaging", "M6a", "output", "voting", "record",
                       calibration=_NL2),
    BenchmarkMechanism("param_avg", "party-level parameter averaging", "M6b", "output", "voting",
                       "party",
                       calibration=_NL2),
    BenchmarkMechanism("hamm_vote", "Hamm Alg. 1 (majority vote)", "M11", "voting", "voting", "party",
                       public_data=True,
                       calibration=_NL2),
    BenchmarkMechanism("hamm_soft", "Hamm Alg. 2 (soft vote)", "M12", "voting", "voting", "party",
                       public_data=True,
                       calibration=_NL2),
    BenchmarkMechanism("dvp", "ADMM dual perturbation (DVP)", "M9", "admm", "admm", "record",
                       calibration=_ADMM),
    BenchmarkMechanism("pvp", "ADMM primal perturbation (PVP, noise to Δp/(1−r))", "M10", "admm", "admm", "record",
                       calibration=_ADMM + "; " + PVP_CALIBRATION),
)

MECHANISM_BY_ID: dict[str, BenchmarkMechanism] = {mech.id: mech for mech in MECHANISMS}

#: columns the benchmark adds to the common schema (mpdp.results ``extra``)
EXTRA_COLUMNS: dict[str, str] = {
    "family": "string",  # BenchmarkMechanism.family
    "privacy_unit": "string",  # record | party
    "public_data": "boolean",  # True for Hamm's methods (public unlabeled pool)
    "calibration": "string",  # BenchmarkMechanism.calibration (PVP: to the hidden-state bound, I-20)
    "eps_total": "float64",  # accounted ε of the whole released transcript at delta_total
    "delta_total": "float64",  # δ of that statement (0 for pure-DP releases)
    # added by the training code (branch bench)
    "beta": "float64",  # N-L2 parameter actually used (output/voting: ε/Δ; ADMM: mean ζ)
    "alpha_step": "float64",  # ADMM: per-iteration pure-DP budget α of every node release
    "hparam": "string",  # name of the tuned hyper-parameter (eta | lambda | admm_penalty | none)
    "hparam_value": "float64",  # its frozen value (selected at the reference cell)
    "noise_norm": "float64",  # ‖noise‖ actually drawn (output/voting); NaN where not one draw
    "partition": "string",  # fingerprint of the (m, u, rep) partition: equal across mechanisms
}

#: the cells of the grid: the ranking compares mechanisms within each
CELL = ["dataset", "epsilon", "m", "u"]
