"""Attack on consecutive releases of paper-calibrated PVP: its hidden state (spec I-20, M10, A1).

PVP's node p minimises each next primal with its own *unperturbed* previous primal f_p(t),
which it never releases (Algorithm 3 of the Zhang–Zhu seed). Given the same released history,
two neighbouring data sets leave different hidden f_p(t), and the next release f̃_p(t+1) =
f_p(t+1) + ε is calibrated to the one-step sensitivity Δ_p only. The paper's claim — each
release is α-DP given the earlier ones — is a claim for *every* released history, so the
audit fixes one and attacks the release that follows it:

1. **History** (released values, any history has positive density under both data sets): the
   node's own and its V neighbours' releases f̃(s) = −c·e₁ for s = 1 … t−1 (the duals stay 0).
   They pull the hidden state far along −e₁, where the audited record is misclassified and its
   loss is almost linear (curvature σ′ ≈ 0), so each step moves the minimiser by almost its
   full gradient gap divided by κ_p.
2. **Record pair** (2-D, replace-one, the node holds ``n`` records, the others x = 0):
   x = (cos φ, sin φ) in D, x′ = (cos φ, −sin φ) in D′, both y = +1, φ = :data:`ANGLE`; both are
   misclassified at f ≈ −c e₁, so their gradient gap is ≈ ‖x − x′‖ = 2 sin φ ≈ 2 (the
   sensitivity's worst case), in the same direction every step.
3. **Hidden states** f_p(t) under D and D′ along that history: the node's primal step of
   :func:`mpdp.mechanisms.admm.run_batch` (the exact minimiser by :func:`mpdp.models.newton.solve`,
   q = κ_p, linear term 2λ − η(V f_p + Σ_j f̃_j), dual update with the released values),
   replayed by :func:`hidden_states` (a test checks it reproduces ``run_batch`` step by step).
4. **Release t** under each data set: hidden state + N-L2 noise of the paper's ζ = α/Δ_p
   (:func:`mpdp.mechanisms.admm.pvp_zeta`, shipped sampler), drawn N times per side; the
   likelihood-ratio score and Clopper–Pearson bound of spec A1 at δ = 0 (one pure release).

The exact ε of that release is ζ·d(t) = α·d(t)/Δ_p (ε_up), below the I-20 bound
α(1 − r^t)/(1 − r) (:func:`mpdp.mechanisms.admm.pvp_real_epsilon`, reported as the accounted
ε). ε̂ above the claimed α proves the per-release claim false (with probability ≥ 1 − β).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from mpdp.audit.adapters import AuditContext, nl2_audit_row
from mpdp.errors import ConfigError
from mpdp.mechanisms.admm import kappa, pvp_hidden_gain, pvp_real_epsilon, pvp_sensitivity, pvp_zeta
from mpdp.models import newton

#: half-angle φ between the two audited records (x, x′ = reflections about e₁)
ANGLE = math.radians(80.0)
#: distance c of the released history from the origin, in units of 1/κ_p·(n records' scale)
FAR = 200.0


def record_pair(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X_D, X_D′, y): the node's n records in 2-D; record 0 is the audited one, the rest x = 0."""
    X = np.zeros((n, 2))
    X[0] = (math.cos(ANGLE), math.sin(ANGLE))
    X_prime = X.copy()
    X_prime[0, 1] = -X_prime[0, 1]
    return X, X_prime, np.ones(n)


def hidden_states(X: np.ndarray, y: np.ndarray, rho: float, penalty: float, P: int, degree: int,
                  own: np.ndarray, neighbours_sum: np.ndarray, C_R: float = 1.0) -> np.ndarray:
    """Hidden primals f_p(1 … t) of a PVP node along a released history (spec M10 step (18)).

    ``own[s]``, ``neighbours_sum[s]`` (s = 0 … t−1; d-vectors): the node's own release and the
    sum of its neighbours' releases after iteration s (s = 0: the initial zeros). Step s + 1
    minimises (C^R/B)Σ l + (κ_p/2)‖f‖² + (2λ − η(V f_p(s) + Σ_j f̃_j(s)))ᵀ f exactly, then the
    dual takes λ += (η/2)(V f̃_p(s+1) − Σ_j f̃_j(s+1)) (released values, eq. (20)).
    Returns (t × d).
    """
    t = own.shape[0]
    q = float(kappa(rho, P, penalty, degree))
    f = np.zeros((X.shape[1], 1))
    lam = np.zeros_like(f)
    out = []
    for s in range(t):
        lin = 2.0 * lam - penalty * (degree * f + neighbours_sum[s][:, None])
        f = newton.solve(X, y, C_R / X.shape[0], q, lin, init=f).theta
        out.append(f[:, 0].copy())
        if s + 1 < t:
            lam = lam + 0.5 * penalty * (degree * own[s + 1] - neighbours_sum[s + 1])[:, None]
    return np.array(out)


def _required(setting: Mapping[str, Any], *keys: str) -> list[Any]:
    missing = [k for k in keys if setting.get(k) is None]
    if missing:
        raise ConfigError(f"audit setting for 'pvp_history' needs {missing}")
    return [setting[k] for k in keys]


@dataclass(frozen=True)
class PVPHistoryAdapter:
    """Many-draws audit of PVP's t-th release given a worst-case released history (module doc)."""

    id: str = "pvp_history"
    method: str = "many_draws"
    privacy_unit: str = "record"
    #: nodes and degree of the study's ring (admm.P = 5, V_p = 2)
    P: int = 5
    degree: int = 2

    def pair(self, setting: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray, float, float, float]:
        """(f_p^D(t), f_p^D′(t), Δ_p, ζ, r) for the setting."""
        t, n, rho, penalty = _required(setting, "T", "n", "rho", "penalty")
        t, n, rho, penalty = int(t), int(n), float(rho), float(penalty)
        if t < 2:
            raise ConfigError("audit setting 'pvp_history': T (the attacked release) must be ≥ 2")
        alpha = float(setting["epsilon"])
        kap = float(kappa(rho, self.P, penalty, self.degree))
        far = -FAR * np.array([1.0, 0.0])
        own = np.array([np.zeros(2)] + [far] * (t - 1))
        X, X_prime, y = record_pair(n)
        states = [hidden_states(Xs, y, rho, penalty, self.P, self.degree, own, self.degree * own)[-1]
                  for Xs in (X, X_prime)]
        sensitivity = float(pvp_sensitivity(n, kap))
        return states[0], states[1], sensitivity, float(pvp_zeta(alpha, n, kap)), float(
            pvp_hidden_gain(rho, self.P, penalty, self.degree))

    def run(self, setting: Mapping[str, Any], ctx: AuditContext) -> dict[str, Any]:
        start = time.perf_counter()
        a, a_prime, sensitivity, zeta, r = self.pair(setting)
        t, alpha = int(setting["T"]), float(setting["epsilon"])
        row = nl2_audit_row(self.id, self.privacy_unit, setting, ctx, a, a_prime, zeta, sensitivity)
        ratio = float(np.linalg.norm(a - a_prime)) / sensitivity
        return row | {
            "eps_accounted": float(pvp_real_epsilon(alpha, r, t)),
            "eps_accounted_scope": "release_given_history", "accountant": "pvp_hidden_state_bound",
            "T": t, "n": int(setting["n"]), "n_min": int(setting["n"]),
            "data": (f"release t = {t} of a PVP node (ring P = {self.P}, B_p = {setting['n']}, ρ = "
                     f"{setting['rho']:g}, η = {setting['penalty']:g}, r = {r:.3f}) given a released "
                     f"history at −{FAR:g}·e₁; 2-D record pair at ±{math.degrees(ANGLE):.0f}°; hidden "
                     f"states differ by d(t) = {ratio:.3f}·Δ_p"),
            "seconds": time.perf_counter() - start,
        }
