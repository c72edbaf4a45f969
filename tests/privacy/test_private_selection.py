"""Private hyper-parameter selection (Papernot & Steinke 2022): the theorem, K's law, the curves.

Checked against an independent implementation of the same theorem (dp-accounting's
``RepeatAndSelectDpEvent``), the closed forms of the pure-DP limit ((2 + η)ε; 3ε for the geometric
distribution, Liu & Talwar 2019), the Gaussian's and the Poisson pair's closed forms, and sampling.
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.rdp import RdpAccountant
from dp_accounting.rdp import rdp_privacy_accountant as rdp_acc

from mpdp.privacy import private_selection as ps
from mpdp.privacy import subsampled_gaussian as sg

DELTA = 1e-5


@pytest.mark.parametrize(("shape", "mean", "z"), [(1.0, 10.0, 2.0), (0.0, 8.0, 3.0), (0.5, 5.0, 1.0),
                                                  (2.0, 20.0, 5.0)])
def test_repeat_and_select_matches_dp_accounting_on_gaussian_trials(shape, mean, z):
    acc = RdpAccountant(list(ps.ORDERS))
    acc.compose(dp_accounting.dp_event.RepeatAndSelectDpEvent(dp_accounting.GaussianDpEvent(z), mean, shape))
    ours = ps.rdp_to_epsilon(ps.repeat_and_select_rdp(ps.gaussian_rdp(z), shape, mean), DELTA)
    assert ours == pytest.approx(acc.get_epsilon(DELTA), rel=1e-6)


@pytest.mark.parametrize(("shape", "factor"), [(0.0, 2.0), (1.0, 3.0), (0.5, 2.5)])
def test_pure_dp_trials_tend_to_the_closed_form(shape, factor):
    """ε-DP trials: the bound tends to (2 + η)ε as λ, λ̂ → ∞ (3ε: Liu & Talwar's Theorem 3.1)."""
    eps = 0.5
    curve = ps.repeat_and_select_rdp(ps.pure_dp_rdp(eps), shape, 10.0)
    assert curve[-1] == pytest.approx(factor * eps, abs=3e-3)
    assert curve[-1] >= factor * eps  # the finite-order terms only add


def test_the_bound_at_a_known_point():
    """Theorem 2 by hand at λ = 2, λ̂ = λ_max for a Gaussian trial, geometric K with E[K] = 10."""
    z, mean = 2.0, 10.0
    trial = ps.gaussian_rdp(z)
    gamma = 1.0 / mean
    lam = 2.0
    i = int(np.nonzero(lam == ps.ORDERS)[0][0]) if lam in ps.ORDERS else None
    lam_hat = ps.ORDERS[-1]
    by_hand = (lam / (2 * z**2) + 2 * (1 - 1 / lam_hat) * lam_hat / (2 * z**2) + 2 * math.log(1 / gamma) / lam_hat
               + math.log(mean) / (lam - 1))
    curve = ps.repeat_and_select_rdp(trial, 1.0, mean)
    if i is not None:
        assert curve[i] <= by_hand + 1e-12  # minimised over λ̂, so at most any one λ̂'s value
    # and at the minimising λ̂ it is exactly the formula
    c = 2 * min((1 - 1 / lh) * lh / (2 * z**2) + math.log(1 / gamma) / lh for lh in ps.ORDERS)
    j = len(ps.ORDERS) // 3
    raw = ps.ORDERS[j] / (2 * z**2) + c + math.log(mean) / (ps.ORDERS[j] - 1)
    assert curve[j] <= raw + 1e-12


@pytest.mark.parametrize(("shape", "mean"), [(1.0, 8.0), (0.0, 8.0), (0.5, 4.0), (3.0, 12.0)])
def test_truncated_negative_binomial_law(shape, mean):
    gamma = ps.tnb_gamma(shape, mean)
    assert ps.tnb_mean(gamma, shape) == pytest.approx(mean, rel=1e-9)
    assert rdp_acc._truncated_negative_binomial_mean(gamma, shape) == pytest.approx(mean, rel=1e-9)
    k = np.arange(1, 20000)
    pmf = ps.tnb_pmf(k, gamma, shape)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-9)
    assert (k * pmf).sum() == pytest.approx(mean, rel=1e-6)
    gen = np.random.default_rng(1)
    draws = np.array([ps.sample_trials(gen, shape, mean) for _ in range(20000)])
    assert draws.min() >= 1
    se = draws.std() / math.sqrt(len(draws))
    assert abs(draws.mean() - mean) < 5 * se


def test_poisson_pair_rdp_closed_form_and_pld_consistency():
    m = ps.ORDERS <= 256
    full = ps.poisson_replace_one_rdp(1.0, 2.0, 3)  # every order (issue 43: none counted as ∞)
    np.testing.assert_allclose(full, 3 * 2 * ps.ORDERS / 2.0**2, rtol=1e-8)  # sensitivity 2
    assert np.isinf(ps.poisson_replace_one_rdp(1.0, 2.0, 3, max_order=256.0)[~m]).all()
    # a subsampled pair at the high orders: finite, below the unsampled pair, non-decreasing in λ
    sub = ps.poisson_replace_one_rdp(0.05, 1.0, 1)
    assert np.isfinite(sub).all() and (sub <= ps.poisson_replace_one_rdp(1.0, 1.0, 1) * (1 + 1e-9)).all()
    assert (np.diff(sub) >= -1e-12).all()
    # RDP → (ε, δ) is an upper bound of the exact (PLD) ε of the same pair, and not far above it
    rdp_eps = ps.rdp_to_epsilon(ps.poisson_replace_one_rdp(0.05, 1.0, 100), DELTA)
    pld_eps = sg.epsilon(0.05, 1.0, 100, DELTA)
    assert pld_eps <= rdp_eps <= 1.25 * pld_eps
    # amplification: a smaller rate gives a smaller curve
    assert (ps.poisson_replace_one_rdp(0.05, 1.0, 1)[m] < ps.poisson_replace_one_rdp(0.2, 1.0, 1)[m]).all()


def test_calibrated_trial_epsilon_is_the_largest_that_meets_the_target():
    final = ps.gaussian_rdp(5.0)
    target = 1.0

    def total(e: float) -> float:
        return ps.rdp_to_epsilon(ps.repeat_and_select_rdp(ps.gaussian_rdp(1.0 / e), 1.0, 8.0) + final, DELTA)

    eps_t = ps.calibrate_trial_epsilon(target, DELTA, lambda e: ps.gaussian_rdp(1.0 / e), final, 1.0, 8.0)
    assert 0 < eps_t < target
    assert total(eps_t) <= target
    assert total(eps_t * 1.001) > target
    # infeasible: the final run alone is above the target
    assert ps.calibrate_trial_epsilon(0.1, DELTA, lambda e: ps.gaussian_rdp(1.0 / e), final, 1.0, 8.0) == 0.0


def test_invalid_parameters_are_refused():
    with pytest.raises(ValueError, match="mean"):
        ps.tnb_gamma(1.0, 1.0)
    with pytest.raises(ValueError, match="shape"):
        ps.tnb_gamma(-1.0, 4.0)
    with pytest.raises(ValueError, match="ORDERS"):
        ps.repeat_and_select_rdp(np.zeros(3), 1.0, 4.0)


@pytest.mark.parametrize("eps", [1e-3, 0.05, 0.5, 1.0, 4.0, 10.0])
def test_pure_dp_curve_is_randomised_response_as_dp_accounting_computes_it(eps):
    """Issue 43: ε-DP's curve is binary randomised response's (the tightest one ε-DP implies), below
    min(ε, λε²/2); dp-accounting's replace-one randomised response (k = 2, p = 2/(1 + e^ε)) agrees."""
    curve = ps.pure_dp_rdp(eps)
    library = np.array([rdp_acc._randomized_response_rdp_replace_one(2.0 / (1.0 + math.exp(eps)), 2, float(a))
                        for a in ps.ORDERS])
    np.testing.assert_allclose(curve, library, rtol=1e-7, atol=1e-15)
    assert (curve <= np.minimum(eps, ps.ORDERS * eps**2 / 2) * (1 + 1e-12)).all()
    assert (curve < np.minimum(eps, ps.ORDERS * eps**2 / 2)).any()  # strictly tighter somewhere
    np.testing.assert_allclose(ps.pure_dp_rdp(eps, 3), 3 * curve)
