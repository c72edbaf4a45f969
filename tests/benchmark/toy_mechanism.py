"""A toy benchmark mechanism registered from a test module (the extension point's test).

The first party alone releases its regularised minimiser with N-L2 noise calibrated to its own
size, Δ₂ = 2/(n₀λ): one release, pure ε-DP for its records (the others' records are unused).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mpdp.models.logistic import solve_optimum
from mpdp.privacy.private_selection import pure_dp_rdp
from mpdp.privacy.samplers import l2_laplace
from mpdp.studies.benchmark.calibration import Ledger
from mpdp.studies.benchmark.interface import BatchMechanism, Run


@dataclass(frozen=True)
class FirstPartyOnly(BatchMechanism):
    def candidates(self, cfg: Mapping[str, Any]) -> list[float]:
        return [float(v) for v in cfg["benchmark"]["output"]["lambda_candidates"]]

    def ledger(self, cfg: Mapping[str, Any], epsilon: float, sizes: np.ndarray, hparam: float,
               dim: int) -> Ledger:
        delta_2 = 2.0 / (int(sizes[0]) * hparam)
        return Ledger("pure", delta_2, float("nan"), epsilon / delta_2, float("nan"), epsilon, 0.0, "aggregate")

    def rdp_curve(self, cfg: Mapping[str, Any], epsilon: float) -> np.ndarray:
        return pure_dp_rdp(epsilon)  # one pure ε-DP release, whatever the candidate

    def train_batch(self, cfg: Mapping[str, Any], X: np.ndarray, y: np.ndarray,
                    parties: list[np.ndarray], runs: Sequence[Run]) -> np.ndarray:
        first = parties[0]
        return np.stack([solve_optimum(X[first], y[first], r.hparam) + l2_laplace(r.rng, r.ledger.beta, X.shape[1])
                         for r in runs], axis=1)


MECHANISM = FirstPartyOnly(id="toy_first_party", label="toy: first party alone", spec="test", family="toy",
                           paper="extension", privacy_unit="record", calibration="one N-L2 release, pure ε",
                           audit="nl2_output")
