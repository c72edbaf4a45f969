"""Noise calibration of T-step full-batch Gaussian gradient release (spec §0.5 C1, C2; M2-M4).

Convention. Every gradient-perturbation mechanism of the spec releases, at each of its ``T``
adaptive steps, a gradient whose replace-one ℓ2 sensitivity is ``Δ = 2G/n_eff`` (spec §0.3)
plus ``N(0, σ² I)``. The **noise multiplier** is ``σ/Δ``. An accountant maps a target
``(ε, δ)`` and ``T`` to a multiplier; the noise std is ``multiplier × Δ``.

``n_eff`` is ``n`` for WYX and WD-DP (spec M2, M3), ``m·n_(1)`` for Jayaraman's simple average
(spec M4), and ``n_j`` for party ``j``'s own trajectory in the literal local mode (spec M3.1).

Accountants (``L = ln(1/δ)``):

============  ==========================================================  ===========
name          multiplier σ/Δ                                              spec
============  ==========================================================  ===========
``ma16``      ``2·sqrt(T·L)/ε`` (σ² = 16 G² T L/(n² ε²)), needs ε ≤ 2L     C1 (c = 16)
``ma_tight``  ``sqrt((2L + ε)·T)/ε`` (σ² = (8L + 4ε) G² T/(n² ε²))          C1, tighter
``ma_int``    ``sqrt(c_int·T·L)/(2ε)``, c_int = 8ε⌈2L/ε⌉/L                  C1, integer
``exact``     ``sqrt(T)·σ_AGM(ε, δ)`` (analytic Gaussian, Balle-Wang 2018)  tooling
``rdp``       smallest multiplier with RDP-accounted ε ≤ target           tooling
``zcdp_code`` ``sqrt(T)/(sqrt(2)·(sqrt(L + ε) - sqrt(L)))``                 C2
============  ==========================================================  ===========

**Per-party calibration** (the ``equal_privacy`` reading, spec I-1, §0.5): in the literal
local-then-aggregate mode each party's trajectory is a T-step Gaussian mechanism with
sensitivity ``2G/n_j``. The accountant ``exact_per_party`` (:data:`PER_PARTY_ACCOUNTANTS`)
uses the ``exact`` multiplier with that party's own sensitivity, ``σ_j = multiplier × 2G/n_j``
(:func:`per_party_noise_std`), so every party's release, and hence the aggregate
(post-processing of disjoint parties' releases), is exactly (ε, δ)-DP.

``exact`` and ``rdp`` use dp-accounting with ``NeighboringRelation.ADD_OR_REMOVE_ONE`` on a
unit-sensitivity Gaussian: the replace-one sensitivity ``2G/n_eff`` is put into the std by
:func:`noise_std` (dp-accounting's ``REPLACE_ONE`` disagrees between RDP and PLD in 0.6.0).
"""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable, Sequence

import dp_accounting
import numpy as np
from dp_accounting.rdp import RdpAccountant

from mpdp.errors import ConfigError

#: accountant names, as in the config key ``wddp.accountants`` (spec §0.5, I-10)
ACCOUNTANTS = ("ma16", "ma_tight", "ma_int", "exact", "rdp", "zcdp_code")

#: per-party accountants (literal local mode only) -> the accountant of their multiplier:
#: party j's noise std is that multiplier × 2G/n_j (module docstring, ``equal_privacy``)
PER_PARTY_ACCOUNTANTS: dict[str, str] = {"exact_per_party": "exact"}

#: neighbouring relation given to dp-accounting; the replace-one factor 2 is in Δ = 2G/n_eff
NEIGHBORING_RELATION = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE

# Error bound of scipy's brentq inside dp_accounting.get_sigma_gaussian (xtol=1e-12 and the
# default rtol=4·machine-eps); the exact σ is rounded up by it so it never under-noises.
_AGM_XTOL = 1e-12
_AGM_RTOL = 4 * 2.220446049250313e-16
# Relative tolerance of the RDP calibration, in multiplier space.
_RDP_RTOL = 1e-9


class PrivacyParameterError(ConfigError, ValueError):
    """A privacy parameter (ε, δ, T, σ, sensitivity, accountant, …) is invalid.

    It is a :class:`~mpdp.errors.ConfigError` (the workflow prints the message) and a
    :class:`ValueError` (ordinary Python callers catch it as such). The message names the
    argument and its value.
    """


def require_positive(name: str, value: float, *, allow_zero: bool = False) -> float:
    """Return ``value`` as a float if it is finite and > 0 (≥ 0 with ``allow_zero``)."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise PrivacyParameterError(f"{name} must be a finite number {bound}, got {name}={value!r}")
    return float(value)


def require_delta(delta: float) -> float:
    """Return ``delta`` as a float if ``0 < delta < 1``."""
    ok = isinstance(delta, numbers.Real) and not isinstance(delta, bool)
    if not ok or not 0 < delta < 1:
        raise PrivacyParameterError(f"delta must be a number in (0, 1), got delta={delta!r}")
    return float(delta)


def require_steps(T: int) -> int:
    """Return ``T`` as an int if it is an integer ≥ 1."""
    if not isinstance(T, numbers.Integral) or isinstance(T, bool) or T < 1:
        raise PrivacyParameterError(f"T must be an integer >= 1, got T={T!r}")
    return int(T)


def sensitivity_replace_one(G: float, n_eff: float) -> float:
    """Per-step replace-one ℓ2 sensitivity ``Δ = 2G/n_eff`` of a mean gradient (spec §0.3, C1).

    Replacing one record moves a mean of ``n_eff`` per-record gradients, each of norm ≤ G, by at
    most ``2G/n_eff``. ``n_eff`` is ``n`` (WYX, WD-DP), ``m·n_(1)`` (Jayaraman, spec M4) or
    ``n_j`` (party ``j``'s own trajectory in the literal local mode, spec M3.1).
    """
    return 2.0 * require_positive("G", G) / require_positive("n_eff", n_eff)


def _ma16(epsilon: float, delta: float, T: int) -> float:
    """Spec C1, c = 16: σ² = 16 G² T ln(1/δ)/(n² ε²), i.e. multiplier 2·sqrt(T ln(1/δ))/ε."""
    log_inv_delta = math.log(1 / delta)
    if epsilon > 2 * log_inv_delta:
        raise PrivacyParameterError(
            f"accountant 'ma16' requires epsilon <= 2 ln(1/delta) = {2 * log_inv_delta:.6g} "
            f"(spec C1 validity condition), got epsilon={epsilon!r} with delta={delta!r}; "
            "use ma_tight, ma_int, exact or rdp for larger epsilon"
        )
    return 2.0 * math.sqrt(T * log_inv_delta) / epsilon


def _ma_tight(epsilon: float, delta: float, T: int) -> float:
    """Spec C1 tighter option: σ² = (8 ln(1/δ) + 4ε) G² T/(n² ε²); multiplier² = (2L + ε)T/ε²."""
    return math.sqrt((2 * math.log(1 / delta) + epsilon) * T) / epsilon


def _ma_int(epsilon: float, delta: float, T: int) -> float:
    """Spec C1 integer-order variant: c_int = 8ε⌈2 ln(1/δ)/ε⌉/ln(1/δ) in place of c = 16.

    σ² = c_int G² T ln(1/δ)/(n² ε²), so multiplier² = c_int T ln(1/δ)/(4ε²).
    """
    log_inv_delta = math.log(1 / delta)
    c_int = 8 * epsilon * math.ceil(2 * log_inv_delta / epsilon) / log_inv_delta
    return math.sqrt(c_int * T * log_inv_delta) / (2 * epsilon)


def _exact(epsilon: float, delta: float, T: int) -> float:
    """Smallest multiplier for which T adaptive Gaussian releases are (ε, δ)-DP.

    T-fold composition of Gaussian mechanisms with multiplier s is exactly one Gaussian
    mechanism with multiplier s/sqrt(T) (composition of Gaussian DP, Dong, Roth & Su 2019), so the
    answer is ``sqrt(T) · σ_AGM(ε, δ)`` with σ_AGM the analytic Gaussian mechanism's σ
    (Balle & Wang 2018, Thm 8), computed by ``dp_accounting.get_sigma_gaussian`` and rounded
    up by its root-finding error bound.
    """
    sigma = dp_accounting.get_sigma_gaussian(epsilon, delta, tol=_AGM_XTOL)
    return math.sqrt(T) * (sigma * (1 + _AGM_RTOL) + _AGM_XTOL)


def _rdp(epsilon: float, delta: float, T: int) -> float:
    """Smallest multiplier whose RDP-accounted ε (dp-accounting ``RdpAccountant``) is ≤ target.

    Calibrated with ``dp_accounting.calibrate_dp_mechanism`` (which returns a parameter whose ε
    does not exceed the target), default RDP orders, a bracket starting at the exact multiplier
    (RDP is an upper bound on the exact ε) and a relative tolerance of 1e-9.
    """
    lower = _exact(epsilon, delta, T)
    return float(
        dp_accounting.calibrate_dp_mechanism(
            lambda: RdpAccountant(neighboring_relation=NEIGHBORING_RELATION),
            lambda m: dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(m), T),
            epsilon,
            delta,
            bracket_interval=dp_accounting.LowerEndpointAndGuess(lower, 2 * lower),
            tol=_RDP_RTOL * lower,
        )
    )


def _zcdp_code(epsilon: float, delta: float, T: int) -> float:
    """Spec C2 (Jayaraman's code): multiplier sqrt(T)/(sqrt(2)(sqrt(L + ε) - sqrt(L))).

    T releases of multiplier s are ρ_tot = T/(2s²)-zCDP, hence (ρ_tot + 2 sqrt(ρ_tot L), δ)-DP;
    solving for ε gives sqrt(ρ_tot) = sqrt(L + ε) - sqrt(L), written here as
    ε/(sqrt(L + ε) + sqrt(L)) to avoid cancellation at small ε.
    """
    log_inv_delta = math.log(1 / delta)
    sqrt_rho = epsilon / (math.sqrt(log_inv_delta + epsilon) + math.sqrt(log_inv_delta))
    return math.sqrt(T) / (math.sqrt(2) * sqrt_rho)


_MULTIPLIERS: dict[str, Callable[[float, float, int], float]] = {
    "ma16": _ma16,
    "ma_tight": _ma_tight,
    "ma_int": _ma_int,
    "exact": _exact,
    "rdp": _rdp,
    "zcdp_code": _zcdp_code,
}


@functools.cache
def noise_multiplier(accountant: str, epsilon: float, delta: float, T: int) -> float:
    """Noise multiplier σ/Δ for T full-batch Gaussian steps at target (ε, δ) (spec §0.5).

    ``Δ`` is the per-step replace-one sensitivity (:func:`sensitivity_replace_one`). The
    formula per ``accountant`` is in the module docstring (C1: ``ma16``, ``ma_tight``,
    ``ma_int``; C2: ``zcdp_code``; dp-accounting: ``exact``, ``rdp``). Memoised: each distinct
    ``(accountant, ε, δ, T)`` is computed once per process. A per-party accountant
    (:data:`PER_PARTY_ACCOUNTANTS`) gives the multiplier of its base accountant.

    Raises:
        PrivacyParameterError: unknown accountant, ε not > 0, δ not in (0, 1), T not an integer
            ≥ 1, or ``ma16`` with ε > 2 ln(1/δ) (spec C1's validity condition).
    """
    accountant = PER_PARTY_ACCOUNTANTS.get(accountant, accountant)
    if accountant not in _MULTIPLIERS:
        raise PrivacyParameterError(
            f"accountant must be one of {ACCOUNTANTS + tuple(PER_PARTY_ACCOUNTANTS)}, "
            f"got accountant={accountant!r}"
        )
    return _MULTIPLIERS[accountant](
        require_positive("epsilon", epsilon), require_delta(delta), require_steps(T)
    )


def noise_std(accountant: str, epsilon: float, delta: float, T: int, sensitivity: float) -> float:
    """Per-coordinate Gaussian noise std σ = noise_multiplier(accountant, ε, δ, T) × Δ.

    ``sensitivity`` is the per-step replace-one ℓ2 sensitivity Δ = 2G/n_eff (spec §0.3, C1).
    For ``ma16`` and Δ = 2G/n this is spec B9's σ_WD = 4G sqrt(T ln(1/δ))/(nε).
    """
    sensitivity = require_positive("sensitivity", sensitivity)
    return noise_multiplier(accountant, epsilon, delta, T) * sensitivity


def per_party_noise_std(
    accountant: str, epsilon: float, delta: float, T: int, G: float, party_sizes: Sequence[int]
) -> np.ndarray:
    """Noise std of every party, calibrated to the party's own size (``equal_privacy``, I-1).

    ``σ_j = noise_multiplier(accountant, ε, δ, T) × 2G/n_j``: party j's T local steps have
    per-step replace-one sensitivity 2G/n_j (spec M3.1, M4.1), so with ``accountant="exact"``
    (or ``exact_per_party``) each party's trajectory is exactly (ε, δ)-DP and so is their
    aggregate, which is post-processing of releases on disjoint data.
    """
    sizes = np.asarray(party_sizes, dtype=float)
    if sizes.ndim != 1 or sizes.size == 0 or not np.all(np.isfinite(sizes) & (sizes > 0)):
        raise PrivacyParameterError(
            f"party_sizes must be a non-empty 1-d sequence of positive sizes, got {party_sizes!r}"
        )
    multiplier = noise_multiplier(accountant, epsilon, delta, T)
    return multiplier * 2.0 * require_positive("G", G) / sizes
