"""Small random logistic-regression problems with ||x|| <= 1 (unit tests only)."""

import numpy as np
import pytest


def make_problem(n: int = 240, p: int = 6, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    gen = np.random.default_rng(seed)
    Z = gen.normal(size=(n, p - 1))
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    X = np.hstack([Z, np.ones((n, 1))]) / np.sqrt(2.0)
    w = gen.normal(size=p) * 3
    y = np.where(gen.random(n) < 1 / (1 + np.exp(-X @ w)), 1.0, -1.0)
    return X, y


@pytest.fixture
def problem():
    return make_problem()
