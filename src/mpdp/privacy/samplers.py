"""Noise samplers shared by every mechanism family (spec mechanisms.md §0.4).

Every sampler takes an explicit :class:`numpy.random.Generator` (spec §0.4 "Randomness"); no
global random state is used.

- :func:`gaussian`: (N-G) i.i.d. N(0, σ²) coordinates.
- :func:`l2_laplace`: (N-L2) the "ℓ2-Laplace" density ∝ exp(−β‖η‖₂) on R^d, sampled as a
  radius r ~ Gamma(shape=d, scale=1/β) times an independent uniform direction g/‖g‖ with
  g ~ N(0, I_d). A release f(D) + η is ε-DP when β = ε/Δ₂ (Δ₂ the ℓ2-sensitivity of f).
- :func:`l2_laplace_beta`: that calibration, β = ε/Δ₂, with readable errors.
- :func:`l2_laplace_tail_radius`: the Lemma 5 tail bound of S-004,
  Pr[‖η‖ ≤ (d/β) ln(d/δ)] ≥ 1 − δ.
"""

from __future__ import annotations

import math

import numpy as np

from mpdp.privacy.calibration import PrivacyParameterError


def _shape(size: int | tuple[int, ...] | None) -> tuple[int, ...]:
    if size is None:
        return ()
    return (size,) if isinstance(size, int) else tuple(size)


def gaussian(
    rng: np.random.Generator, sigma: float, d: int, size: int | tuple[int, ...] | None = None
) -> np.ndarray:
    """(N-G) draws of N(0, σ² I_d); shape ``(*size, d)``."""
    if not sigma >= 0:
        raise PrivacyParameterError(f"sigma must be >= 0, got {sigma!r}")
    return sigma * rng.standard_normal((*_shape(size), d))


def l2_laplace(
    rng: np.random.Generator,
    beta: float | np.ndarray,
    d: int,
    size: int | tuple[int, ...] | None = None,
) -> np.ndarray:
    """(N-L2) draws from the density ∝ exp(−β‖η‖₂) on R^d; shape ``(*size, d)``.

    ``beta`` is a scalar or an array broadcastable to ``size`` (one β per draw, e.g. one per
    run of a batch). β = +inf gives exactly zero noise (the ε → ∞ limit).
    """
    if d < 1:
        raise PrivacyParameterError(f"dimension d must be >= 1, got {d!r}")
    shape = _shape(size)
    beta_arr = np.broadcast_to(np.asarray(beta, dtype=float), shape)
    if np.any(~(beta_arr > 0)):
        raise PrivacyParameterError(f"beta must be > 0 (beta = epsilon/sensitivity), got {beta!r}")
    direction = rng.standard_normal((*shape, d))
    norms = np.linalg.norm(direction, axis=-1, keepdims=True)
    direction /= np.where(norms > 0, norms, 1.0)
    radius = rng.gamma(shape=float(d), scale=1.0, size=shape)
    with np.errstate(divide="ignore"):
        scale = np.where(np.isinf(beta_arr), 0.0, 1.0 / beta_arr)
    return direction * (radius * scale)[..., None]


def l2_laplace_beta(epsilon: float, sensitivity: float) -> float:
    """β = ε/Δ₂ of the N-L2 release f(D) + η that is ε-DP (spec §0.4 calibration)."""
    if not epsilon > 0:
        raise PrivacyParameterError(f"epsilon must be > 0, got {epsilon!r}")
    if not sensitivity > 0:
        raise PrivacyParameterError(f"sensitivity must be > 0, got {sensitivity!r}")
    return epsilon / sensitivity


def l2_laplace_tail_radius(beta: float, d: int, delta: float) -> float:
    """(d/β) ln(d/δ): ‖η‖ stays below it with probability ≥ 1 − δ (S-004 Lemma 5, spec §0.4)."""
    if not 0 < delta < 1:
        raise PrivacyParameterError(f"delta must be in (0, 1), got {delta!r}")
    return d / beta * math.log(d / delta)
