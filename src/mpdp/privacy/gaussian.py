"""One-shot Gaussian mechanism: calibration and ledger (spec §0.5 C3, I-15; mechanisms.md M14).

A release ``f(D) + N(0, σ² I)`` whose ℓ2 sensitivity is Δ. Two calibrations:

- ``classical`` (spec C3, the least-squares write-up's Theorem 1 [S-002]):
  σ = Δ·sqrt(2 ln(2/δ))/ε. Like the textbook sqrt(2 ln(1.25/δ)) form, it is only a theorem
  for ε < 1, a restriction the write-up omits (I-15); :func:`classical_gaussian_std` enforces it
  with a one-line :class:`~mpdp.privacy.calibration.PrivacyParameterError`.
- ``analytic`` (Balle & Wang 2018, Thm 8; dp-accounting's ``get_sigma_gaussian``): the
  smallest σ for which the release is (ε, δ)-DP, for every ε > 0.

Ledger: :func:`composed_gaussians_epsilon` gives the exact ε at δ of several Gaussian releases of
one data set with multipliers σᵢ/Δᵢ (composition of Gaussian DP, Dong, Roth & Su 2019: they are
together one Gaussian mechanism with multiplier (Σᵢ (Δᵢ/σᵢ)²)^(-1/2)). dp-accounting's
``ADD_OR_REMOVE_ONE`` relation is used with the replace-one sensitivity put into Δ (tooling
note; same convention as :mod:`mpdp.privacy.calibration`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mpdp.privacy.calibration import (
    PrivacyParameterError,
    noise_multiplier,
    require_delta,
    require_positive,
)
from mpdp.privacy.ledger import composed_gaussian_epsilon

#: calibration names accepted by :func:`gaussian_std` (config key ``ls.calibration``)
GAUSSIAN_CALIBRATIONS = ("classical", "analytic")


def classical_gaussian_std(sensitivity: float, epsilon: float, delta: float) -> float:
    """σ = Δ·sqrt(2 ln(2/δ))/ε of the classical Gaussian mechanism as the write-up states it (C3).

    Raises:
        PrivacyParameterError: ε ≥ 1 (the mechanism is only proven for ε < 1, I-15), or a bad
            Δ, ε, δ.
    """
    sensitivity = require_positive("sensitivity", sensitivity)
    epsilon = require_positive("epsilon", epsilon)
    delta = require_delta(delta)
    if epsilon >= 1:
        raise PrivacyParameterError(
            f"the classical Gaussian mechanism (spec C3) holds only for epsilon < 1 (I-15), got "
            f"epsilon={epsilon!r}; use the analytic Gaussian calibration for epsilon >= 1"
        )
    return sensitivity * math.sqrt(2 * math.log(2 / delta)) / epsilon


def analytic_gaussian_std(sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest σ for which one Gaussian release of sensitivity Δ is (ε, δ)-DP (Balle–Wang).

    σ = Δ × ``noise_multiplier("exact", ε, δ, 1)`` (dp-accounting ``get_sigma_gaussian``,
    rounded up by its root-finding tolerance, so it never under-noises).
    """
    sensitivity = require_positive("sensitivity", sensitivity)
    return sensitivity * noise_multiplier("exact", epsilon, delta, 1)


def gaussian_std(calibration: str, sensitivity: float, epsilon: float, delta: float) -> float:
    """σ of a one-shot Gaussian release under ``calibration`` (``classical`` | ``analytic``)."""
    if calibration == "classical":
        return classical_gaussian_std(sensitivity, epsilon, delta)
    if calibration == "analytic":
        return analytic_gaussian_std(sensitivity, epsilon, delta)
    raise PrivacyParameterError(
        f"calibration must be one of {GAUSSIAN_CALIBRATIONS}, got calibration={calibration!r}"
    )


def composed_gaussians_epsilon(
    sigmas: Sequence[float], sensitivities: Sequence[float], delta: float
) -> float:
    """Exact ε at δ of Gaussian releases with stds σᵢ and sensitivities Δᵢ of the same data.

    Together they are one Gaussian mechanism with multiplier (Σᵢ (Δᵢ/σᵢ)²)^(-1/2) (Gaussian DP
    composition), whose ε is the analytic Gaussian one. Any σᵢ = 0 gives +inf.
    """
    if len(sigmas) != len(sensitivities) or not sigmas:
        raise PrivacyParameterError(
            f"sigmas and sensitivities must be non-empty and of equal length, got "
            f"{list(sigmas)!r} and {list(sensitivities)!r}"
        )
    inv_sq = 0.0
    for sigma, sens in zip(sigmas, sensitivities, strict=True):
        sigma = require_positive("sigma", sigma, allow_zero=True)
        sens = require_positive("sensitivity", sens)
        if sigma == 0:
            return math.inf
        inv_sq += (sens / sigma) ** 2
    return composed_gaussian_epsilon(1 / math.sqrt(inv_sq), 1, delta, "analytic")
