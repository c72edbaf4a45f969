"""Statistics of the audit against spec audit.md A5 oracles and independent computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import beta as beta_dist
from scipy.stats import binom, norm

from mpdp.audit.gdp import (
    final_model_factor,
    gaussian_epsilon,
    gdp_epsilon_estimate,
    gdp_mu_estimate,
)
from mpdp.audit.many_draws import clopper_pearson_upper, epsilon_from_counts, many_draws_audit
from mpdp.audit.one_run import epsilon_lower, guess_counts, one_run_audit, p_value

SIGMA_EPS1 = 3.730632  # A5 row 1: σ for ε = 1, δ = 1e-5, Δ = 1


@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (340, 100_000), (9, 10)])
def test_clopper_pearson_upper_is_the_exact_binomial_inversion(k, n):
    alpha = 0.025
    upper = float(clopper_pearson_upper(k, n, alpha))
    # definition: Pr[Bin(n, p_ub) <= k] = alpha (independent of the beta-quantile identity)
    assert binom.cdf(k, n, upper) == pytest.approx(alpha, rel=1e-6)
    assert upper == pytest.approx(beta_dist.ppf(1 - alpha, k + 1, n - k), rel=1e-9)


def test_clopper_pearson_upper_is_one_when_all_succeed():
    assert float(clopper_pearson_upper(10, 10, 0.025)) == 1.0


@pytest.mark.parametrize(
    "tp,fp,n,expected,reverse",
    [(739, 340, 100_000, 0.5956, 0.0031), (5000, 1000, 50_000, 1.5215, 0.0810),
     (766, 377, 50_000, 0.5361, None), (344, 67, 50_000, 1.2873, None)],
)
def test_epsilon_from_counts_matches_spec_oracles(tp, fp, n, expected, reverse):
    eps, _, rev = epsilon_from_counts(tp, fp, n, n, beta=0.05, delta=1e-5)
    assert float(eps) == pytest.approx(expected, abs=1e-4)
    if reverse is not None:
        assert float(rev) == pytest.approx(reverse, abs=1e-4)


def test_epsilon_from_counts_row2_intervals():
    fpr_ub = clopper_pearson_upper(340, 100_000, 0.025)
    tpr_lb = 1 - clopper_pearson_upper(100_000 - 739, 100_000, 0.025)
    assert float(tpr_lb) == pytest.approx(0.0068685, abs=1e-7)
    assert float(fpr_ub) == pytest.approx(0.0037806, abs=1e-7)


def test_gaussian_threshold_of_oracle_row4():
    """A5 row 4: Gaussian of row 1, counts = round(n·rate) at t = 9.0654; near the best t."""
    n = 50_000

    def counts(t):
        tp = np.round(n * norm.sf(np.asarray(t) - 1, scale=SIGMA_EPS1)).astype(int)
        return tp, np.round(n * norm.sf(t, scale=SIGMA_EPS1)).astype(int)

    tp, fp = counts(9.0654)
    assert (int(tp), int(fp)) == (766, 377)
    assert float(epsilon_from_counts(tp, fp, n, n, 0.05, 1e-5)[0]) == pytest.approx(0.5361, abs=1e-4)
    grid_tp, grid_fp = counts(np.linspace(5.0, 12.0, 7001))
    best = epsilon_from_counts(grid_tp, grid_fp, n, n, 0.05, 1e-5)[0].max()
    assert 0.5361 - 1e-4 <= best < 0.5361 + 0.01


def _gaussian_scores(seed: int, sigma: float, n: int):
    gen = np.random.default_rng(seed)
    return 1.0 + sigma * gen.standard_normal(n), sigma * gen.standard_normal(n)


def test_many_draws_gaussian_is_valid_and_near_spec_typical_value():
    """A4/A5 row 5: CP on the ε = 1 Gaussian, N = 1e5, f_sel = 0.5: 0.52 ± 0.08, never > 1."""
    values = []
    for seed in range(4):
        d, d_prime = _gaussian_scores(seed, SIGMA_EPS1, 100_000)
        res = many_draws_audit(d, d_prime, np.random.default_rng(100 + seed), 0.05, 1e-5, 0.5)
        values.append(res.eps_lower)
    assert max(values) <= 1.0
    assert 0.3 < float(np.mean(values)) < 0.75


def test_many_draws_catches_halved_gaussian_noise():
    """A4 planted bug, CP: claim ε = 1, σ/2 (true 2.155), N = 1e6, f_sel = 0.2: ε̂ > 1."""
    d, d_prime = _gaussian_scores(7, SIGMA_EPS1 / 2, 1_000_000)
    res = many_draws_audit(d, d_prime, np.random.default_rng(8), 0.05, 1e-5, 0.2)
    assert 1.0 < res.eps_lower <= 2.155
    assert res.n == 800_000 and res.n_selection == 200_000


def test_many_draws_null_gives_small_bound():
    gen = np.random.default_rng(3)
    res = many_draws_audit(gen.normal(size=50_000), gen.normal(size=50_000), gen, 0.05, 0.0)
    assert res.eps_lower < 0.1


@pytest.mark.parametrize(
    "m,r,v,delta,expected",
    [(1000, 100, 95, 0.0, 2.17243), (1000, 100, 95, 1e-5, 2.16518), (1000, 100, 95, 1e-3, 0.5943),
     (1000, 1000, 700, 0.0, 0.73201), (1000, 1000, 700, 1e-5, 0.73174),
     (10_000, 1000, 950, 0.0, 2.70186), (10_000, 1000, 950, 1e-5, 2.69100),
     (10_000, 1000, 950, 1e-3, 0.3613)],
)
def test_one_run_epsilon_matches_spec_oracles(m, r, v, delta, expected):
    assert epsilon_lower(m, r, v, 0.05, delta) == pytest.approx(expected, abs=2e-4)


def test_one_run_p_value_oracle_and_binomial_tail():
    assert p_value(1000, 100, 95, 2.0, 0.0) == pytest.approx(0.0161018, rel=1e-5)
    assert p_value(1000, 100, 95, 2.0, 1e-5) == pytest.approx(0.0178246, rel=1e-5)
    q = math.exp(2.0) / (1 + math.exp(2.0))
    direct = sum(math.comb(100, i) * q**i * (1 - q) ** (100 - i) for i in range(95, 101))
    assert p_value(1000, 100, 95, 2.0, 0.0) == pytest.approx(direct, rel=1e-10)


def test_guess_counts_are_distinct_and_at_most_half():
    assert guess_counts(1000) == [5, 10, 25, 50, 100, 250, 500]
    assert guess_counts(20) == [1, 2, 5, 10]


def test_one_run_null_scores_reject_nothing():
    gen = np.random.default_rng(1)
    signs = gen.choice([-1, 1], size=10_000)
    res = one_run_audit(gen.normal(size=10_000), signs, 0.05, 1e-5)
    assert res.eps_lower < 0.2


def test_one_run_gaussian_canaries_near_spec_typical_value():
    """A4: one-run at ε = 1 (μ = 0.268), m = 1e4: about 0.4, never above 1."""
    gen = np.random.default_rng(2)
    signs = gen.choice([-1, 1], size=10_000)
    mu = 0.268051
    scores = signs * mu / 2 + gen.normal(size=10_000)
    res = one_run_audit(scores, signs, 0.05, 1e-5)
    assert 0.2 < res.eps_lower < 1.0
    assert res.n_hypotheses == 7


@pytest.mark.parametrize(
    "mu,delta,expected",
    [(0.268051, 1e-5, 1.0), (0.147359, 1e-5, 0.51977), (0.190240, 1e-3, 0.42764)],
)
def test_gaussian_epsilon_matches_oracles(mu, delta, expected):
    assert gaussian_epsilon(mu, delta) == pytest.approx(expected, abs=2e-5)


def test_final_model_factor_matches_oracle_row12():
    assert final_model_factor(0.5, 0.01, 1000) == pytest.approx(0.6275, abs=1e-4)
    assert final_model_factor(0.1, 0.0, 1000) == 1.0


def test_gdp_fit_recovers_mu():
    gen = np.random.default_rng(4)
    signs = gen.choice([-1, 1], size=200_000)
    scores = signs * 0.5 + gen.normal(size=signs.size)
    assert gdp_mu_estimate(scores, signs) == pytest.approx(1.0, abs=0.02)
    assert gdp_epsilon_estimate(scores, signs, 1e-5) == pytest.approx(
        gaussian_epsilon(1.0, 1e-5), rel=0.05
    )
