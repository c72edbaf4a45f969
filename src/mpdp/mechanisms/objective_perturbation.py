"""Objective perturbation for L2-regularised logistic regression (docs/objective_perturbation.md, OP1–OP2).

Chaudhuri, Monteleoni & Sarwate (2011, JMLR 12), Algorithm 2 (ERM with objective perturbation),
specialised to the spec's objective L_D(θ) = (1/n)Σ ℓ(θ; x_i, y_i) + (λ/2)‖θ‖² (mechanisms.md §0.2)
with N(θ) = ½‖θ‖² (1-strongly convex), the logistic loss (|l'| ≤ 1, 0 < l'' ≤ c = 1/4) and
‖x_i‖ ≤ 1 (§0.1). For a target ε:

1. ε′ = ε − log(1 + 2c/(nλ) + c²/(n²λ²))  (= ε − 2 log(1 + c/(nλ)));
2. if ε′ > 0: Δ = 0; else Δ = c/(n(e^{ε/4} − 1)) − λ and ε′ = ε/2;
3. draw b ∈ R^d with density ∝ exp(−(ε′/2)‖b‖) (N-L2 with β = ε′/2: ‖b‖ ~ Gamma(d, 2/ε′),
   uniform direction; :func:`mpdp.privacy.samplers.l2_laplace`);
4. release θ_priv = argmin (1/n)Σ ℓ + ((λ + Δ)/2)‖θ‖² + bᵀθ/n.

The release is pure ε-DP under replace-one (CMS11 Theorem 9): the noise-density ratio is at most
e^{β‖b − b′‖} ≤ e^{2β} (‖b − b′‖ ≤ 2 from |l'| ≤ 1, ‖x‖ ≤ 1) and the Jacobian-determinant ratio at
most (1 + c/(n(λ + Δ)))². :func:`epsilon_given` recomputes that total from the noise actually
used, independently of :func:`calibrate`'s branch logic.

The exact minimiser is required (the bijection argument): every solve is
:func:`mpdp.models.newton.solve` (batched Newton-CG over runs, gradient norm ≤ 1e-9).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mpdp.models import newton
from mpdp.privacy.calibration import PrivacyParameterError
from mpdp.privacy.samplers import l2_laplace

#: bound on l''(z) of the logistic loss l(z) = log(1 + e^{−z}) (spec §0.2)
LOGISTIC_C = 0.25
#: replace-one bound on ‖b − b′‖ of the noise that maps D's and D′'s objectives to one θ:
#: ‖∇ℓ(θ; x, y) − ∇ℓ(θ; x′, y′)‖ ≤ 2 for |l'| ≤ 1 and ‖x‖ ≤ 1 (CMS11 proof of Thm 9)
NOISE_SENSITIVITY = 2.0


@dataclass(frozen=True)
class ObjectiveCalibration:
    """CMS11 Algorithm 2 steps 1–2 for one data set of size ``n``."""

    epsilon: float  # the target
    n: int
    lam: float  # the objective's λ
    extra_reg: float  # Δ (0 unless step 2's second branch)
    eps_noise: float  # ε′, the share of ε the noise density carries
    beta: float  # N-L2 parameter ε′/2 (‖b‖ ~ Gamma(d, 1/β))

    @property
    def quad(self) -> float:
        """The quadratic coefficient λ + Δ of the perturbed objective."""
        return self.lam + self.extra_reg


def calibrate(epsilon: float, n: int, lam: float, c: float = LOGISTIC_C) -> ObjectiveCalibration:
    """CMS11 Algorithm 2 steps 1–2 (module docstring) for target ``epsilon`` on ``n`` records."""
    if not epsilon > 0 or not math.isfinite(epsilon):
        raise PrivacyParameterError(f"objective perturbation: epsilon must be finite and > 0, got {epsilon!r}")
    if n < 1 or not lam > 0:
        raise PrivacyParameterError(f"objective perturbation: need n >= 1 and lambda > 0, got n={n!r}, lambda={lam!r}")
    ratio = c / (n * lam)
    eps_noise = epsilon - math.log(1.0 + 2.0 * ratio + ratio * ratio)
    extra = 0.0
    if eps_noise <= 0:
        extra = c / (n * math.expm1(epsilon / 4.0)) - lam
        eps_noise = epsilon / 2.0
    return ObjectiveCalibration(float(epsilon), int(n), float(lam), float(extra), float(eps_noise),
                                float(eps_noise / 2.0))


def epsilon_given(n: int, quad: float, beta: float, c: float = LOGISTIC_C) -> float:
    """The ε that noise N-L2(β) on an objective of quadratic coefficient ``quad`` = λ + Δ gives:
    β·(noise sensitivity 2) + 2 log(1 + c/(n·quad)) (CMS11 proof of Thm 9; the ledger's route)."""
    return float(NOISE_SENSITIVITY * beta + 2.0 * math.log1p(c / (n * quad)))


def draw_noise(gen: np.random.Generator, beta: float, d: int) -> np.ndarray:
    """b ~ N-L2(β) in R^d: density ∝ exp(−β‖b‖), i.e. ‖b‖ ~ Gamma(d, 1/β), uniform direction."""
    return l2_laplace(gen, beta, d)


def linear_term(noise: np.ndarray, n: int) -> np.ndarray:
    """The perturbation's coefficient bᵀθ/n in the mean-loss objective (step 4)."""
    return noise / n


def objective(theta: np.ndarray, X: np.ndarray, y: np.ndarray, quad: float | np.ndarray,
              noise: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Value (K,) and gradient (d, K) of (1/n)Σℓ + (quad/2)‖θ‖² + bᵀθ/n for the columns of
    ``theta`` (d, K) and ``noise`` (d, K)."""
    n = X.shape[0]
    lin = linear_term(noise, n)
    return (newton.objective(X, y, theta, 1.0 / n, quad, lin),
            newton.gradient(X, y, theta, 1.0 / n, quad, lin))


def solve(X: np.ndarray, y: np.ndarray, quad: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """θ_priv (d, K) of K runs on one data set (X, y): column k minimises the objective of
    quadratic coefficient ``quad[k]`` = λ + Δ_k and noise ``noise[:, k]`` (batched Newton-CG)."""
    n = X.shape[0]
    return newton.solve(X, y, 1.0 / n, np.asarray(quad, dtype=np.float64),
                        lin=linear_term(np.asarray(noise, dtype=np.float64), n)).theta
