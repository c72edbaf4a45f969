"""N-L2 sampler (spec §0.4) and the composition of pure-DP steps (I-11, E10)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from mpdp.privacy import pure_dp, samplers
from mpdp.privacy.calibration import PrivacyParameterError


@pytest.mark.parametrize("d", [1, 5, 40])
def test_l2_laplace_norm_is_gamma_and_direction_isotropic(d):
    beta = 2.5
    draws = samplers.l2_laplace(np.random.default_rng(7), beta, d, size=4000)
    norms = np.linalg.norm(draws, axis=1)
    assert stats.kstest(norms, stats.gamma(a=d, scale=1 / beta).cdf).pvalue > 1e-3
    if d > 1:
        # projection of a uniform direction on a fixed axis: (u1+1)/2 ~ Beta((d-1)/2, (d-1)/2)
        u1 = draws[:, 0] / norms
        law = stats.beta((d - 1) / 2, (d - 1) / 2)
        assert stats.kstest((u1 + 1) / 2, law.cdf).pvalue > 1e-3
    # moments of spec §0.4: E||eta||^2 = d(d+1)/beta^2
    assert np.mean(norms**2) == pytest.approx(d * (d + 1) / beta**2, rel=0.08)


def test_l2_laplace_per_draw_beta_and_infinite_beta():
    beta = np.array([1.0, 100.0, np.inf])
    draws = samplers.l2_laplace(np.random.default_rng(0), beta, 3, size=3)
    assert np.all(draws[2] == 0)
    assert np.linalg.norm(draws[1]) < np.linalg.norm(draws[0]) * 10  # smaller scale, sane
    with pytest.raises(PrivacyParameterError, match="beta"):
        samplers.l2_laplace(np.random.default_rng(0), 0.0, 3)


def test_tail_radius_bounds_the_norm():
    beta, d, delta = 3.0, 10, 0.01
    norms = np.linalg.norm(samplers.l2_laplace(np.random.default_rng(1), beta, d, 20000), axis=1)
    assert np.mean(norms > samplers.l2_laplace_tail_radius(beta, d, delta)) <= delta


def test_calibration_beta():
    assert samplers.l2_laplace_beta(0.5, 0.25) == 2.0
    with pytest.raises(PrivacyParameterError):
        samplers.l2_laplace_beta(0.5, 0.0)


def _randomised_response_delta(alpha: float, k: int, eps: float) -> float:
    """Independent closed form: δ(ε) of k-fold ε0-randomised response, summed term by term."""
    p = math.exp(alpha) / (1 + math.exp(alpha))
    total = 0.0
    for i in range(k + 1):
        loss = (k - 2 * i) * alpha
        if loss > eps:
            total += math.comb(k, i) * p ** (k - i) * (1 - p) ** i * (1 - math.exp(eps - loss))
    return total


@pytest.mark.parametrize(("alpha", "k", "delta"), [(0.1, 10, 1e-5), (0.5, 4, 1e-3), (1.0, 1, 1e-5)])
def test_exact_composition_matches_closed_form_and_pld(alpha, k, delta):
    eps = pure_dp.composed_pure_epsilon(alpha, k, delta, "exact")
    assert eps <= k * alpha + 1e-12
    assert _randomised_response_delta(alpha, k, eps) <= delta * (1 + 1e-6)
    assert _randomised_response_delta(alpha, k, eps * 0.999) > delta
    pld = pure_dp.composed_pure_epsilon(alpha, k, delta, "pld")
    assert pld == pytest.approx(eps, rel=1e-2, abs=1e-3)
    assert pld >= eps - 1e-9  # pessimistic PLD upper-bounds the optimal value


def test_one_step_is_alpha_and_many_steps_beat_basic():
    one = pure_dp.composed_pure_epsilon(0.3, 1, 1e-5)
    assert 0.3 - 1e-4 < one <= 0.3  # δ > 0 buys a little: α + ln(1 − δ/p)
    assert pure_dp.composed_pure_epsilon(0.01, 1000, 1e-5) < 0.5 * 1000 * 0.01


@pytest.mark.parametrize("method", ["basic", "exact", "pld"])
def test_per_step_alpha_inverts_composition(method):
    alpha = pure_dp.per_step_alpha(1.0, 100, 1e-5, method)
    assert pure_dp.composed_pure_epsilon(alpha, 100, 1e-5, method) <= 1.0 + 1e-9
    assert pure_dp.composed_pure_epsilon(alpha * 1.01, 100, 1e-5, method) > 1.0
