"""Composition of pure steps with different ε (mpdp.privacy.pure_dp) and the basic fallback."""

import itertools
import math

import numpy as np
import pytest

from mpdp.privacy.pure_dp import composed_pure_epsilon, composed_pure_epsilons, pld_or_basic


def _exact_hetero(epsilons, delta):
    """Optimal composition by brute force: k-fold (ε_i, 0)-DP is dominated by randomised responses,
    whose privacy loss is Σ ±ε_i; δ(ε) = E[(1 − e^{ε − L})₊], solved for ε by bisection."""
    outcomes = []
    for signs in itertools.product((1, -1), repeat=len(epsilons)):
        pairs = list(zip(signs, epsilons, strict=True))
        prob = math.prod(1 / (1 + math.exp(-s * e)) for s, e in pairs)
        outcomes.append((prob, sum(s * e for s, e in pairs)))

    def dlt(eps):
        return sum(p * (1 - math.exp(eps - loss)) for p, loss in outcomes if loss > eps)

    lo, hi = 0.0, sum(epsilons)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if dlt(mid) > delta else (lo, mid)
    return hi


def test_heterogeneous_pld_matches_the_brute_force_optimum():
    eps = [0.3, 0.5, 0.5, 0.9, 1.2, 0.5]
    exact = _exact_hetero(eps, 1e-3)
    pld = composed_pure_epsilons(eps, 1e-3)
    assert exact - 1e-9 <= pld <= exact + len(eps) * 0.3e-3 * 2  # pessimistic, within discretisation
    assert pld < sum(eps)


def test_equal_steps_agree_with_the_homogeneous_composition():
    assert composed_pure_epsilons([0.7] * 9, 1e-5) == pytest.approx(composed_pure_epsilon(0.7, 9, 1e-5, "pld"))


def test_pld_overflow_falls_back_to_basic_composition():
    # dp-accounting's PLD of 71 steps of α = 10 is inf; basic composition 710 replaces it
    assert not np.isfinite(composed_pure_epsilon(10.0, 71, 1e-5, "pld"))
    value, fell_back = pld_or_basic([10.0] * 71, 1e-5)
    assert fell_back and value == pytest.approx(710.0)
    value, fell_back = pld_or_basic([1.0] * 5, 1e-5)
    assert not fell_back and value == pytest.approx(composed_pure_epsilon(1.0, 5, 1e-5, "pld")) and value < 5.0
    value, fell_back = pld_or_basic([0.5, 1.0], 1e-5)
    assert not fell_back and value <= 1.5
