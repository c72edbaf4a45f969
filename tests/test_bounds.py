"""Tests of the theory overlays against hand-computed values of bounds.md (B0–B4, B9)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mpdp import bounds

# ---------------------------------------------------------------------------- B0 constants


def test_smoothness_default_and_data_mode() -> None:
    assert bounds.smoothness(1e-3) == pytest.approx(0.251)
    assert bounds.smoothness(0.0) == 0.25
    # L_mode: data -> lambda_max(X^T X) / (4 n) + lam
    assert bounds.smoothness(0.5, gram_max_eigenvalue=8.0, n=4) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="both"):
        bounds.smoothness(0.1, gram_max_eigenvalue=1.0)
    with pytest.raises(ValueError, match="lam"):
        bounds.smoothness(-0.1)


def test_loss_at_zero_is_the_objective_at_theta_zero() -> None:
    """B0: L_D(0) = ln 2 for any data and any lambda, by the model's own loss."""
    from mpdp.models import logistic

    gen = np.random.default_rng(3)
    for n, p, lam in [(50, 4, 0.0), (7, 12, 0.3)]:
        X = gen.normal(size=(n, p))
        y = np.where(gen.random(n) < 0.3, 1.0, -1.0)
        assert logistic.loss(np.zeros(p), X, y, lam) == pytest.approx(bounds.LOSS_AT_ZERO, rel=1e-14)
    # the default vacuity reference is that loss: a bound just above it is vacuous
    assert bounds.is_vacuous(bounds.LOSS_AT_ZERO * (1 + 1e-9))
    assert not bounds.is_vacuous(bounds.LOSS_AT_ZERO * (1 - 1e-9))


def test_sigma_wd_matches_spec_constant() -> None:
    # mechanisms.md C1: with T = 1000, delta = 1e-3, G = 1: sigma = 332.45 / (n eps)
    for n, eps in [(36177, 0.1), (559, 0.01), (56000, 0.25)]:
        assert bounds.sigma_wd(1.0, 1000, 1e-3, n, eps) * n * eps == pytest.approx(332.45, rel=1e-4)
    # hand value: 4 * 2 * sqrt(10 * ln 100) / (50 * 0.5)
    expected = 4 * 2 * math.sqrt(10 * math.log(100)) / 25
    assert bounds.sigma_wd(2.0, 10, 0.01, 50, 0.5) == pytest.approx(expected)


def test_sigma_vectorises() -> None:
    eps = np.array([0.01, 0.1, 1.0])
    out = bounds.sigma_wd(1.0, 1000, 1e-3, 1000, eps)
    assert isinstance(out, np.ndarray) and out.shape == (3,)
    np.testing.assert_allclose(out * eps, out[0] * eps[0])
    assert isinstance(bounds.sigma_wd(1.0, 1000, 1e-3, 1000, 0.1), float)


def test_sigma_jayaraman_accountants() -> None:
    # wd_dp (alias ma16): same formula with n -> m n_min
    wd = bounds.sigma_jayaraman(1.0, 1000, 1e-3, 8, 700, 0.1)
    assert wd == pytest.approx(bounds.sigma_wd(1.0, 1000, 1e-3, 5600, 0.1))
    assert bounds.sigma_jayaraman(1.0, 1000, 1e-3, 8, 700, 0.1, accountant="ma16") == wd
    # zcdp_code by hand: ln(1/delta) = 1, eps = 3 -> sqrt(4) - sqrt(1) = 1;
    # sigma = sqrt(2 T) G / (m n_min) = sqrt(4) / 10
    z = bounds.sigma_jayaraman(1.0, 2, math.exp(-1.0), 2, 5, 3.0, accountant="zcdp_code")
    assert z == pytest.approx(0.2)
    # small-eps form (C2): sigma^2 ~ 2 T Delta^2 ln(1/delta) / eps^2 with Delta = 2G/(m n_min)
    z_small = bounds.sigma_jayaraman(1.0, 1000, 1e-3, 4, 100, 1e-4, accountant="zcdp_code")
    approx = math.sqrt(2 * 1000 * (2 / 400) ** 2 * math.log(1e3)) / 1e-4
    assert z_small == pytest.approx(approx, rel=1e-4)
    with pytest.raises(ValueError, match="accountant"):
        bounds.sigma_jayaraman(1.0, 1000, 1e-3, 4, 100, 0.1, accountant="rdp")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="delta"):
        bounds.sigma_wd(1.0, 1000, 1.5, 100, 0.1)


def test_sigma_agrees_with_privacy_calibration() -> None:
    """The closed forms of B0/B9 equal the pipeline's calibration (mechanisms.md C1, C2)."""
    calibration = pytest.importorskip("mpdp.privacy.calibration")
    for eps in (0.01, 0.1, 0.25):
        n, m, n_min = 36177, 8, 1200
        assert calibration.noise_std("ma16", eps, 1e-3, 1000, 2.0 / n) == pytest.approx(
            bounds.sigma_wd(1.0, 1000, 1e-3, n, eps), rel=1e-9
        )
        assert calibration.noise_std(
            "zcdp_code", eps, 1e-3, 1000, 2.0 / (m * n_min)
        ) == pytest.approx(
            bounds.sigma_jayaraman(1.0, 1000, 1e-3, m, n_min, eps, accountant="zcdp_code"), rel=1e-9
        )


# ---------------------------------------------------------------------------- B9 ratios


def test_noise_ratios() -> None:
    assert bounds.noise_ratio(1000, 4, 125) == pytest.approx(2.0)
    # two-group design (E2.2): m/2 parties of size a, m/2 of size u a
    for m, u, a in [(8, 3, 10), (16, 1, 7), (32, 9, 2)]:
        n = (m // 2) * (1 + u) * a
        assert bounds.noise_ratio(n, m, a) == pytest.approx(bounds.two_group_noise_ratio(u))
        sj = bounds.sigma_jayaraman(1.0, 1000, 1e-3, m, a, 0.05)
        assert sj / bounds.sigma_wd(1.0, 1000, 1e-3, n, 0.05) == pytest.approx((1 + u) / 2)
    np.testing.assert_allclose(bounds.two_group_noise_ratio(np.array([1, 3, 9])), [1, 2, 5])


def test_effective_aggregate_std() -> None:
    assert bounds.effective_aggregate_std(2.0, np.full(4, 0.25)) == pytest.approx(1.0)
    assert bounds.effective_aggregate_std(1.0, [0.5, 0.25, 0.25]) == pytest.approx(math.sqrt(0.375))
    out = bounds.effective_aggregate_std(np.array([1.0, 3.0]), [1.0])
    np.testing.assert_allclose(out, [1.0, 3.0])
    with pytest.raises(ValueError, match="weights"):
        bounds.effective_aggregate_std(1.0, [])


# ---------------------------------------------------------------------------- B1, B1′, B2


def test_b1_hand_value() -> None:
    # T=2, lam/L = 1/2, delta0 = 4, p = 3, sigma = 2:
    # (1/2)^2 4 + 3 * 4 / 2 * (1 - 1/4) = 1 + 4.5
    assert bounds.b1_strongly_convex(2, 1.0, 2.0, 4.0, 3, 2.0) == pytest.approx(5.5)


def test_b1_prime_hand_value() -> None:
    # eta lam = 1/4: 0.75^2 * 4 + (2 * 0.25 * 3 * 4 / 2) * (1 - 0.5625) = 2.25 + 1.3125
    assert bounds.b1_prime(2, 0.25, 1.0, 2.0, 4.0, 3, 2.0) == pytest.approx(3.5625)


def test_b1_prime_solves_its_recursion() -> None:
    # e_{t+1} = (1 - eta lam) e_t + L eta^2 p sigma^2 / 2, e_0 = delta0 (the B1′ derivation)
    T, eta, lam, L, d0, p, s = 37, 0.7, 0.05, 1.3, 0.4, 11, 0.3
    e = d0
    for _ in range(T):
        e = (1 - eta * lam) * e + L * eta**2 * p * s**2 / 2
    assert bounds.b1_prime(T, eta, lam, L, d0, p, s) == pytest.approx(e, rel=1e-12)


def test_b1_prime_at_one_over_L_equals_b1() -> None:
    T = np.array([0, 1, 10, 1000, 10**6])
    for lam in (1e-3, 0.1, 0.7):
        L = bounds.smoothness(lam)
        np.testing.assert_allclose(
            bounds.b1_prime(T, 1 / L, lam, L, 0.35, 105, 0.09),
            bounds.b1_strongly_convex(T, lam, L, 0.35, 105, 0.09),
            rtol=1e-12,
        )


def test_b1_prime_spec_example_is_vacuous() -> None:
    # bounds.md B0 warning: Adult n = 36 177, p = 105, eps = 0.1, eta = 0.5, lam = 1e-3,
    # T = 1000 -> B1′ ~ 22, far above ln 2.
    sigma = bounds.sigma_wd(1.0, 1000, 1e-3, 36177, 0.1)
    value = bounds.b1_prime(1000, 0.5, 1e-3, bounds.smoothness(1e-3), 0.35, 105, sigma)
    assert 21.0 < value < 23.0
    assert bounds.is_vacuous(value)


def test_b1_prime_step_condition() -> None:
    L = bounds.smoothness(1e-3)
    assert bounds.step_size_ok(1.0, L)
    assert not bounds.step_size_ok(4.0, L)
    with pytest.raises(ValueError, match="eta <= 1/L"):
        bounds.b1_prime(100, 4.0, 1e-3, L, 0.3, 10, 0.1)
    out = bounds.b1_prime(100, np.array([1.0, 4.0]), 1e-3, L, 0.3, 10, 0.1, strict=False)
    assert np.isfinite(out[0]) and np.isnan(out[1])
    with pytest.raises(ValueError, match="eta <= 1/L"):
        bounds.b2_remark1(100, 4.0, 1e-3, L, 0.3, 10, 0.1)


def test_b1_edge_rates() -> None:
    # lam = L (a quadratic with one curvature) and eta = 1/L: one step reaches the optimum
    assert bounds.b1_strongly_convex(0, 1.0, 1.0, 0.3, 2, 0.0) == pytest.approx(0.3)
    assert bounds.b1_strongly_convex(5, 1.0, 1.0, 0.3, 2, 0.0) == 0.0
    assert bounds.b1_strongly_convex(5, 1.0, 1.0, 0.3, 2, 1.0) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="lam <= L"):
        bounds.b1_strongly_convex(5, 2.0, 1.0, 0.3, 2, 1.0)


def test_b1_prime_lambda_zero_limit() -> None:
    # lam -> 0: delta0 + T L eta^2 p sigma^2 / 2, continuous from lam > 0
    zero = bounds.b1_prime(50, 0.5, 0.0, 0.25, 0.3, 4, 0.2)
    assert zero == pytest.approx(0.3 + 50 * 0.25 * 0.25 * 4 * 0.04 / 2)
    assert bounds.b1_prime(50, 0.5, 1e-12, 0.25, 0.3, 4, 0.2) == pytest.approx(zero, rel=1e-9)
    assert bounds.b1_strongly_convex(50, 0.0, 0.25, 0.3, 4, 0.2) == pytest.approx(
        0.3 + 50 * 4 * 0.04 / (2 * 0.25)
    )


def test_b1_decreases_in_eps_and_is_flat_in_m() -> None:
    eps = np.array([0.01, 0.05, 0.1, 0.25])
    L = bounds.smoothness(1e-3)
    values = bounds.b1_prime(
        1000, 0.5, 1e-3, L, 0.35, 105, bounds.sigma_wd(1, 1000, 1e-3, 36177, eps)
    )
    assert np.all(np.diff(values) < 0)


def test_b1_optimal_T() -> None:
    n, p, eps, delta, lam, d0 = 10**7, 10, 1.0, 1e-3, 0.1, 0.5
    L = bounds.smoothness(lam)
    a = 8 * p * math.log(1 / delta) / (lam * n**2 * eps**2)
    T_star, value = bounds.b1_optimal_T(n, p, eps, delta, lam, L, d0)
    assert T_star == pytest.approx(L / lam * math.log(lam * d0 / (L * a)))
    grid = np.linspace(0, 3 * T_star, 300001)
    relaxed = np.exp(-lam * grid / L) * d0 + a * grid
    assert value == pytest.approx(relaxed.min(), rel=1e-6)
    # the exact B1 at T* with sigma_WD(T*) is below the relaxed value
    sigma = bounds.sigma_wd(1.0, T_star, delta, n, eps)
    assert bounds.b1_strongly_convex(T_star, lam, L, d0, p, sigma) <= value * (1 + 1e-12)
    # lam delta0 <= L a: minimum at T = 0, value delta0
    T0, v0 = bounds.b1_optimal_T(36177, 105, 0.1, 1e-3, 1e-3, bounds.smoothness(1e-3), 0.35)
    assert T0 == 0.0 and v0 == 0.35


def test_b2_hand_value_and_ordering() -> None:
    # 0.75^2 4 + T L eta^2 p sigma^2 / 2 = 2.25 + 2 * 2 * 0.0625 * 3 * 4 / 2
    assert bounds.b2_remark1(2, 0.25, 1.0, 2.0, 4.0, 3, 2.0) == pytest.approx(3.75)
    # paper form at eta = 1/L: (1 - lam/L)^T delta0 + T p sigma^2 / (2L)
    lam, L, T = 1e-3, 0.251, 1000
    assert bounds.b2_remark1(T, 1 / L, lam, L, 0.3, 50, 0.05) == pytest.approx(
        (1 - lam / L) ** T * 0.3 + T * 50 * 0.05**2 / (2 * L)
    )
    T = np.array([1, 10, 100, 1000])
    assert np.all(
        bounds.b2_remark1(T, 0.5, lam, L, 0.3, 50, 0.05)
        >= bounds.b1_prime(T, 0.5, lam, L, 0.3, 50, 0.05) - 1e-15
    )


# ---------------------------------------------------------------------------- B1‴


def test_b1_triple_prime_hand_value_and_small_step_limit() -> None:
    # eta = 1, sigma = 2, h = [0, 1]: 4 / (2 * 2) + 4 / (2 * 1) = 3
    assert bounds.b1_triple_prime(1.0, 2.0, [0.0, 1.0]) == pytest.approx(3.0)
    # eta h << 2: ~ eta p sigma^2 / 4
    h = np.linspace(1e-3, 0.25, 105)
    value = bounds.b1_triple_prime(0.01, 0.09, h)
    assert value == pytest.approx(0.01 * 105 * 0.09**2 / 4, rel=1e-3)
    # vectorised over eta
    out = bounds.b1_triple_prime(np.array([0.01, 0.1]), 0.09, h)
    assert out.shape == (2,) and out[1] > out[0]


def test_b1_triple_prime_finite_T_matches_moment_recursion() -> None:
    rng = np.random.default_rng(0)
    h = rng.uniform(0.0, 0.3, size=12)
    c = rng.normal(size=12)
    eta, sigma, T = 0.8, 0.05, 25
    # E[e_T] and Var[e_T] per eigen-direction of e_{t+1} = (1 - eta h) e_t - eta z_t
    mean, var = c.copy(), np.zeros_like(c)
    for _ in range(T):
        mean = (1 - eta * h) * mean
        var = (1 - eta * h) ** 2 * var + eta**2 * sigma**2
    expected = float(np.sum(h / 2 * (mean**2 + var)))
    got = bounds.b1_triple_prime(eta, sigma, h, T=T, theta0_minus_opt_coords=c)
    assert got == pytest.approx(expected, rel=1e-12)
    # theta_0 = theta*: noise part only, below the stationary floor; converges to it
    noise_only = bounds.b1_triple_prime(eta, sigma, h, T=T)
    stationary = bounds.b1_triple_prime(eta, sigma, h)
    assert noise_only < stationary
    h_pos = h + 0.05
    assert bounds.b1_triple_prime(eta, sigma, h_pos, T=10**5) == pytest.approx(
        bounds.b1_triple_prime(eta, sigma, h_pos), rel=1e-12
    )
    # the spec's "stationary + transient" sum is an upper bound on the exact value
    transient = float(np.sum(h / 2 * (1 - eta * h) ** (2 * T) * c**2))
    assert got <= stationary + transient


def test_b1_triple_prime_validation() -> None:
    with pytest.raises(ValueError, match="eta \\* h_i < 2"):
        bounds.b1_triple_prime(10.0, 1.0, [0.25])
    with pytest.raises(ValueError, match="needs T"):
        bounds.b1_triple_prime(0.1, 1.0, [0.25], theta0_minus_opt_coords=[1.0])
    with pytest.raises(ValueError, match="shape"):
        bounds.b1_triple_prime(0.1, 1.0, [0.25, 0.1], T=3, theta0_minus_opt_coords=[1.0])
    with pytest.raises(ValueError, match="semi-definite"):
        bounds.b1_triple_prime(0.1, 1.0, [-0.5])
    # eigensolver round-off below zero is accepted as 0
    assert bounds.b1_triple_prime(0.1, 1.0, [-1e-17, 0.2]) == pytest.approx(
        bounds.b1_triple_prime(0.1, 1.0, [0.0, 0.2])
    )


# ---------------------------------------------------------------------------- B3


def test_b3_hand_value() -> None:
    # F-gap bound as B1′ = 3.5625; 2 L / lam * 3.5625 + L * 0.5 = 14.25 + 1
    assert bounds.b3_jayaraman(2, 0.25, 1.0, 2.0, 4.0, 3, 2.0, 0.5) == pytest.approx(15.25)


def test_b3_no_strong_convexity_is_nan() -> None:
    assert math.isnan(bounds.b3_jayaraman(10, 0.5, 0.0, 0.25, 0.3, 5, 0.1, 0.0))


def test_b3_noise_term_scales_with_two_group_ratio() -> None:
    # same F-gap inputs, sigma_J = (1+u)/2 sigma_WD -> the stationary noise term scales by ((1+u)/2)^2
    lam, L, T = 1e-3, 0.251, 10**7
    s = bounds.sigma_wd(1.0, 1000, 1e-3, 20000, 0.05)
    base = bounds.b3_jayaraman(T, 0.5, lam, L, 0.0, 50, s, 0.0)
    for u in (2, 5):
        sj = s * bounds.two_group_noise_ratio(u)
        assert bounds.b3_jayaraman(T, 0.5, lam, L, 0.0, 50, sj, 0.0) == pytest.approx(
            base * ((1 + u) / 2) ** 2
        )


# ---------------------------------------------------------------------------- B4 Table 1


def test_claimed_factors_at_most_one() -> None:
    rng = np.random.default_rng(1)
    for _ in range(200):
        m = int(rng.integers(2, 64))
        n_min = int(rng.integers(2, 1000))
        n = m * n_min + int(rng.integers(0, 10**5))
        noise, risk = bounds.claimed_factors(n, m, n_min)
        assert 0 < noise <= 1 and 0 < risk <= 1
    # two-group design: m n_min / n = 2/(1+u)
    noise, _ = bounds.claimed_factors(4 * (1 + 3) * 10, 8, 10)  # m = 8, u = 3, a = 10
    assert noise == pytest.approx((2 / 4) ** 2)
    # equal sizes: same noise; the risk still gains 1/ln n ((11) vs (12))
    assert bounds.claimed_factors(800, 8, 100) == pytest.approx((1.0, 1 / math.log(800)))


def test_table1_explicit() -> None:
    n, m, n_min, p, eps, delta, lam = 36177, 8, 1200, 105, 0.1, 1e-3, 1e-3
    L = 0.25 + lam
    t = bounds.table1(n, m, n_min, p, eps, delta, lam).set_index("method")
    assert list(t.index) == [
        "Pathak et al. 2010",
        "Jayaraman et al. 2018",
        "Zhang et al. 2017",
        "Wang, Ye, Xu 2017",
        "WD-DP",
    ]
    assert {"noise_variance", "excess_risk_bound", "distributed", "nonconvex", "formula"} <= set(
        t.columns
    )
    mn = m * n_min
    log_inv = math.log(1 / delta)
    # noise column: 16 G^2 T ln(1/delta) / (size eps)^2 with T = 1000
    assert t.loc["WD-DP", "noise_variance"] == pytest.approx(16 * 1000 * log_inv / (n * eps) ** 2)
    assert t.loc["Jayaraman et al. 2018", "noise_variance"] == pytest.approx(
        16 * 1000 * log_inv / (mn * eps) ** 2
    )
    # risk: (11) resp. (12) at T = (L/lam) ln(size), c = 16
    wd = 16 * p * L * math.log(n) * log_inv / (2 * lam**2 * n**2 * eps**2)
    assert t.loc["WD-DP", "excess_risk_bound"] == pytest.approx(wd)
    assert t.loc["Wang, Ye, Xu 2017", "excess_risk_bound"] == pytest.approx(wd * math.log(n))
    jay = 16 * p * L * math.log(mn) ** 2 * log_inv / (2 * lam**2 * mn**2 * eps**2)
    assert t.loc["Jayaraman et al. 2018", "excess_risk_bound"] == pytest.approx(jay)
    pathak = (
        (lam + 1)
        / 2
        * ((m - 1) / (n_min * lam) + 2 * p * math.log(p / delta) / (n_min * eps * lam)) ** 2
    )
    assert t.loc["Pathak et al. 2010", "excess_risk_bound"] == pytest.approx(pathak)
    assert math.isnan(t.loc["Pathak et al. 2010", "noise_variance"])
    assert math.isnan(t.loc["Zhang et al. 2017", "excess_risk_bound"])
    # computed ratios equal the paper's claims under explicit constants
    noise_claim, risk_claim = bounds.claimed_factors(n, m, n_min)
    jay_row = t.loc["Jayaraman et al. 2018"]
    assert jay_row["noise_factor"] == pytest.approx(noise_claim)
    assert jay_row["risk_factor"] == pytest.approx(risk_claim)
    assert jay_row["claimed_noise_factor"] == pytest.approx(noise_claim)
    assert t.loc["Wang, Ye, Xu 2017", "risk_factor"] == pytest.approx(1 / math.log(n))
    assert (t["risk_factor"].dropna() <= 1).all() and (t["noise_factor"].dropna() <= 1).all()
    # the paper's columns
    assert list(t["distributed"]) == [True, True, False, False, True]
    assert list(t["nonconvex"]) == [False, False, True, True, True]
    assert t["formula"].str.startswith(r"O\left(").all()
    assert r"\log(n)" in t.loc["WD-DP", "formula"]


def test_table1_O1_constants() -> None:
    n, m, n_min, p, eps, delta, lam = 5000, 4, 500, 20, 0.2, 1e-3, 0.01
    L = 0.25 + lam
    t = bounds.table1(n, m, n_min, p, eps, delta, lam, constants="O1").set_index("method")
    lp = math.log(p / delta)
    pathak = (
        (m - 1) ** 2 * (lam + 1) / (n_min**2 * lam**2)
        + p**2 * (lam + 1) / (n_min**2 * eps**2 * lam**2) * lp**2
        + p * (m - 1) * (lam + 1) / (n_min**2 * eps * lam**2) * lp
    )
    assert t.loc["Pathak et al. 2010", "excess_risk_bound"] == pytest.approx(pathak)
    zhang = (p * math.log(n / delta) * math.log(1 / delta) + eps**2) / eps**2
    assert t.loc["Zhang et al. 2017", "noise_variance"] == pytest.approx(zhang)
    # the O-forms hide different constants (I-8): the ratio misses lam^2 / L
    _, risk_claim = bounds.claimed_factors(n, m, n_min)
    assert t.loc["Jayaraman et al. 2018", "risk_factor"] == pytest.approx(risk_claim * lam**2 / L)
    assert t.loc["Jayaraman et al. 2018", "noise_factor"] == pytest.approx((m * n_min / n) ** 2)
    with pytest.raises(ValueError, match="constants"):
        bounds.table1(n, m, n_min, p, eps, delta, lam, constants="O2")  # type: ignore[arg-type]


def test_is_vacuous() -> None:
    assert bounds.is_vacuous(0.7) and not bounds.is_vacuous(0.69)
    np.testing.assert_array_equal(
        bounds.is_vacuous(np.array([0.1, 1.0, np.nan])), [False, True, False]
    )
    # sharp criterion against the gap of theta = 0
    assert bounds.is_vacuous(0.5, reference=bounds.LOSS_AT_ZERO - 0.3)
