"""Multi-party DP-SGD trainer (mpdp.mechanisms.dpsgd): ledger, reproducibility, hand-written loop."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mpdp.mechanisms import dpsgd
from mpdp.privacy import subsampled_gaussian as sg
from mpdp.seeding import rng

ROOT = 7
KEY = ("test", "dpsgd")


def _data(n: int = 60, p: int = 4) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    gen = np.random.default_rng(0)
    X = gen.normal(size=(n, p))
    X[:, -1] = 1.0  # intercept
    X /= np.linalg.norm(X, axis=1, keepdims=True) * np.array([1.0] * 30 + [0.5] * (n - 30))[:, None]
    y = np.where(gen.random(n) < 0.5, -1.0, 1.0)
    parties = [np.arange(0, 10), np.arange(10, 35), np.arange(35, n)]
    return X, y, parties


def _hand_loop(X, y, parties, eta, seed, sigma, q, T, G, lam, theta0):
    """DP-SGD for one run written record by record (the module docstring's steps 1-4)."""
    n = sum(len(i) for i in parties)
    samplers = [rng(ROOT, *KEY, "sample", seed, j) for j in range(len(parties))]
    noise = rng(ROOT, *KEY, "noise", seed)
    theta = theta0.copy()
    for _ in range(T):
        total = np.zeros_like(theta)
        for j, idx in enumerate(parties):
            u = samplers[j].random(len(idx))
            for i, draw in zip(idx, u, strict=True):
                if draw < q:
                    g = -y[i] * X[i] / (1 + math.exp(y[i] * (theta @ X[i])))
                    norm = np.linalg.norm(g)
                    total += g * min(1.0, G / norm) if norm > 0 else g
        z = noise.standard_normal(theta.size) * sigma * G
        theta = theta - eta * ((total + z) / (q * n) + lam * theta)
    return theta


@pytest.mark.parametrize("G", [1.0, 0.3])  # 0.3 clips most records
def test_a_run_equals_the_hand_written_loop(G):
    X, y, parties = _data()
    theta0 = np.full(X.shape[1], 0.1)
    args = {"sigma": 0.8, "q": 0.3, "T": 15, "G": G, "lam": 1e-2}
    thetas = dpsgd.train(X, y, parties, etas=[0.5, 2.0], seeds=[3, 11], theta0=theta0,
                         root_seed=ROOT, key=KEY, **args)
    for col, (seed, eta) in enumerate([(3, 0.5), (3, 2.0), (11, 0.5), (11, 2.0)]):
        expected = _hand_loop(X, y, parties, eta, seed, theta0=theta0, **args)
        np.testing.assert_allclose(thetas[:, col], expected, rtol=1e-12, atol=1e-14)


def test_bit_reproducible_and_seeds_matter():
    X, y, parties = _data()
    kwargs = {"etas": [1.0], "seeds": [0, 1], "sigma": 1.0, "q": 0.2, "T": 10, "G": 1.0,
              "lam": 1e-3, "theta0": np.zeros(X.shape[1]), "root_seed": ROOT, "key": KEY}
    a = dpsgd.train(X, y, parties, **kwargs)
    b = dpsgd.train(X, y, parties, **kwargs)
    assert np.array_equal(a, b)
    assert not np.allclose(a[:, 0], a[:, 1])
    c = dpsgd.train(X, y, parties, **(kwargs | {"key": ("other",)}))
    assert not np.allclose(a, c)
    # a seed's run does not depend on the other seeds in the batch
    alone = dpsgd.train(X, y, parties, **(kwargs | {"seeds": [1]}))
    np.testing.assert_allclose(alone[:, 0], a[:, 1], rtol=1e-12, atol=1e-15)


def test_noise_free_full_batch_is_gradient_descent_on_the_objective():
    """σ = 0, q = 1, no clipping: θ ← θ − η ∇L_D(θ), the benchmark's objective (spec §0.2)."""
    from mpdp.models import logistic

    X, y, parties = _data()
    theta = np.full(X.shape[1], 0.2)
    out = dpsgd.train(X, y, parties, etas=[0.7], seeds=[0], sigma=0.0, q=1.0, T=5, G=10.0,
                      lam=0.05, theta0=theta, root_seed=ROOT, key=KEY)
    for _ in range(5):
        theta = theta - 0.7 * logistic.gradient(theta, X, y, 0.05)
    np.testing.assert_allclose(out[:, 0], theta, rtol=1e-12)


def test_ledger_is_calibrated_to_the_target():
    led = dpsgd.ledger(1.0, 1e-5, 0.05, 100, 2.0)
    assert led["eps_accounted"] <= 1.0
    assert led["eps_accounted"] == pytest.approx(1.0, abs=1e-3)
    assert led["sigma"] == sg.calibrate_noise_multiplier(1.0, 0.05, 100, 1e-5)
    assert led["noise_std"] == pytest.approx(2.0 * led["sigma"])
    assert {"q", "T", "G", "delta", "accountant", "relation", "noise_placement"} <= set(led)


def test_train_batch_columns_and_ledger():
    X, y, parties = _data()
    res = dpsgd.train_batch(X, y, parties, etas=[0.5, 1.0, 2.0], seeds=[4, 5], epsilon=3.0,
                            delta=1e-5, q=0.25, T=8, G=1.0, lam=1e-3,
                            theta0=np.zeros((X.shape[1], 2)), root_seed=ROOT, key=KEY)
    assert res.thetas.shape == (X.shape[1], 6)
    assert res.seeds.tolist() == [4, 4, 4, 5, 5, 5]
    assert res.etas.tolist() == [0.5, 1.0, 2.0] * 2
    direct = dpsgd.train(X, y, parties, etas=[0.5, 1.0, 2.0], seeds=[4, 5],
                         sigma=res.ledger["sigma"], q=0.25, T=8, G=1.0, lam=1e-3,
                         theta0=np.zeros(X.shape[1]), root_seed=ROOT, key=KEY)
    assert np.array_equal(res.thetas, direct)


def test_records_are_included_at_rate_q():
    """σ = 0, one step from θ = 0: θ₁ = η·0.5·|batch|/(q n) with every x = e₁, y = +1."""
    n, q, eta = 10_000, 0.1, 1.0
    X, y = np.ones((n, 1)), np.ones(n)
    parties = [np.arange(0, 3000), np.arange(3000, n)]
    theta = dpsgd.train(X, y, parties, etas=[eta], seeds=range(20), sigma=0.0, q=q, T=1, G=1.0,
                        lam=0.0, theta0=np.zeros(1), root_seed=ROOT, key=KEY)
    batch = theta[0] * 2 * q * n / eta
    assert np.allclose(batch, np.round(batch))  # whole records
    sd = math.sqrt(n * q * (1 - q))
    assert abs(batch.mean() - n * q) < 4 * sd / math.sqrt(20)
    assert 0.5 * sd < batch.std(ddof=1) < 1.5 * sd


def test_aggregate_noise_has_std_sigma_g():
    """X = 0 (no gradient): θ₁ = −η z/(q n), z ~ N(0, σ²G²) once on the aggregate, any m."""
    n, q, eta, sigma, G = 40, 0.5, 1.0, 1.3, 2.0
    parties = np.array_split(np.arange(n), 4)
    theta = dpsgd.train(np.zeros((n, 3)), np.ones(n), parties, etas=[eta], seeds=range(2000),
                        sigma=sigma, q=q, T=1, G=G, lam=0.0, theta0=np.zeros(3), root_seed=ROOT,
                        key=KEY)
    z = -theta * q * n / eta
    assert z.std() == pytest.approx(sigma * G, rel=0.03)
    assert abs(z.mean()) < 4 * sigma * G / math.sqrt(z.size)


@pytest.mark.parametrize(("change", "word"), [({"etas": []}, "learning rates"),
                                              ({"etas": [-1.0]}, "learning rates"),
                                              ({"theta0": np.zeros(7)}, "theta0")])
def test_bad_inputs_raise_one_line_errors(change, word):
    X, y, parties = _data()
    kwargs = {"etas": [1.0], "seeds": [0], "sigma": 1.0, "q": 0.2, "T": 2, "G": 1.0, "lam": 0.0,
              "theta0": np.zeros(X.shape[1]), "root_seed": ROOT, "key": KEY} | change
    with pytest.raises(ValueError, match=word):
        dpsgd.train(X, y, parties, **kwargs)
