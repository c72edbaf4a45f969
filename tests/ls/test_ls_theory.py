"""bounds.md B8 against Monte Carlo and closed forms."""

import numpy as np
import pytest
from scipy import stats

from mpdp.mechanisms import least_squares as lsq
from mpdp.studies.ls import data as ls_data
from mpdp.studies.ls import theory


def test_writeup_closed_form_is_the_printed_expression_and_negative_at_sigma2_zero():
    c, d, s1, s2, t = 100.0, 40.0, 3.0, 5.0, 4
    expected = ((d**2 + t**2 * s2**2) / (c**2 + t**2 * s1**2) - d**2 / c**2) * c
    assert theory.writeup_closed_form(c, d, s1, s2, t) == pytest.approx(expected, rel=1e-14)
    assert theory.writeup_closed_form(c, d, s1, 0.0, t) < 0
    # negative exactly when σ₂²/σ₁² < d²/c²
    assert theory.writeup_closed_form(c, d, 1.0, 0.39, 1) < 0 < theory.writeup_closed_form(c, d, 1.0, 0.41, 1)


def test_aggregate_stds():
    assert theory.aggregate_stds(2.0, 3.0, 9, "independent") == (6.0, 9.0)
    assert theory.aggregate_stds(2.0, 3.0, 9, "write_up") == (18.0, 27.0)
    with pytest.raises(ValueError):
        theory.aggregate_stds(1.0, 1.0, 2, "shared")


@pytest.mark.parametrize("model", ["independent", "write_up"])
def test_delta_method_matches_monte_carlo_d1_small_noise(model):
    """s₁ ≪ c(D): MC mean and median within 5 % of the delta method (B8)."""
    ds = ls_data.synthetic_d1(0, 2000, 0.5, 0.1)
    gram, xty = lsq.sufficient_statistics(ds.X, ds.y)
    theta_star = np.linalg.solve(gram, xty)
    c = float(gram[0, 0])
    sigma1, sigma2, t = 0.005 * c, 0.01 * c, 4
    s1, s2 = theory.aggregate_stds(sigma1, sigma2, t, model)
    assert theory.in_validity_region(s1, gram, 0.1)
    Z1, z2 = lsq.ssp_noise(np.random.default_rng(0), t, 200_000, 1, sigma1, sigma2, model)
    theta, _ = lsq.ssp_solve(gram, xty, Z1, z2)
    excess = lsq.excess_risk(theta, theta_star, gram)
    mean = theory.delta_method_mean(gram, theta_star, s1, s2, symmetric=True)
    assert mean == pytest.approx((s2**2 + theta_star[0] ** 2 * s1**2) / c, rel=1e-12)
    assert excess.mean() == pytest.approx(mean, rel=0.05)
    assert np.median(excess) == pytest.approx(theory.delta_method_median_d1(mean), rel=0.05)
    assert abs(theory.CHI2_1_MEDIAN - stats.chi2.ppf(0.5, 1)) < 1e-12


@pytest.mark.parametrize("symmetric", [True, False])
def test_delta_method_matches_monte_carlo_general_d(symmetric):
    # correlated features and θ* along the well-conditioned direction: the symmetric and the
    # i.i.d. noise matrix give delta-method means about a factor 2 apart
    rng = np.random.default_rng(0)
    g = rng.normal(size=3000)
    X = np.column_stack([g, g + 0.3 * rng.normal(size=3000), rng.normal(size=3000)])
    X /= np.linalg.norm(X, axis=1).max()
    y = np.clip(X @ np.array([0.8, 0.8, 0.3]) + 0.05 * rng.normal(size=3000), -1, 1)
    gram, xty = lsq.sufficient_statistics(X, y)
    theta_star = np.linalg.solve(gram, xty)
    sigma = 0.01 * np.linalg.eigvalsh(gram)[0]
    Z1, z2 = lsq.ssp_noise(np.random.default_rng(1), 1, 100_000, 3, sigma, 0.0, symmetric=symmetric)
    theta, _ = lsq.ssp_solve(gram, xty, Z1, z2)
    excess = lsq.excess_risk(theta, theta_star, gram)
    predicted = theory.delta_method_mean(gram, theta_star, sigma, 0.0, symmetric)
    assert excess.mean() == pytest.approx(predicted, rel=0.05)
    other = theory.delta_method_mean(gram, theta_star, sigma, 0.0, not symmetric)
    assert abs(other / predicted - 1) > 0.2  # the two noise structures differ measurably


def test_sgd_shape_passes_through_anchor_as_one_over_eps():
    out = theory.sgd_shape(np.array([0.1, 0.2, 0.5]), 0.1, 7.0)
    np.testing.assert_allclose(out, [7.0, 3.5, 1.4])
