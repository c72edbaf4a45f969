"""Equal footing of DVP and PVP: which ADMM penalty η each private mechanism runs at (issue 33 §4).

Spec E4 tunes η "per algorithm" ("optimal values … for Algorithm 1, 2 and 3" [S-001]). A
per-algorithm choice is only a property of the algorithm when the data, not the tuning noise,
choose it: a winner picked by a loss difference smaller than the spread over tuning draws is a
coin flip, and it hands one mechanism a different curvature κ_p = ρ/P + 2ηV_p (hence a
different noise effect) than the other. So the compared private mechanisms share one η unless
every one of them has a *stable* per-method winner:

* **criterion** (the primary metric of E4, as the paper states it): the final training loss
  Σ_p (C^R/B_p) Σ_i l(y f_p(T)ᵀx) at the one tuning α ``admm.tune_alpha`` [REC];
* **draws**: ``admm.tune_draws`` [REC] independent tuning-noise draws, each the mean of
  ``admm.tune_reps`` repetitions; their noise comes from tuning streams
  (:func:`mpdp.seeding.tuning_key`), disjoint from every evaluated repetition;
* **shared η**: argmin over η of the mean over the compared mechanisms of log(mean final loss
  over every draw and repetition) — logs, so that neither mechanism's loss scale dominates;
* **stable winner** of a mechanism: the argmin over η is the same η in every draw (needs at
  least two draws);
* **footing** ``per_method_stable``: ``admm.footing = per_method_if_stable`` [REC] and every
  compared mechanism's winner is stable; each runs at its own winner. Otherwise
  ``shared``: all run at the shared η. (All or nothing: one mechanism at its own η and the
  other at the shared one would again compare them at different penalties.)

ρ is not selected here: it is the fixed ``admm.rho`` [REC] (docs/studies/admm.md, "Tuning").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

#: the compared private mechanisms (spec M9, M10)
PRIVATE = ("dvp", "pvp")
#: values of ``admm.footing`` (config) and of the table's ``footing`` column
RULES = ("shared", "per_method_if_stable")
SHARED, PER_METHOD = "shared", "per_method_stable"


@dataclass(frozen=True)
class Selection:
    """The η of each compared mechanism and the evidence behind it."""

    footing: str  # shared | per_method_stable
    penalty: dict[str, float]  # η each mechanism runs at
    shared_penalty: float  # argmin of the shared criterion
    draw_winners: dict[str, list[float]]  # per mechanism: the argmin η of each draw
    stable: dict[str, bool]  # per mechanism: the same winner in every draw (≥ 2 draws)
    mean_loss: pd.DataFrame  # index η, one column per mechanism: mean final loss over draws × reps
    draw_loss: pd.DataFrame  # index (mechanism, draw, η): mean final loss of the draw
    shared_criterion: pd.Series  # index η: mean over mechanisms of log(mean final loss)

    def record(self, mechanism: str) -> dict[str, Any]:
        """The JSON-able evidence of ``mechanism``'s η (the tuning record)."""
        draws = self.draw_loss.loc[mechanism]
        return {
            "footing": self.footing, "shared_penalty": self.shared_penalty,
            "own_stable": self.stable[mechanism], "draw_winners": self.draw_winners[mechanism],
            "criterion": "mean final training loss at tune_alpha (E4 primary metric)",
            "shared_criterion": {repr(float(k)): float(v) for k, v in self.shared_criterion.items()},
            "draw_losses": [{"draw": int(d), "penalty": float(e), "mean_final_loss": float(v)}
                            for (d, e), v in draws.items()],
        }


def select(losses: pd.DataFrame, rule: str, mechanisms: tuple[str, ...] = PRIVATE) -> Selection:
    """The footing of ``mechanisms`` from their tuning runs (module docstring).

    Args:
        losses: one row per tuning run: ``mechanism``, ``penalty`` (η), ``draw`` (independent
            tuning-noise draw) and ``loss`` (final training loss).
        rule: ``shared`` (always one η) or ``per_method_if_stable``.
    """
    if rule not in RULES:
        raise ValueError(f"unknown footing rule {rule!r}; known: {RULES}")
    sel = losses[losses["mechanism"].isin(mechanisms)]
    missing = sorted(set(mechanisms) - set(sel["mechanism"]))
    if missing:
        raise ValueError(f"no tuning runs of {missing}")
    if not np.all(np.isfinite(sel["loss"].to_numpy(dtype=float))):
        raise ValueError("non-finite tuning loss")
    mean = sel.groupby(["penalty", "mechanism"], sort=True)["loss"].mean().unstack("mechanism")[list(mechanisms)]
    if mean.isna().any().any():
        raise ValueError("every compared mechanism needs tuning runs at every η")
    shared = np.log(mean).mean(axis=1)
    shared_penalty = float(shared.idxmin())  # ties: the smallest η (sorted index)
    draw = sel.groupby(["mechanism", "draw", "penalty"], sort=True)["loss"].mean()
    winners = {m: [float(draw.loc[(m, d)].idxmin()) for d in sorted(draw.loc[m].index.unique("draw"))]
               for m in mechanisms}
    stable = {m: len(w) >= 2 and len(set(w)) == 1 for m, w in winners.items()}
    if rule == "per_method_if_stable" and all(stable.values()):
        return Selection(PER_METHOD, {m: winners[m][0] for m in mechanisms}, shared_penalty, winners, stable,
                         mean, draw, shared)
    return Selection(SHARED, dict.fromkeys(mechanisms, shared_penalty), shared_penalty, winners, stable, mean,
                     draw, shared)
