"""Output-perturbation mechanisms: exact minimiser (or average of minimisers) + N-L2 noise.

Every mechanism here releases ``θ + η`` with ``η ~ N-L2(β)`` (spec mechanisms.md §0.4),
``β = ε/Δ₂`` and ``Δ₂`` the ℓ2-sensitivity of the released minimiser (C4). Ids and spec
sections:

=====================  =========  ==============================================================
id                     unit       sensitivity Δ₂ (binary; multiclass K > 2 in dimension dK)
=====================  =========  ==============================================================
``hamm_vote``          party      2/λ (M11, Thm 1; ``tight``: 1/λ, I-13); multiclass B.2: √2/λ
``hamm_soft``          party      2/(Mλ) (M12, Thm 3; ``tight``: 1/(Mλ), I-13); B.3: √2/(Mλ)
``param_avg``          party      2/(Mλ) (M6b); multiclass B.4: 2√2/(Mλ)
``pathak``             record     2/(n_(1) λ) (M6a, not divided by M as Pathak calibrate it)
``jayaraman_output``   record     2G/(M n_(1) λ) (M5)
``pooled_output``      record     2/(Nλ), ERM on the N pooled labelled records; multiclass B.1:
                                  2√2/(Nλ) (the softmax loss is √2-Lipschitz for ‖x‖ ≤ 1)
=====================  =========  ==============================================================

``jayaraman_output`` can draw the authors' per-coordinate Laplace noise of scale ``Δ₂/ε``
instead (N-Lap1, switch ``code_faithful_laplace``, default off): that is **not** ε-DP for
d > 1 (I-9), and :func:`eps_accounted` reports the ε it really gives (√d ε worst case, from
the ℓ1 sensitivity √d Δ₂).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mpdp.privacy.samplers import l2_laplace, l2_laplace_beta

#: mechanism id -> privacy unit (spec §0.3, I-12)
PRIVACY_UNIT: dict[str, str] = {
    "hamm_vote": "party",
    "hamm_soft": "party",
    "param_avg": "party",
    "pathak": "record",
    "jayaraman_output": "record",
    "pooled_output": "record",
}


@dataclass(frozen=True)
class OutputCalibration:
    """Ledger entry of one output-perturbation release."""

    mechanism: str
    privacy_unit: str  # party | record
    sensitivity: float  # ℓ2 sensitivity Δ₂ of the released (averaged) minimiser
    beta: float  # N-L2 parameter β = ε/Δ₂ actually used (inf for ε = inf)
    noise: str  # l2_laplace | laplace_per_coordinate
    eps_accounted: float  # ε really given (= ε for N-L2; √d ε worst case for N-Lap1)


def sensitivity(
    mechanism: str,
    lam: float,
    M: int,
    n_min: int | None = None,
    n_classes: int = 2,
    tight: bool = False,
    G: float = 1.0,
    N: int | None = None,
) -> float:
    """ℓ2 sensitivity Δ₂ of ``mechanism`` (spec M5, M6a, M6b, M11, M12, M13 table).

    ``N`` is the number of pooled labelled records of ``pooled_output`` (M13 B.1).
    """
    if not lam > 0:
        raise ValueError(f"lambda must be > 0, got {lam!r}")
    multi = n_classes > 2
    if mechanism == "hamm_vote":  # M11 / B.2: one party can flip every vote
        return (math.sqrt(2.0) if multi else (1.0 if tight else 2.0)) / lam
    if mechanism == "hamm_soft":  # M12 / B.3: each α moves by ≤ 1/M
        return (math.sqrt(2.0) if multi else (1.0 if tight else 2.0)) / (M * lam)
    if mechanism == "param_avg":  # M6b / B.4: one local minimiser moves ≤ 2/λ (2√2/λ softmax)
        return (2.0 * math.sqrt(2.0) if multi else 2.0) / (M * lam)
    if mechanism == "pooled_output":  # M13 B.1: replace one of N records, 2L/(Nλ), L = √2 softmax
        if N is None or N < 1:
            raise ValueError(f"pooled_output needs the number of pooled records N, got {N!r}")
        return (2.0 * math.sqrt(2.0) if multi else 2.0) / (N * lam)
    if n_min is None or n_min < 1:
        raise ValueError(f"{mechanism} needs the smallest party size n_min, got {n_min!r}")
    if mechanism == "pathak":  # M6a: 2/(n_(1) λ), not divided by M
        return 2.0 * G / (n_min * lam)
    if mechanism == "jayaraman_output":  # M5: 2G/(M n_(1) λ)
        return 2.0 * G / (M * n_min * lam)
    raise KeyError(f"unknown output-perturbation mechanism {mechanism!r}; known: {sorted(PRIVACY_UNIT)}")


def calibrate(
    mechanism: str,
    epsilon: float,
    dim: int,
    lam: float,
    M: int,
    n_min: int | None = None,
    n_classes: int = 2,
    tight: bool = False,
    code_faithful_laplace: bool = False,
    N: int | None = None,
) -> OutputCalibration:
    """Sensitivity, β = ε/Δ₂ (spec §0.4) and the ε really given, for one release in dimension ``dim``."""
    delta2 = sensitivity(mechanism, lam, M, n_min, n_classes, tight, N=N)
    beta = math.inf if math.isinf(epsilon) else l2_laplace_beta(epsilon, delta2)
    laplace = code_faithful_laplace and mechanism == "jayaraman_output"
    eps_acc = epsilon * math.sqrt(dim) if laplace else epsilon
    return OutputCalibration(
        mechanism, PRIVACY_UNIT[mechanism], delta2, beta,
        "laplace_per_coordinate" if laplace else "l2_laplace", eps_acc,
    )


def draw_noise(rng: np.random.Generator, cal: OutputCalibration, shape: tuple[int, ...]) -> np.ndarray:
    """Noise of ``cal`` for a parameter of ``shape`` (flattened to dimension ∏shape for N-L2)."""
    dim = int(np.prod(shape))
    if math.isinf(cal.beta):
        return np.zeros(shape)
    if cal.noise == "laplace_per_coordinate":  # N-Lap1, scale Δ₂/ε = 1/β (I-9)
        return rng.laplace(0.0, 1.0 / cal.beta, size=shape)
    return l2_laplace(rng, cal.beta, dim).reshape(shape)
