"""DP-SGD with Poisson subsampling in the cross-paper benchmark (spec E10; Abadi et al. 2016).

Today's standard baseline, declared through the extension point
(:mod:`mpdp.studies.benchmark.interface`) like any added mechanism. The mechanism, its
accounting and its audit are :mod:`mpdp.mechanisms.dpsgd`, :mod:`mpdp.privacy.subsampled_gaussian`
and :mod:`mpdp.audit.dpsgd_adapter`; this module only states how the benchmark runs it:

- **privacy unit**: one record (replace-one); every round each party Poisson-samples its records
  at rate q, clips per-record gradients to G (``benchmark.G``), one N(0, σ²G²I) on the released
  aggregate; the T noisy aggregates are the transcript;
- **calibration**: σ the smallest noise multiplier whose replace-one PLD ε of T rounds of the
  Poisson-subsampled Gaussian is at most the target at ``benchmark.delta`` (dp-accounting
  REPLACE_ONE, no conversion); the ledger's ``eps_total`` is recomputed from that σ;
- **tuning**: its knob is the triple (q, T, η) — one candidate per entry of
  ``benchmark.dpsgd.candidates``, as many as every other mechanism's candidates, chosen by the
  common protocol (``hparam_value`` = the candidate's index; the row's ``T``, ``eta`` and
  ``sampling_rate`` say which);
- **training**: :func:`mpdp.mechanisms.dpsgd.train` from θ₀ = 0 on the benchmark's objective
  (λ = ``benchmark.lambda``), its sampling and noise streams keyed by the run's own stream key
  (tuning streams while tuning);
- **audit**: the many-draws canary attack of :mod:`mpdp.audit.dpsgd_adapter` (id ``dpsgd``),
  including its planted bug (amplification claimed while every record is sampled).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant as rdp_acc

from mpdp.mechanisms import dpsgd
from mpdp.privacy import private_selection as ps
from mpdp.privacy import subsampled_gaussian as sg
from mpdp.privacy.disk_memo import persistent
from mpdp.studies.benchmark.calibration import Ledger
from mpdp.studies.benchmark.interface import BatchMechanism, Run


def candidate(cfg: Mapping[str, Any], index: float) -> dict[str, float]:
    """The (q, T, η) of candidate ``index`` of ``benchmark.dpsgd.candidates``."""
    c = cfg["benchmark"]["dpsgd"]["candidates"][int(index)]
    return {"q": float(c["q"]), "T": int(c["T"]), "eta": float(c["eta"])}


#: orders up to which a memoised curve is always re-verified (cheap: the quadrature's cost grows
#: with the order), besides every order up to the one that decides its ε at δ
VERIFIED_ORDERS_UP_TO = 64.0


def _curve_meets_target(curve: np.ndarray, epsilon: float, delta: float,
                        candidates: tuple[tuple[float, int], ...]) -> str | None:
    """The re-verification of a memoised :func:`_rdp_curve` (:mod:`mpdp.privacy.disk_memo`): the
    curve recomputed from the (re-verified) calibrated σ's at every order up to the one that
    decides its ε at δ (and at least up to :data:`VERIFIED_ORDERS_UP_TO`). A curve lowered at any
    order in a way that lowers its ε moves that deciding order there, so it is caught; orders
    above are not recomputed (they cost the most). The tolerance is the quadrature's (another
    grid alignment)."""
    if curve.shape != ps.ORDERS.shape or not np.all(curve >= 0):
        return "not a non-negative RDP curve on private_selection.ORDERS"
    _, deciding = rdp_acc.compute_epsilon(ps.ORDERS, curve, delta)
    top = max(float(deciding), VERIFIED_ORDERS_UP_TO)
    check = np.max(np.stack([ps.poisson_replace_one_rdp(q, sg.calibrate_noise_multiplier(epsilon, q, T, delta), T,
                                                        max_order=top) for q, T in candidates]), axis=0)
    upto = top >= ps.ORDERS
    if np.allclose(curve[upto], check[upto], rtol=1e-6, atol=1e-9):
        return None
    i = int(np.argmax(np.where(upto, np.abs(curve - check), -1.0)))
    return f"its RDP at order {ps.ORDERS[i]:g} is {curve[i]!r}, recomputed {check[i]!r}"


@persistent(verify=_curve_meets_target)
def _rdp_curve(epsilon: float, delta: float, candidates: tuple[tuple[float, int], ...]) -> np.ndarray:
    return np.max(np.stack([ps.poisson_replace_one_rdp(q, sg.calibrate_noise_multiplier(epsilon, q, T, delta), T)
                            for q, T in candidates]), axis=0)


@dataclass(frozen=True)
class DPSGD(BatchMechanism):
    """Multi-party DP-SGD with Poisson subsampling (module docstring)."""

    hparam: str = "dpsgd_q_T_eta"

    def candidates(self, cfg: Mapping[str, Any]) -> list[float]:
        return [float(i) for i in range(len(cfg["benchmark"]["dpsgd"]["candidates"]))]

    def ledger(self, cfg: Mapping[str, Any], epsilon: float, sizes: np.ndarray, hparam: float,
               dim: int) -> Ledger:
        c, b = candidate(cfg, hparam), cfg["benchmark"]
        led = dpsgd.ledger(epsilon, float(b["delta"]), c["q"], c["T"], float(b["G"]))
        # replace-one moves one clipped contribution by at most 2G per round that samples it
        return Ledger(led["accountant"], 2.0 * led["G"], led["noise_std"], float("nan"), float("nan"),
                      float(led["eps_accounted"]), led["delta"], led["scope"])

    def train_batch(self, cfg: Mapping[str, Any], X: np.ndarray, y: np.ndarray,
                    parties: list[np.ndarray], runs: Sequence[Run]) -> np.ndarray:
        b = cfg["benchmark"]
        out = []
        for run in runs:
            c = candidate(cfg, run.hparam)
            out.append(dpsgd.train(X, y, parties, etas=[c["eta"]], seeds=[0], sigma=run.ledger.sigma / float(b["G"]),
                                   q=c["q"], T=c["T"], G=float(b["G"]), lam=float(b["lambda"]),
                                   theta0=np.zeros(X.shape[1]), root_seed=int(cfg["root_seed"]), key=run.key)[:, 0])
        return np.stack(out, axis=1)

    def rdp_curve(self, cfg: Mapping[str, Any], epsilon: float) -> np.ndarray:
        """Max over the candidates of T rounds of the replace-one Poisson pair at the σ calibrated
        to (ε, δ) (:func:`mpdp.privacy.private_selection.poisson_replace_one_rdp`)."""
        return _rdp_curve(float(epsilon), float(cfg["benchmark"]["delta"]),
                          tuple((float(c["q"]), int(c["T"])) for c in cfg["benchmark"]["dpsgd"]["candidates"]))

    def row_fields(self, cfg: Mapping[str, Any], hparam: float) -> dict[str, Any]:
        c = candidate(cfg, hparam)
        return {"T": c["T"], "eta": c["eta"], "eta_source": "tuned", "sampling_rate": c["q"],
                "mode": "per_round"}

    def audit_settings(self, cfg: Mapping[str, Any]) -> list[dict[str, Any]]:
        eps = float(cfg["benchmark"]["reference"]["epsilon"])
        return [{"mechanism": self.audit, "epsilon": eps},
                {"mechanism": self.audit, "epsilon": eps, "planted_bug": True}]


MECHANISM = DPSGD(
    id="dpsgd", label="DP-SGD, Poisson subsampling (standard baseline)", spec="E10 (Abadi et al. 2016)",
    family="dpsgd", paper="standard practice", privacy_unit="record",
    calibration=f"Poisson-subsampled Gaussian on the aggregate, {sg.ACCOUNTANT} (replace-one, no conversion)",
    audit="dpsgd",
)
