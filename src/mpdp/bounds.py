"""Theoretical bounds overlaid on the empirical curves (spec bounds.md B0–B4, B9, B10).

Every bound is a plain function of quantities the pipeline already knows
(``n, n_min, m, p, T, eta, eps, delta, lam, L, G, delta0, sigma``) and broadcasts over numpy
arrays: a scalar in gives a ``float`` out, an array in gives an array out.

Conventions (spec B0): L2-regularised logistic regression with ``||x|| <= 1``, so ``G = 1`` and
``L = 1/4 + lam``; ``delta0 = L_D(theta_0) - L*`` is the initial excess loss; ``sigma`` is the
per-coordinate standard deviation of the Gaussian gradient noise, injected as
``theta <- theta - eta * (grad + z)``. All logarithms are natural.

Scale warning (spec B0): with ``lam = 1e-3`` and ``T = 1000`` the classical bounds (B1, B1′,
B2, B3) usually exceed ``ln 2``, the loss of ``theta = 0``; :func:`is_vacuous` flags that, and
figures must label such lines as vacuous upper bounds on a log-scale axis. The quadratic-model
prediction B1‴ is the only overlay expected to sit near the data.

Scope (spec B1 caveat): B1, B1′ and B2 analyse full-data noisy GD, i.e. WYX (M2) and per-round
WD-DP (M3.2); B3 the per-round simple average (M4.2). For the literal Algorithm 1
(``local_then_aggregate``) no bound of the paper applies, so lines drawn there must be labelled
"per-round theory".
"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

#: ``L_D(0) = ln 2`` for logistic loss (the regulariser vanishes at 0); spec B0.
LOSS_AT_ZERO: float = math.log(2.0)

#: Constant ``c`` of the moments-accountant calibration ``sigma^2 = c G^2 T ln(1/delta)/(n eps)^2``
#: (mechanisms.md §0.5 C1; bounds.md B0, B4 explicit forms).
MA_CONSTANT: float = 16.0

#: Relative slack when checking the step-size condition ``eta <= 1/L`` (float round-off only).
_STEP_TOL: float = 1e-12

#: Negative Hessian eigenvalues down to ``-_EIG_TOL * max|h|`` are eigensolver round-off.
_EIG_TOL: float = 1e-10

FloatOrArray = float | np.ndarray


def _out(value: np.ndarray) -> FloatOrArray:
    """Return a Python float for 0-d results, the array otherwise."""
    value = np.asarray(value, dtype=float)
    return float(value) if value.ndim == 0 else value


def _check(name: str, value: ArrayLike, *, positive: bool = True) -> np.ndarray:
    """Convert ``value`` to a float array and check it is finite and > 0 (or >= 0)."""
    arr = np.asarray(value, dtype=float)
    ok = arr > 0 if positive else arr >= 0
    if not np.all(np.isfinite(arr)) or not np.all(ok):
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"{name} must be finite and {bound}, got {value!r}")
    return arr


def _check_delta(delta: ArrayLike) -> np.ndarray:
    """Convert ``delta`` to a float array and check ``0 < delta < 1``."""
    arr = np.asarray(delta, dtype=float)
    if not np.all((arr > 0) & (arr < 1)):
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    return arr


def _contraction(rate: np.ndarray, T: np.ndarray) -> np.ndarray:
    """``(1 - rate)^T`` for ``0 <= rate <= 1``, as ``exp(T log1p(-rate))`` (stable for tiny rates)."""
    with np.errstate(divide="ignore", invalid="ignore"):  # rate == 1: log1p(-1) = -inf
        return np.where(T == 0, 1.0, np.exp(T * np.log1p(-rate)))


def _accumulated(rate: np.ndarray, T: np.ndarray, step_weight: np.ndarray) -> np.ndarray:
    """``step_weight * sum_{k<T} (1 - rate)^k``, i.e. ``step_weight * (1 - (1 - rate)^T) / rate``.

    The noise accumulated over ``T`` steps of a recursion contracting by ``1 - rate``
    (spec B1′ derivation); at ``rate = 0`` it is the limit ``step_weight * T``.
    """
    rate, T, step_weight = np.broadcast_arrays(rate, T, step_weight)
    safe = np.where(rate > 0, rate, 0.5)  # placeholder where rate == 0 (limit used instead)
    with np.errstate(divide="ignore", invalid="ignore"):  # safe == 1: log1p(-1) = -inf
        geometric = np.where(T == 0, 0.0, -np.expm1(T * np.log1p(-safe)) / safe)
    return step_weight * np.where(rate > 0, geometric, T)


# --------------------------------------------------------------------------------------------
# B0: constants and noise scales
# --------------------------------------------------------------------------------------------


def smoothness(lam: float, gram_max_eigenvalue: float | None = None, n: int | None = None) -> float:
    """Smoothness constant ``L`` of ``L_D`` (spec B0).

    Default: ``L = 1/4 + lam`` (worst case, ``l'' <= 1/4`` and ``||x|| <= 1``). With the
    largest eigenvalue of ``X^T X`` and ``n`` (config ``L_mode: data``) it is
    ``lambda_max(X^T X) / (4 n) + lam``.
    """
    _check("lam", lam, positive=False)
    if (gram_max_eigenvalue is None) != (n is None):
        raise ValueError("give both gram_max_eigenvalue and n (L_mode: data) or neither")
    if gram_max_eigenvalue is None:
        return 0.25 + float(lam)
    _check("gram_max_eigenvalue", gram_max_eigenvalue, positive=False)
    _check("n", n)
    return float(gram_max_eigenvalue) / (4.0 * float(n)) + float(lam)


def sigma_wd(
    G: ArrayLike, T: ArrayLike, delta: ArrayLike, n: ArrayLike, eps: ArrayLike
) -> FloatOrArray:
    """Per-coordinate noise std of WD-DP / WYX: ``4 G sqrt(T ln(1/delta)) / (n eps)`` (spec B0, B9).

    This is ``sqrt(c G^2 T ln(1/delta)) / (n eps)`` with the moments-accountant constant
    ``c = 16`` of mechanisms.md C1 (valid for ``eps <= 2 ln(1/delta)``).
    """
    G, T, n, eps = (_check(k, v) for k, v in (("G", G), ("T", T), ("n", n), ("eps", eps)))
    delta = _check_delta(delta)
    return _out(np.sqrt(MA_CONSTANT * T * np.log(1.0 / delta)) * G / (n * eps))


def sigma_jayaraman(
    G: ArrayLike,
    T: ArrayLike,
    delta: ArrayLike,
    m: ArrayLike,
    n_min: ArrayLike,
    eps: ArrayLike,
    accountant: Literal["wd_dp", "ma16", "zcdp_code"] = "wd_dp",
) -> FloatOrArray:
    """Per-coordinate noise std of Jayaraman's simple average (spec B0, B9; mechanisms.md M4).

    The sensitivity of the simple average is ``2G/(m n_min)``, i.e. an effective size
    ``m n_min``:

    * ``wd_dp`` (alias ``ma16``, the pipeline's name for the same c = 16 calibration):
      ``4 G sqrt(T ln(1/delta)) / (m n_min eps)``;
    * ``zcdp_code`` (Jayaraman's released code, mechanisms.md C2):
      ``sqrt(2T) G / (m n_min (sqrt(ln(1/delta) + eps) - sqrt(ln(1/delta))))``.
    """
    m, n_min = _check("m", m), _check("n_min", n_min)
    if accountant in ("wd_dp", "ma16"):
        return sigma_wd(G, T, delta, m * n_min, eps)
    if accountant != "zcdp_code":
        raise ValueError(f"accountant must be 'wd_dp', 'ma16' or 'zcdp_code', got {accountant!r}")
    G, T, eps = _check("G", G), _check("T", T), _check("eps", eps)
    delta = _check_delta(delta)
    log_inv = np.log(1.0 / delta)
    # sqrt(a + eps) - sqrt(a), written without cancellation.
    root_gap = eps / (np.sqrt(log_inv + eps) + np.sqrt(log_inv))
    return _out(np.sqrt(2.0 * T) * G / (m * n_min * root_gap))


def noise_ratio(n: ArrayLike, m: ArrayLike, n_min: ArrayLike) -> FloatOrArray:
    """``sigma_J / sigma_WD = n / (m n_min)`` (>= 1), same accountant for both (spec B3, B9)."""
    n, m, n_min = _check("n", n), _check("m", m), _check("n_min", n_min)
    return _out(n / (m * n_min))


def two_group_noise_ratio(u: ArrayLike) -> FloatOrArray:
    """``sigma_J / sigma_WD = (1 + u) / 2`` in the two-group design (spec B3, E2.2).

    The noise-floor terms of the bounds scale with its square, ``((1 + u)/2)^2``.
    """
    u = _check("u", u)
    return _out((1.0 + u) / 2.0)


def effective_aggregate_std(sigma: ArrayLike, weights: ArrayLike) -> FloatOrArray:
    """Std of ``sum_j a_j z_j`` for independent per-party noises of std ``sigma`` (spec B9).

    ``sigma * sqrt(sum_j a_j^2)``: weighted aggregation (``a_j = n_j/n``) in the literal
    local-then-aggregate mode, or ``sigma / sqrt(m)`` for the simple average (``a_j = 1/m``).
    ``weights`` is the 1-D vector of aggregation weights.
    """
    sigma = _check("sigma", sigma, positive=False)
    a = np.asarray(weights, dtype=float)
    if a.ndim != 1 or a.size == 0 or not np.all(np.isfinite(a)):
        raise ValueError(f"weights must be a non-empty finite 1-D vector, got {weights!r}")
    return _out(sigma * math.sqrt(float(np.sum(a * a))))


def step_size_ok(eta: ArrayLike, L: ArrayLike) -> bool | np.ndarray:
    """Whether ``0 < eta <= 1/L``, the step-size condition of B1′, B2 and B3 (spec B1′)."""
    eta, L = _check("eta", eta), _check("L", L)
    ok = eta * L <= 1.0 + _STEP_TOL
    return bool(ok) if np.ndim(ok) == 0 else ok


def _step_condition(eta: np.ndarray, L: np.ndarray, strict: bool, bound: str) -> np.ndarray:
    """Raise (``strict``) or return the mask of entries where ``eta <= 1/L`` holds."""
    ok = np.asarray(step_size_ok(eta, L))
    if strict and not np.all(ok):
        raise ValueError(
            f"{bound} needs eta <= 1/L (spec B1′); got eta={eta!r}, 1/L={1.0 / L!r}. "
            "Pass strict=False to get NaN where the condition fails."
        )
    return ok


def _sc_inputs(
    T: ArrayLike, lam: ArrayLike, L: ArrayLike, delta0: ArrayLike, p: ArrayLike, sigma: ArrayLike
) -> tuple[np.ndarray, ...]:
    """Validate the inputs shared by the strongly convex bounds (``0 <= lam <= L``)."""
    lam_arr, L_arr = _check("lam", lam, positive=False), _check("L", L)
    if np.any(lam_arr > L_arr):
        raise ValueError(f"need lam <= L (strong convexity <= smoothness), got {lam!r} > {L!r}")
    return (
        _check("T", T, positive=False),
        lam_arr,
        L_arr,
        _check("delta0", delta0, positive=False),
        _check("p", p),
        _check("sigma", sigma, positive=False),
    )


# --------------------------------------------------------------------------------------------
# B1, B1′, B2, B1‴, B3
# --------------------------------------------------------------------------------------------


def b1_prime(
    T: ArrayLike,
    eta: ArrayLike,
    lam: ArrayLike,
    L: ArrayLike,
    delta0: ArrayLike,
    p: ArrayLike,
    sigma: ArrayLike,
    *,
    strict: bool = True,
) -> FloatOrArray:
    """Excess-risk bound of noisy GD for any ``0 < eta <= 1/L`` (spec B1′, [DER]).

    ``E[L_D(theta_T)] - L* <= (1 - eta lam)^T delta0
    + L eta p sigma^2 / (2 lam) * (1 - (1 - eta lam)^T)``.

    Applies to WYX (M2) and per-round WD-DP (M3.2); it is the form used for the overlays.
    At ``eta = 1/L`` it equals :func:`b1_strongly_convex`. For ``lam = 0`` the value is the
    ``lam -> 0`` limit ``delta0 + T L eta^2 p sigma^2 / 2`` (the descent lemma alone).
    If ``eta > 1/L`` the bound does not hold: ``strict=True`` raises ``ValueError``,
    ``strict=False`` returns NaN for those entries.
    """
    T, lam, L, delta0, p, sigma = _sc_inputs(T, lam, L, delta0, p, sigma)
    eta = _check("eta", eta)
    ok = _step_condition(eta, L, strict, "B1′")
    rate = eta * lam
    value = _contraction(rate, T) * delta0 + _accumulated(rate, T, L * eta**2 * p * sigma**2 / 2.0)
    return _out(np.where(ok, value, np.nan))


def b1_strongly_convex(
    T: ArrayLike, lam: ArrayLike, L: ArrayLike, delta0: ArrayLike, p: ArrayLike, sigma: ArrayLike
) -> FloatOrArray:
    """WD-DP Theorem 2, inequality (11), explicit form with ``eta = 1/L`` (spec B1).

    ``(1 - lam/L)^T delta0 + p sigma^2 / (2 lam) * (1 - (1 - lam/L)^T)``
    (``lam = 0``: the limit ``delta0 + T p sigma^2 / (2 L)``).
    """
    T, lam, L, delta0, p, sigma = _sc_inputs(T, lam, L, delta0, p, sigma)
    rate = lam / L
    return _out(_contraction(rate, T) * delta0 + _accumulated(rate, T, p * sigma**2 / (2.0 * L)))


class OptimalT(NamedTuple):
    """Minimiser ``T*`` of the explicit B1 bound and the bound's value there (spec B1 [DER])."""

    T_star: FloatOrArray
    bound: FloatOrArray


def b1_optimal_T(
    n: ArrayLike,
    p: ArrayLike,
    eps: ArrayLike,
    delta: ArrayLike,
    lam: ArrayLike,
    L: ArrayLike,
    delta0: ArrayLike,
    G: ArrayLike = 1.0,
) -> OptimalT:
    """Best number of steps for B1 with ``sigma = sigma_WD`` (spec B1, "Optimal T" [DER]).

    With ``a = 8 p G^2 ln(1/delta) / (lam n^2 eps^2)`` and ``(1 - lam/L)^T <= exp(-lam T/L)``
    the bound is ``exp(-lam T/L) delta0 + a T`` (``sigma_WD^2`` grows linearly in ``T``), so

    * ``T* = (L/lam) ln(lam delta0 / (L a))`` and the bound there is
      ``(L a / lam) (1 + ln(lam delta0 / (L a)))``;
    * if ``lam delta0 <= L a`` the minimum is at ``T* = 0`` with value ``delta0`` (vacuous).

    ``T*`` is returned as a real number (round it for a run).
    """
    n, p, eps, lam, L, G = (
        _check(k, v)
        for k, v in (("n", n), ("p", p), ("eps", eps), ("lam", lam), ("L", L), ("G", G))
    )
    delta = _check_delta(delta)
    delta0 = _check("delta0", delta0, positive=False)
    a = MA_CONSTANT / 2.0 * p * G**2 * np.log(1.0 / delta) / (lam * n**2 * eps**2)
    ratio = lam * delta0 / (L * a)
    interior = ratio > 1.0
    log_ratio = np.log(np.where(interior, ratio, 1.0))
    T_star = np.where(interior, L / lam * log_ratio, 0.0)
    bound = np.where(interior, L * a / lam * (1.0 + log_ratio), delta0)
    return OptimalT(_out(T_star), _out(bound))


def b2_remark1(
    T: ArrayLike,
    eta: ArrayLike,
    lam: ArrayLike,
    L: ArrayLike,
    delta0: ArrayLike,
    p: ArrayLike,
    sigma: ArrayLike,
    *,
    strict: bool = True,
) -> FloatOrArray:
    """WD-DP Remark 1, inequality (12), with the generalised step (spec B2, [DER] for eta).

    ``(1 - eta lam)^T delta0 + T L eta^2 p sigma^2 / 2``; at ``eta = 1/L`` this is the paper's
    ``(1 - lam/L)^T delta0 + T p sigma^2 / (2L)``. It is looser than B1′ by about
    ``T eta lam``. Same step-size condition and ``strict`` behaviour as :func:`b1_prime`.
    """
    T, lam, L, delta0, p, sigma = _sc_inputs(T, lam, L, delta0, p, sigma)
    eta = _check("eta", eta)
    ok = _step_condition(eta, L, strict, "B2")
    value = _contraction(eta * lam, T) * delta0 + T * L * eta**2 * p * sigma**2 / 2.0
    return _out(np.where(ok, value, np.nan))


def b1_triple_prime(
    eta: ArrayLike,
    sigma: ArrayLike,
    hessian_eigenvalues: ArrayLike,
    T: int | None = None,
    theta0_minus_opt_coords: ArrayLike | None = None,
) -> FloatOrArray:
    """Quadratic-model prediction of the excess loss of noisy GD (spec B1‴, heuristic [DER]).

    Near ``theta*`` model ``L_D`` as a quadratic with Hessian eigenvalues ``h_i`` (computed
    from data at ``theta*``); then ``e_{t+1} = (1 - eta h_i) e_t - eta z_t`` per eigen-direction.

    * ``T=None``: the stationary noise floor ``sum_i eta sigma^2 / (2 (2 - eta h_i))``
      (``~ eta p sigma^2 / 4`` when all ``eta h_i << 2``).
    * ``T`` given: the exact expectation after ``T`` steps under the quadratic model,
      ``sum_i [eta sigma^2 / (2 (2 - eta h_i)) (1 - r_i) + h_i/2 r_i c_i^2]`` with
      ``r_i = (1 - eta h_i)^(2T)`` and ``c_i = (theta_0 - theta*)^T u_i`` the coordinates in
      the eigenbasis (``theta0_minus_opt_coords``; omitted means ``theta_0 = theta*``). The
      spec's "stationary + transient" sum drops the factor ``(1 - r_i)`` on the noise term and
      is therefore an upper bound on this value; both agree once ``r_i ~ 0``.

    ``eta`` and ``sigma`` broadcast together; the sum runs over the last axis. Requires
    ``0 <= eta h_i < 2`` (otherwise the recursion diverges).
    """
    eta = _check("eta", eta)[..., None]
    sigma = _check("sigma", sigma, positive=False)[..., None]
    h = np.asarray(hessian_eigenvalues, dtype=float)
    if (
        h.ndim != 1
        or h.size == 0
        or not np.all(np.isfinite(h))
        or np.any(h < -_EIG_TOL * max(1.0, float(np.max(np.abs(h)))))
    ):
        raise ValueError(
            "hessian_eigenvalues must be a non-empty 1-D vector of finite values >= 0 "
            "(the Hessian of a convex L_D is positive semi-definite)"
        )
    h = np.maximum(h, 0.0)  # round-off of an eigensolver on a PSD matrix
    if np.any(eta * h >= 2.0):
        raise ValueError(
            f"B1‴ needs eta * h_i < 2 for every eigenvalue; eta={np.squeeze(eta)!r}, "
            f"max h={h.max()!r}"
        )
    floor = eta * sigma**2 / (2.0 * (2.0 - eta * h))
    if T is None:
        if theta0_minus_opt_coords is not None:
            raise ValueError("theta0_minus_opt_coords needs T (the transient depends on it)")
        return _out(np.sum(floor, axis=-1))
    T_arr = _check("T", T, positive=False)
    remaining = np.abs(1.0 - eta * h) ** (2.0 * T_arr)  # (1 - eta h)^(2T), T an integer
    value = floor * (1.0 - remaining)
    if theta0_minus_opt_coords is not None:
        c = np.asarray(theta0_minus_opt_coords, dtype=float)
        if c.shape != h.shape:
            raise ValueError(
                f"theta0_minus_opt_coords has shape {c.shape}, expected {h.shape} "
                "(one coordinate per Hessian eigenvalue)"
            )
        value = value + h / 2.0 * remaining * c**2
    return _out(np.sum(value, axis=-1))


def b3_jayaraman(
    T: ArrayLike,
    eta: ArrayLike,
    lam: ArrayLike,
    L: ArrayLike,
    F_delta0: ArrayLike,
    p: ArrayLike,
    sigma_J: ArrayLike,
    theta_F_minus_opt_sqnorm: ArrayLike,
    *,
    strict: bool = True,
) -> FloatOrArray:
    """Bound on the optimal gap ``L_D(theta_T) - L*`` of Jayaraman's simple average (spec B3).

    The iterate is noisy GD on ``F = (1/m) sum_j L_{D_j}`` (same ``lam``, ``L``), so B1′ with
    ``sigma_J`` and ``F_delta0 = F(theta_0) - F*`` bounds the F-gap. It is converted to the
    figures' metric with ``L_D(theta) - L* <= (2L/lam)(F(theta) - F*) + L ||theta_F* - theta*||^2``
    ([DER]); ``theta_F_minus_opt_sqnorm = ||theta_F* - theta*||^2`` comes from the non-private
    solvers. The conversion needs strong convexity: for ``lam = 0`` the bound does not apply
    and is NaN. Needs ``eta <= 1/L`` (``strict`` as in :func:`b1_prime`).
    """
    lam_arr = _check("lam", lam, positive=False)
    L_arr = _check("L", L)
    sq = _check("theta_F_minus_opt_sqnorm", theta_F_minus_opt_sqnorm, positive=False)
    f_gap = np.asarray(
        b1_prime(T, eta, lam_arr, L_arr, F_delta0, p, sigma_J, strict=strict), dtype=float
    )
    strongly_convex = lam_arr > 0
    value = 2.0 * L_arr / np.where(strongly_convex, lam_arr, 1.0) * f_gap + L_arr * sq
    return _out(np.where(strongly_convex, value, np.nan))


def is_vacuous(value: ArrayLike, reference: ArrayLike = LOSS_AT_ZERO) -> bool | np.ndarray:
    """Whether a bound on the optimal gap is vacuous: larger than ``reference`` (spec B0).

    Default ``reference = ln 2 = L_D(0)``: the spec's rule, conservative whatever ``L*`` is.
    Pass ``reference = ln 2 - L*`` (the gap of ``theta = 0``) for the sharp criterion. NaN
    (a bound that does not apply) is reported as not vacuous.
    """
    out = np.asarray(value, dtype=float) > np.asarray(reference, dtype=float)
    return bool(out) if out.ndim == 0 else out


# --------------------------------------------------------------------------------------------
# B4: WD-DP Table 1
# --------------------------------------------------------------------------------------------

#: LaTeX of the paper's O-forms, transcribed from WD-DP Table 1 (spec B4, [S-000]).
_TABLE1_TEXT: dict[str, tuple[str, str]] = {
    "Pathak et al. 2010": (
        r"\text{None}",
        r"O\left(\frac{(m-1)^{2}(\lambda+1)}{n_{(1)}^{2}\lambda^{2}}"
        r"+\frac{p^{2}(\lambda+1)}{n_{(1)}^{2}\epsilon^{2}\lambda^{2}}\log^{2}\frac{p}{\delta}"
        r"+\frac{p(m-1)(\lambda+1)}{n_{(1)}^{2}\epsilon\lambda^{2}}\log\frac{p}{\delta}\right)",
    ),
    "Jayaraman et al. 2018": (
        r"O\left(\frac{G^{2}T\log(1/\delta)}{m^{2}n_{(1)}^{2}\epsilon^{2}}\right)",
        r"O\left(\frac{pG^{2}L\log^{2}(mn_{(1)})\log(1/\delta)}"
        r"{m^{2}n_{(1)}^{2}\lambda^{2}\epsilon^{2}}\right)",
    ),
    "Zhang et al. 2017": (
        r"O\left(\frac{pG^{2}\log(n/\delta)\log(1/\delta)+G^{2}\epsilon^{2}}{\epsilon^{2}}\right)",
        r"O\left(\frac{G\sqrt{p\log(n/\delta)\log(1/\delta)}\,D}{n\epsilon}\right)",
    ),
    "Wang, Ye, Xu 2017": (
        r"O\left(\frac{G^{2}T\ln(1/\delta)}{n^{2}\epsilon^{2}}\right)",
        r"O\left(\frac{pG^{2}\log^{2}(n)\ln(1/\delta)}{n^{2}\epsilon^{2}}\right)",
    ),
    "WD-DP": (
        r"O\left(\frac{G^{2}T\ln(1/\delta)}{n^{2}\epsilon^{2}}\right)",
        r"O\left(\frac{pG^{2}\log(n)\ln(1/\delta)}{n^{2}\epsilon^{2}}\right)",
    ),
}

#: (distributed?, non-convex?) columns of WD-DP Table 1 [S-000].
_TABLE1_FLAGS: dict[str, tuple[bool, bool]] = {
    "Pathak et al. 2010": (True, False),
    "Jayaraman et al. 2018": (True, False),
    "Zhang et al. 2017": (False, True),
    "Wang, Ye, Xu 2017": (False, True),
    "WD-DP": (True, True),
}


def claimed_factors(n: ArrayLike, m: ArrayLike, n_min: ArrayLike) -> tuple[FloatOrArray, ...]:
    """The improvement factors WD-DP claims over Jayaraman (ratios ours/theirs, spec B4, I-8).

    Returns ``(noise, risk)`` with noise ``(m n_min)^2 / n^2`` and risk
    ``(m n_min)^2 log n / (log(m n_min) n)^2``; both are ``<= 1`` since ``m n_min <= n``.
    In the two-group design ``m n_min / n = 2 / (1 + u)``.
    """
    n, m, n_min = _check("n", n), _check("m", m), _check("n_min", n_min)
    mn = m * n_min
    if np.any(mn > n) or np.any(mn < 2):
        raise ValueError(f"need 2 <= m * n_min <= n, got m*n_min={mn!r}, n={n!r}")
    return _out(mn**2 / n**2), _out(mn**2 * np.log(n) / (np.log(mn) * n) ** 2)


def table1(
    n: int,
    m: int,
    n_min: int,
    p: int,
    eps: float,
    delta: float,
    lam: float,
    L: float | None = None,
    G: float = 1.0,
    T: int = 1000,
    constants: Literal["explicit", "O1"] = "explicit",
) -> pd.DataFrame:
    """WD-DP Table 1 evaluated at one setting (spec B4).

    One row per method: Pathak et al. 2010, Jayaraman et al. 2018, Zhang et al. 2017,
    Wang–Ye–Xu 2017, WD-DP. Columns:

    * ``noise_variance``: Gaussian noise variance per coordinate at the given ``T``
      (NaN for Pathak, an output perturbation, and for Zhang et al. under explicit constants);
    * ``excess_risk_bound``: with ``constants="explicit"`` the spec's explicit forms:
      Pathak [REC] ``(lam+1)/2 ((m-1)/(n_min lam) + 2 p ln(p/delta)/(n_min eps lam))^2``;
      Jayaraman and WYX through (12), WD-DP through (11), each at its own
      ``T = (L/lam) ln(size)`` with ``c = 16`` (the transient ``<= delta0/size`` is omitted);
      with ``constants="O1"`` every O(.) of the paper with constant 1. Zhang et al.'s needs the
      parameter-norm bound ``D`` and is NaN (transcribed only);
    * ``distributed``, ``nonconvex``: the paper's columns;
    * ``noise_formula``, ``formula``: LaTeX of the paper's O-forms (noise, risk);
    * ``noise_factor``, ``risk_factor``: WD-DP's value divided by the row's (ours/theirs);
    * ``claimed_noise_factor``, ``claimed_risk_factor``: what the paper claims for that ratio
      (Jayaraman: :func:`claimed_factors`; WYX: noise 1, risk ``1/ln n``), NaN elsewhere.

    Under explicit constants the computed factors equal the claimed ones; under ``O1`` the
    risk factor against Jayaraman differs by ``lam^2 / L`` (the O-forms hide different
    constants, mechanisms.md I-8).
    """
    if constants not in ("explicit", "O1"):
        raise ValueError(f"constants must be 'explicit' or 'O1', got {constants!r}")
    for name, value in (
        ("n", n),
        ("m", m),
        ("n_min", n_min),
        ("p", p),
        ("eps", eps),
        ("lam", lam),
        ("G", G),
        ("T", T),
    ):
        _check(name, value)
    _check_delta(delta)
    L = smoothness(lam) if L is None else float(_check("L", L))
    mn = float(m * n_min)
    noise_claim, risk_claim = claimed_factors(n, m, n_min)
    log_inv = math.log(1.0 / delta)
    c = MA_CONSTANT if constants == "explicit" else 1.0
    nan = float("nan")

    if constants == "explicit":
        pathak_risk = (
            (lam + 1.0)
            / 2.0
            * ((m - 1) / (n_min * lam) + 2.0 * p * math.log(p / delta) / (n_min * eps * lam)) ** 2
        )
        zhang_noise = nan
        # (12) at T = (L/lam) ln(size): c p G^2 L ln^2(size) ln(1/delta) / (2 lam^2 size^2 eps^2)
        jay_risk = c * p * G**2 * L * math.log(mn) ** 2 * log_inv / (2 * lam**2 * mn**2 * eps**2)
        wyx_risk = c * p * G**2 * L * math.log(n) ** 2 * log_inv / (2 * lam**2 * n**2 * eps**2)
        # (11) at T = (L/lam) ln n: c p G^2 L ln(n) ln(1/delta) / (2 lam^2 n^2 eps^2)
        wddp_risk = c * p * G**2 * L * math.log(n) * log_inv / (2 * lam**2 * n**2 * eps**2)
    else:
        log_p = math.log(p / delta)
        pathak_risk = (
            (m - 1) ** 2 * (lam + 1) / (n_min**2 * lam**2)
            + p**2 * (lam + 1) / (n_min**2 * eps**2 * lam**2) * log_p**2
            + p * (m - 1) * (lam + 1) / (n_min**2 * eps * lam**2) * log_p
        )
        zhang_noise = (p * G**2 * math.log(n / delta) * log_inv + G**2 * eps**2) / eps**2
        jay_risk = p * G**2 * L * math.log(mn) ** 2 * log_inv / (mn**2 * lam**2 * eps**2)
        wyx_risk = p * G**2 * math.log(n) ** 2 * log_inv / (n**2 * eps**2)
        wddp_risk = p * G**2 * math.log(n) * log_inv / (n**2 * eps**2)
    jay_noise = c * G**2 * T * log_inv / (mn**2 * eps**2)
    wd_noise = c * G**2 * T * log_inv / (n**2 * eps**2)

    values = {
        "Pathak et al. 2010": (nan, pathak_risk, nan, nan),
        "Jayaraman et al. 2018": (jay_noise, jay_risk, noise_claim, risk_claim),
        "Zhang et al. 2017": (zhang_noise, nan, nan, nan),
        "Wang, Ye, Xu 2017": (wd_noise, wyx_risk, 1.0, 1.0 / math.log(n)),
        "WD-DP": (wd_noise, wddp_risk, 1.0, 1.0),
    }
    rows = []
    for method, (noise, risk, claim_noise, claim_risk) in values.items():
        distributed, nonconvex = _TABLE1_FLAGS[method]
        noise_text, risk_text = _TABLE1_TEXT[method]
        rows.append(
            {
                "method": method,
                "noise_variance": noise,
                "excess_risk_bound": risk,
                "distributed": distributed,
                "nonconvex": nonconvex,
                "noise_formula": noise_text,
                "formula": risk_text,
                "noise_factor": wd_noise / noise,
                "risk_factor": wddp_risk / risk,
                "claimed_noise_factor": claim_noise,
                "claimed_risk_factor": claim_risk,
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# Output perturbation (bounds.md B5) and Hamm et al. Lemma 6 / Theorem 4 (B6)
# --------------------------------------------------------------------------------------------

#: bound on l'' for the logistic loss (spec B0, Hamm's c)
HAMM_C: float = 0.25


def b5_output_perturbation(
    dim: ArrayLike, beta: ArrayLike, L_J: ArrayLike, bias: ArrayLike = 0.0
) -> FloatOrArray:
    """B5: E[J(θ̄ + η)] − J* ≤ (J(θ̄) − J*) + (L_J/2)·p(p+1)/β² for η ~ N-L2(β) in dimension p.

    ``bias`` is J(θ̄) − J* (0 when θ̄ is the exact minimiser of J; the averaging bias of
    parameter averaging otherwise). β = inf gives the bias alone.
    """
    p = _check("dim", dim)
    b = _check("beta", beta)
    noise = 0.5 * _check("L_J", L_J) * p * (p + 1.0) / b**2
    return _out(np.asarray(bias, dtype=float) + noise)


def b6_lemma6(
    d: ArrayLike, lam: ArrayLike, M: ArrayLike, epsilon: ArrayLike, delta_p: ArrayLike,
    c: float = HAMM_C,
) -> FloatOrArray:
    """B6 Lemma 6: with probability ≥ 1 − δ_p, R_S(w_p) − R_S(w_s) ≤ 2d²(c+λ)ln²(d/δ_p)/(λ²M²ε²).

    For Alg. 1 (majority vote) pass ``M = 1`` (spec B6 "majority-vote analogue").
    """
    d_, lam_, M_, eps_ = (_check(n, v) for n, v in (("d", d), ("lam", lam), ("M", M), ("epsilon", epsilon)))
    log = np.log(d_ / _check_delta(delta_p))
    return _out(2.0 * d_**2 * (c + lam_) * log**2 / (lam_**2 * M_**2 * eps_**2))


def b6_lemma6_expected(
    d: ArrayLike, lam: ArrayLike, M: ArrayLike, epsilon: ArrayLike, c: float = HAMM_C
) -> FloatOrArray:
    """B6 expected version [DER]: E R_S(w_p) − R_S(w_s) ≤ 2d(d+1)(c+λ)/(M²λ²ε²)."""
    d_, lam_, M_, eps_ = (_check(n, v) for n, v in (("d", d), ("lam", lam), ("M", M), ("epsilon", epsilon)))
    return _out(2.0 * d_ * (d_ + 1.0) * (c + lam_) / (M_**2 * lam_**2 * eps_**2))


def b6_theorem4(
    risk_w0: ArrayLike, w0_sq_norm: ArrayLike, d: ArrayLike, lam: ArrayLike, M: ArrayLike,
    epsilon: ArrayLike, N: ArrayLike, delta_p: float = 0.025, delta_s: float = 0.025,
    c: float = HAMM_C,
) -> FloatOrArray:
    """B6 Theorem 4: with probability ≥ 1 − δ_p − δ_s,
    R(w_p) ≤ R(w_0) + 4d²(c+λ)ln²(d/δ_p)/(λ²M²ε²) + 16(32 + ln(1/δ_s))/(λN) + (λ/2)‖w_0‖².
    """
    d_, lam_, M_, eps_ = (_check(n, v) for n, v in (("d", d), ("lam", lam), ("M", M), ("epsilon", epsilon)))
    log = np.log(d_ / _check_delta(delta_p))
    noise = 4.0 * d_**2 * (c + lam_) * log**2 / (lam_**2 * M_**2 * eps_**2)
    sample = 16.0 * (32.0 + np.log(1.0 / _check_delta(delta_s))) / (lam_ * _check("N", N))
    return _out(np.asarray(risk_w0, float) + noise + sample + 0.5 * lam_ * np.asarray(w0_sq_norm, float))
