"""Each paper's own comparison re-checked on the benchmark's common footing, declared for the claims
engine (issue 33; spec E10).

Every claim compares two mechanisms on the benchmark's primary metric, the test log-loss, paired by
repetition within each (data set, ε, m, u) cell, on the log scale with a 20 % trimmed mean over
repetitions (the log-loss of a few repetitions is heavy-tailed), practical margin a factor 10^0.05 ≈ 1.12 of
the log-loss. Informative cell: the mechanism the paper says is better has a log-loss significantly below
the constant base-rate predictor's (the training positive rate, scored on the test set) by a quarter of the
way to the non-private reference θ* (the ``nonprivate`` rows' log-loss). The study provides
:func:`observations`, :func:`baselines` and
:data:`CLAIMS`; the ranking, selection and its own flag stay in :mod:`~mpdp.studies.benchmark.ranking`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from mpdp.claims.declare import Claim

STUDY = "benchmark"

#: each paper's own comparison: (id, paper, claim, better, worse, seed)
PAPER_CLAIMS: tuple[tuple[str, str, str, str, str, str], ...] = (
    ("XP-WDDP-lit", "WD-DP (S-000)", "WD-DP Alg. 1 beats Jayaraman's gradient perturbation (local)",
     "wddp_literal", "jayaraman_literal", "seed 000, Experiments"),
    ("XP-WDDP-pr", "WD-DP (S-000)", "WD-DP beats Jayaraman's gradient perturbation (per-round)",
     "wddp_per_round", "jayaraman_per_round", "seed 000, Experiments"),
    ("XP-ZZ", "Zhang–Zhu (S-001)", "DVP has lower misclassification than PVP (PVP's noise to its "
     "hidden-state bound, spec I-20)", "dvp", "pvp", "seed 001, §V"),
    ("XP-Hamm-soft", "Hamm et al. (S-004)", "soft vote (Alg. 2) beats majority vote (Alg. 1)",
     "hamm_soft", "hamm_vote", "seed 004, §5"),
    ("XP-Hamm-avg", "Hamm et al. (S-004)", "soft vote (Alg. 2) beats party-level parameter averaging",
     "hamm_soft", "param_avg", "seed 004, §5"),
)

#: why the benchmark's practical margin (the log-ratio default, a factor 10^0.05 ≈ 1.12 of the test log-loss)
MARGIN_REASON: str = ("a factor 1.12 of the test log-loss (the default for a loss): at the log-losses of a usable "
                      "classifier (0.1–0.6 nats) a smaller ratio is a few hundredths of a nat, which does not change "
                      "which mechanism a user picks")

CLAIMS: tuple[Claim, ...] = tuple(
    Claim(STUDY, cid, f"{paper}: {text}", f"{seed}; re-checked at equal accounted privacy (spec E10)",
          "log_loss", (better, worse), "compare", "less", effect_scale="log_ratio", summary="trimmed",
          margin_reason=MARGIN_REASON)
    for cid, paper, text, better, worse, seed in PAPER_CLAIMS
)

_COLS = ["dataset", "reading", "cell", "rep", "method", "metric", "value", "x", "bound"]


def _cell(t: pd.DataFrame) -> pd.Series:
    if t.empty:
        return pd.Series([], dtype=str)
    return ("ε=" + t["epsilon"].map(lambda e: f"{e:g}") + ", m=" + t["m"].astype(int).astype(str)
            + ", u=" + t["u"].map(lambda u: f"{u:g}"))


def observations(table: pd.DataFrame) -> pd.DataFrame:
    """Per repetition and cell, every mechanism's test log-loss."""
    t = table[table["test_logloss"].notna() & table["m"].notna()]
    if t.empty:
        return pd.DataFrame(columns=_COLS)
    return pd.DataFrame({"dataset": t["dataset"].astype(str), "reading": "-", "cell": _cell(t),
                         "rep": t["rep"].astype(int), "method": t["mechanism"].astype(str), "metric": "log_loss",
                         "value": t["test_logloss"].astype(float), "x": np.nan, "bound": np.nan})[_COLS]


def base_rate_logloss(card: Mapping[str, Any]) -> float:
    """Test log-loss (nats) of predicting the training positive rate p for every test record:
    −(q log p + (1 − q) log(1 − p)), q the test positive rate from the data card's rates."""
    p = float(card["positive_rate_train"])
    n_tr, n_te, n_all = int(card["n_train"]), int(card["n_test"]), int(card["n_total"])
    q = (float(card["positive_rate"]) * n_all - p * n_tr) / n_te
    q = min(max(q, 0.0), 1.0)
    return float(-(q * np.log(p) + (1 - q) * np.log(1 - p)))


#: the mechanism whose rows are the converged non-private reference (θ* on the pooled data, spec M1)
REFERENCE_MECHANISM: str = "nonprivate"


def baselines(cards: Mapping[str, Mapping[str, Any]], table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Log-loss: the constant base-rate predictor of each data set (from its data card), with the converged
    non-private ``reference`` (the median test log-loss of the :data:`REFERENCE_MECHANISM` rows of ``table``;
    NaN without them) that sets the guard's practical margin."""
    ref: dict[str, float] = {}
    if table is not None and not table.empty:
        own = table[(table["mechanism"] == REFERENCE_MECHANISM) & table["test_logloss"].notna()]
        ref = {str(ds): float(g["test_logloss"].median()) for ds, g in own.groupby("dataset")}
    rows = [{"dataset": ds, "cell": "*", "metric": "log_loss", "value": base_rate_logloss(card),
             "baseline": "the constant base-rate predictor", "reference": ref.get(ds, np.nan)}
            for ds, card in sorted(cards.items())]
    return pd.DataFrame(rows, columns=["dataset", "cell", "metric", "value", "baseline", "reference"])
