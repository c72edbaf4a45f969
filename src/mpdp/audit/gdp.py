"""Gaussian-DP quantities: the exact ε of a Gaussian pair, and a GDP point estimate.

- :func:`gaussian_epsilon`: the ceiling ε_up of spec audit.md A0 for releases whose privacy
  loss is that of one Gaussian pair with parameter μ (μ-GDP, Dong, Roth, Su 2019 Cor. 2.13;
  Balle, Wang 2018 eq. 6), through ``dp_accounting.get_epsilon_gaussian(1/μ, δ)``.
- :func:`gdp_mu_estimate` / :func:`gdp_epsilon_estimate`: fit μ to canary scores assuming a
  Gaussian trade-off curve (the "GDP fit" of the tooling notes; Nasr et al. 2023). This is a
  **point estimate, not a bound** (spec A6.10): it should match the accounted ε when noise and
  sensitivity code are right, and is shown as a diagnostic only.
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np


def gaussian_epsilon(mu: float, delta: float) -> float:
    """ε at δ of a μ-GDP pair (spec A0 ceiling); 0 for μ = 0, +inf for μ = inf."""
    if not mu >= 0:
        raise ValueError(f"mu must be >= 0, got {mu!r}")
    if mu == 0:
        return 0.0
    if math.isinf(mu):
        return math.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(dp_accounting.get_epsilon_gaussian(1.0 / mu, delta))


def final_model_factor(eta: float, lam: float, T: int) -> float:
    """μ factor Σ_t a_t/(√T ‖a‖), a_t = (1 − ηλ)^t, of a final-model score (spec A5 row 12).

    With a regulariser on the canary coordinates the last iterate weighs step t by a_t, which
    loses power against the transcript score; 1 when ηλ = 0.
    """
    a = (1.0 - eta * lam) ** np.arange(T)
    return float(a.sum() / (math.sqrt(T) * np.linalg.norm(a)))


def gdp_mu_estimate(scores: np.ndarray, signs: np.ndarray) -> float:
    """μ̂ = (mean of +1 scores − mean of −1 scores)/pooled std (Gaussian, equal variances)."""
    scores = np.asarray(scores, dtype=np.float64)
    pos, neg = scores[np.asarray(signs) == 1], scores[np.asarray(signs) == -1]
    if pos.size < 2 or neg.size < 2:
        return math.nan
    pooled = math.sqrt(
        ((pos.size - 1) * pos.var(ddof=1) + (neg.size - 1) * neg.var(ddof=1))
        / (pos.size + neg.size - 2)
    )
    return float((pos.mean() - neg.mean()) / pooled) if pooled > 0 else math.inf


def gdp_epsilon_estimate(scores: np.ndarray, signs: np.ndarray, delta: float) -> float:
    """ε of the fitted μ̂ (a diagnostic point estimate, spec A6.10): 0 if μ̂ ≤ 0."""
    mu = gdp_mu_estimate(scores, signs)
    if math.isnan(mu):
        return math.nan
    return gaussian_epsilon(max(mu, 0.0), delta)
