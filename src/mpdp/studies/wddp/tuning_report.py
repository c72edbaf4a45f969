"""Grid-edge warnings of the WD-DP learning-rate selection (spec E3.3; mpdp.tuning).

The η of every (data set, mechanism, mode, accountant) chosen by cross-validation
(:func:`mpdp.studies.wddp.cv.cross_validate`) is checked against ``wddp.eta_grid``: a chosen η
on an edge of the grid means the best step size may lie outside it. The report's
cross-validation paragraph shows :func:`eta_edge_sentence`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from mpdp.tuning import edge_sentence, edge_warnings


def eta_edge_warnings(chosen: pd.DataFrame, eta_grid: Sequence[float]) -> pd.DataFrame:
    """One row (:data:`mpdp.tuning.EDGE_COLUMNS`) per CV-chosen η on an edge of ``eta_grid``.

    ``chosen``: the selections of the η tables (columns dataset, mechanism, mode, accountant,
    eta), as :func:`mpdp.studies.wddp.report.cv_scores` returns them; empty when η is fixed.
    """
    if chosen.empty:
        return edge_warnings("wddp", [])
    return edge_warnings("wddp", (
        (f"{r.dataset}, {r.mechanism}/{r.mode}, {r.accountant}"
         + (f", repetition {int(r.rep)}" if "rep" in chosen and pd.notna(r.rep) else ""), "η", float(r.eta), eta_grid)
        for r in chosen.itertuples()
    ))


def eta_edge_sentence(chosen: pd.DataFrame, cfg: Mapping[str, Any]) -> str:
    """The report sentence on the CV-chosen η and the edges of ``wddp.eta_grid``."""
    return edge_sentence(eta_edge_warnings(chosen, cfg["wddp"]["eta_grid"]))
