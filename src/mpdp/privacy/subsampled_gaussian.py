"""Accounting of T rounds of the Poisson-subsampled Gaussian mechanism (DP-SGD; spec E10).

The mechanism (Abadi et al. 2016, "Deep learning with differential privacy"): every round each
record is included independently with probability ``q``; the released quantity is the sum of the
included records' contributions, each of ℓ2 norm ≤ G (clipped), plus ``N(0, σ² G² I)``. ``σ`` is
the **noise multiplier** relative to the clipping norm G. T rounds are adaptively composed.

Relation. The benchmark's privacy unit is **replace-one** (spec E10 "Privacy unit"): D and D'
differ by replacing one record of one party. Under replace-one with Poisson sampling, the
replaced record is included with probability q in both worlds and the other records' sum is
common, so one round is dominated by the pair below (dominating pairs of subsampled mechanisms
under the different neighbouring relations: Zhu, Dong & Wang 2022, "Optimal accounting of
differential privacy via characteristic function"; the subsampled Gaussian's privacy loss:
Mironov, Talwar & Zhang 2019, "Rényi differential privacy of the sampled Gaussian mechanism")::

    P = (1 − q)·N(0, σ²) + q·N(−1, σ²),   Q = (1 − q)·N(0, σ²) + q·N(+1, σ²)

(contributions v = −G·e and v' = +G·e, in units of G). This is exactly dp-accounting's
``NeighboringRelation.REPLACE_ONE`` for a ``PoissonSampledDpEvent(q, GaussianDpEvent(σ))``
with unit sensitivity (``PLD.from_gaussian_mechanism(..., neighboring_relation=REPLACE_ONE)``,
adjacency type ``REPLACE``: μ_upper(x) = q μ(x + 1) + (1 − q) μ(x), μ_lower(x) = q μ(x − 1) +
(1 − q) μ(x)). dp-accounting 0.6.0's PLD accountant supports it directly, so **no conversion**
is used: ε is the PLD-accounted ε of T self-composed rounds of that pair. For q = 1 it reduces
to the composed Gaussian with replace-one sensitivity 2G, i.e. multiplier σ/2 (the benchmark's
full-batch gradient rows, spec E10 table). Tests check this; that the 1-D pair dominates every
other position of (v, v') (2-D brute force: the loss lives in their span); its one-round ε
against the pair's closed form; and the T-round composition against prv-accountant (Gopi, Lee &
Wutschitz 2021) on the same pair. Only the PLD accountant is used: dp-accounting 0.6.0's RDP
accountant rejects ``REPLACE_ONE`` for a ``PoissonSampledDpEvent`` (``UnsupportedEventError``;
see also the tooling note on REPLACE_ONE, upstream issue google/differential-privacy#378).

Tolerance. The PLD is built with ``pessimistic_estimate=True`` (dp-accounting's default) and
value discretisation interval :data:`VALUE_DISCRETIZATION_INTERVAL`, so the returned ε is an
upper bound of the exact ε of the pair, above it by at most about 1e-3 at the settings of the
tests (prv-accountant's estimate within 2e-3; at q = 1 the exact composed Gaussian within 1e-3;
at T = 1 the pair's closed form).

Calibration (:func:`calibrate_noise_multiplier`): the smallest σ with ε(q, σ, T, δ) ≤ target,
by bisection in σ; the σ returned always satisfies ε ≤ target, and lies within a relative
:data:`CALIBRATION_RTOL` of the smallest such σ (up to the accountant's discretisation).
"""

from __future__ import annotations

import functools
import math

import dp_accounting
from dp_accounting.pld import PLDAccountant

from mpdp.privacy.calibration import (
    PrivacyParameterError,
    require_delta,
    require_positive,
    require_steps,
)
from mpdp.privacy.disk_memo import persistent

#: the benchmark's neighbouring relation, given to dp-accounting as is (module docstring)
NEIGHBORING_RELATION = dp_accounting.NeighboringRelation.REPLACE_ONE
#: the accountant named in ledgers
ACCOUNTANT = "pld_poisson_gaussian"
#: relation text for ledgers: no conversion, dp-accounting's REPLACE_ONE pair
RELATION = "replace_one (dp-accounting REPLACE_ONE, Poisson-subsampled Gaussian; no conversion)"
#: PLD value discretisation interval (pessimistic estimate: ε is an upper bound)
VALUE_DISCRETIZATION_INTERVAL = 1e-3
#: relative bisection tolerance of the calibrated σ
CALIBRATION_RTOL = 1e-4


def require_rate(q: float) -> float:
    """Return the sampling rate ``q`` as a float if ``0 < q ≤ 1``."""
    q = require_positive("q", q)
    if q > 1:
        raise PrivacyParameterError(f"sampling rate q must be in (0, 1], got q={q!r}")
    return q


@functools.cache
def _epsilon(q: float, sigma: float, T: int, delta: float, relation: str) -> float:
    accountant = PLDAccountant(dp_accounting.NeighboringRelation[relation],
                               value_discretization_interval=VALUE_DISCRETIZATION_INTERVAL)
    accountant.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), T)
    return float(accountant.get_epsilon(delta))


def epsilon(q: float, sigma: float, T: int, delta: float) -> float:
    """ε at δ of T rounds of the Poisson-subsampled Gaussian, replace-one (spec E10).

    ``q`` is the sampling rate, ``sigma`` the noise multiplier (noise std / clipping norm G).
    dp-accounting's PLD accountant with ``REPLACE_ONE`` (module docstring: the dominating pair,
    why no conversion is needed, the tolerance). Memoised per process.

    Raises:
        PrivacyParameterError: q not in (0, 1], σ not > 0, T not an integer ≥ 1, δ not in (0, 1).
    """
    return _epsilon(require_rate(q), require_positive("sigma", sigma), require_steps(T),
                    require_delta(delta), NEIGHBORING_RELATION.name)


def epsilon_add_remove(q: float, sigma: float, T: int, delta: float) -> float:
    """ε at δ of the same mechanism under add/remove-one (dp-accounting ``ADD_OR_REMOVE_ONE``).

    Not the benchmark's relation: it is here so that the PLD computation can be compared with
    accountants that only support add/remove (tests), and for the reader's orientation (the
    replace-one ε is the larger).
    """
    return _epsilon(require_rate(q), require_positive("sigma", sigma), require_steps(T),
                    require_delta(delta), dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE.name)


#: relative slack of a memoised σ's re-verification: the accountant's rounding on another machine
#: sharing the memo (the bisection itself meets its target exactly)
VERIFY_RTOL = 1e-9


def _sigma_meets_target(sigma: float, target_epsilon: float, q: float, T: int, delta: float) -> str | None:
    """The re-verification of a memoised :func:`calibrate_noise_multiplier`
    (:mod:`mpdp.privacy.disk_memo`): one call of :func:`epsilon` at that σ, at most the target."""
    if not (math.isfinite(sigma) and sigma > 0):
        return f"sigma {sigma!r} is not a finite number > 0"
    eps = epsilon(q, sigma, T, delta)
    if eps <= target_epsilon * (1 + VERIFY_RTOL):
        return None
    return f"sigma {sigma!r} gives epsilon {eps!r} > {target_epsilon!r} at delta {delta!r}"


@persistent(verify=_sigma_meets_target)
def calibrate_noise_multiplier(target_epsilon: float, q: float, T: int, delta: float) -> float:
    """The smallest noise multiplier σ with :func:`epsilon` (q, σ, T, δ) ≤ ``target_epsilon``.

    Bisection on σ: the bracket's upper end starts at the full-batch (q = 1) exact multiplier
    (subsampling never increases ε) and doubles until ε ≤ target; the lower end halves until
    ε > target. The returned value is the upper end once ``hi − lo ≤ CALIBRATION_RTOL · hi``:
    ε(returned σ) ≤ target always (a test checks the round trip). Memoised on disk
    (:mod:`mpdp.privacy.disk_memo`).
    """
    target = require_positive("target_epsilon", target_epsilon)
    q, T, delta = require_rate(q), require_steps(T), require_delta(delta)
    hi = 2.0 * math.sqrt(T) * dp_accounting.get_sigma_gaussian(target, delta)
    while epsilon(q, hi, T, delta) > target:
        hi *= 2.0
    lo = hi / 2.0
    while epsilon(q, lo, T, delta) <= target:
        hi, lo = lo, lo / 2.0
    while hi - lo > CALIBRATION_RTOL * hi:
        mid = 0.5 * (lo + hi)
        if epsilon(q, mid, T, delta) <= target:
            hi = mid
        else:
            lo = mid
    return hi
