"""Composition of pure-DP steps: the ledger of per-iteration (α, 0)-DP mechanisms.

Zhang–Zhu's DVP/PVP (spec M9, M10) and every N-L2 release are pure ε-DP per step; the seeds
give no composition (inconsistency I-11). This module gives the cumulative ε at δ of k
adaptive (α, 0)-DP steps, and the inverse (the per-step α that meets a total ε at δ, spec
experiments.md E10 "solving for the per-iteration α").

Methods of :func:`composed_pure_epsilon`:

- ``basic``: k α (basic composition; δ plays no role).
- ``exact``: the optimal composition of Kairouz, Oh, Viswanath (2015, Thm 3.3), evaluated
  exactly: k-fold (α, 0)-DP is dominated by k-fold randomised response, whose privacy loss is
  (k − 2i) α with probability C(k, i) pᵏ⁻ⁱ qⁱ (p = e^α/(1+e^α), q = 1 − p), so
  δ(ε) = Σᵢ C(k, i) pᵏ⁻ⁱ qⁱ (1 − e^{ε − (k−2i)α})₊, solved for ε by bisection.
- ``pld``: dp-accounting's privacy-loss distribution built from the (α, 0) privacy
  parameters (``from_privacy_parameters``), self-composed k times (pessimistic
  discretisation: an upper bound on ``exact`` within its discretisation interval).
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
from dp_accounting.pld import common, privacy_loss_distribution
from scipy.special import gammaln

from mpdp.privacy.calibration import PrivacyParameterError, require_delta, require_steps
from mpdp.privacy.disk_memo import persistent

#: methods of :func:`composed_pure_epsilon`
PURE_METHODS = ("basic", "exact", "pld")

# PLD discretisation interval as a fraction of α: the ε error is O(k · interval) at worst.
_PLD_INTERVAL_FRACTION = 1e-3
_BISECT_TOL = 1e-12


def _require_alpha(alpha: float) -> float:
    try:
        alpha = float(alpha)
    except (TypeError, ValueError) as err:
        raise PrivacyParameterError(f"alpha must be a number > 0, got {alpha!r}") from err
    if not alpha > 0 or not math.isfinite(alpha):
        raise PrivacyParameterError(f"alpha must be a finite number > 0, got {alpha!r}")
    return alpha


def _exact_delta(alpha: float, k: int, epsilon: float) -> float:
    """δ(ε) of k-fold (α, 0)-DP under the optimal composition (module docstring)."""
    i = np.arange(k + 1)
    log_binom = gammaln(k + 1) - gammaln(i + 1) - gammaln(k - i + 1)
    log_p = alpha - np.logaddexp(0.0, alpha)  # log e^α/(1+e^α)
    log_q = -np.logaddexp(0.0, alpha)
    log_mass = log_binom + (k - i) * log_p + i * log_q
    loss = (k - 2 * i) * alpha
    keep = loss > epsilon
    terms = np.exp(log_mass[keep]) * -np.expm1(epsilon - loss[keep])
    return float(terms.sum())


def _exact_epsilon(alpha: float, k: int, delta: float) -> float:
    high = k * alpha  # basic composition: δ(kα) = 0
    if _exact_delta(alpha, k, 0.0) <= delta:
        return 0.0
    low = 0.0
    while high - low > _BISECT_TOL * max(1.0, high):
        mid = 0.5 * (low + high)
        if _exact_delta(alpha, k, mid) > delta:
            low = mid
        else:
            high = mid
    return high


def _pld_epsilon(alpha: float, k: int, delta: float) -> float:
    pld = privacy_loss_distribution.from_privacy_parameters(
        common.DifferentialPrivacyParameters(alpha, 0.0),
        value_discretization_interval=alpha * _PLD_INTERVAL_FRACTION,
    )
    return float(pld.self_compose(k).get_epsilon_for_delta(delta))


@functools.cache
def composed_pure_epsilon(alpha: float, k: int, delta: float, method: str = "exact") -> float:
    """ε at δ of k adaptive (α, 0)-DP steps (module docstring for the methods). Memoised.

    Raises:
        PrivacyParameterError: α not a finite positive number, bad k or δ, unknown method.
    """
    alpha = _require_alpha(alpha)
    k = require_steps(k)
    delta = require_delta(delta)
    if method not in PURE_METHODS:
        raise PrivacyParameterError(f"method must be one of {PURE_METHODS}, got {method!r}")
    if method == "basic":
        return k * alpha
    if method == "pld":
        return _pld_epsilon(alpha, k, delta)
    return _exact_epsilon(alpha, k, delta)


#: relative slack of a memoised value's re-verification: the accountant's rounding on another
#: machine sharing the memo (the calibration itself meets its target exactly)
VERIFY_RTOL = 1e-9


def _alpha_meets_target(alpha: float, epsilon_total: float, k: int, delta: float, method: str) -> str | None:
    """The re-verification of a memoised :func:`per_step_alpha` (:mod:`mpdp.privacy.disk_memo`):
    α in the calibration's range [0, ε_total] and k-fold α-steps (ε_total, δ)-DP, by basic
    composition (kα ≤ ε_total, a formula) or else one call of :func:`composed_pure_epsilon`."""
    if not (math.isfinite(alpha) and 0 < alpha <= epsilon_total):
        return f"alpha {alpha!r} outside (0, {epsilon_total!r}]"
    if k * alpha <= epsilon_total:
        return None
    composed = composed_pure_epsilon(alpha, k, delta, method)
    if composed <= epsilon_total * (1 + VERIFY_RTOL):
        return None
    return f"{k} steps of alpha {alpha!r} give epsilon {composed!r} > {epsilon_total!r} at delta {delta!r} ({method})"


@persistent(verify=_alpha_meets_target)
def per_step_alpha(epsilon_total: float, k: int, delta: float, method: str = "exact") -> float:
    """The largest per-step α whose k-fold composition is (ε_total, δ)-DP under ``method``.
    Memoised on disk (:mod:`mpdp.privacy.disk_memo`: a bisection of ~47 PLD compositions).

    Inverse of :func:`composed_pure_epsilon` (monotone in α), by bisection on α in
    [ε_total/k, ε_total]: basic composition gives the lower end exactly.
    """
    epsilon_total = _require_alpha(epsilon_total)
    k = require_steps(k)
    low, high = epsilon_total / k, epsilon_total
    if method == "basic" or composed_pure_epsilon(high, k, delta, method) <= epsilon_total:
        return low if method == "basic" else high
    for _ in range(200):
        mid = 0.5 * (low + high)
        if composed_pure_epsilon(mid, k, delta, method) <= epsilon_total:
            low = mid
        else:
            high = mid
        if high - low <= _BISECT_TOL * high:
            break
    return low


def composed_pure_epsilons(epsilons: Sequence[float], delta: float) -> float:
    """ε at δ of adaptive pure steps with different ε_i (dp-accounting PLD), e.g. PVP's real
    per-release ε of spec I-20. Equal ε_i are self-composed, the groups then composed, all on
    one discretisation interval (a fraction ``_PLD_INTERVAL_FRACTION`` of the smallest ε_i).
    May return ``inf`` where dp-accounting overflows: see :func:`pld_or_basic`.
    """
    values = [_require_alpha(e) for e in epsilons]
    require_steps(len(values))
    delta = require_delta(delta)
    interval = min(values) * _PLD_INTERVAL_FRACTION
    total = None
    for eps, count in sorted(Counter(values).items()):
        pld = privacy_loss_distribution.from_privacy_parameters(
            common.DifferentialPrivacyParameters(eps, 0.0), value_discretization_interval=interval
        ).self_compose(count)
        total = pld if total is None else total.compose(pld)
    return float(total.get_epsilon_for_delta(delta))


def pld_or_basic(epsilons: Sequence[float], delta: float) -> tuple[float, bool]:
    """The PLD composition of pure steps, or basic composition Σε_i where the PLD is not finite.

    dp-accounting overflows for large totals (e.g. 71 steps of α = 10 give ``inf``). Basic
    composition is a valid bound that the optimal composition never exceeds, so it replaces
    any PLD value that is not finite or larger than it. Returns ``(ε, fell_back)``.
    """
    values = [float(e) for e in epsilons]
    basic = float(math.fsum(values))
    if len(set(values)) == 1:
        pld = composed_pure_epsilon(values[0], len(values), delta, "pld")
    else:
        pld = composed_pure_epsilons(values, delta)
    if not math.isfinite(pld) or pld > basic:
        return basic, True
    return pld, False
