"""Objective perturbation in the cross-paper benchmark (docs/objective_perturbation.md OP1–OP3; issue 56).

The standard one-shot private baseline for regularised logistic regression, declared through the
extension point (:mod:`mpdp.studies.benchmark.interface`) like any added mechanism:

- ``objpert`` (central, OP1): a trusted curator pools every party's records and runs
  Chaudhuri–Monteleoni–Sarwate 2011 Algorithm 2 (:mod:`mpdp.mechanisms.objective_perturbation`)
  on the pooled n records: pure ε-DP per record, δ = 0;
- ``objpert_avg`` (multi-party, OP2): every party k runs Algorithm 2 on its own n_k records at
  the target ε (its own ε′_k, Δ_k), the curator releases the simple average of the m minimisers.
  A record lies in one party, whose θ_k is ε-DP for it; the other θ_j do not depend on it and the
  average is post-processing: pure ε-DP per record (the ledger's ε is the worst party's).

Knob: λ over ``benchmark.output.lambda_candidates`` (the output family's, the same budget);
tuned by the common protocol of :mod:`.batch_runner`. The private selection charges one pure
ε-DP release (:func:`mpdp.privacy.private_selection.pure_dp_rdp`). Each run's noise is drawn
from its own stream (``Run.rng``): central, one b ∈ R^p; multi-party, one b_k per party in party
order. The ledger (:class:`ObjectiveLedger`) records β and Δ of every party and ε recomputed from
them (:func:`~mpdp.mechanisms.objective_perturbation.epsilon_given`). Audit: the many-draws attack
of :mod:`mpdp.audit.objective_adapter` (ids ``objpert``, ``objpert_avg``), planted bug
``objective_noise_scale``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mpdp.mechanisms import objective_perturbation as op
from mpdp.privacy.private_selection import pure_dp_rdp
from mpdp.studies.benchmark.calibration import Ledger
from mpdp.studies.benchmark.interface import BatchMechanism, Run

CALIBRATION = "CMS11 Alg. 2 objective perturbation (ε′, Δ branch), pure ε"


@dataclass(frozen=True)
class ObjectiveLedger(Ledger):
    """A :class:`Ledger` with the noise of every perturbed objective: its N-L2 β and extra
    regularisation Δ, one per party (one entry for the central curator)."""

    betas: tuple[float, ...] = ()
    extra_regs: tuple[float, ...] = ()


def objective_ledger(epsilon: float, sizes: Sequence[int], lam: float, scope: str) -> ObjectiveLedger:
    """Calibrate each objective of size ``sizes[k]`` to ``epsilon``; ε of the release = the worst
    objective's ε recomputed from its (β, λ + Δ) (:func:`op.epsilon_given`)."""
    cals = [op.calibrate(epsilon, int(n), lam) for n in sizes]
    eps_total = max(op.epsilon_given(c.n, c.quad, c.beta) for c in cals)
    worst = min(cals, key=lambda c: c.n)  # the smallest objective: most noise, largest Δ
    return ObjectiveLedger("pure", op.NOISE_SENSITIVITY, math.nan, worst.beta, math.nan, float(eps_total), 0.0,
                           scope, tuple(c.beta for c in cals), tuple(c.extra_reg for c in cals))


def _lambda_candidates(cfg: Mapping[str, Any]) -> list[float]:
    return [float(v) for v in cfg["benchmark"]["output"]["lambda_candidates"]]


@dataclass(frozen=True)
class CentralObjective(BatchMechanism):
    """OP1: CMS11 Algorithm 2 on the pooled records (module docstring)."""

    def candidates(self, cfg: Mapping[str, Any]) -> list[float]:
        return _lambda_candidates(cfg)

    def ledger(self, cfg: Mapping[str, Any], epsilon: float, sizes: np.ndarray, hparam: float,
               dim: int) -> ObjectiveLedger:
        return objective_ledger(epsilon, [int(np.sum(sizes))], float(hparam), "aggregate")

    def train_batch(self, cfg: Mapping[str, Any], X: np.ndarray, y: np.ndarray,
                    parties: list[np.ndarray], runs: Sequence[Run]) -> np.ndarray:
        rows = np.concatenate(parties)  # the curator pools every party's records
        p = X.shape[1]
        noise = np.stack([op.draw_noise(r.rng, r.ledger.betas[0], p) for r in runs], axis=1)
        quad = np.array([r.hparam + r.ledger.extra_regs[0] for r in runs])
        return op.solve(X[rows], y[rows], quad, noise)

    def rdp_curve(self, cfg: Mapping[str, Any], epsilon: float) -> np.ndarray:
        return pure_dp_rdp(epsilon)  # one pure ε-DP release, whatever λ

    def audit_settings(self, cfg: Mapping[str, Any]) -> list[dict[str, Any]]:
        eps = float(cfg["benchmark"]["reference"]["epsilon"])
        return [{"mechanism": self.audit, "epsilon": eps},
                {"mechanism": self.audit, "epsilon": eps, "planted_bug": "objective_noise_scale"}]


@dataclass(frozen=True)
class PartyObjective(CentralObjective):
    """OP2: CMS11 Algorithm 2 per party on its own records, the m minimisers averaged."""

    def ledger(self, cfg: Mapping[str, Any], epsilon: float, sizes: np.ndarray, hparam: float,
               dim: int) -> ObjectiveLedger:
        return objective_ledger(epsilon, [int(s) for s in sizes], float(hparam), "worst_party")

    def train_batch(self, cfg: Mapping[str, Any], X: np.ndarray, y: np.ndarray,
                    parties: list[np.ndarray], runs: Sequence[Run]) -> np.ndarray:
        p, m = X.shape[1], len(parties)
        # per run, one b_k per party in party order, from the run's own stream
        noise = np.stack([np.stack([op.draw_noise(r.rng, r.ledger.betas[k], p) for k in range(m)])
                          for r in runs], axis=2)  # (m, p, runs)
        total = np.zeros((p, len(runs)))
        for k, rows in enumerate(parties):
            quad = np.array([r.hparam + r.ledger.extra_regs[k] for r in runs])
            total += op.solve(X[rows], y[rows], quad, noise[k])
        return total / m


MECHANISM = CentralObjective(
    id="objpert", label="objective perturbation, trusted curator (CMS11 Alg. 2)", spec="OP1 (CMS11 Alg. 2)",
    family="objective", paper="standard practice", privacy_unit="record", calibration=CALIBRATION,
    audit="objpert",
)
PARTY_MECHANISM = PartyObjective(
    id="objpert_avg", label="objective perturbation per party, averaged", spec="OP2 (CMS11 Alg. 2 per party)",
    family="objective", paper="standard practice", privacy_unit="record",
    calibration=f"{CALIBRATION} per party (worst party)", audit="objpert_avg",
)
