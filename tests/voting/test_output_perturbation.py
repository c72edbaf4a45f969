"""Sensitivities by brute force, the N-L2 noise in d and dK, ε → ∞, and the ε-DP density ratio."""

import math

import numpy as np
import pytest
from scipy import stats

from mpdp.mechanisms import output_perturbation as op
from mpdp.models.batched_erm import fit_logistic_batch, fit_softmax_batch, stack_problems
from mpdp.studies.voting import train
from tests.voting.conftest import unit_rows

LAM = 0.1


def _fit(blocks, targets, multi):
    fit = fit_softmax_batch if multi else fit_logistic_batch
    return fit(*stack_problems(blocks, targets), LAM)


def _max_move(w, w_prime) -> float:
    return float(np.linalg.norm((w - w_prime).reshape(len(w), -1), axis=1).max())


@pytest.fixture
def pool():
    gen = np.random.default_rng(10)
    return gen, unit_rows(gen, 40, 4)


def test_hamm_vote_sensitivity_one_party_flipping_every_vote(pool):
    # M11: changing one party can flip all N votes; the minimiser moves <= 2/λ (tight 1/λ, I-13)
    gen, X = pool
    votes = [np.ones(len(X))] + [gen.integers(0, 2, len(X)).astype(float) for _ in range(29)]
    flipped = [1.0 - v for v in votes] + [gen.integers(0, 2, len(X)).astype(float) for _ in range(30)]
    moves = _max_move(_fit([X] * 60, votes + votes, False), _fit([X] * 60, flipped, False))
    assert moves <= op.sensitivity("hamm_vote", LAM, 10, tight=True) + 1e-9
    assert moves <= op.sensitivity("hamm_vote", LAM, 10)
    assert moves > 0.2 * op.sensitivity("hamm_vote", LAM, 10, tight=True)  # the bound is not vacuous


@pytest.mark.parametrize("M", [3, 10])
def test_hamm_soft_sensitivity_alpha_moves_by_one_over_M(pool, M):
    # M12: one party moves each α_i by at most 1/M -> ||Δw|| <= 2/(Mλ) (tight 1/(Mλ))
    gen, X = pool
    alphas, moved = [], []
    for i in range(40):
        a = np.ones(len(X)) if i == 0 else gen.integers(0, M + 1, len(X)) / M
        step = -np.ones(len(X)) / M if i == 0 else np.where(gen.random(len(X)) < 0.5, -1.0, 1.0) / M
        b = np.clip(a + step, 0, 1)
        alphas.append(a)
        moved.append(b)
    moves = _max_move(_fit([X] * 40, alphas, False), _fit([X] * 40, moved, False))
    assert moves <= op.sensitivity("hamm_soft", LAM, M, tight=True) + 1e-9
    assert moves > 0.2 * op.sensitivity("hamm_soft", LAM, M, tight=True)


@pytest.mark.parametrize("multi", [False, True])
def test_param_avg_sensitivity_one_whole_party_replaced(multi):
    # M6b / B.4: replacing one party's data moves the average by <= 2/(Mλ) (2√2/(Mλ) softmax)
    gen = np.random.default_rng(11)
    M, K, n_j, d = 4, 3, 15, 4
    worst = 0.0
    for _ in range(8):
        blocks = [unit_rows(gen, n_j, d) for _ in range(M)]
        labels = [np.eye(K)[gen.integers(0, K, n_j)] if multi else gen.integers(0, 2, n_j).astype(float)
                  for _ in range(M)]
        W = _fit(blocks, labels, multi).mean(axis=0)
        new_block = [unit_rows(gen, n_j, d)]
        new_label = [np.eye(K)[(np.argmax(labels[0], axis=1) + 1) % K] if multi else 1.0 - labels[0]]
        W2 = _fit(new_block + blocks[1:], new_label + labels[1:], multi).mean(axis=0)
        worst = max(worst, float(np.linalg.norm(W - W2)))
    bound = op.sensitivity("param_avg", LAM, M, n_classes=K if multi else 2)
    assert worst <= bound
    assert bound == pytest.approx((2 * math.sqrt(2) if multi else 2) / (M * LAM))


def test_record_level_sensitivities_replace_one_record_in_smallest_party():
    # M5: ||Δθ̄|| <= 2/(M n_(1) λ); M6a (Pathak) calibrates to 2/(n_(1) λ), M times larger
    gen = np.random.default_rng(12)
    M, d, sizes = 3, 4, [10, 14, 20]
    blocks = [unit_rows(gen, n, d) for n in sizes]
    labels = [gen.integers(0, 2, n).astype(float) for n in sizes]
    base = _fit(blocks, labels, False).mean(axis=0)
    worst = 0.0
    for i in range(sizes[0]):
        b0, l0 = blocks[0].copy(), labels[0].copy()
        b0[i] = -b0[i]
        l0[i] = 1.0 - l0[i]
        worst = max(worst, float(np.linalg.norm(base - _fit([b0, *blocks[1:]], [l0, *labels[1:]], False).mean(0))))
    jay = op.sensitivity("jayaraman_output", LAM, M, n_min=sizes[0])
    assert worst <= jay < op.sensitivity("pathak", LAM, M, n_min=sizes[0])
    assert op.sensitivity("pathak", LAM, M, n_min=sizes[0]) == pytest.approx(M * jay)


def test_multiclass_vote_sensitivities_root_two():
    # M13 B.2: all votes change -> <= √2/λ; B.3: 1/M of α mass moves between two classes -> <= √2/(Mλ)
    gen = np.random.default_rng(13)
    X, K, M = unit_rows(gen, 30, 4), 3, 5
    moves_b2, moves_b3 = 0.0, 0.0
    for _ in range(6):
        v = gen.integers(0, K, len(X))
        w = _fit([X], [np.eye(K)[v]], True)
        w2 = _fit([X], [np.eye(K)[(v + 1) % K]], True)
        moves_b2 = max(moves_b2, _max_move(w, w2))
        counts = gen.multinomial(M, np.ones(K) / K, size=len(X))
        src = np.argmax(counts, axis=1)
        dst = (src + 1) % K
        counts2 = counts.copy()
        counts2[np.arange(len(X)), src] -= 1
        counts2[np.arange(len(X)), dst] += 1
        moves_b3 = max(moves_b3, _max_move(_fit([X], [counts / M], True), _fit([X], [counts2 / M], True)))
    assert moves_b2 <= op.sensitivity("hamm_vote", LAM, M, n_classes=K) == pytest.approx(math.sqrt(2) / LAM)
    assert moves_b3 <= op.sensitivity("hamm_soft", LAM, M, n_classes=K) == pytest.approx(math.sqrt(2) / (M * LAM))


@pytest.mark.parametrize("shape", [(7,), (5, 3)])
def test_noise_norm_is_gamma_and_direction_isotropic(shape):
    # spec §0.4: ||η|| ~ Gamma(dim, 1/β) in dimension d or dK, direction uniform on the sphere
    cal = op.calibrate("hamm_soft", 2.0, int(np.prod(shape)), LAM, 10, n_classes=shape[-1] if len(shape) > 1 else 2)
    gen = np.random.default_rng(14)
    draws = np.stack([op.draw_noise(gen, cal, shape).reshape(-1) for _ in range(4000)])
    dim = draws.shape[1]
    norms = np.linalg.norm(draws, axis=1)
    assert stats.kstest(norms, stats.gamma(a=dim, scale=1 / cal.beta).cdf).pvalue > 1e-3
    unit = draws / norms[:, None]
    assert np.abs(unit.mean(axis=0)).max() < 4 / np.sqrt(4000)
    np.testing.assert_allclose(unit.T @ unit / 4000, np.eye(dim) / dim, atol=0.02)


def test_beta_is_epsilon_over_sensitivity_and_code_faithful_laplace_is_accounted():
    cal = op.calibrate("jayaraman_output", 0.5, 9, LAM, 4, n_min=25)
    assert cal.beta == pytest.approx(0.5 / (2 / (4 * 25 * LAM)))
    assert cal.noise == "l2_laplace" and cal.eps_accounted == 0.5 and cal.privacy_unit == "record"
    lap = op.calibrate("jayaraman_output", 0.5, 9, LAM, 4, n_min=25, code_faithful_laplace=True)
    assert lap.noise == "laplace_per_coordinate" and lap.eps_accounted == pytest.approx(1.5)  # √9 ε (I-9)


def test_worst_case_neighbours_of_hamm_vote_have_log_density_ratio_at_most_eps(pool):
    # Thm 1: outputs w_s + η and w_s' + η with all votes flipped; log p/p' <= ε on every sample
    gen, X = pool
    v = gen.integers(0, 2, len(X)).astype(float)
    w, w2 = _fit([X, X], [v, 1.0 - v], False)
    eps = 0.7
    cal = op.calibrate("hamm_vote", eps, X.shape[1], LAM, 10)
    samples = w + np.stack([op.draw_noise(gen, cal, w.shape) for _ in range(20000)])
    log_ratio = cal.beta * (np.linalg.norm(samples - w2, axis=1) - np.linalg.norm(samples - w, axis=1))
    assert log_ratio.max() <= eps + 1e-12
    assert log_ratio.max() > 0.5 * eps * np.linalg.norm(w - w2) / cal.sensitivity


def test_eps_infinity_every_private_method_equals_its_control(synthetic_dir, voting_cfg):
    # with ε → ∞ (β = ∞) the released model is exactly the noise-free one
    voting_cfg["voting"]["eps_grid"] = [math.inf]
    for table, controls in (("kddcup99", {"hamm_vote": "hamm_vote_np", "hamm_soft": "hamm_soft_np",
                                          "param_avg": "param_avg_np", "pathak": "param_avg_np",
                                          "jayaraman_output": "param_avg_np"}),
                            ("kddcup99_multiclass", {"hamm_vote": "hamm_vote_np", "hamm_soft": "hamm_soft_np",
                                                     "param_avg": "param_avg_np", "pooled_output": "pooled_lr"})):
        rows = [r for r in train.table_rows(voting_cfg, table, synthetic_dir, _NullLog()) if r["experiment"] == "voting"]
        err = {(r["mechanism"], r["M"], r["rep"]): r for r in rows}
        assert {m for m, _, _ in err} >= set(controls)
        for (mech, M, rep), r in err.items():
            if mech in controls:
                assert r["noise_norm"] == 0.0
                assert r["test_error"] == err[(controls[mech], M, rep)]["test_error"]
                if "risk_gap" in r:
                    assert r["risk_gap"] == 0.0


class _NullLog:
    def info(self, *args, **kwargs) -> None:
        pass


def test_b1_pooled_softmax_sensitivity_formula_and_brute_force():
    # M13 B.1: replacing one of N labelled records moves the softmax ERM minimiser by <= 2√2/(Nλ)
    # (the softmax loss is √2-Lipschitz in w for ||x|| <= 1); binary: 2/(Nλ)
    gen = np.random.default_rng(14)
    N, K, d = 25, 3, 4
    assert op.sensitivity("pooled_output", LAM, 7, N=N, n_classes=K) == pytest.approx(2 * math.sqrt(2) / (N * LAM))
    assert op.sensitivity("pooled_output", LAM, 7, N=N) == pytest.approx(2 / (N * LAM))
    assert op.calibrate("pooled_output", 1.0, d * K, LAM, 7, n_classes=K, N=N).privacy_unit == "record"
    with pytest.raises(ValueError, match="pooled records N"):
        op.sensitivity("pooled_output", LAM, 7, n_classes=K)
    worst = 0.0
    for _ in range(6):
        X = unit_rows(gen, N, d) * 2**0.5  # ||x|| = 1 exactly (intercept included)
        y = gen.integers(0, K, N)
        base = _fit([X], [np.eye(K)[y]], True)
        # neighbours: each record replaced by its mirror image with another label, or by a random unit row
        Xs, Ts = [], []
        for i in range(N):
            for x_new, y_new in ((-X[i], (y[i] + 1) % K), (unit_rows(gen, 1, d)[0] * 2**0.5, (y[i] + 2) % K)):
                X2, y2 = X.copy(), y.copy()
                X2[i], y2[i] = x_new, y_new
                Xs.append(X2)
                Ts.append(np.eye(K)[y2])
        worst = max(worst, _max_move(np.broadcast_to(base, (len(Xs), d, K)), _fit(Xs, Ts, True)))
    bound = op.sensitivity("pooled_output", LAM, 7, N=N, n_classes=K)
    assert worst <= bound
    assert worst > 0.2 * bound  # the bound is not vacuous
