"""One-shot Gaussian calibration (spec C3, I-15) against dp-accounting."""

import math

import dp_accounting
import pytest
from dp_accounting.pld import PLDAccountant

from mpdp.privacy.calibration import PrivacyParameterError
from mpdp.privacy.gaussian import (
    analytic_gaussian_std,
    classical_gaussian_std,
    composed_gaussians_epsilon,
    gaussian_std,
)

ADD_REMOVE = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE


def _pld_epsilon(event, delta: float) -> float:
    acc = PLDAccountant(neighboring_relation=ADD_REMOVE, value_discretization_interval=1e-4)
    acc.compose(event)
    return acc.get_epsilon(delta)


@pytest.mark.parametrize("eps,delta,sens", [(0.1, 1e-5, 1.0), (0.45, 5e-6, math.sqrt(2)), (0.9, 1e-3, 2.0)])
def test_classical_formula_and_it_is_private_by_pld(eps, delta, sens):
    sigma = classical_gaussian_std(sens, eps, delta)
    assert sigma == pytest.approx(sens * math.sqrt(2 * math.log(2 / delta)) / eps, rel=1e-14)
    # dp-accounting's PLD ε of that noise is below the target (C3 is conservative for ε < 1)
    assert _pld_epsilon(dp_accounting.GaussianDpEvent(sigma / sens), delta) < eps


@pytest.mark.parametrize("eps", [1.0, 1.5, 5.0])
def test_classical_refuses_epsilon_at_least_one(eps):
    with pytest.raises(PrivacyParameterError, match=r"epsilon < 1.*I-15"):
        classical_gaussian_std(1.0, eps, 1e-5)
    with pytest.raises(PrivacyParameterError, match="epsilon < 1"):
        gaussian_std("classical", 1.0, eps, 1e-5)


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-5), (0.9, 1e-5), (3.0, 1e-6)])
def test_analytic_is_tight_against_pld(eps, delta):
    sens = 2.0
    sigma = analytic_gaussian_std(sens, eps, delta)
    assert gaussian_std("analytic", sens, eps, delta) == sigma
    pld = _pld_epsilon(dp_accounting.GaussianDpEvent(sigma / sens), delta)
    assert pld == pytest.approx(eps, rel=2e-3)
    # 1 % less noise is no longer (ε, δ)-DP
    assert _pld_epsilon(dp_accounting.GaussianDpEvent(0.99 * sigma / sens), delta) > eps


def test_composed_gaussians_match_pld_composition():
    sigmas, sens, delta = [30.0, 45.0], [1.0, 2.0], 1e-5
    event = dp_accounting.ComposedDpEvent(
        [dp_accounting.GaussianDpEvent(s / d) for s, d in zip(sigmas, sens, strict=True)]
    )
    assert composed_gaussians_epsilon(sigmas, sens, delta) == pytest.approx(
        _pld_epsilon(event, delta), rel=2e-3
    )
    assert composed_gaussians_epsilon([0.0, 1.0], [1.0, 1.0], delta) == math.inf


def test_bad_calibration_name_is_a_clear_error():
    with pytest.raises(PrivacyParameterError, match="calibration must be one of"):
        gaussian_std("textbook", 1.0, 0.5, 1e-5)
