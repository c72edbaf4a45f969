"""Multi-party DP-SGD with Poisson subsampling (Abadi et al. 2016; spec E10 common footing).

The standard practice baseline of the cross-paper benchmark, on the benchmark's objective
L_D(θ) = (1/n) Σ_i ℓ(θ; x_i, y_i) + (λ/2)‖θ‖² (spec §0.2: logistic loss, labels ±1, the
intercept a constant feature of x, regularised like every coordinate; records in the rows of
X, ‖x_i‖ ≤ 1). Round t = 0 … T−1, every party j on its own records D_j:

1. samples each of its records independently with probability ``q`` (Poisson sampling);
2. computes the per-record gradients of ℓ at the common model θ_t and clips each to ℓ2 norm G
   (g ↦ g · min(1, G/‖g‖));
3. the parties' clipped sums are added up, and **one** noise term N(0, σ² G² I) is added to the
   aggregate S_t = Σ_j Σ_{i ∈ B_j} clip(g_i); only S_t + z_t is released;
4. everyone updates θ_{t+1} = θ_t − η ((S_t + z_t)/(q n) + λ θ_t).

Noise placement (step 3). The benchmark's per-round gradient rows (WYX, WD-DP per round,
Jayaraman per round; spec M3.2, M4.2, E10 "What must be private") add one Gaussian term to the
aggregate, computed under secure aggregation or by a trusted aggregator; values inside it are
not released. DP-SGD is placed on the same footing: the released transcript is the T noisy
aggregates, so one N(0, σ²G²I) per round on the aggregate is what the accounting needs
(equivalently each party adds N(0, σ²G²/m I) inside secure aggregation; they sum to it). Were
each party's noisy sum released on its own, each party would need the full N(0, σ²G²I) on its
own sum (m times the variance in the aggregate) — not this mechanism.

Privacy. Under replace-one neighbours (spec E10) the union of the parties' Poisson samples is a
Poisson sample of the pooled data at rate q, each record contributes at most G in norm, so the
transcript is T adaptive rounds of the Poisson-subsampled Gaussian with noise multiplier σ:
ε from :func:`mpdp.privacy.subsampled_gaussian.epsilon`, σ from
:func:`~mpdp.privacy.subsampled_gaussian.calibrate_noise_multiplier`. The divisor q n uses the
public total size n, never the realised batch size (which would be data-dependent); λθ_t does
not depend on the data. θ_T and all θ_t are post-processing of the released aggregates.

Batching. Runs are the columns of a (p, K) matrix: ``seeds × etas`` (column ``s·len(etas) + e``).
All learning rates of one seed share that seed's sampling and noise streams (common random
numbers; each run on its own is exactly the mechanism above). Streams, by
:func:`mpdp.seeding.rng`: ``(*key, "sample", seed, j)`` for party j's inclusion draws (one
uniform per record per round, included iff < q) and ``(*key, "noise", seed)`` for z_t.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import expit

from mpdp.privacy import subsampled_gaussian as sg
from mpdp.privacy.calibration import require_positive, require_steps
from mpdp.seeding import KeyPart, rng


@dataclass(frozen=True)
class DpsgdResult:
    """Final parameters of a batch of runs and the ledger they share."""

    thetas: np.ndarray  # (p, K): column s·len(etas) + e is (seeds[s], etas[e])
    seeds: np.ndarray  # (K,) the seed of each column
    etas: np.ndarray  # (K,) the learning rate of each column
    ledger: dict[str, Any]


def ledger(epsilon: float, delta: float, q: float, T: int, G: float) -> dict[str, Any]:
    """Calibration at target (ε, δ) and what it accounts (spec E10 "Calibration").

    σ = the smallest noise multiplier with replace-one PLD ε ≤ target
    (:func:`~mpdp.privacy.subsampled_gaussian.calibrate_noise_multiplier`); ``eps_accounted`` is
    that σ's ε recomputed by :func:`~mpdp.privacy.subsampled_gaussian.epsilon`; the noise std
    of the aggregate is σ·G.
    """
    G = require_positive("G", G)
    sigma = sg.calibrate_noise_multiplier(epsilon, q, T, delta)
    return {"sigma": sigma, "noise_std": sigma * G, "q": float(q), "T": int(T), "G": G,
            "eps_target": float(epsilon), "eps_accounted": sg.epsilon(q, sigma, T, delta),
            "delta": float(delta), "accountant": sg.ACCOUNTANT, "relation": sg.RELATION,
            "noise_placement": "aggregate", "scope": "aggregate"}


def clipped_gradient_sum(X: np.ndarray, y: np.ndarray, thetas: np.ndarray, included: np.ndarray,
                         G: float) -> np.ndarray:
    """Σ over included records of the per-record logistic gradient clipped to norm G, per column.

    ``X`` (n, p), ``y`` (n,) in {−1, +1}, ``thetas`` (p, K), ``included`` (n, K) boolean.
    ∇ℓ(θ; x, y) = c·x with c = −y·expit(−y θᵀx), so its norm is |c|·‖x‖ and clipping scales c.
    """
    coef = -y[:, None] * expit(-y[:, None] * (X @ thetas))
    norms = np.abs(coef) * np.linalg.norm(X, axis=1)[:, None]
    scale = np.minimum(1.0, G / np.maximum(norms, np.finfo(np.float64).tiny))
    return X.T @ np.where(included, coef * scale, 0.0)


def train(X: np.ndarray, y: np.ndarray, parties: Sequence[np.ndarray], *, etas: Sequence[float],
          seeds: Sequence[int], sigma: float, q: float, T: int, G: float, lam: float,
          theta0: np.ndarray, root_seed: int, key: tuple[KeyPart, ...]) -> np.ndarray:
    """Run DP-SGD (module docstring) for every (seed, η); returns θ_T as a (p, K) matrix.

    ``parties`` are the row indices of X of each party (disjoint, covering the records used);
    ``sigma`` the noise multiplier (std σ·G on the aggregate); ``q`` the rate at which the
    parties really sample; ``theta0`` (p,) shared or (p, len(seeds)) per seed. Float64;
    bit-reproducible from ``root_seed``, ``key`` and the seeds.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    sizes = [len(idx) for idx in parties]
    n, p = int(sum(sizes)), X.shape[1]
    T, sigma = require_steps(T), require_positive("sigma", sigma, allow_zero=True)
    q, G = sg.require_rate(q), require_positive("G", G)
    etas_arr = np.asarray(etas, dtype=np.float64)
    S, E = len(seeds), etas_arr.size
    theta0 = np.asarray(theta0, dtype=np.float64)
    if S == 0 or E == 0 or not np.all(np.isfinite(etas_arr) & (etas_arr > 0)):
        raise ValueError(f"DP-SGD needs at least one seed and positive learning rates, got "
                         f"seeds={list(seeds)!r}, etas={etas_arr.tolist()!r}")
    if y.shape != (X.shape[0],) or theta0.shape not in ((p,), (p, S)):
        raise ValueError(f"DP-SGD shapes: X {X.shape} needs y ({X.shape[0]},) and theta0 ({p},) "
                         f"or ({p}, {S}); got y {y.shape}, theta0 {theta0.shape}")
    start = theta0[:, None] if theta0.ndim == 1 else theta0
    thetas = np.repeat(np.broadcast_to(start, (p, S)), E, axis=1)  # column s·E + e
    eta_cols = np.tile(etas_arr, S)
    samplers = [[rng(root_seed, *key, "sample", int(s), j) for j in range(len(parties))] for s in seeds]
    noises = [rng(root_seed, *key, "noise", int(s)) for s in seeds]
    mask = np.zeros((X.shape[0], S), dtype=bool)
    for _ in range(T):
        for s in range(S):
            for j, idx in enumerate(parties):
                mask[idx, s] = samplers[s][j].random(sizes[j]) < q
        z = np.stack([gen.standard_normal(p) for gen in noises], axis=1) * (sigma * G)  # (p, S)
        total = clipped_gradient_sum(X, y, thetas, np.repeat(mask, E, axis=1), G)
        released = total + np.repeat(z, E, axis=1)
        thetas = thetas - eta_cols * (released / (q * n) + lam * thetas)
    return thetas


def train_batch(X: np.ndarray, y: np.ndarray, parties: Sequence[np.ndarray], *,
                etas: Sequence[float], seeds: Sequence[int], epsilon: float, delta: float,
                q: float, T: int, G: float, lam: float, theta0: np.ndarray, root_seed: int,
                key: tuple[KeyPart, ...]) -> DpsgdResult:
    """Calibrate σ to (ε, δ) at rate q (:func:`ledger`), train every (seed, η), return both."""
    led = ledger(epsilon, delta, q, T, G)
    thetas = train(X, y, parties, etas=etas, seeds=seeds, sigma=led["sigma"], q=q, T=T, G=G,
                   lam=lam, theta0=theta0, root_seed=root_seed, key=key)
    return DpsgdResult(thetas, np.repeat(np.asarray(seeds), len(etas)),
                       np.tile(np.asarray(etas, dtype=np.float64), len(seeds)), led)
