"""Central output perturbation: the smallest complete benchmark mechanism (docs/extending.md).

A trusted curator pools the parties' records, solves the regularised logistic ERM exactly and
releases θ*(λ) + η with η ~ N-L2(β), p(η) ∝ exp(−β‖η‖). Replacing one record moves θ*(λ) by at
most Δ₂ = 2G/(nλ) (Chaudhuri et al. 2011, Cor. 8; spec §0.4), so β = ε/Δ₂ makes the one
release — the whole transcript — pure ε-DP for one record (δ = 0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mpdp.audit.adapters import AuditContext, nl2_audit_row, record_pair
from mpdp.models.logistic import solve_optimum
from mpdp.privacy.private_selection import pure_dp_rdp
from mpdp.privacy.samplers import l2_laplace, l2_laplace_beta
from mpdp.studies.benchmark.calibration import Ledger
from mpdp.studies.benchmark.interface import BatchMechanism, Run


def sensitivity(n: int, lam: float, G: float = 1.0) -> float:
    """Δ₂ = 2G/(nλ): ℓ2 sensitivity of θ*(λ) under replace-one (spec §0.4)."""
    return 2.0 * G / (n * lam)


@dataclass(frozen=True)
class CentralOutput(BatchMechanism):
    """The mechanism: what it is, how it is calibrated, trained and audited."""

    def candidates(self, cfg: Mapping[str, Any]) -> list[float]:
        # the same budget as every other mechanism: the output family's λ candidates
        return [float(v) for v in cfg["benchmark"]["output"]["lambda_candidates"]]

    def ledger(self, cfg: Mapping[str, Any], epsilon: float, sizes: np.ndarray, hparam: float,
               dim: int) -> Ledger:
        delta_2 = sensitivity(int(np.sum(sizes)), hparam, float(cfg["benchmark"]["G"]))
        beta = l2_laplace_beta(epsilon, delta_2)
        # ε of the transcript recomputed from the noise used: one release, (β·Δ₂, 0)-DP
        return Ledger("pure", delta_2, float("nan"), beta, float("nan"), beta * delta_2, 0.0, "aggregate")

    def rdp_curve(self, cfg: Mapping[str, Any], epsilon: float) -> np.ndarray:
        # for the private selection protocol: one pure ε-DP release, whatever the candidate
        return pure_dp_rdp(epsilon)

    def train_batch(self, cfg: Mapping[str, Any], X: np.ndarray, y: np.ndarray,
                    parties: list[np.ndarray], runs: Sequence[Run]) -> np.ndarray:
        rows = np.concatenate(parties)  # the curator pools every party's records
        optimum = {lam: solve_optimum(X[rows], y[rows], lam) for lam in {r.hparam for r in runs}}
        return np.stack([optimum[r.hparam] + l2_laplace(r.rng, r.ledger.beta, X.shape[1])
                         for r in runs], axis=1)

    def audit_adapter(self) -> CentralOutputAudit:
        return CentralOutputAudit(self)

    def audit_settings(self, cfg: Mapping[str, Any]) -> list[dict[str, Any]]:
        eps = float(cfg["benchmark"]["reference"]["epsilon"])
        return [{"mechanism": self.id, "epsilon": eps, "n": 100, "lambda": 1.0}]


@dataclass(frozen=True)
class CentralOutputAudit:
    """Many-draws audit (spec A1, A3): the worst-case record pair, this mechanism's own β."""

    mechanism: CentralOutput
    method: str = "many_draws"
    privacy_unit: str = "record"

    @property
    def id(self) -> str:
        return self.mechanism.id

    def run(self, setting: Mapping[str, Any], ctx: AuditContext) -> dict[str, Any]:
        n, lam, eps = int(setting["n"]), float(setting["lambda"]), float(setting["epsilon"])
        X, y_d, y_p = record_pair(n)
        a, a_prime = solve_optimum(X, y_d, lam), solve_optimum(X, y_p, lam)
        cfg = {"benchmark": {"G": 1.0}}
        led = self.mechanism.ledger(cfg, eps, np.array([n]), lam, 1)
        row = nl2_audit_row(self.id, self.privacy_unit, setting, ctx, a, a_prime, led.beta, led.sensitivity)
        return row | {"eps_accounted": led.eps_total, "eps_accounted_scope": led.scope, "accountant": led.accountant,
                      "n": n, "data": f"spec A3 record pair (synthetic, p = 1, n = {n})"}


#: what the registry imports when benchmark.mechanisms names this file
MECHANISM = CentralOutput(
    id="central_output", label="central output perturbation (trusted curator)", spec="example",
    family="output", paper="extension", privacy_unit="record",
    calibration="one N-L2 release of the pooled θ*, pure ε", audit="central_output", hparam="lambda",
)
