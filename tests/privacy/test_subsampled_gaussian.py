"""Accounting of the Poisson-subsampled Gaussian, replace-one (mpdp.privacy.subsampled_gaussian).

Independent checks: the composed Gaussian of :mod:`mpdp.privacy.ledger` at q = 1; a 2-D brute
force showing that dp-accounting's 1-D REPLACE_ONE pair dominates every other position of the
replaced record's contributions (v, v'); and prv-accountant (Gopi, Lee & Wutschitz 2021), an
independent FFT accountant, on the same replace-one pair (a privacy random variable written here
from the pair's closed-form privacy-loss CDF) and on add/remove (its built-in mechanism).
"""

from __future__ import annotations

import math

import numpy as np
import prv_accountant  # the test extra's independent accountant
import pytest
from prv_accountant.privacy_random_variables import PrivacyRandomVariable
from scipy.special import ndtr
from scipy.stats import norm

from mpdp.privacy import subsampled_gaussian as sg
from mpdp.privacy.calibration import PrivacyParameterError
from mpdp.privacy.ledger import composed_gaussian_epsilon

DELTA = 1e-5
#: (q, σ, T) settings of the independent comparison (at least five, spanning q and ε)
SETTINGS = [(0.01, 1.0, 1000), (0.05, 1.5, 300), (0.1, 2.0, 100), (0.2, 4.0, 50), (0.5, 3.0, 20),
            (1.0, 5.0, 10)]
#: prv-accountant's ε error bound asked for; its (lower, upper) bracket must contain the PLD ε
PRV_EPS_ERROR = 0.01
PRV_DELTA_ERROR = 1e-8
#: the PLD (pessimistic, interval 1e-3) and prv-accountant's estimate agree to this
ESTIMATE_ATOL = 2e-3


class ReplaceOnePair(PrivacyRandomVariable):
    """Privacy loss of P = (1−q)N(0,σ²) + qN(−1,σ²) against Q = (1−q)N(0,σ²) + qN(+1,σ²).

    L(x) = ln P(x)/Q(x) = ln((1−q) + q a/u) − ln((1−q) + q a u), a = e^{−1/(2σ²)}, u = e^{x/σ²},
    is decreasing in x; L(x) = t solves e^t q a u² + (e^t − 1)(1 − q) u − q a = 0 for u > 0.
    CDF under P: Pr[L ≤ t] = Pr_P[X ≥ x(t)].
    """

    def __init__(self, q: float, sigma: float) -> None:
        self.q, self.sigma = q, sigma

    def cdf(self, t):
        x = _loss_inverse(self.q, self.sigma, np.asarray(t, dtype=np.float64))
        return (1 - self.q) * ndtr(-x / self.sigma) + self.q * ndtr(-(x + 1) / self.sigma)


def _loss_inverse(q: float, s: float, t: np.ndarray) -> np.ndarray:
    """The x with L(x) = t for the pair of :class:`ReplaceOnePair` (its positive root u)."""
    qa = q * math.exp(-1 / (2 * s * s))
    b = np.expm1(t) * (1 - q)
    disc = np.sqrt(b * b + 4 * np.exp(t) * qa * qa)
    with np.errstate(divide="ignore", over="ignore"):
        # the positive root, in the form without cancellation for either sign of b
        u = np.where(b > 0, 2 * qa / (b + disc), (disc - b) / (2 * np.exp(t) * qa))
        return s * s * np.log(u)


def _replace_delta(q: float, s: float, eps: float) -> float:
    """Closed-form δ(ε) = Pr_P[L > ε] − e^ε Pr_Q[L > ε] of one round of the pair (L > ε ⟺ x < x*)."""
    x = float(_loss_inverse(q, s, np.array(eps)))
    p = (1 - q) * ndtr(x / s) + q * ndtr((x + 1) / s)
    r = (1 - q) * ndtr(x / s) + q * ndtr((x - 1) / s)
    return p - math.exp(eps) * r


def _prv_epsilon(prv, T: int, eps_max: float | None = None) -> tuple[float, float, float]:
    acc = prv_accountant.PRVAccountant(prv, eps_error=PRV_EPS_ERROR, delta_error=PRV_DELTA_ERROR,
                                       max_self_compositions=T, eps_max=eps_max)
    return acc.compute_epsilon(DELTA, [T])


@pytest.mark.filterwarnings("ignore:Assuming that true epsilon")
@pytest.mark.parametrize(("q", "sigma", "T"), SETTINGS)
def test_replace_one_matches_prv_accountant(q, sigma, T):
    eps = sg.epsilon(q, sigma, T, DELTA)
    # domain of the discretised loss: far beyond ε (the pair's RDP is not available to size it)
    lower, estimate, upper = _prv_epsilon(ReplaceOnePair(q, sigma), T, eps_max=2 * eps + 10)
    assert lower <= eps <= upper
    assert eps == pytest.approx(estimate, abs=ESTIMATE_ATOL)


@pytest.mark.parametrize(("q", "sigma", "T"), [s for s in SETTINGS if s[0] < 1])
def test_add_remove_matches_prv_accountant_builtin(q, sigma, T):
    eps = sg.epsilon_add_remove(q, sigma, T, DELTA)
    mech = prv_accountant.PoissonSubsampledGaussianMechanism(q, sigma)
    lower, estimate, upper = _prv_epsilon(mech, T)
    assert lower <= eps <= upper
    assert eps == pytest.approx(estimate, abs=ESTIMATE_ATOL)
    # the benchmark's relation is the stronger one
    assert sg.epsilon(q, sigma, T, DELTA) > eps


@pytest.mark.parametrize(("sigma", "T"), [(5.0, 10), (3.0, 100), (20.0, 1000)])
def test_full_sampling_is_the_composed_gaussian_with_sensitivity_two(sigma, T):
    """q = 1: every record is used, replace-one sensitivity 2G, multiplier σ/2 (spec E10 table)."""
    exact = composed_gaussian_epsilon(sigma / 2, T, DELTA, "analytic")
    eps = sg.epsilon(1.0, sigma, T, DELTA)
    assert exact <= eps <= exact + 1e-3  # pessimistic PLD: an upper bound, tight to 1e-3


def _hockey_stick_2d(q: float, v: np.ndarray, w: np.ndarray, alphas: list[float]) -> np.ndarray:
    """H_α((1−q)N(0,I) + qN(v,I) ‖ (1−q)N(0,I) + qN(w,I)) on a 2-D grid (σ = 1)."""
    h = 0.02
    g = np.arange(-9.0, 9.0 + h, h)
    x1, x2 = np.meshgrid(g, g, indexing="ij")

    def mix(c):
        return (1 - q) * norm.pdf(x1) * norm.pdf(x2) + q * norm.pdf(x1 - c[0]) * norm.pdf(x2 - c[1])

    p, r = mix(v), mix(w)
    return np.array([np.maximum(p - a * r, 0.0).sum() * h * h for a in alphas])


def test_one_dimensional_replace_pair_dominates_other_replacements():
    """dp-accounting's pair (v, v') = (−G e, +G e) is the worst replacement (dominating pair).

    Any replaced record gives contributions v, v' with ‖v‖, ‖v'‖ ≤ G; the loss lives in their
    span, so 2-D covers every case. For several α the hockey-stick divergence of other
    (v, v') is at most the antipodal one's.
    """
    q, alphas = 0.3, [1.0, math.exp(0.5), math.exp(1.0), math.exp(2.0)]
    worst = _hockey_stick_2d(q, np.array([-1.0, 0.0]), np.array([1.0, 0.0]), alphas)
    others = [(np.array([1.0, 0.0]), np.zeros(2)), (np.zeros(2), np.array([1.0, 0.0])),
              (np.array([1.0, 0.0]), np.array([0.0, 1.0])),
              (np.array([0.5, 0.0]), np.array([-0.5, 0.0])),
              (np.array([1.0, 0.0]), np.array([-0.6, 0.8]))]
    # and random contributions in the unit disc
    gen = np.random.default_rng(5)
    for _ in range(4):
        v, w = (gen.normal(size=2) for _ in range(2))
        others.append((v / max(1.0, np.linalg.norm(v)), w / max(1.0, np.linalg.norm(w))))
    for v, w in others:
        assert np.all(_hockey_stick_2d(q, v, w, alphas) <= worst + 1e-9)
    # and the grid sees the same divergence as the closed form of the 1-D pair
    for a, h in zip(alphas, worst, strict=True):
        assert h == pytest.approx(_replace_delta(q, 1.0, math.log(a)), rel=1e-3, abs=1e-9)


@pytest.mark.parametrize(("q", "sigma"), [(0.3, 1.0), (0.05, 0.7), (1.0, 2.0)])
def test_one_round_epsilon_is_tight_for_the_closed_form_pair(q, sigma):
    """T = 1: the PLD ε is an upper bound, and 2e-3 less would break δ (closed form)."""
    eps = sg.epsilon(q, sigma, 1, DELTA)
    assert _replace_delta(q, sigma, eps) <= DELTA < _replace_delta(q, sigma, eps - 2e-3)


@pytest.mark.parametrize(("q", "T"), [(0.01, 1000), (0.1, 100), (1.0, 10)])
@pytest.mark.parametrize("target", [0.3, 1.0, 3.0])
def test_calibration_round_trip(q, T, target):
    sigma = sg.calibrate_noise_multiplier(target, q, T, DELTA)
    assert sg.epsilon(q, sigma, T, DELTA) <= target
    # smallest within the stated tolerance: a little less noise breaks the target
    assert sg.epsilon(q, sigma * (1 - 2 * sg.CALIBRATION_RTOL), T, DELTA) > target


def test_monotone_in_rate_noise_and_rounds():
    base = sg.epsilon(0.1, 1.5, 100, DELTA)
    assert sg.epsilon(0.05, 1.5, 100, DELTA) < base < sg.epsilon(0.2, 1.5, 100, DELTA)
    assert sg.epsilon(0.1, 2.0, 100, DELTA) < base < sg.epsilon(0.1, 1.2, 100, DELTA)
    assert sg.epsilon(0.1, 1.5, 50, DELTA) < base < sg.epsilon(0.1, 1.5, 200, DELTA)
    # amplification: subsampling needs less noise than the full batch at equal ε
    assert (sg.calibrate_noise_multiplier(1.0, 0.05, 100, DELTA)
            < sg.calibrate_noise_multiplier(1.0, 1.0, 100, DELTA))


@pytest.mark.parametrize(("kwargs", "word"), [
    ({"q": 0.0}, "q"), ({"q": 1.5}, "q"), ({"sigma": -1.0}, "sigma"), ({"T": 0}, "T"),
    ({"delta": 1.0}, "delta")])
def test_bad_parameters_raise_one_line_errors(kwargs, word):
    args = {"q": 0.1, "sigma": 1.0, "T": 10, "delta": DELTA} | kwargs
    with pytest.raises(PrivacyParameterError, match=word):
        sg.epsilon(**args)
