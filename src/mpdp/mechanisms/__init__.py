"""Mechanisms of the papers behind one interface (:mod:`mpdp.mechanisms.base`).

By family: :mod:`~mpdp.mechanisms.gradient_perturbation` (WD-DP study, spec M1-M4, in
:data:`REGISTRY`); :mod:`~mpdp.mechanisms.least_squares` (least-squares write-up, spec M14,
M15: ``ls_ssp``, ``ls_sgd``, OLS; closed-form and batched-SGD functions used by
:mod:`mpdp.studies.ls`).
"""

from mpdp.mechanisms.base import Calibration, Mechanism, RunSpec
from mpdp.mechanisms.gradient_perturbation import (
    JAYARAMAN,
    NONPRIVATE,
    WDDP,
    WYX,
    GradientPerturbation,
)

#: every trainable mechanism by id
REGISTRY: dict[str, GradientPerturbation] = {m.id: m for m in (NONPRIVATE, WYX, WDDP, JAYARAMAN)}


def get(mechanism_id: str) -> GradientPerturbation:
    """The mechanism with this id (a readable error for unknown ids)."""
    try:
        return REGISTRY[mechanism_id]
    except KeyError:
        raise KeyError(f"unknown mechanism {mechanism_id!r}; known: {sorted(REGISTRY)}") from None


__all__ = [
    "REGISTRY", "Calibration", "GradientPerturbation", "Mechanism",
    "RunSpec", "get", "JAYARAMAN", "NONPRIVATE", "WDDP", "WYX",
]
