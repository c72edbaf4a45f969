"""bounds.md B5 and B6 as implemented in mpdp.bounds, against independent computations."""

import math

import numpy as np
import pytest

from mpdp import bounds
from mpdp.privacy.samplers import l2_laplace


def test_b5_is_exact_for_a_quadratic_objective():
    # J(θ) = (L/2)||θ||², minimiser 0: E J(η) = (L/2) E||η||² = (L/2) p(p+1)/β² (spec §0.4 moments)
    p, beta, L = 6, 3.0, 0.35
    eta = l2_laplace(np.random.default_rng(0), beta, p, size=200_000)
    mc = 0.5 * L * np.mean(np.sum(eta**2, axis=1))
    assert bounds.b5_output_perturbation(p, beta, L) == pytest.approx(0.5 * L * p * (p + 1) / beta**2)
    assert mc == pytest.approx(bounds.b5_output_perturbation(p, beta, L), rel=0.02)
    assert bounds.b5_output_perturbation(p, beta, L, bias=0.1) == pytest.approx(0.1 + 0.5 * L * p * (p + 1) / beta**2)


def test_lemma6_line_from_the_gamma_tail_and_smoothness():
    d, lam, M, eps, dp = 8, 0.01, 30, 0.5, 0.05
    radius = 2 * d * math.log(d / dp) / (lam * M * eps)  # Pr[||w_p − w_s|| <= radius] >= 1 − δ_p
    assert bounds.b6_lemma6(d, lam, M, eps, dp) == pytest.approx(0.5 * (0.25 + lam) * radius**2)
    beta = M * lam * eps / 2  # Alg. 2 (M12)
    norms = np.linalg.norm(l2_laplace(np.random.default_rng(1), beta, d, size=100_000), axis=1)
    assert np.mean(norms > radius) <= dp
    assert bounds.b6_lemma6_expected(d, lam, M, eps) == pytest.approx(0.5 * (0.25 + lam) * d * (d + 1) / beta**2)


def test_theorem4_terms():
    val = bounds.b6_theorem4(0.3, 4.0, 5, 0.1, 10, 1.0, 1000, 0.025, 0.025)
    noise = 4 * 25 * 0.35 * math.log(5 / 0.025) ** 2 / (0.01 * 100 * 1.0)
    sample = 16 * (32 + math.log(40)) / (0.1 * 1000)
    assert val == pytest.approx(0.3 + noise + sample + 0.05 * 4.0)
