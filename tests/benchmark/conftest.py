"""A small synthetic benchmark data set and config (unit tests of the benchmark study)."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

from mpdp import config
from mpdp.studies.benchmark.plan import BenchmarkData

ROOT = Path(__file__).resolve().parents[2]


def unit_rows(gen: np.random.Generator, n: int, d: int) -> np.ndarray:
    """Rows with ‖x‖ ≤ 1 and an intercept coordinate (spec E1.3 form)."""
    Z = gen.normal(size=(n, d - 1))
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    return np.hstack([Z, np.ones((n, 1))]) / np.sqrt(2.0)


@pytest.fixture(scope="session")
def bench_data() -> BenchmarkData:
    """400 private, 60 auxiliary and 200 test rows of a noisy linear problem in d = 5."""
    gen = np.random.default_rng(7)
    w = np.array([2.0, -1.5, 1.0, 0.5, 0.2])

    def labelled(n: int) -> tuple[np.ndarray, np.ndarray]:
        X = unit_rows(gen, n, 5)
        y = np.where(X @ w + 0.3 * gen.normal(size=n) >= 0, 1.0, -1.0)
        return X, y

    X, y = labelled(400)
    X_aux, _ = labelled(60)
    X_test, y_test = labelled(200)
    return BenchmarkData(X, y, X_aux, X_test, y_test, 400)


@pytest.fixture()
def bench_cfg() -> dict:
    """The smoke profile's validated config with a small benchmark grid."""
    return small_cfg()


@pytest.fixture(scope="session")
def make_small_cfg():
    """:func:`small_cfg` itself, for fixtures of a wider scope than ``bench_cfg``."""
    return small_cfg


def small_cfg() -> dict:
    """The smoke profile's validated config with a small benchmark grid (a fresh copy)."""
    cfg = copy.deepcopy(config.load(ROOT / "config" / "smoke.yaml"))
    b = cfg["benchmark"]
    b.update({"eps_grid": [0.5, 4.0], "m_grid": [2, 4], "u_grid": [1, 3], "reps": 2, "tune_seeds": 1,
              "min_party_size": 10, "reference": {"m": 2, "u": 1, "epsilon": 1.0}})
    b["gradient"].update({"T": 20, "eta_candidates": [1.0, 2.0]})
    b["output"]["lambda_candidates"] = [0.01, 0.1]
    b["admm"].update({"T": 4, "penalty_candidates": [0.1, 1.0]})
    return cfg
