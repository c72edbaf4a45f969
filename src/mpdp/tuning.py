"""Study-agnostic checks of a hyper-parameter selection (issue 24 §3, issue 25 §2).

* A tuned value on the edge of its candidate grid means the optimum may lie outside it: the
  selection is reported with a warning (:func:`grid_edge`, :func:`edge_warnings`), which every
  study's report section shows.
* Tuning draws its noise from streams disjoint from the evaluated repetitions: see
  :func:`mpdp.seeding.tuning_key` and :func:`mpdp.seeding.assert_disjoint`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np
import pandas as pd

Edge = Literal["low", "high"]

#: Columns of :func:`edge_warnings`.
EDGE_COLUMNS: list[str] = ["study", "setting", "parameter", "value", "grid_min", "grid_max", "edge"]


def grid_edge(value: float, grid: Sequence[float], *, rtol: float = 1e-9) -> Edge | None:
    """``"low"`` / ``"high"`` when ``value`` is the smallest / largest candidate of ``grid``.

    A grid of one candidate has no interior: its value is reported as on both edges
    (``"low"``). Raises ``ValueError`` when ``value`` is not a candidate of ``grid``.
    """
    g = np.unique(np.asarray(list(grid), dtype=float))
    if g.size == 0:
        raise ValueError("empty grid")
    if not np.any(np.isclose(g, value, rtol=rtol, atol=0.0)):
        raise ValueError(f"tuned value {value!r} is not in its grid {g.tolist()}")
    if np.isclose(value, g[0], rtol=rtol, atol=0.0):
        return "low"
    if np.isclose(value, g[-1], rtol=rtol, atol=0.0):
        return "high"
    return None


def edge_warnings(study: str, choices: Iterable[tuple[str, str, float, Sequence[float]]]) -> pd.DataFrame:
    """One row per tuned value that sits on an edge of its grid (:data:`EDGE_COLUMNS`).

    ``choices`` yields ``(setting, parameter, value, grid)``, e.g.
    ``("ring, dvp", "rho", 0.1, [0.1, 1, 10])``. Grids with a single candidate are not tuned and
    are skipped.
    """
    rows = []
    for setting, parameter, value, grid in choices:
        g = np.unique(np.asarray(list(grid), dtype=float))
        if g.size < 2:
            continue
        edge = grid_edge(float(value), g)
        if edge is not None:
            rows.append({"study": study, "setting": setting, "parameter": parameter,
                         "value": float(value), "grid_min": float(g[0]), "grid_max": float(g[-1]),
                         "edge": edge})
    return pd.DataFrame(rows, columns=EDGE_COLUMNS)


def edge_sentence(warnings: pd.DataFrame) -> str:
    """One report sentence that lists the edge warnings, or says there are none."""
    if warnings.empty:
        return "No tuned value lies on an edge of its grid."
    items = [f"{r.parameter} = {r.value:g} ({r.setting}; {r.edge} edge of "
             f"[{r.grid_min:g}, {r.grid_max:g}])" for r in warnings.itertuples()]
    return ("**Warning: tuned values on an edge of their grid** (the optimum may lie outside it): "
            + "; ".join(items) + ".")
