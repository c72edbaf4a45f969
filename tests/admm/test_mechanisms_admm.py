"""ADMM, DVP and PVP (mpdp.mechanisms.admm, spec M8–M10) on small synthetic node data."""

import math

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from mpdp.mechanisms import admm as zz
from mpdp.models import newton
from mpdp.privacy.samplers import l2_laplace


def _nodes(P=4, B=60, d=5, seed=0):
    rng = np.random.default_rng(seed)
    nodes = []
    w = rng.normal(size=d)
    for _ in range(P):
        X = rng.normal(size=(B, d))
        X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)
        y = np.where(X @ w + 0.5 * rng.normal(size=B) > 0, 1.0, -1.0)
        nodes.append((X, y))
    return nodes


def _run(nodes, runs, T, topology="ring", noise=True, record=None):
    def rng_for(run):
        alpha = 0 if math.isnan(run.alpha) else int(run.alpha * 1000)
        return np.random.default_rng([run.rep, alpha, zz.MECHANISMS.index(run.mechanism)])

    return zz.run_batch(nodes, topology, runs, T, rng_for, lambda rel: {}, record or [T], noise=noise)


@pytest.mark.parametrize("topology", ["ring", "complete"])
def test_nonprivate_admm_converges_to_the_centralised_minimiser(topology):
    nodes = _nodes()
    rho, C_R = 0.5, 1.0
    X = np.concatenate([x for x, _ in nodes])
    y = np.concatenate([yy for _, yy in nodes])
    B = len(nodes[0][1])
    # CR-ERM (eq. 1) with equal B_p: (C^R/B) Σ l + (ρ/2)‖f‖²  ⇔  sklearn C = C^R/(Bρ)
    ref = LogisticRegression(C=C_R / (B * rho), fit_intercept=False, tol=1e-12, max_iter=10_000).fit(X, y)
    res = _run(nodes, [zz.ADMMRun("admm", rho, 0.5, math.nan, 0)], 400, topology)
    for f in res.released:
        np.testing.assert_allclose(f[:, 0], ref.coef_[0], atol=1e-6)


def test_dvp_calibration_matches_direct_evaluation_of_both_cases():
    c1, C_R = 0.25, 1.0
    for alpha, B, kap in [(1.0, 100, 0.5), (0.01, 10, 0.01), (0.001, 50, 0.2), (3.0, 7235, 0.2), (0.05, 5, 0.05)]:
        cal = zz.dvp_calibration(alpha, B, kap, C_R, c1)
        first = alpha - 2 * math.log(1 + c1 * C_R / (B * kap))
        if first > 0:
            expected = (first, 0.0)
            assert bool(cal.phi_zero)
        else:
            expected = (alpha / 2, c1 * C_R / (B * (math.exp(alpha / 4) - 1)) - kap)
            assert not bool(cal.phi_zero)
        assert float(cal.alpha_prime) == pytest.approx(expected[0], rel=1e-12)
        assert float(cal.phi) == pytest.approx(expected[1], rel=1e-12, abs=1e-15)
        assert float(cal.zeta) == pytest.approx(expected[0] / 2, rel=1e-12)
    # both branches were exercised above
    assert not bool(zz.dvp_calibration(0.01, 10, 0.01).phi_zero)
    assert bool(zz.dvp_calibration(1.0, 100, 0.5).phi_zero)


def test_second_case_restores_the_jacobian_bound():
    # with Φ from case 2, 2 ln(1 + c1 C/(B(κ+Φ))) = α/2 exactly, so α′ + that = α (spec M9 [DER])
    alpha, B, kap = 0.01, 10, 0.01
    cal = zz.dvp_calibration(alpha, B, kap)
    assert 2 * math.log(1 + 0.25 / (B * (kap + float(cal.phi)))) + float(cal.alpha_prime) == pytest.approx(alpha)


def test_pvp_noise_scale_formula():
    B, rho, P, eta, V, alpha, C_R = 7235, 1e-3, 5, 0.1, 2, 0.3, 1.0
    kap = zz.kappa(rho, P, eta, V)
    assert float(kap) == pytest.approx(rho / P + 2 * eta * V)
    assert float(zz.pvp_sensitivity(B, kap, C_R)) == pytest.approx(2 * C_R / (B * (rho / P + 2 * eta * V)))
    assert float(zz.pvp_zeta(alpha, B, kap, C_R)) == pytest.approx(B * (rho / P + 2 * eta * V) * alpha / (2 * C_R))
    assert float(zz.expected_noise_norm(105, 2.0)) == pytest.approx(52.5)


def test_without_noise_dvp_and_pvp_reduce_to_admm_exactly():
    nodes = _nodes(seed=1)
    runs = [zz.ADMMRun(m, 0.1, 0.3, math.nan if m == "admm" else 0.5, 0) for m in zz.MECHANISMS]
    res = _run(nodes, runs, 15, noise=False)
    for f in res.released:
        np.testing.assert_array_equal(f[:, 1], f[:, 0])
        np.testing.assert_array_equal(f[:, 2], f[:, 0])
    with_noise = _run(nodes, runs, 15)
    assert not np.allclose(with_noise.released[0][:, 1], with_noise.released[0][:, 0])


def test_noise_drawn_matches_the_calibration_and_runs_do_not_depend_on_the_batch():
    nodes = _nodes(P=5, B=40, d=4, seed=2)
    runs = [zz.ADMMRun("dvp", 0.1, 0.2, 2.0, r) for r in range(40)] + [zz.ADMMRun("pvp", 0.1, 0.2, 2.0, 0)]
    res = _run(nodes, runs, 3, record=[1, 2, 3])
    d, B = 4, 40
    cal = zz.dvp_calibration(2.0, B, zz.kappa(0.1, 5, 0.2, 2))
    # mean over 40 runs × 5 nodes × 3 iterations of ‖ε‖ ≈ d/ζ (Gamma(d, 1/ζ) norm)
    assert res.noise_norm[:, :40].mean() == pytest.approx(d / float(cal.zeta), rel=0.1)
    assert res.zeta[0] == pytest.approx(float(cal.zeta))
    assert res.sensitivity[0] == 2.0
    assert res.sensitivity[40] == pytest.approx(float(zz.pvp_sensitivity(B, zz.kappa(0.1, 5, 0.2, 2))))
    alone = _run(nodes, [runs[3]], 3, record=[1, 2, 3])
    np.testing.assert_allclose(alone.released[2][:, 0], res.released[2][:, 3], atol=1e-10)


def test_every_primal_step_is_exact():
    """The released DVP iterate satisfies the KKT condition of its node objective (M9 step 5)."""
    nodes = _nodes(P=3, B=30, d=3, seed=4)
    run = zz.ADMMRun("dvp", 0.2, 0.4, 1.0, 0)
    res = zz.run_batch(nodes, "complete", [run], 1, lambda r: np.random.default_rng(7), lambda rel: {}, [1])
    # redo step t = 0 by hand: f(0) = λ(0) = 0, so b = (C^R/B) ε and q = κ + Φ
    kap = float(zz.kappa(0.2, 3, 0.4, 2))
    cal = zz.dvp_calibration(1.0, 30, kap)
    eps = l2_laplace(np.random.default_rng(7), np.full(3, float(cal.zeta)), 3, size=3)
    for p, (X, y) in enumerate(nodes):
        g = newton.gradient(X, y, res.released[p], 1 / 30, kap + float(cal.phi), (eps[p] / 30)[:, None])
        assert np.linalg.norm(g) <= 1e-9


def test_pvp_conditional_sensitivity_solves_the_hidden_state_recursion():
    """d(1) = Δ_p, d(t+1) = Δ_p + r·d(t) (spec I-20) in closed form, and its supremum."""
    from mpdp.mechanisms import admm

    r = admm.pvp_hidden_gain(rho=1.0, P=5, penalty=0.5, degree=2)
    assert 0 < r < 0.5
    assert np.isclose(r, 0.5 * 2 / (1.0 / 5 + 2 * 0.5 * 2))
    d, delta = 0.0, 0.3
    for t in range(1, 40):
        d = delta + r * d
        assert np.isclose(admm.pvp_conditional_sensitivity(delta, r, t), d, rtol=1e-12)
    assert np.isclose(admm.pvp_conditional_sensitivity(delta, r), delta / (1 - r))
    assert np.isclose(admm.pvp_conditional_sensitivity(delta, 0.0, 5), delta)
    assert np.isclose(admm.pvp_real_epsilon(0.1, r, 1), 0.1)
    assert np.isclose(admm.pvp_real_epsilon(0.1, r, 10), 0.1 * (1 - r**10) / (1 - r))


def test_pvp_hidden_gain_matches_the_minimiser_of_a_quadratic_node_problem():
    """With a quadratic loss the (18)-minimiser is linear in the hidden f_p(t): its slope is r."""
    from mpdp.mechanisms import admm

    rho, P, eta, V, a = 2.0, 5, 0.7, 2, 0.3  # loss a/2‖f‖²: curvature a adds to κ_p
    kap = rho / P + 2 * eta * V

    def minimiser(hidden: float, neighbour: float = 0.4) -> float:
        # d/df [a/2 f² + ρ/(2P) f² + η V (f − ½(hidden + neighbour))²] = 0
        return eta * V * (hidden + neighbour) / (a + kap)

    slope = minimiser(1.0) - minimiser(0.0)
    r = float(admm.pvp_hidden_gain(rho, P, eta, V))
    assert slope <= r + 1e-15  # the loss's curvature only shrinks the gain
    assert np.isclose(eta * V * 1.0 / kap, r)


def test_pvp_final_dvp_step_bound_matches_the_kkt_noise_shift():
    """The noise mapping to one output of PVP's final DVP step moves by at most 2(1 − r^T)/(1 − r)
    between neighbouring data sets with hidden states d(T−1) apart (spec I-20), computed
    directly from the KKT residual of the node objective (M9 step 5)."""
    rng = np.random.default_rng(3)
    B, d, C_R, rho, P, eta, V, T = 20, 3, 1.0, 0.3, 5, 0.4, 2, 7
    kap = float(zz.kappa(rho, P, eta, V))
    r = float(zz.pvp_hidden_gain(rho, P, eta, V))
    alpha = 0.5
    cal = zz.dvp_calibration(alpha, B, kap, C_R)
    q = kap + float(cal.phi)
    dist = float(zz.pvp_conditional_sensitivity(zz.pvp_sensitivity(B, kap, C_R), r, T - 1))
    X = rng.normal(size=(B, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(rng.random(B) < 0.5, 1.0, -1.0)
    f = rng.normal(size=(d, 1))
    public = rng.normal(size=(d, 1))  # 2λ − ηΣ_j f̃_j: equal in both worlds
    h = rng.normal(size=(d, 1))

    def noise(Xs, ys, hidden):
        # KKT: ∇[(C/B)Σl + q/2‖f‖² + (public − ηV hidden)ᵀf] + (C/B) ε = 0
        return -(B / C_R) * newton.gradient(Xs, ys, f, C_R / B, q, public - eta * V * hidden)

    base = noise(X, y, h)
    worst = 0.0
    for _ in range(200):
        u = rng.normal(size=(d, 1))
        u /= np.linalg.norm(u)
        X2, y2 = X.copy(), y.copy()
        X2[0] = -u[:, 0] if rng.random() < 0.5 else rng.normal(size=d) / np.sqrt(d)
        y2[0] = -y[0]
        worst = max(worst, float(np.linalg.norm(base - noise(X2, y2, h + dist * u))))
    bound = 2 * (1 - r**T) / (1 - r)
    assert worst <= bound + 1e-12
    # the hidden-state part alone is reached exactly (same data, shift along any direction)
    u = np.ones((d, 1)) / np.sqrt(d)
    hidden_only = float(np.linalg.norm(base - noise(X, y, h + dist * u)))
    assert hidden_only == pytest.approx(bound - 2, rel=1e-12)
    # ε = Jacobian part (α − α′) + ζ · sup‖ε − ε′‖, ζ = α′/2
    real = float(zz.pvp_final_real_epsilon(alpha, cal.alpha_prime, r, T))
    assert real == pytest.approx(alpha - float(cal.alpha_prime) + float(cal.alpha_prime) / 2 * bound, rel=1e-12)
    assert real > alpha
    assert float(zz.pvp_final_real_epsilon(alpha, cal.alpha_prime, r, 1)) == pytest.approx(alpha)
    eps = zz.pvp_transcript_epsilons(alpha, float(cal.alpha_prime), r, T)
    assert eps.shape == (T,) and eps[0] == pytest.approx(alpha) and eps[-1] == pytest.approx(real)
    np.testing.assert_allclose(eps[:-1], zz.pvp_real_epsilon(alpha, r, np.arange(1, T)))
