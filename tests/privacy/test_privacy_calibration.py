"""Noise calibration (spec §0.5 C1, C2; tooling guide): each accountant against an
independent computation (dp-accounting's PLD/RDP accountants, closed forms of the spec)."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import PLDAccountant, privacy_loss_distribution
from dp_accounting.rdp import RdpAccountant
from scipy.stats import norm

from mpdp.errors import ConfigError, MpdpError
from mpdp.privacy.calibration import (
    ACCOUNTANTS,
    PrivacyParameterError,
    noise_multiplier,
    noise_std,
    sensitivity_replace_one,
)

DELTA = 1e-3
L = math.log(1 / DELTA)
EPS_GRID = [0.05, 0.1, 0.25, 1.0]
T_GRID = [50, 1000]
ADD_REMOVE = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE


def _event(multiplier: float, T: int) -> dp_accounting.DpEvent:
    return dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(multiplier), T)


def pld_epsilon(multiplier: float, T: int, delta: float = DELTA) -> float:
    """Independent ε: dp-accounting's PLD accountant on T self-composed Gaussians."""
    accountant = PLDAccountant(ADD_REMOVE, value_discretization_interval=1e-4)
    return accountant.compose(_event(multiplier, T)).get_epsilon(delta)


def rdp_epsilon(multiplier: float, T: int, delta: float = DELTA) -> float:
    """Independent ε: dp-accounting's RDP accountant on T self-composed Gaussians."""
    accountant = RdpAccountant(neighboring_relation=ADD_REMOVE)
    return accountant.compose(_event(multiplier, T)).get_epsilon(delta)


def balle_wang_delta(epsilon: float, sigma: float) -> float:
    """Balle & Wang 2018 Thm 8 for unit sensitivity: δ(ε) of a Gaussian with std σ."""
    return norm.cdf(1 / (2 * sigma) - epsilon * sigma) - math.exp(epsilon) * norm.cdf(
        -1 / (2 * sigma) - epsilon * sigma
    )


def test_accountant_names_match_the_config_schema() -> None:
    """Every accountant the schema accepts is implemented, and every implemented one accepted."""
    from mpdp.config import schema

    wddp = schema()["properties"]["wddp"]["properties"]
    assert set(wddp["accountants"]["items"]["enum"]) == set(ACCOUNTANTS)
    assert set(wddp["accountants"]["default"]) <= set(ACCOUNTANTS)
    for name in ACCOUNTANTS:  # each one calibrates a finite positive noise scale
        assert 0 < noise_std(name, 0.1, 1e-3, 100, 0.01) < float("inf")


@pytest.mark.parametrize(
    "G, n_eff, expected", [(1.0, 100, 0.02), (2.0, 8 * 25, 0.02), (1, 7, 2 / 7)]
)
def test_sensitivity_replace_one(G: float, n_eff: float, expected: float) -> None:
    assert sensitivity_replace_one(G, n_eff) == pytest.approx(expected, rel=1e-15)


# --- exact ---------------------------------------------------------------------------


@pytest.mark.parametrize("T", T_GRID)
@pytest.mark.parametrize("eps", EPS_GRID)
def test_exact_multiplier_gives_target_epsilon_under_pld(eps: float, T: int) -> None:
    m = noise_multiplier("exact", eps, DELTA, T)
    assert pld_epsilon(m, T) == pytest.approx(eps, rel=1e-3)
    # closed form of the composed mechanism (one Gaussian, σ' = m/√T): δ(ε) = δ, never above
    d = balle_wang_delta(eps, m / math.sqrt(T))
    assert d <= DELTA
    assert d == pytest.approx(DELTA, rel=1e-6)


def test_exact_reference_value() -> None:
    # tooling guide: ε=0.1, δ=1e-3, T=1000 → 550.375 (= PLD)
    assert noise_multiplier("exact", 0.1, DELTA, 1000) == pytest.approx(550.375, abs=0.01)


def test_t_fold_gaussian_composition_is_one_gaussian_with_multiplier_over_sqrt_t() -> None:
    """The identity behind ``exact``: compose T per-step PLDs explicitly (FFT), no shortcut."""
    T, m = 10, 10.0
    per_step = privacy_loss_distribution.from_gaussian_mechanism(
        standard_deviation=m, value_discretization_interval=1e-4
    )
    composed = per_step.self_compose(T).get_epsilon_for_delta(DELTA)
    one_gaussian = dp_accounting.get_epsilon_gaussian(m / math.sqrt(T), DELTA)
    assert composed == pytest.approx(one_gaussian, rel=1e-3)
    assert composed >= one_gaussian  # pessimistic PLD is an upper bound


# --- ma16, ma_tight, ma_int (spec C1) --------------------------------------------------


@pytest.mark.parametrize("n", [100, 699, 984])
@pytest.mark.parametrize("eps", [0.01, 0.1, 0.25])
def test_ma16_closed_form_number(eps: float, n: int) -> None:
    # spec C1: δ=1e-3, T=1000, G=1 → σ = 4 sqrt(T ln(1/δ))/(nε) = 332.45/(nε)
    sigma = noise_std("ma16", eps, DELTA, 1000, sensitivity_replace_one(1.0, n))
    assert sigma * n * eps == pytest.approx(332.45, abs=0.005)
    assert sigma**2 == pytest.approx(16 * 1000 * L / (n**2 * eps**2), rel=1e-12)


@pytest.mark.parametrize("T", T_GRID)
@pytest.mark.parametrize("eps", EPS_GRID)
@pytest.mark.parametrize("accountant", ["ma16", "ma_tight", "ma_int", "zcdp_code"])
def test_closed_form_accountants_are_conservative(accountant: str, eps: float, T: int) -> None:
    m = noise_multiplier(accountant, eps, DELTA, T)
    assert pld_epsilon(m, T) <= eps
    assert rdp_epsilon(m, T) <= eps


def _basic_rdp_conversion(multiplier: float, T: int, delta: float) -> float:
    """Spec C1 unit test: min over orders a > 1 of a·T/(2 m²) + ln(1/δ)/(a-1) (dense grid)."""
    orders = 1 + np.logspace(-3, 6, 400_001)
    return float(np.min(orders * T / (2 * multiplier**2) + math.log(1 / delta) / (orders - 1)))


@pytest.mark.parametrize("T", T_GRID)
@pytest.mark.parametrize("eps", [0.01, *EPS_GRID])
def test_ma16_c1_unit_test_rdp_conversion_is_about_0_71_eps(eps: float, T: int) -> None:
    ratio = _basic_rdp_conversion(noise_multiplier("ma16", eps, DELTA, T), T, DELTA) / eps
    # with c = 16: ρ = ε²/(8L), ρ + 2 sqrt(ρL) = ε (1/√2 + ε/(8L))
    assert ratio == pytest.approx(1 / math.sqrt(2) + eps / (8 * L), rel=1e-6)
    assert 0.70 < ratio < 0.73


def test_ma16_validity_condition() -> None:
    limit = 2 * L  # 13.8155...
    noise_multiplier("ma16", 13.8, DELTA, 1000)
    with pytest.raises(PrivacyParameterError, match=r"epsilon.*13\.9") as info:
        noise_multiplier("ma16", 13.9, DELTA, 1000)
    assert isinstance(info.value, ConfigError) and isinstance(info.value, MpdpError)
    assert isinstance(info.value, ValueError)
    assert "ma16" in str(info.value) and f"{limit:.6g}" in str(info.value)
    # the other accountants have no such condition
    for accountant in ["ma_tight", "ma_int", "exact", "rdp", "zcdp_code"]:
        assert noise_multiplier(accountant, 20.0, DELTA, 10) > 0


@pytest.mark.parametrize("eps", EPS_GRID)
def test_ma_tight_closed_form(eps: float) -> None:
    n, G, T = 500, 1.0, 1000
    sigma = noise_std("ma_tight", eps, DELTA, T, sensitivity_replace_one(G, n))
    assert sigma**2 == pytest.approx((8 * L + 4 * eps) * G**2 * T / (n**2 * eps**2), rel=1e-12)


@pytest.mark.parametrize(
    "eps, c_expected", [(0.25, 16.21), (0.1, 8 * 0.1 * math.ceil(2 * L / 0.1) / L)]
)
def test_ma_int_constant(eps: float, c_expected: float) -> None:
    # σ² = c G² T ln(1/δ)/(n² ε²) → c = 4 ε² m²/(T ln(1/δ)); spec C1: 16.21 at ε=0.25
    T = 1000
    m = noise_multiplier("ma_int", eps, DELTA, T)
    c = 4 * eps**2 * m**2 / (T * L)
    assert c == pytest.approx(c_expected, abs=0.005)
    assert 16 <= c <= 16 + 8 * eps / L + 1e-12


# --- rdp -------------------------------------------------------------------------------


@pytest.mark.parametrize("T", T_GRID)
@pytest.mark.parametrize("eps", EPS_GRID)
def test_rdp_multiplier_meets_target_under_rdp(eps: float, T: int) -> None:
    m = noise_multiplier("rdp", eps, DELTA, T)
    accounted = rdp_epsilon(m, T)
    assert accounted <= eps
    assert accounted == pytest.approx(eps, rel=1e-3)
    # RDP over-estimates ε, so its multiplier buys an exact ε at most the target
    assert m >= noise_multiplier("exact", eps, DELTA, T)
    assert pld_epsilon(m, T) <= eps


def test_rdp_reference_value() -> None:
    assert noise_multiplier("rdp", 0.1, DELTA, 1000) == pytest.approx(650.38, abs=0.01)


# --- zcdp_code (spec C2) ---------------------------------------------------------------


@pytest.mark.parametrize("T", T_GRID)
@pytest.mark.parametrize("eps", [0.01, *EPS_GRID, 5.0])
def test_zcdp_code_closed_form(eps: float, T: int) -> None:
    m = noise_multiplier("zcdp_code", eps, DELTA, T)
    rho_tot = T / (2 * m**2)  # ρ = Δ²/(2σ²) per step
    assert rho_tot + 2 * math.sqrt(rho_tot * L) == pytest.approx(eps, rel=1e-12)


def test_zcdp_code_matches_jayaraman_formula() -> None:
    # spec M4.2 / B9: σ_J = sqrt(2T) G/(m n_(1) (sqrt(L+ε) - sqrt(L)))
    G, m_parties, n_min, T, eps = 1.0, 8, 40, 1000, 0.1
    sigma = noise_std("zcdp_code", eps, DELTA, T, sensitivity_replace_one(G, m_parties * n_min))
    expected = math.sqrt(2 * T) * G / (m_parties * n_min * (math.sqrt(L + eps) - math.sqrt(L)))
    assert sigma == pytest.approx(expected, rel=1e-10)


# --- all accountants -------------------------------------------------------------------


@pytest.mark.parametrize("T", T_GRID)
@pytest.mark.parametrize("eps", [0.01, *EPS_GRID, 5.0])
def test_accountant_ordering(eps: float, T: int) -> None:
    m = {a: noise_multiplier(a, eps, DELTA, T) for a in ACCOUNTANTS}
    assert m["exact"] < m["rdp"] < m["zcdp_code"] < m["ma_tight"] < m["ma16"] <= m["ma_int"]


def test_noise_std_is_multiplier_times_sensitivity() -> None:
    for accountant in ACCOUNTANTS:
        m = noise_multiplier(accountant, 0.25, DELTA, 50)
        assert noise_std(accountant, 0.25, DELTA, 50, 0.004) == pytest.approx(m * 0.004, rel=1e-15)


def test_noise_multiplier_is_memoised() -> None:
    noise_multiplier.cache_clear()
    first = noise_multiplier("rdp", 0.3, DELTA, 77)
    again = noise_multiplier("rdp", np.float64(0.3), DELTA, np.int64(77))
    info = noise_multiplier.cache_info()
    assert again == first
    assert (info.hits, info.misses) == (1, 1)


# --- input validation -----------------------------------------------------------------


@pytest.mark.parametrize(
    "args, name",
    [
        (("foo", 0.1, DELTA, 10), "accountant='foo'"),
        (("exact", 0.0, DELTA, 10), "epsilon=0.0"),
        (("exact", -1.0, DELTA, 10), "epsilon=-1.0"),
        (("exact", math.nan, DELTA, 10), "epsilon=nan"),
        (("exact", math.inf, DELTA, 10), "epsilon=inf"),
        (("exact", 0.1, 0.0, 10), "delta=0.0"),
        (("exact", 0.1, 1.0, 10), "delta=1.0"),
        (("exact", 0.1, math.nan, 10), "delta=nan"),
        (("exact", 0.1, DELTA, 0), "T=0"),
        (("exact", 0.1, DELTA, 10.5), "T=10.5"),
        (("exact", 0.1, DELTA, True), "T=True"),
        (("ma16", "0.1", DELTA, 10), "epsilon='0.1'"),
    ],
)
def test_noise_multiplier_rejects_bad_input(args: tuple, name: str) -> None:
    with pytest.raises(PrivacyParameterError) as info:
        noise_multiplier(*args)
    assert name in str(info.value)


@pytest.mark.parametrize("sensitivity", [0.0, -0.1, math.nan])
def test_noise_std_rejects_bad_sensitivity(sensitivity: float) -> None:
    with pytest.raises(PrivacyParameterError, match="sensitivity="):
        noise_std("exact", 0.1, DELTA, 10, sensitivity)


@pytest.mark.parametrize("G, n_eff, name", [(0.0, 10, "G=0.0"), (1.0, -3, "n_eff=-3")])
def test_sensitivity_rejects_bad_input(G: float, n_eff: float, name: str) -> None:
    with pytest.raises(PrivacyParameterError) as info:
        sensitivity_replace_one(G, n_eff)
    assert name in str(info.value)
