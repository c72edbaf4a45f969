"""Tiny synthetic problems and a synthetic prepared data set for the voting study (unit tests only)."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

from mpdp import config
from mpdp.io import save_npy, write_json

ROOT = Path(__file__).resolve().parents[2]


def unit_rows(gen: np.random.Generator, n: int, d: int) -> np.ndarray:
    """Rows with ||x|| = 1 and a constant intercept coordinate (spec E1.3 form)."""
    Z = gen.normal(size=(n, d - 1))
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    return np.hstack([Z, np.ones((n, 1))]) / np.sqrt(2.0)


def write_synthetic(out: Path, n_train: int = 960, n_test: int = 240, d: int = 6, K: int = 3, seed: int = 0) -> Path:
    """A prepared data set in the data layer's format, with a K-class label; synthetic."""
    gen = np.random.default_rng(seed)
    centres = gen.normal(size=(K, d - 1)) * 2
    arrays = {}
    for split, n in (("train", n_train), ("test", n_test)):
        cls = gen.integers(0, K, n).astype(np.int8)
        Z = centres[cls] + gen.normal(size=(n, d - 1))
        Z /= np.linalg.norm(Z, axis=1, keepdims=True)
        arrays[f"X_{split}"] = np.hstack([Z, np.ones((n, 1))]) / np.sqrt(2.0)
        arrays[f"y_{split}"] = np.where(cls == 0, -1, 1).astype(np.int8)
        arrays[f"y_class_{split}"] = cls
    for name, arr in arrays.items():
        save_npy(out / f"{name}.npy", arr)
    write_json({"dataset": "kddcup99", "n_train": n_train, "n_test": n_test, "n_features": d,
                "classes": [f"c{k}" for k in range(K)], "synthetic": True}, out / "card.json")
    return out


@pytest.fixture(scope="session")
def synthetic_dir(tmp_path_factory) -> Path:
    """960 training and 240 test rows: the 80/20 split of ``split.test_frac`` = 0.2, so that each
    repetition can draw its own split of the pool (issue 60)."""
    return write_synthetic(tmp_path_factory.mktemp("voting_data"))


@pytest.fixture(scope="session")
def fixed_split_dir(tmp_path_factory) -> Path:
    """The 900/300 synthetic set the recorded fixed-split tables were computed on (read under
    ``split.per_repetition: false``, which never redraws the split)."""
    return write_synthetic(tmp_path_factory.mktemp("voting_fixed_split"), n_train=900, n_test=300)


@pytest.fixture
def voting_cfg() -> dict:
    cfg = config.load(ROOT / "config" / "smoke.yaml")
    cfg = copy.deepcopy(cfg)
    cfg["voting"].update({"M_grid": [5, 10], "eps_grid": [0.5, 5.0], "reps": 2, "lambda": 0.05})
    return cfg
