"""Claims engine (issue 33; docs/claims.md): claims declared as data, one engine for every study.

* :mod:`mpdp.claims.declare`: :class:`Claim` (a declaration), the metrics and the frames a study hands over;
* :mod:`mpdp.claims.engine`: per-cell statistics, informativeness, Holm, cell and claim verdicts;
* :mod:`mpdp.claims.summaries`: mean / median / trimmed-mean intervals and one-sided p-values;
* :mod:`mpdp.claims.intervals`: the interval helpers (t, median, Clopper–Pearson, ratio);
* :mod:`mpdp.claims.tables`: cells.parquet / verdicts.parquet (the contract), readers and the
  worst-first ordering of a paper's summary;
* :mod:`mpdp.claims.maps`: the verdict map figure of a study.

A shared layer: it never imports :mod:`mpdp.studies`.
"""

from mpdp.claims.declare import METRICS, Claim, Metric
from mpdp.claims.engine import Inputs, evaluate, verdicts
from mpdp.claims.intervals import (
    CONFIDENCE,
    GAP_FLOOR,
    MIN_REPS,
    binomial_interval,
    fitted_change,
    log_gap,
    median_interval,
    ratio_interval,
    t_interval,
)
from mpdp.claims.tables import VERDICT_ORDER, paper_order, read_cells, read_verdicts

#: every claim verdict, worst first (the order reports list them)
VERDICTS: tuple[str, ...] = VERDICT_ORDER

__all__ = [
    "CONFIDENCE",
    "GAP_FLOOR",
    "METRICS",
    "MIN_REPS",
    "VERDICTS",
    "VERDICT_ORDER",
    "Claim",
    "Inputs",
    "Metric",
    "binomial_interval",
    "evaluate",
    "fitted_change",
    "log_gap",
    "median_interval",
    "paper_order",
    "ratio_interval",
    "read_cells",
    "read_verdicts",
    "t_interval",
    "verdicts",
]
