"""Claims check of Zhang–Zhu (S-001), rows in the format of :data:`mpdp.claims.COLUMNS`.

Each claim becomes one number per repetition (runs of one repetition index share nothing but
the data split, so differences between mechanisms are paired by repetition index only), a
95 % t-interval over repetitions (:func:`mpdp.claims.t_interval`) and the fixed verdict rule
(:func:`mpdp.claims.verdict`). The seed contradicts itself about which algorithm is better
(I-11): the claims are measured, not assumed. All on the main topology.

* Z1 (per mechanism): larger α converges faster — per repetition, the OLS slope of
  log(mean loss over iterations 1..T) against log α; claimed < 0.
* Z2: DVP oscillates less than PVP — per repetition, mean over α of the oscillation
  Σ_t |log L(t+1) − log L(t)| / (T − 1) of DVP minus that of PVP; claimed < 0. (The spread
  across repetitions is shown next to it in the report.)
* Z3: DVP has lower MER over a wide α range — per repetition, mean over α of
  MER_DVP − MER_PVP at the final iteration; claimed < 0.
* Z4: PVP has a slightly better final empirical loss — mean over α of L_PVP − L_DVP at the
  final iteration; claimed < 0.
* Z5: DVP's fitted g is iteration-independent — per repetition, mean over α of
  log(L(t_last)/L(t_first)) between the first and last Fig. 4 iterations; equivalence with
  margin ``g_margin`` (default 0.1, i.e. ±10 %) [REC].
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from mpdp.claims import COLUMNS, Claim, t_interval, verdict
from mpdp.studies.admm.figures import checkpoint_iterations

_NAN = float("nan")


def claims_table(cfg: dict[str, Any]) -> dict[str, Claim]:
    """The claims of S-001 (figures of the replication in the ``figures`` field)."""
    return {
        "Z1-DVP": Claim("Larger α converges faster (DVP)", "zz_f3", "less", _NAN),
        "Z1-PVP": Claim("Larger α converges faster (PVP)", "zz_f3", "less", _NAN),
        "Z2": Claim("DVP oscillates less than PVP", "zz_f3, zz_f5", "less", _NAN),
        "Z3": Claim("DVP has lower misclassification than PVP over a wide α range", "zz_f5", "less", _NAN),
        "Z4": Claim("PVP has a slightly better final empirical loss than DVP", "zz_f5", "less", _NAN),
        "Z5": Claim("DVP's fitted loss model g(α) is iteration-independent", "zz_f4, zz_table",
                    "equivalence", float(cfg["admm"]["g_margin"])),
    }


def _slope(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.polyfit(x, y, 1)[0]) if np.unique(x).size >= 2 else _NAN


def _z1(runs: pd.DataFrame, mech: str) -> tuple[pd.Series, str]:
    sel = runs[runs["mechanism"] == mech]
    auc = sel.groupby(["rep", "alpha"])["train_loss"].mean().reset_index()
    per_rep = auc.groupby("rep").apply(
        lambda g: _slope(np.log(g["alpha"].to_numpy()), np.log(g["train_loss"].to_numpy())), include_groups=False)
    return per_rep, "OLS slope of log(mean loss over iterations) vs log α"


def _oscillation(sel: pd.DataFrame) -> pd.Series:
    def osc(g: pd.DataFrame) -> float:
        log_loss = np.log(g.sort_values("iteration")["train_loss"].to_numpy())
        return float(np.mean(np.abs(np.diff(log_loss)))) if log_loss.size > 1 else _NAN
    per = sel.groupby(["rep", "alpha"]).apply(osc, include_groups=False)
    return per.groupby(level="rep").mean()


def _z2(runs: pd.DataFrame) -> tuple[pd.Series, str]:
    dvp = _oscillation(runs[runs["mechanism"] == "dvp"])
    pvp = _oscillation(runs[runs["mechanism"] == "pvp"])
    return (dvp - pvp).dropna(), "mean |Δ log loss| per iteration, DVP − PVP (mean over α)"


def _final_diff(runs: pd.DataFrame, metric: str, a: str, b: str) -> pd.Series:
    final = runs[runs["iteration"] == runs["iteration"].max()]
    piv = final.pivot_table(index=["rep", "alpha"], columns="mechanism", values=metric)
    if a not in piv or b not in piv:
        return pd.Series(dtype=float)
    return (piv[a] - piv[b]).groupby(level="rep").mean().dropna()


def _z5(runs: pd.DataFrame, cfg: dict[str, Any]) -> tuple[pd.Series, str]:
    sel = runs[runs["mechanism"] == "dvp"]
    iters = checkpoint_iterations(cfg["admm"]["f4_iterations"], sel["iteration"].to_numpy()) if not sel.empty else []
    if len(iters) < 2:
        return pd.Series(dtype=float), "needs two Fig. 4 iterations"
    first, last = iters[0], iters[-1]
    piv = sel[sel["iteration"].isin([first, last])].pivot_table(index=["rep", "alpha"], columns="iteration",
                                                                  values="train_loss")
    ratio = np.log(piv[last] / piv[first])
    return ratio.groupby(level="rep").mean().dropna(), f"mean over α of log(L(t={last}) / L(t={first})), DVP"


def evaluate(table: pd.DataFrame, cfg: dict[str, Any]) -> pd.DataFrame:
    """One row per claim (columns :data:`mpdp.claims.COLUMNS`)."""
    a = cfg["admm"]
    runs = table[(table["topology"] == a["main_topology"]) & table["mechanism"].isin(["dvp", "pvp"])]
    stats: dict[str, Callable[[], tuple[pd.Series, str]]] = {
        "Z1-DVP": lambda: _z1(runs, "dvp"),
        "Z1-PVP": lambda: _z1(runs, "pvp"),
        "Z2": lambda: _z2(runs),
        "Z3": lambda: (_final_diff(runs, "mer", "dvp", "pvp"), "final MER, DVP − PVP (mean over α)"),
        "Z4": lambda: (_final_diff(runs, "train_loss", "pvp", "dvp"), "final loss, PVP − DVP (mean over α)"),
        "Z5": lambda: _z5(runs, cfg),
    }
    rows = []
    for cid, claim in claims_table(cfg).items():
        per_rep, statistic = stats[cid]() if not runs.empty else (pd.Series(dtype=float), "no runs")
        values = per_rep.to_numpy(dtype=float)
        est, lo, hi = t_interval(values)
        n = int(np.isfinite(values).sum())
        rows.append({
            "claim_id": cid, "claim": claim.text, "dataset": a["dataset"], "figures": claim.figures,
            "statistic": statistic, "estimate": est, "ci_low": lo, "ci_high": hi, "n_reps": n,
            "margin": claim.margin, "verdict": verdict(lo, hi, claim.kind, claim.margin),
            "note": "" if n >= 2 else "fewer than 2 repetitions: no interval",
        })
    return pd.DataFrame(rows, columns=COLUMNS)
