"""bounds.md B8: the write-up's closed form, the delta method and the SGD shape [S-002; DER].

All quantities use the sum loss of spec M14 and the *aggregated* noise stds (s₁, s₂) on
(Σ Cᵢ, Σ dᵢ): (√t σ₁, √t σ₂) for independent parties, (t σ₁, t σ₂) for the write-up's t·z model
(:func:`aggregate_stds`).
"""

from __future__ import annotations

import numpy as np
from scipy import stats

#: median of χ²₁: the linearised d = 1 excess is (mean) × χ²₁ (:func:`delta_method_median_d1`)
CHI2_1_MEDIAN: float = float(stats.chi2.median(1))


def aggregate_stds(sigma1: float, sigma2: float, t: int, noise_model: str) -> tuple[float, float]:
    """(s₁, s₂) of the summed noise: √t σ (``independent``) or t σ (``write_up``), B8 / I-17."""
    if noise_model == "independent":
        factor = float(np.sqrt(t))
    elif noise_model == "write_up":
        factor = float(t)
    else:
        raise ValueError(f"unknown noise model {noise_model!r}")
    return factor * sigma1, factor * sigma2


def writeup_closed_form(c: float, d: float, sigma1: float, sigma2: float, t: int) -> float:
    """The write-up's E[L(θ) − L(θ*)] as printed (eq. (12) and below, B8), d = 1:

    ((d(D)² + t²σ₂²)/(c(D)² + t²σ₁²) − d(D)²/c(D)²)·c(D). Wrong (ratio of expectations): it
    is negative whenever σ₂²/σ₁² < d²/c², in particular at σ₂ = 0.
    """
    t2 = float(t) ** 2
    return ((d**2 + t2 * sigma2**2) / (c**2 + t2 * sigma1**2) - d**2 / c**2) * c


def delta_method_mean(
    gram: np.ndarray, theta_star: np.ndarray, s1: float, s2: float, symmetric: bool
) -> float:
    """Mean of the linearised excess risk (B8 delta method), any d.

    θ − θ* ≈ G⁻¹(z₂ − Z₁θ*) with G = XᵀX, so E[excess] ≈ s₂² tr(G⁻¹) + E[θ*ᵀZ₁ᵀG⁻¹Z₁θ*].
    Non-symmetric i.i.d. Z₁ (B8): s₁²‖θ*‖² tr(G⁻¹). Symmetric Z₁ (i.i.d. upper triangle,
    mirrored) [DER]: Cov((Z₁θ)ᵢ, (Z₁θ)ₖ) = s₁²(δᵢₖ‖θ‖² + θᵢθₖ − δᵢₖθᵢ²), so the term is
    s₁²(‖θ*‖² tr(G⁻¹) + θ*ᵀG⁻¹θ* − Σᵢ θ*ᵢ² (G⁻¹)ᵢᵢ). For d = 1 both give (s₂² + θ*²s₁²)/c(D).
    """
    ginv = np.linalg.inv(np.atleast_2d(gram))
    th = np.atleast_1d(theta_star)
    tr = float(np.trace(ginv))
    term1 = float(th @ th) * tr
    if symmetric:
        term1 += float(th @ ginv @ th) - float(np.sum(th**2 * np.diag(ginv)))
    return s2**2 * tr + s1**2 * term1


def delta_method_median_d1(mean: float) -> float:
    """Median of the linearised excess for d = 1: ``mean`` × median(χ²₁) ≈ 0.455 × mean.

    For d = 1, θ − θ* ≈ (z₂ − θ*z₁)/c is Gaussian, so c(θ − θ*)² is its variance × χ²₁.
    """
    return mean * CHI2_1_MEDIAN


def in_validity_region(s1: float, gram: np.ndarray, ratio: float) -> bool:
    """The delta method's validity region of B8, s₁ ≪ c(D), made concrete as s₁ ≤ ratio·λ_min(XᵀX)
    ([REC] ``ls.validity_ratio``; λ_min = c(D) for d = 1)."""
    lam_min = float(np.linalg.eigvalsh(np.atleast_2d(gram))[0])
    return bool(s1 <= ratio * lam_min)


def sgd_shape(epsilons: np.ndarray, anchor_eps: float, anchor_value: float) -> np.ndarray:
    """B8's SGD bound shape in ε (∝ 1/ε at fixed n, δ, p, R_𝒞; the constant is unknown), scaled to
    pass through (``anchor_eps``, ``anchor_value``)."""
    return anchor_value * anchor_eps / np.asarray(epsilons, dtype=float)
