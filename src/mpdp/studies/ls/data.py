"""Data of the least-squares study (spec experiments.md E6).

LS-1 and LS-2 are **synthetic by design** (E6: the write-up has no experiments, so these are
verification experiments with known structure), not stand-ins for real data. LS-3 uses a real
regression set, scikit-learn's bundled diabetes data (442 × 10, shipped with scikit-learn, no
network). Every set is bounded as spec M14 needs: ‖x‖ ≤ 1 and |y| ≤ 1.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mpdp import seeding


class LSData(NamedTuple):
    """A bounded regression data set and how it was made."""

    name: str  # synthetic_d1 | synthetic_d10 | diabetes
    X: np.ndarray  # (n, d), rows with ‖x‖ ≤ 1
    y: np.ndarray  # (n,), |y| ≤ 1
    synthetic: bool
    description: str


def synthetic_d1(root_seed: int, n: int, slope: float, noise: float) -> LSData:
    """LS-1 (E6): xᵢ ~ U[−1, 1], yᵢ = clip(slope·xᵢ + noise·ξᵢ, [−1, 1]), ξ ~ N(0, 1)."""
    rng = seeding.rng(root_seed, "ls", "ls_1", "data")
    x = rng.uniform(-1.0, 1.0, size=n)
    y = np.clip(slope * x + noise * rng.standard_normal(n), -1.0, 1.0)
    return LSData(
        "synthetic_d1", x[:, None], y, True,
        f"synthetic d = 1 (E6 LS-1): x ~ U[-1, 1], y = clip({slope} x + {noise} ξ, [-1, 1]), n = {n}",
    )


def synthetic_dd(root_seed: int, n: int, d: int, theta_norm: float, noise: float) -> LSData:
    """LS-2 (E6, [REC] law): gᵢ ~ N(0, I/d), xᵢ = gᵢ/max(1, ‖gᵢ‖) (so ‖x‖ ≤ 1), a fixed
    θ₀ uniform on the sphere of radius ``theta_norm``, yᵢ = clip(θ₀ᵀxᵢ + noise·ξᵢ, [−1, 1])."""
    rng = seeding.rng(root_seed, "ls", "ls_2", "data")
    g = rng.standard_normal((n, d)) / np.sqrt(d)
    X = g / np.maximum(1.0, np.linalg.norm(g, axis=1))[:, None]
    direction = rng.standard_normal(d)
    theta0 = theta_norm * direction / np.linalg.norm(direction)
    y = np.clip(X @ theta0 + noise * rng.standard_normal(n), -1.0, 1.0)
    return LSData(
        f"synthetic_d{d}", X, y, True,
        f"synthetic d = {d} (E6 LS-2): x = g/max(1, |g|), g ~ N(0, I/{d}); "
        f"y = clip(θ₀ᵀx + {noise} ξ, [-1, 1]), |θ₀| = {theta_norm}, n = {n}",
    )


def diabetes(root_seed: int = 0, max_records: int | None = None) -> LSData:
    """LS-3: scikit-learn's bundled diabetes set (442 × 10), bounded [REC]: the features (already
    centred by scikit-learn) are divided by the largest row norm, the target is centred and
    divided by its largest absolute value. No intercept is needed (both sides centred). The
    scaling uses the data's own extremes, treated as public (as everywhere in this pipeline)."""
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    subsampled = max_records is not None and max_records < len(y)
    if subsampled:  # seeded subsample (CI profile); every output then says "subsampled"
        keep = np.sort(seeding.rng(root_seed, "ls", "ls_3", "subsample").permutation(len(y))[:max_records])
        X, y = X[keep], y[keep]
    X = X - X.mean(axis=0)
    X = X / np.linalg.norm(X, axis=1).max()
    y = y - y.mean()
    y = y / np.abs(y).max()
    return LSData(
        "diabetes_subsampled" if subsampled else "diabetes", X, y, False,
        f"scikit-learn diabetes ({'subsampled to ' + str(len(y)) + ' of 442' if subsampled else '442'}"
        " × 10, real data): X/max‖x‖, (y − ȳ)/max|y − ȳ|",
    )
