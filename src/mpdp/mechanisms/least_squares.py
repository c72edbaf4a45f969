"""Least-squares mechanisms of the multi-party write-up [S-002] (spec M14, M15, I-15…I-18).

Loss (spec M14): the *sum* L(θ; D) = Σᵢ (θᵀxᵢ − yᵢ)², minimiser θ* = (XᵀX)⁻¹Xᵀy (:func:`ols`);
data bounded by ‖x‖ ≤ 1, |y| ≤ 1, replace-one neighbours.

- ``ls_ssp`` (M14): each of t parties releases its sufficient statistics Cᵢ = Σ x xᵀ + Z₁⁽ⁱ⁾
  and dᵢ = Σ x y + z₂⁽ⁱ⁾; the aggregator solves (Σ Cᵢ) θ = Σ dᵢ. :func:`ssp_calibrate` gives
  σ₁, σ₂ from the sensitivities of M14 (:func:`ssp_sensitivities`) and the Gaussian calibration
  of :mod:`mpdp.privacy.gaussian` (classical C3 with ε < 1, or analytic; I-15);
  :func:`ssp_noise` draws the aggregated noise under the ``independent`` model (what the
  algorithm does: a sum of t independent draws, std √t σ) or the ``write_up`` model (the
  write-up's analysis, t times one draw; spec's ``scaled_single_draw``, I-17);
  :func:`ssp_solve` solves all draws as one batched ``np.linalg.solve``. The optional output
  noise z₃ (write-up case (a)) is off by default: the output is post-processing (I-16).
- ``ls_sgd`` (M15): multi-party noisy projected SGD; the owner of record π(i) broadcasts the
  **noisy** gradient n∇ℓ + zᵢ (I-18 correction), 𝒞 is the ball of radius R_𝒞.
  :func:`sgd_noise_std` implements the two noise options of M15 (``permutation_zcdp``, the
  printed schedule; ``bst_sampling``, sampling with replacement) and :func:`noisy_sgd` runs
  many runs at once as the rows of one parameter matrix.
- Non-private OLS: :func:`ols`. :func:`excess_risk` is bounds.md B8's exact identity
  L(θ) − L(θ*) = (θ − θ*)ᵀ XᵀX (θ − θ*).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mpdp.privacy.calibration import PrivacyParameterError, noise_std
from mpdp.privacy.gaussian import composed_gaussians_epsilon, gaussian_std
from mpdp.privacy.ledger import accounted_epsilon

#: aggregated-noise models of ``ls_ssp`` (spec M14 config switch; ``write_up`` = scaled_single_draw)
SSP_NOISE_MODELS = ("independent", "write_up")
#: noise options of ``ls_sgd`` (spec M15)
SGD_OPTIONS = ("permutation_zcdp", "bst_sampling")
#: accountants of the ``permutation_zcdp`` option: spec M15's zCDP formula, or dp-accounting's
#: exact composition of the n Gaussian touches of a record
SGD_ACCOUNTANTS = ("zcdp_code", "exact")


# --------------------------------------------------------------------------------------------
# shared quantities
# --------------------------------------------------------------------------------------------


def sufficient_statistics(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(XᵀX, Xᵀy) of the pooled data (the sum of the parties' statistics, spec M14)."""
    X = np.asarray(X, dtype=np.float64)
    return X.T @ X, X.T @ np.asarray(y, dtype=np.float64)


def ols(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Non-private least squares θ* = (XᵀX)⁻¹Xᵀy (spec M14; eq. (3) of the write-up)."""
    gram, xty = sufficient_statistics(X, y)
    return np.linalg.solve(gram, xty)


def sum_loss(theta: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """L(θ; D) = Σᵢ (θᵀxᵢ − yᵢ)² for one θ (d,) or many (K, d) (spec M14)."""
    residual = np.atleast_2d(theta) @ np.asarray(X).T - np.asarray(y)
    out = np.einsum("kn,kn->k", residual, residual)
    return out if np.ndim(theta) == 2 else out[0]


def excess_risk(theta: np.ndarray, theta_star: np.ndarray, gram: np.ndarray) -> np.ndarray:
    """bounds.md B8 exact identity: L(θ) − L(θ*) = (θ − θ*)ᵀ XᵀX (θ − θ*), for θ of shape (K, d)."""
    diff = np.atleast_2d(theta) - np.asarray(theta_star)[None, :]
    return np.einsum("kd,de,ke->k", diff, gram, diff)


# --------------------------------------------------------------------------------------------
# ls_ssp (spec M14)
# --------------------------------------------------------------------------------------------


def ssp_sensitivities(d: int) -> tuple[float, float]:
    """Replace-one ℓ2 sensitivities (Δ(c), Δ(d)) of (Σ x xᵀ, Σ x y) for ‖x‖, |y| ≤ 1 (spec M14, DER).

    d = 1: (1, 2) since x² ∈ [0, 1]; d ≥ 2: (√2, 2) since
    ‖xxᵀ − x'x'ᵀ‖_F² = ‖x‖⁴ + ‖x'‖⁴ − 2(xᵀx')² ≤ 2.
    """
    if d < 1:
        raise ValueError(f"dimension must be >= 1, got d={d!r}")
    return (1.0 if d == 1 else math.sqrt(2.0)), 2.0


@dataclass(frozen=True)
class SSPNoise:
    """Per-party noise of ``ls_ssp`` and its ledger (spec M14)."""

    sigma1: float  # std of each entry of Z₁ (the noise on Σ x xᵀ)
    sigma2: float  # std of each entry of z₂ (the noise on Σ x y); 0 if z₂ is switched off
    sensitivity1: float
    sensitivity2: float
    calibration: str
    eps_accounted: float  # exact ε at δ of one party's release (= of the whole protocol)


def ssp_calibrate(
    epsilon: float,
    delta: float,
    d: int,
    calibration: str = "classical",
    eps_split: float = 0.5,
    delta_split: float = 0.5,
    perturb_xty: bool = True,
) -> SSPNoise:
    """σ₁, σ₂ of spec M14: σₖ = gaussian_std(calibration, Δₖ, εₖ, δₖ), ε₁ = split·ε, δ₁ = split·δ.

    With ``classical`` (C3) each part needs εₖ < 1 (I-15). The release of each party is
    (ε₁ + ε₂, δ₁ + δ₂)-DP by composition and so is the protocol (disjoint parties, output is
    post-processing, I-16); ``eps_accounted`` is the exact ε at the total δ of the two Gaussian
    releases. ``perturb_xty=False`` sets σ₂ = 0 (an ablation for bounds.md B8's σ₂ = 0 case,
    not private: its ε is +inf).
    """
    if not 0 < eps_split < 1 or not 0 < delta_split < 1:
        raise PrivacyParameterError(
            f"eps_split and delta_split must be in (0, 1), got {eps_split!r}, {delta_split!r}"
        )
    s1, s2 = ssp_sensitivities(d)
    sigma1 = gaussian_std(calibration, s1, eps_split * epsilon, delta_split * delta)
    sigma2 = (
        gaussian_std(calibration, s2, (1 - eps_split) * epsilon, (1 - delta_split) * delta)
        if perturb_xty
        else 0.0
    )
    eps = composed_gaussians_epsilon([sigma1, sigma2], [s1, s2], delta)
    return SSPNoise(sigma1, sigma2, s1, s2, calibration, eps)


def _symmetrise(Z: np.ndarray) -> np.ndarray:
    """Upper triangle (with diagonal) of each matrix of ``Z`` mirrored below the diagonal."""
    upper = np.triu(Z)
    return upper + np.swapaxes(np.triu(Z, 1), -1, -2)


def ssp_noise(
    rng: np.random.Generator,
    t: int,
    draws: int,
    d: int,
    sigma1: float,
    sigma2: float,
    noise_model: str = "independent",
    symmetric: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Aggregated noise (Σᵢ Z₁⁽ⁱ⁾, Σᵢ z₂⁽ⁱ⁾) for ``draws`` independent runs: shapes (draws, d, d), (draws, d).

    ``independent``: t independent per-party draws are summed (std √t·σ per entry, the
    algorithm as written); ``write_up``: t times one draw (std t·σ, the write-up's analysis,
    I-17). ``symmetric``: each party's Z₁ has i.i.d. upper triangle mirrored (spec M14 default);
    otherwise all d² entries are i.i.d.
    """
    if noise_model not in SSP_NOISE_MODELS:
        raise ValueError(f"noise_model must be one of {SSP_NOISE_MODELS}, got {noise_model!r}")
    if t < 1:
        raise ValueError(f"number of parties must be >= 1, got t={t!r}")
    parties = t if noise_model == "independent" else 1
    scale = 1.0 if noise_model == "independent" else float(t)
    Z1 = np.zeros((draws, d, d))
    z2 = np.zeros((draws, d))
    for _ in range(parties):
        Z = rng.standard_normal((draws, d, d))
        Z1 += _symmetrise(Z) if symmetric else Z
        z2 += rng.standard_normal((draws, d))
    return Z1 * (scale * sigma1), z2 * (scale * sigma2)


def ssp_solve(
    gram: np.ndarray, xty: np.ndarray, Z1: np.ndarray, z2: np.ndarray, pd_floor: float = 1e-6
) -> tuple[np.ndarray, np.ndarray]:
    """θ = (XᵀX + Z₁)⁻¹(Xᵀy + z₂) for every draw, as one batched solve (spec M14 step 2).

    If the noisy matrix is not positive definite (smallest eigenvalue of its symmetric part
    below ``pd_floor``) τI is added with the smallest τ ≥ 0 that lifts that eigenvalue to
    ``pd_floor`` (spec M14 default fallback). Returns θ (draws, d) and τ per draw (0 where no
    fallback was needed).
    """
    C = gram[None, :, :] + Z1
    sym = 0.5 * (C + np.swapaxes(C, -1, -2))
    lam_min = np.linalg.eigvalsh(sym)[:, 0]
    tau = np.maximum(pd_floor - lam_min, 0.0)
    C = C + tau[:, None, None] * np.eye(gram.shape[0])[None]
    theta = np.linalg.solve(C, (xty[None, :] + z2)[..., None])[..., 0]
    return theta, tau


# --------------------------------------------------------------------------------------------
# ls_sgd (spec M15)
# --------------------------------------------------------------------------------------------


def sgd_lipschitz(radius: float) -> float:
    """L_ℓ = 2(R_𝒞 + 1): bound on ‖∇(θᵀx − y)²‖ for ‖θ‖ ≤ R_𝒞, ‖x‖, |y| ≤ 1 (spec M15)."""
    return 2.0 * (radius + 1.0)


def sgd_steps(n: int) -> int:
    """T = n² steps: n copies of [n] (printed schedule) or n² samples (BST), spec M15."""
    return n * n


def sgd_noise_std(
    option: str, epsilon: float, delta: float, n: int, radius: float, accountant: str = "zcdp_code"
) -> float:
    """Per-coordinate std σ of the noise zᵢ on the broadcast gradient n∇ℓ (spec M15).

    - ``permutation_zcdp``: each record is touched n times, each touch a Gaussian release of
      sensitivity 2nL_ℓ. ``zcdp_code`` (spec default): σ = √(2n³)L_ℓ/(√(ln(1/δ)+ε) − √ln(1/δ))
      (= :func:`mpdp.privacy.calibration.noise_std` ``zcdp_code`` with T = n, Δ = 2nL_ℓ); ``exact``:
      dp-accounting's smallest σ for n composed Gaussians (analytic, tight).
    - ``bst_sampling`` [REC, Bassily–Smith–Thakurta 2014]: σ² = 32 L_ℓ² n² ln(n/δ) ln(1/δ)/ε².
    """
    L = sgd_lipschitz(radius)
    if option == "permutation_zcdp":
        if accountant not in SGD_ACCOUNTANTS:
            raise PrivacyParameterError(
                f"ls_sgd accountant must be one of {SGD_ACCOUNTANTS}, got {accountant!r}"
            )
        return noise_std(accountant, epsilon, delta, n, 2.0 * n * L)
    if option == "bst_sampling":
        if not epsilon > 0 or not 0 < delta < 1:
            raise PrivacyParameterError(f"need epsilon > 0 and 0 < delta < 1, got {epsilon}, {delta}")
        return math.sqrt(32 * L**2 * n**2 * math.log(n / delta) * math.log(1 / delta)) / epsilon
    raise PrivacyParameterError(f"ls_sgd option must be one of {SGD_OPTIONS}, got {option!r}")


def sgd_epsilon(option: str, sigma: float, delta: float, n: int, radius: float) -> float:
    """ε at δ really given by ``ls_sgd`` with noise std σ (the ledger).

    ``permutation_zcdp``: exact (analytic) composition of a record's n touches of sensitivity
    2nL_ℓ. ``bst_sampling``: dp-accounting RDP of n² Poisson-subsampled (q = 1/n) Gaussian
    steps, an approximation of sampling one record with replacement per step.
    """
    L = sgd_lipschitz(radius)
    if option == "permutation_zcdp":
        return accounted_epsilon(sigma, 2.0 * n * L, n, delta)
    if option == "bst_sampling":
        import dp_accounting
        from dp_accounting.rdp import RdpAccountant

        from mpdp.privacy.calibration import NEIGHBORING_RELATION

        event = dp_accounting.SelfComposedDpEvent(
            dp_accounting.PoissonSampledDpEvent(
                1.0 / n, dp_accounting.GaussianDpEvent(sigma / (2.0 * n * L))
            ),
            sgd_steps(n),
        )
        acc = RdpAccountant(neighboring_relation=NEIGHBORING_RELATION)
        acc.compose(event)
        return float(acc.get_epsilon(delta))
    raise PrivacyParameterError(f"ls_sgd option must be one of {SGD_OPTIONS}, got {option!r}")


def sgd_step_sizes(n: int, radius: float, sigmas: np.ndarray, d: int) -> np.ndarray:
    """η of the first step, per run: η(i) = 2R_𝒞/√(i (n²L_ℓ² + dσ²)) at i = 1 (spec M15, BST).

    The same schedule is used for both noise options ([REC]: M15 leaves η(i) open for the
    printed schedule); η(i) = η(1)/√i.
    """
    L = sgd_lipschitz(radius)
    return 2.0 * radius / np.sqrt(n**2 * L**2 + d * np.asarray(sigmas, dtype=float) ** 2)


def sgd_schedule(rng: np.random.Generator, option: str, n: int) -> np.ndarray:
    """Record index of every step (length n², int32): a random permutation of n copies of [n]
    (``permutation_zcdp``, the printed schedule) or n² uniform draws with replacement (BST)."""
    if option == "permutation_zcdp":
        return rng.permutation(np.repeat(np.arange(n, dtype=np.int32), n))
    if option == "bst_sampling":
        return rng.integers(0, n, size=sgd_steps(n), dtype=np.int32)
    raise ValueError(f"ls_sgd option must be one of {SGD_OPTIONS}, got {option!r}")


def project_ball(theta: np.ndarray, radius: float) -> np.ndarray:
    """Π_𝒞 onto the ball ‖θ‖ ≤ R_𝒞, row-wise (in place; returns ``theta``)."""
    norms = np.sqrt(np.einsum("kd,kd->k", theta, theta))
    theta *= np.minimum(1.0, radius / np.maximum(norms, 1e-300))[:, None]
    return theta


def noisy_sgd(
    X: np.ndarray,
    y: np.ndarray,
    sigmas: np.ndarray,
    schedules: np.ndarray,
    radius: float,
    rng: np.random.Generator,
    theta0: np.ndarray | None = None,
    chunk: int = 2048,
) -> np.ndarray:
    """K runs of ``ls_sgd`` at once (spec M15, with the I-18 corrections); returns θ_T (K, d).

    Run k uses noise std ``sigmas[k]`` and record order ``schedules[k]`` (length T). Step i
    (1-based): Gᵢ = n∇ℓ(θᵢ; (x, y)) + zᵢ with ∇ℓ = 2(θᵀx − y)x and zᵢ ~ N(0, σ² I) — this noisy
    Gᵢ is what the owner broadcasts and every party applies — then
    θᵢ₊₁ = Π_𝒞[θᵢ − η(i) Gᵢ] with η(i) from :func:`sgd_step_sizes`. θ₀ = 0 unless given. The
    output is the last iterate ([REC], as in BST). Noise is drawn in chunks of steps.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n, d = X.shape
    sigmas = np.asarray(sigmas, dtype=np.float64)
    schedules = np.asarray(schedules)
    K, T = schedules.shape
    if sigmas.shape != (K,):
        raise ValueError(f"sigmas must have shape ({K},), got {sigmas.shape}")
    theta = np.zeros((K, d)) if theta0 is None else np.array(theta0, dtype=np.float64, copy=True)
    project_ball(theta, radius)
    eta1 = sgd_step_sizes(n, radius, sigmas, d)
    rows = np.arange(K)
    noisy = bool(np.any(sigmas > 0))
    for start in range(0, T, chunk):
        stop = min(start + chunk, T)
        z = rng.standard_normal((stop - start, K, d)) * sigmas[None, :, None] if noisy else None
        inv_sqrt = 1.0 / np.sqrt(np.arange(start + 1, stop + 1, dtype=np.float64))
        idx_chunk = schedules[:, start:stop]
        for s in range(stop - start):
            idx = idx_chunk[rows, s]
            xs = X[idx]
            resid = np.einsum("kd,kd->k", theta, xs) - y[idx]
            grad = (2.0 * n) * resid[:, None] * xs
            if noisy:
                grad += z[s]
            theta -= (eta1 * inv_sqrt[s])[:, None] * grad
            project_ball(theta, radius)
    return theta
