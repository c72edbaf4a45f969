"""The four papers' mechanisms in the benchmark, declared through the extension point (spec E10).

Each paper family is one job whose trainer batches all its configured mechanisms through its
study's engine (:mod:`mpdp.studies.benchmark.train`): ``gradient`` (one
:func:`mpdp.engine.gd.noisy_gd` batch per cell), ``output`` (local minimisers and votes solved once
per partition, the ε grid only redraws noise; it also carries the non-private reference θ*) and
``admm`` (one :func:`mpdp.mechanisms.admm.run_batch` per partition). Their calibrations live in
:mod:`mpdp.studies.benchmark.calibration`; their audit adapters are the audit registry's entries
of the same id (:mod:`mpdp.audit.registry`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mpdp.studies.benchmark.interface import Mechanism

if TYPE_CHECKING:
    pass

_GAUSS = "composed Gaussian, exact accountant"
_GAUSS_PARTY = "composed Gaussian per party, exact accountant (worst party)"
_NL2 = "one N-L2 release, pure ε"
_ADMM = "per-release pure α, PLD composition over T"
#: PVP's noise is calibrated to its hidden-state bound (spec I-20; the legend says so too)
PVP_CALIBRATION = "noise to the hidden-state bound Δp/(1−r)"


@dataclass(frozen=True)
class FamilyMechanism(Mechanism):
    """A mechanism of the papers, trained with the rest of its family (``job``) by the family's
    runner (:data:`mpdp.studies.benchmark.train.FAMILY_RUNNERS`)."""



@dataclass(frozen=True)
class GradientFamily(FamilyMechanism):
    """Gradient perturbation (M2, M3, M4)."""

    job: str = "gradient"


@dataclass(frozen=True)
class OutputFamily(FamilyMechanism):
    """Output perturbation and voting (M1a reference, M5, M6, M11, M12)."""

    job: str = "output"


@dataclass(frozen=True)
class ADMMFamily(FamilyMechanism):
    """Zhang–Zhu ADMM (M9 DVP, M10 PVP)."""

    job: str = "admm"


#: the papers' mechanisms, in legend order (spec E10 "Mechanisms")
MECHANISMS: tuple[Mechanism, ...] = (
    OutputFamily("nonprivate", "non-private ERM θ*", "M1", "reference", "all", "record",
                 calibration="none (reference)"),
    GradientFamily("wyx", "WYX centralised DP-GD", "M2", "gradient", "wddp", "record", calibration=_GAUSS,
                   audit="wyx"),
    GradientFamily("wddp_per_round", "WD-DP per-round", "M3.2", "gradient", "wddp", "record",
                   calibration=_GAUSS, audit="wddp_per_round"),
    GradientFamily("wddp_literal", "WD-DP Alg. 1 (per-party calibrated)", "M3.1", "gradient", "wddp", "record",
                   calibration=_GAUSS_PARTY, audit="wddp_literal"),
    GradientFamily("jayaraman_per_round", "Jayaraman gradient, per-round", "M4.2", "gradient", "wddp", "record",
                   calibration=_GAUSS, audit="jayaraman_per_round"),
    GradientFamily("jayaraman_literal", "Jayaraman gradient, local", "M4.1", "gradient", "wddp", "record",
                   calibration=_GAUSS_PARTY, audit="jayaraman_literal"),
    OutputFamily("jayaraman_output", "Jayaraman output perturbation", "M5", "output", "voting", "record",
                 calibration=_NL2, audit="jayaraman_output"),
    OutputFamily("pathak", "Pathak parameter averaging", "M6a", "output", "voting", "record",
                 calibration=_NL2, audit="pathak"),
    OutputFamily("param_avg", "party-level parameter averaging", "M6b", "output", "voting", "party",
                 calibration=_NL2, audit="param_avg"),
    OutputFamily("hamm_vote", "Hamm Alg. 1 (majority vote)", "M11", "voting", "voting", "party",
                 public_data=True, calibration=_NL2, audit="hamm_vote"),
    OutputFamily("hamm_soft", "Hamm Alg. 2 (soft vote)", "M12", "voting", "voting", "party",
                 public_data=True, calibration=_NL2, audit="hamm_soft"),
    ADMMFamily("dvp", "ADMM dual perturbation (DVP)", "M9", "admm", "admm", "record", calibration=_ADMM,
               audit="dvp"),
    ADMMFamily("pvp", "ADMM primal perturbation (PVP, noise to Δp/(1−r))", "M10", "admm", "admm", "record",
               calibration=f"{_ADMM}; {PVP_CALIBRATION}", audit="pvp"),
)
