"""Convergence of the WD-DP study's non-private GD reference (spec M1b; issue 33 §5).

A non-private reference is a yardstick only where it reached the non-private optimum θ*: the
reference rows (``mechanism == "nonprivate"``) record ``optimal_gap`` = L_D(θ_ref) − L_D(θ*) on
the same data (:mod:`mpdp.results`). :func:`convergence` compares each setting's largest gap
with ``wddp.reference_gap_tol`` [REC]; the claims engine marks every claim that uses an
unconverged reference UNINFORMATIVE. The reference's step size is
:func:`mpdp.studies.wddp.plan.reference_eta`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

#: the settings of one reference: its gap is the largest over these rows' repetitions
KEYS = ["dataset", "experiment", "u"]
COLUMNS = [*KEYS, "reps", "eta", "eta_source", "ref_gap", "ref_gap_tol", "ref_converged"]


def convergence(table: pd.DataFrame, cfg: Mapping[str, Any]) -> pd.DataFrame:
    """One row per reference setting (data set, experiment, u): ``ref_gap`` (the largest
    ``optimal_gap`` over its repetitions), ``ref_gap_tol`` (``wddp.reference_gap_tol``) and
    ``ref_converged`` (gap ≤ tol); empty (with :data:`COLUMNS`) when the table has no reference."""
    tol = float(cfg["wddp"]["reference_gap_tol"])
    ref = table[table["mechanism"] == "nonprivate"]
    if ref.empty:
        return pd.DataFrame(columns=COLUMNS)
    out = ref.groupby(KEYS, sort=True, dropna=False).agg(
        reps=("rep", "nunique"), eta=("eta", "first"), eta_source=("eta_source", "first"),
        ref_gap=("optimal_gap", "max")).reset_index()
    out["ref_gap_tol"] = tol
    out["ref_converged"] = out["ref_gap"] <= tol
    return out[COLUMNS]


def converged(table: pd.DataFrame, cfg: Mapping[str, Any], dataset: str) -> bool:
    """Whether every reference setting of ``dataset`` converged (False where it has none)."""
    conv = convergence(table, cfg)
    sel = conv[conv["dataset"] == dataset]
    return bool(not sel.empty and sel["ref_converged"].all())
