"""Privacy ledger (spec §0.5, M3.1, M4.1, I-1): ε really given by the noise that was used,
checked against dp-accounting's PLD accountant and the Balle-Wang closed form."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import PLDAccountant
from scipy.stats import norm

from mpdp.privacy.calibration import (
    PrivacyParameterError,
    noise_multiplier,
    noise_std,
    sensitivity_replace_one,
)
from mpdp.privacy.ledger import (
    EPSILON_METHODS,
    accounted_epsilon,
    composed_gaussian_epsilon,
    worst_party_epsilon,
)

DELTA = 1e-3
GRID = [(m, T, d) for m in [1.0, 10.0, 100.0, 1000.0] for T in [1, 50, 1000] for d in [1e-3, 1e-5]]


def pld_epsilon(multiplier: float, T: int, delta: float = DELTA) -> float:
    """Independent ε: dp-accounting's PLD accountant, called directly."""
    accountant = PLDAccountant(
        dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=1e-4
    )
    event = dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(multiplier), T)
    return accountant.compose(event).get_epsilon(delta)


@pytest.mark.parametrize("m, T, delta", GRID)
def test_analytic_and_pld_agree(m: float, T: int, delta: float) -> None:
    analytic = composed_gaussian_epsilon(m, T, delta, "analytic")
    pld = composed_gaussian_epsilon(m, T, delta, "pld")
    assert pld == pytest.approx(analytic, rel=1e-3, abs=1e-9)
    assert composed_gaussian_epsilon(m, T, delta, "rdp") >= analytic - 1e-12


@pytest.mark.parametrize("m, T, delta", [g for g in GRID if g[0] / math.sqrt(g[1]) < 20])
def test_analytic_solves_the_balle_wang_equation(m: float, T: int, delta: float) -> None:
    s = m / math.sqrt(T)  # T Gaussians compose to one with multiplier m/√T
    eps = composed_gaussian_epsilon(m, T, delta)
    d = norm.cdf(1 / (2 * s) - eps * s) - math.exp(eps) * norm.cdf(-1 / (2 * s) - eps * s)
    assert d == pytest.approx(delta, rel=1e-6)


@pytest.mark.parametrize("m", [10.0, 300.0])
def test_pld_method_is_dp_accounting_pld(m: float) -> None:
    assert composed_gaussian_epsilon(m, 50, DELTA, "pld") == pytest.approx(
        pld_epsilon(m, 50), rel=1e-4
    )


@pytest.mark.parametrize("method", EPSILON_METHODS)
def test_extreme_multipliers_do_not_crash(method: str) -> None:
    assert composed_gaussian_epsilon(0.0, 10, DELTA, method) == math.inf
    previous = math.inf
    for m in [1e-300, 1e-100, 1e-20, 1e-3, 0.1, 1.0, 10.0, 1e6, 1e200, 1e300]:
        eps = composed_gaussian_epsilon(m, 1000, DELTA, method)
        assert eps >= 0 and not math.isnan(eps)
        assert eps <= previous * (1 + 1e-9)  # ε is non-increasing in the multiplier
        previous = eps
    assert previous == 0.0


def test_composed_epsilon_is_memoised() -> None:
    composed_gaussian_epsilon.cache_clear()
    composed_gaussian_epsilon(3.0, 20, DELTA, "pld")
    composed_gaussian_epsilon(3.0, 20, DELTA, "pld")
    assert composed_gaussian_epsilon.cache_info().hits == 1


@pytest.mark.parametrize("eps", [0.05, 0.1, 0.25, 1.0])
def test_accounted_epsilon_round_trips_the_calibration(eps: float) -> None:
    T, delta_s = 1000, sensitivity_replace_one(1.0, 569)
    exact = accounted_epsilon(noise_std("exact", eps, DELTA, T, delta_s), delta_s, T, DELTA)
    assert exact == pytest.approx(eps, rel=1e-9)
    assert exact <= eps * (1 + 1e-12)
    for accountant in ["ma16", "ma_tight", "ma_int", "rdp", "zcdp_code"]:
        assert (
            accounted_epsilon(noise_std(accountant, eps, DELTA, T, delta_s), delta_s, T, DELTA)
            < eps
        )


def test_accounted_epsilon_definition() -> None:
    assert accounted_epsilon(0.0, 0.01, 100, DELTA) == math.inf
    assert accounted_epsilon(2.5, 0.01, 100, DELTA) == composed_gaussian_epsilon(250.0, 100, DELTA)


@pytest.mark.parametrize("eps", [0.05, 0.1, 0.25])
def test_literal_local_mode_worst_party_exceeds_claimed_epsilon(eps: float) -> None:
    """Spec M3.1/I-1: sizes [10, 90], noise calibrated with ma16 to the total n = 100."""
    G, T, sizes = 1.0, 1000, [10, 90]
    sigma = noise_std("ma16", eps, DELTA, T, sensitivity_replace_one(G, sum(sizes)))
    worst = worst_party_epsilon(sigma, G, sizes, T, DELTA)
    assert worst > eps  # the finding: the claimed ε does not hold for the small party
    # it is the ε of a composed Gaussian with the small party's sensitivity 2G/10 ...
    m_small = sigma / (2 * G / 10)
    assert worst == composed_gaussian_epsilon(m_small, T, DELTA)
    assert worst == pytest.approx(pld_epsilon(m_small, T), rel=1e-3)
    # ... bounded by C1's ε·n/n_(1), while the aggregate reading (Δ = 2G/n) meets ε
    assert worst <= eps * 100 / 10
    assert accounted_epsilon(sigma, sensitivity_replace_one(G, 100), T, DELTA) <= eps
    assert worst_party_epsilon(sigma, G, np.array([90, 10]), T, DELTA) == worst


def test_worst_party_with_equal_sizes_is_the_per_party_epsilon() -> None:
    sigma, G, T = 0.5, 1.0, 200
    worst = worst_party_epsilon(sigma, G, [25, 25, 25, 25], T, DELTA)
    assert worst == accounted_epsilon(sigma, 2 * G / 25, T, DELTA)


# --- input validation -----------------------------------------------------------------


@pytest.mark.parametrize(
    "args, name",
    [
        ((-1.0, 10, DELTA, "analytic"), "noise_multiplier=-1.0"),
        ((math.nan, 10, DELTA, "analytic"), "noise_multiplier=nan"),
        ((1.0, 0, DELTA, "analytic"), "T=0"),
        ((1.0, 10, 2.0, "analytic"), "delta=2.0"),
        ((1.0, 10, DELTA, "moments"), "method='moments'"),
    ],
)
def test_composed_epsilon_rejects_bad_input(args: tuple, name: str) -> None:
    with pytest.raises(PrivacyParameterError) as info:
        composed_gaussian_epsilon(*args)
    assert name in str(info.value)


@pytest.mark.parametrize(
    "args, name",
    [((-1.0, 0.1, 10, DELTA), "sigma=-1.0"), ((1.0, 0.0, 10, DELTA), "sensitivity=0.0")],
)
def test_accounted_epsilon_rejects_bad_input(args: tuple, name: str) -> None:
    with pytest.raises(PrivacyParameterError) as info:
        accounted_epsilon(*args)
    assert name in str(info.value)


@pytest.mark.parametrize("sizes", [[], [0, 5], [[10, 20]], ["a", 3], [10, -1]])
def test_worst_party_rejects_bad_sizes(sizes: list) -> None:
    with pytest.raises(PrivacyParameterError, match="party_sizes="):
        worst_party_epsilon(1.0, 1.0, sizes, 10, DELTA)


def test_worst_party_rejects_bad_lipschitz_constant() -> None:
    with pytest.raises(PrivacyParameterError, match="G=0"):
        worst_party_epsilon(1.0, 0, [10, 20], 10, DELTA)


def test_noise_multiplier_and_ledger_share_the_error_type() -> None:
    with pytest.raises(ValueError, match="delta="):
        noise_multiplier("exact", 0.1, 0.0, 10)
    with pytest.raises(ValueError, match="delta="):
        composed_gaussian_epsilon(1.0, 10, 0.0)
