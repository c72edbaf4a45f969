"""Privacy of hyper-parameter selection by random stopping (Papernot & Steinke, ICLR 2022).

**Theorem** (Papernot & Steinke 2022, "Hyperparameter tuning with Rényi differential privacy",
Theorem 2). Let ``Q`` be a randomised trial (here: draw a candidate uniformly at random, train,
score the result privately) that is (λ, ε)-RDP and (λ̂, ε̂)-RDP, and let ``K`` follow the
truncated negative binomial distribution with shape η ≥ 0 and γ ∈ (0, 1)::

    P[K = k] = (1 − γ)^k / (γ^(−η) − 1) · Π_{l=0}^{k−1} (l + η)/(l + 1)   (η > 0, k ≥ 1)
    P[K = k] = (1 − γ)^k / (k · log(1/γ))                                 (η = 0: logarithmic)

The algorithm ``A`` that runs ``Q`` K times independently and returns the best run (its output
and score; the others are discarded) is (λ, ε′)-RDP with::

    ε′ = ε + (1 + η)(1 − 1/λ̂) ε̂ + (1 + η) log(1/γ)/λ̂ + log(E[K])/(λ − 1).

η = 1 is the geometric distribution (Liu & Talwar 2019), η = 0 the logarithmic one. For a
pure ε-DP trial (λ, λ̂ → ∞) the bound tends to (2 + η)ε: 3ε for the geometric distribution,
Liu & Talwar's Theorem 3.1 — the closed form tests check.

This module implements that bound on a grid of orders (:func:`repeat_and_select_rdp`, minimised
over λ̂ and made monotone in λ), the distribution of K (:func:`tnb_gamma`, :func:`tnb_mean`,
:func:`sample_trials`), RDP curves of the trials used by the studies (:func:`gaussian_rdp`,
:func:`pure_dp_rdp`) and the RDP → (ε, δ) conversion of dp-accounting
(:func:`rdp_to_epsilon`, Canonne, Kamath & Steinke 2020 Prop. 12 / Asoodeh et al. 2020).
dp-accounting 0.6.0 provides the same theorem for dp-events (``RepeatAndSelectDpEvent``); the
tests compare with it on Gaussian trials (an independent implementation), while this module
also takes trial curves that are not dp-events (the pointwise maximum of a training curve and a
score curve, or of several candidates' curves: a trial that draws its candidate at random is a
data-independent mixture, and Rényi divergence is quasi-convex).

:func:`calibrate_trial_epsilon` finds the largest per-trial ε whose selection, composed with a
final run's RDP curve, meets a target (ε, δ) (spec audit.md A0: every released row's whole
procedure is accounted).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant as rdp_acc

#: Rényi orders of every curve (λ > 1); the conversion and the λ̂ minimisation range over them
ORDERS: np.ndarray = np.concatenate([np.linspace(1.1, 10.9, 99), np.arange(11.0, 64.0, 1.0),
                                     np.array([64.0, 80.0, 96.0, 128.0, 160.0, 192.0, 256.0, 384.0,
                                               512.0, 768.0, 1024.0, 2048.0, 4096.0])])

RdpCurve = np.ndarray  # ε(λ) on ORDERS


def _require_shape_mean(shape: float, mean: float) -> None:
    if not (math.isfinite(shape) and shape >= 0):
        raise ValueError(f"truncated negative binomial shape must be >= 0 and finite, got {shape}")
    if not (math.isfinite(mean) and mean > 1):
        raise ValueError(f"mean number of trials must be > 1, got {mean}")


def tnb_mean(gamma: float, shape: float) -> float:
    """E[K] of the truncated negative binomial (Papernot & Steinke 2022, Definition 1)."""
    if not 0 < gamma < 1:
        raise ValueError(f"gamma must be in (0, 1), got {gamma}")
    if shape == 0:
        return (1.0 / gamma - 1.0) / math.log(1.0 / gamma)
    return shape * (1.0 - gamma) / (gamma * (1.0 - gamma**shape))


@functools.cache
def tnb_gamma(shape: float, mean: float) -> float:
    """The γ whose truncated negative binomial with ``shape`` has E[K] = ``mean`` (bisection).

    E[K] decreases in γ; the γ returned has E[K] within 1e-12 relative of ``mean`` (the bound is
    evaluated with this γ, the one :func:`sample_trials` samples from, so it is exact for it).
    """
    _require_shape_mean(shape, mean)
    if shape == 1:
        return 1.0 / mean
    lo, hi = 1e-300, 1.0 - 1e-15
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if tnb_mean(mid, shape) > mean:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * hi:
            break
    return 0.5 * (lo + hi)


def tnb_pmf(k: np.ndarray, gamma: float, shape: float) -> np.ndarray:
    """P[K = k] for integers k ≥ 1 (module docstring)."""
    k = np.asarray(k, dtype=np.float64)
    if shape == 0:
        return (1.0 - gamma) ** k / (k * math.log(1.0 / gamma))
    from scipy.special import gammaln

    log_comb = gammaln(k + shape) - gammaln(shape) - gammaln(k + 1.0)
    return np.exp(log_comb + k * math.log1p(-gamma)) / (gamma ** (-shape) - 1.0)


def sample_trials(gen: np.random.Generator, shape: float, mean: float) -> int:
    """One draw of K (inverse CDF of :func:`tnb_pmf` from one uniform of ``gen``)."""
    gamma = tnb_gamma(shape, mean)
    u = gen.random()
    cdf, k, block = 0.0, 1, 64
    while True:
        pmf = tnb_pmf(np.arange(k, k + block), gamma, shape)
        cum = cdf + np.cumsum(pmf)
        hit = np.nonzero(cum >= u)[0]
        if len(hit):
            return int(k + hit[0])
        if not np.isfinite(cum[-1]) or cum[-1] == cdf:  # u above the float CDF's limit
            return int(k + block - 1)
        cdf, k, block = float(cum[-1]), k + block, 2 * block


def repeat_and_select_rdp(trial: RdpCurve, shape: float, mean: float) -> RdpCurve:
    """The RDP curve of returning the best of K ~ TNB(shape, mean) runs of a trial (Theorem 2).

    ``trial`` is the trial's ε(λ) on :data:`ORDERS`. The λ̂ term is minimised over the orders;
    the result is made non-decreasing in λ (RDP is monotone in the order).
    """
    trial = np.asarray(trial, dtype=np.float64)
    if trial.shape != ORDERS.shape or np.any(trial < 0) or np.any(np.isnan(trial)):
        raise ValueError("trial RDP curve must be a non-negative array on private_selection.ORDERS")
    gamma = tnb_gamma(shape, mean)
    c = (1.0 + shape) * float(np.min((1.0 - 1.0 / ORDERS) * trial + math.log(1.0 / gamma) / ORDERS))
    out = trial + math.log(tnb_mean(gamma, shape)) / (ORDERS - 1.0) + c
    return np.minimum.accumulate(out[::-1])[::-1]


def pure_selection_epsilon(epsilon: float, shape: float) -> float:
    """Pure ε-DP trials: the selection is ((2 + η)ε, 0)-DP for K ~ TNB(η, ·) of any mean.

    Theorem 2 holds for every λ and λ̂; a pure ε-DP trial is (λ, ε)-RDP for every λ, so letting
    λ̂ → ∞ and then λ → ∞ (D_∞ = lim D_λ) leaves (2 + η)ε (Papernot & Steinke 2022; η = 1:
    Liu & Talwar 2019, Theorem 3.1, 3ε). Tests compare it with :func:`repeat_and_select_rdp`.
    """
    if not (epsilon >= 0 and shape >= 0):
        raise ValueError(f"epsilon and shape must be >= 0, got {epsilon}, {shape}")
    return (2.0 + float(shape)) * float(epsilon)


def gaussian_rdp(multiplier: float, steps: int = 1) -> RdpCurve:
    """RDP of ``steps`` adaptive Gaussian releases with noise std / ℓ2 sensitivity = ``multiplier``:
    λ·steps/(2·multiplier²) (Mironov 2017, Prop. 7 and composition)."""
    if not multiplier > 0:
        raise ValueError(f"noise multiplier must be > 0, got {multiplier}")
    return ORDERS * steps / (2.0 * multiplier**2)


def pure_dp_rdp(epsilon: float, steps: int = 1) -> RdpCurve:
    """RDP of ``steps`` adaptive ε-DP releases: each at most the Rényi divergence of binary
    randomised response at ε, the tightest curve pure ε-DP implies (issue 43).

    Every ε-DP pair of output distributions is a post-processing of randomised response's pair
    (P = (e^ε, 1)/(1 + e^ε), Q = (1, e^ε)/(1 + e^ε); Kairouz, Oh & Viswanath 2015, Thm 2.5), and
    Rényi divergence cannot grow under post-processing, so D_λ ≤ log(P₁^λ Q₁^(1−λ) + P₂^λ
    Q₂^(1−λ))/(λ − 1), which randomised response attains. It is below the earlier bound
    min(ε, λε²/2) (D_∞ = ε; ε²/2-zCDP, Bun & Steinke 2016 Prop. 3.3), kept as a floor for
    rounding. dp-accounting's ``_randomized_response_rdp_replace_one`` (k = 2) is the tests'
    independent route.
    """
    if not epsilon >= 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    log_p, log_q = -np.logaddexp(0.0, -epsilon), -np.logaddexp(0.0, epsilon)  # log P₁ = log Q₂, log P₂ = log Q₁
    rr = np.logaddexp(ORDERS * log_p + (1.0 - ORDERS) * log_q, ORDERS * log_q + (1.0 - ORDERS) * log_p) / (ORDERS - 1.0)
    return steps * np.minimum(np.maximum(rr, 0.0), np.minimum(epsilon, ORDERS * epsilon**2 / 2.0))


def rdp_to_epsilon(curve: RdpCurve, delta: float) -> float:
    """The ε at ``delta`` of an RDP curve on :data:`ORDERS` (dp-accounting's conversion)."""
    eps, _ = rdp_acc.compute_epsilon(ORDERS, np.asarray(curve, dtype=np.float64), float(delta))
    return float(eps)


def calibrate_trial_epsilon(target: float, delta: float, trial_curve: Callable[[float], RdpCurve],
                            final_curve: RdpCurve, shape: float, mean: float, *,
                            rtol: float = 2e-3) -> float:
    """The largest per-trial ε (to ``rtol``) with conv(selection ⊕ final run) ≤ ``target`` at δ.

    ``trial_curve(ε_t)`` is the RDP curve of one trial calibrated to (ε_t, δ); ``final_curve``
    the RDP curve of the final run composed after the selection (zeros if none). Returns 0.0
    when no ε_t > 0 meets the target (the selection's overhead alone exceeds it): callers turn
    that into a config error.
    """
    final_curve = np.asarray(final_curve, dtype=np.float64)

    def total(eps_t: float) -> float:
        return rdp_to_epsilon(repeat_and_select_rdp(trial_curve(eps_t), shape, mean) + final_curve, delta)

    hi = float(target)
    if total(hi) <= target:
        return hi
    lo = hi / 8.0
    while total(lo) > target:  # bracket from above: most budgets sit within a factor 8 of ε
        hi, lo = lo, lo / 8.0
        if lo < target * 1e-9:
            return 0.0
    while hi > lo * (1.0 + rtol):  # geometric bisection: the largest ε_t found is within rtol
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if total(mid) <= target else (lo, mid)
    return lo


def poisson_replace_one_rdp(q: float, multiplier: float, steps: int, max_order: float = float(ORDERS[-1])) -> RdpCurve:
    """RDP of ``steps`` rounds of the replace-one Poisson-subsampled Gaussian (DP-SGD).

    One round is dominated by P = (1 − q)N(0, σ²) + qN(−1, σ²) against Q = (1 − q)N(0, σ²) +
    qN(+1, σ²) (:mod:`mpdp.privacy.subsampled_gaussian`; dominance of every hockey-stick
    divergence implies that of every Rényi divergence). D_λ(P‖Q) is computed by quadrature of
    p^λ q^(1−λ) in the log domain (trapezoid, exponentially accurate for these smooth, rapidly
    decaying integrands) on a grid of step σ/40 covering the integrand's mass (centred
    near −(2λ − 1) for large λ; each order integrates from its own lower end −(2λ + 1) − 40σ − 5 of
    one shared grid, so every order of :data:`ORDERS` costs O(λ/σ) points); both directions are
    equal by the symmetry x → −x. Orders above ``max_order`` are reported as +inf (the default
    computes every order: issue 43, orders above 256 counted as ∞ overcharged DP-SGD's selection).
    At q = 1 this is 2λ/σ² (sensitivity 2), which the tests check at every order.
    """
    from scipy.special import logsumexp
    from scipy.stats import norm

    if not 0 < q <= 1:
        raise ValueError(f"sampling rate must be in (0, 1], got {q}")
    s = float(multiplier)
    orders = ORDERS[max_order >= ORDERS]
    lo = -(2.0 * float(orders.max()) + 1.0) - 40.0 * s - 5.0
    dx = s / 40.0
    x = np.arange(lo, 40.0 * s + 5.0, dx)
    c = norm.logpdf(x, 0.0, s)
    log_p = np.logaddexp(math.log1p(-q) + c, math.log(q) + norm.logpdf(x, -1.0, s)) if q < 1 else norm.logpdf(x, -1.0, s)
    log_q = np.logaddexp(math.log1p(-q) + c, math.log(q) + norm.logpdf(x, 1.0, s)) if q < 1 else norm.logpdf(x, 1.0, s)
    out = np.full(ORDERS.shape, np.inf)
    for i, lam in enumerate(orders):
        start = max(int((-(2.0 * float(lam) + 1.0) - 40.0 * s - 5.0 - lo) / dx), 0)
        log_int = float(logsumexp(lam * log_p[start:] + (1.0 - lam) * log_q[start:])) + math.log(dx)
        out[i] = max(log_int, 0.0) / (lam - 1.0)
    return steps * out
