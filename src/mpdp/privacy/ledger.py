"""Privacy ledger: the ε a mechanism really gives, as implemented (spec §0.5, M3.1, M4.1, I-1).

The calibration (:mod:`mpdp.privacy.calibration`) maps a *target* ε to a noise std. The ledger
goes the other way: given the noise std actually used, the per-step sensitivity actually
incurred and T adaptive steps, it reports the ε at δ of the composed Gaussian mechanism.
For a run that is calibrated and executed with the same sensitivity this is at most the
target (equal to it for the ``exact`` accountant). For the literal local-then-aggregate mode
(spec M3.1, M4.1) it is an *upper bound*: the worst party's ε, by post-processing (scope
``worst_party``), which exceeds the claimed ε (inconsistency I-1) unless every party is
calibrated to its own size (``exact_per_party``).

Methods of :func:`composed_gaussian_epsilon`:

- ``analytic``: the exact value. T releases with multiplier s compose to one Gaussian
  mechanism with multiplier s/sqrt(T) (Gaussian DP, Dong, Roth & Su 2019), whose ε(δ) is the
  analytic Gaussian mechanism's (Balle & Wang 2018, Thm 8):
  δ(ε) = Φ(1/(2s') - ε s') - e^ε Φ(-1/(2s') - ε s') with s' = s/sqrt(T), solved for ε by
  ``dp_accounting.get_epsilon_gaussian``.
- ``pld``: dp-accounting's ``PLDAccountant`` (pessimistic, connect-the-dots discretisation,
  interval scaled to the privacy-loss support); +inf when δ is below its truncated tail mass.
- ``rdp``: dp-accounting's ``RdpAccountant`` (default orders); an upper bound on ``analytic``.

All use ``NeighboringRelation.ADD_OR_REMOVE_ONE`` with the replace-one sensitivity folded into
the multiplier (see :mod:`mpdp.privacy.calibration`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import dp_accounting
import numpy as np
from dp_accounting.pld import PLDAccountant
from dp_accounting.rdp import RdpAccountant

from mpdp.privacy.calibration import (
    NEIGHBORING_RELATION,
    PrivacyParameterError,
    require_delta,
    require_positive,
    require_steps,
    sensitivity_replace_one,
)

#: methods of :func:`composed_gaussian_epsilon`
EPSILON_METHODS = ("analytic", "pld", "rdp")

# Per-step effective multipliers s/sqrt(T) above this are evaluated at this value: ε is
# decreasing in the multiplier, so the result stays a valid (conservative) ε, and it avoids
# overflow of s² in the accountants. At any usable δ the ε there is 0.
_SIGMA_EFF_MAX = 1e100
# Below these effective multipliers the method cannot represent the ε (overflow, or a PLD
# support too large to discretise); ε is then reported as +inf, the conservative answer.
# analytic: ε ≈ 1/(2 s'^2) overflows a double; pld: ε ≳ 5e5.
_SIGMA_EFF_MIN = {"analytic": 1e-150, "pld": 1e-3, "rdp": 1e-150}
# PLD discretisation: the privacy-loss support of a unit-sensitivity Gaussian with multiplier s'
# has width ≈ (1 + 2·10·s')/s'^2 (tails truncated at mass e^-50, about 10 standard deviations);
# it is cut into _PLD_BINS intervals. The ε error of the pessimistic PLD is then a fixed small
# fraction (≈ 1e-4 or less) of ε at every noise level, and the cost is bounded.
_PLD_BINS = 1e5


def _pld_epsilon(noise_multiplier: float, T: int, delta: float) -> float:
    """ε at δ of T self-composed Gaussian releases by dp-accounting's PLD accountant."""
    sigma_eff = noise_multiplier / math.sqrt(T)
    interval = (1 + 20 * sigma_eff) / sigma_eff**2 / _PLD_BINS
    accountant = PLDAccountant(NEIGHBORING_RELATION, value_discretization_interval=interval)
    accountant.compose(
        dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(noise_multiplier), T)
    )
    return float(accountant.get_epsilon(delta))


def _rdp_epsilon(noise_multiplier: float, T: int, delta: float) -> float:
    """ε at δ of T self-composed Gaussian releases by dp-accounting's RDP accountant."""
    accountant = RdpAccountant(neighboring_relation=NEIGHBORING_RELATION)
    accountant.compose(
        dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(noise_multiplier), T)
    )
    return float(accountant.get_epsilon(delta))


@functools.cache
def composed_gaussian_epsilon(
    noise_multiplier: float, T: int, delta: float, method: str = "analytic"
) -> float:
    """ε at δ of T adaptive Gaussian releases, each with multiplier σ/Δ = ``noise_multiplier``.

    Definition (``analytic``): the smallest ε ≥ 0 with
    Φ(1/(2s') - ε s') - e^ε Φ(-1/(2s') - ε s') ≤ δ, s' = noise_multiplier/sqrt(T)
    (Balle & Wang 2018, Thm 8, after composing the T Gaussians into one, Dong, Roth & Su 2019).
    ``pld`` and ``rdp`` compute the same quantity with dp-accounting's PLD and RDP
    accountants (PLD ≈ analytic; RDP is an upper bound). Memoised.

    A multiplier of 0 gives +inf. Extremely small multipliers, where the method cannot represent
    ε, also give +inf (always a valid statement); see the module constants.

    Raises:
        PrivacyParameterError: negative or non-finite multiplier, bad T or δ, unknown method.
    """
    noise_multiplier = require_positive("noise_multiplier", noise_multiplier, allow_zero=True)
    T = require_steps(T)
    delta = require_delta(delta)
    if method not in EPSILON_METHODS:
        raise PrivacyParameterError(
            f"method must be one of {EPSILON_METHODS}, got method={method!r}"
        )
    sigma_eff = min(noise_multiplier / math.sqrt(T), _SIGMA_EFF_MAX)
    if sigma_eff < _SIGMA_EFF_MIN[method]:
        return math.inf
    if method == "analytic":
        # log δ(ε) = -inf far in the tail (log1p(-1)); that is the right value, not an error.
        with np.errstate(divide="ignore", invalid="ignore"):
            return float(dp_accounting.get_epsilon_gaussian(sigma_eff, delta))
    multiplier = sigma_eff * math.sqrt(T)
    if method == "pld":
        return _pld_epsilon(multiplier, T, delta)
    return _rdp_epsilon(multiplier, T, delta)


def accounted_epsilon(sigma: float, sensitivity: float, T: int, delta: float) -> float:
    """ε at δ (analytic, exact) of T Gaussian steps with noise std σ and per-step sensitivity Δ.

    Equals ``composed_gaussian_epsilon(σ/Δ, T, δ, "analytic")``; σ = 0 gives +inf. This is
    the ledger entry of a per-round or central run (spec M2, M3.2, M4.2), where the released
    per-step gradient has sensitivity Δ = 2G/n_eff.
    """
    sigma = require_positive("sigma", sigma, allow_zero=True)
    sensitivity = require_positive("sensitivity", sensitivity)
    return composed_gaussian_epsilon(sigma / sensitivity, T, delta, "analytic")


def worst_party_epsilon(
    sigma: float | Sequence[float] | np.ndarray,
    G: float,
    party_sizes: Sequence[int] | np.ndarray,
    T: int,
    delta: float,
) -> float:
    """Upper bound on the ε at δ of the literal local-then-aggregate release (M3.1, M4.1, I-1).

    Party j runs T noisy local steps with noise std σ_j on its own data, so its trajectory has
    per-step sensitivity 2G/n_j and is ``accounted_epsilon(σ_j, 2G/n_j, T, δ)``-DP. The parties
    hold disjoint records and draw **independent** noise, so the joint release of all
    trajectories is max_j of these, and the aggregate, post-processing of it, is at most that
    (**scope: an upper bound** by post-processing of the worst party's trajectory, not the
    exact ε of the aggregate, which can be smaller). ``sigma`` is one std for all parties
    (the paper's reading) or one per party (per-party calibration, ``exact_per_party``).
    For ``ma16`` noise calibrated to the total n at ε, spec C1 bounds it by ε·n/n_(1) (when
    that is ≤ 2 ln(1/δ)), which exceeds ε whenever the parties are not all of size n.
    It does not apply to noise shared by the parties (``noise_sharing: shared``): see
    :mod:`mpdp.mechanisms.gradient_perturbation`.
    """
    message = (
        "party_sizes must be a non-empty 1-d sequence of positive sizes, "
        f"got party_sizes={party_sizes!r}"
    )
    try:
        sizes = np.asarray(party_sizes, dtype=float)
    except (TypeError, ValueError) as err:
        raise PrivacyParameterError(message) from err
    if sizes.ndim != 1 or sizes.size == 0 or not np.all(np.isfinite(sizes)) or np.any(sizes <= 0):
        raise PrivacyParameterError(message)
    sigmas = np.broadcast_to(np.asarray(sigma, dtype=float), sizes.shape)
    # ε is decreasing in the multiplier σ_j/Δ_j, so the worst party has the smallest one.
    sensitivities = np.array([sensitivity_replace_one(G, float(n)) for n in sizes])
    worst = int(np.argmin(sigmas / sensitivities))
    return accounted_epsilon(float(sigmas[worst]), float(sensitivities[worst]), T, delta)
