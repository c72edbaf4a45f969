"""Claims of S-004 and spec E5 declared for the claims engine (issue 33).

* **V1** Alg. 2 (soft vote) has a lower test error than party-level parameter averaging;
* **V2** Alg. 2 has a lower test error than Alg. 1 (majority vote);
* **V3** Alg. 2 approaches the non-private voted ensemble as M grows (the gap to the ensemble
  falls along M, per ε);
* **V4** Lemma 6 (spec B6): the fraction of draws whose weighted risk gap exceeds the Lemma 6
  line is at most δ_p — VACUOUS when the observed slack of the bound is above an order of
  magnitude in every cell (it then cannot fail).

Cells: every (M, ε) of the grid (V1, V2, V4) and every ε along M (V3), on every table. The study
provides (a) :func:`observations` (per repetition: test errors, the gap to the ensemble, the
risk gap with its bound), (b) :func:`baselines` (test error: the majority-class error; the method
a claim says is better — Alg. 2 — must beat it by the practical margin, while a comparator at
chance is what Alg. 2 beats: issue 42), (c) :func:`claims`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from mpdp.claims.declare import Claim
from mpdp.studies.voting.plan import main_rows, majority_error
from mpdp.studies.voting.selection import final_run_tables

STUDY = "voting"
_SRC = "seed 004 (Hamm–Cao–Belkin, learning privately from multiparty data)"
#: claim id -> the replication's figures it concerns
FIGURES: dict[str, str] = {"V1": "hamm_h1", "V2": "hamm_h1", "V3": "hamm_h2", "V4": "hamm_h4"}

_COLS = ["dataset", "reading", "cell", "rep", "method", "metric", "value", "x", "bound"]


def claims(cfg: Mapping[str, Any]) -> tuple[Claim, ...]:
    """The claims of S-004 / E5 (V4's margin is ``voting.delta_p``)."""
    rate = "1 point of test error: a smaller difference does not change which method a practitioner picks"
    delta_p = float(cfg["voting"]["delta_p"])
    return (
        Claim(STUDY, "V1", "Alg. 2 (soft vote) has lower test error than party-level parameter averaging",
              f"{_SRC}, §5 experiments (Fig. 1; spec E5 H-1)", "test_error", ("hamm_soft", "param_avg"),
              "compare", "less", margin_reason=rate),
        Claim(STUDY, "V2", "Alg. 2 (soft vote) has lower test error than Alg. 1 (majority vote)",
              f"{_SRC}, §5 experiments (Fig. 1; spec E5 H-1)", "test_error", ("hamm_soft", "hamm_vote"),
              "compare", "less", margin_reason=rate),
        Claim(STUDY, "V3", "Alg. 2 approaches the non-private voted ensemble as M grows",
              f"{_SRC}, §5 experiments (Fig. 2; spec E5 H-2)", "gap_to_ensemble", ("hamm_soft",), "trend",
              "less", guard_metric="test_error",
              margin_reason="the gap to the ensemble closing by 1 point of test error over the M grid: a smaller "
                            "approach is invisible on Fig. 2"),
        Claim(STUDY, "V4", "Lemma 6: P[R_S(w_p) − R_S(w_s) > bound] ≤ δ_p", f"{_SRC}, Lemma 6 (spec B6, E5 H-4)",
              "risk_gap", ("hamm_soft",), "bound", "less", margin=delta_p,
              margin_reason=f"the lemma's own failure probability δ_p = {delta_p:g} (voting.delta_p): the share of "
                            "draws above the bound it allows"),
    )


def _eps(eps: pd.Series) -> pd.Series:
    return eps.map(lambda e: f"{e:g}").astype(str) if len(eps) else pd.Series([], dtype=str, index=eps.index)


def _cell(M: pd.Series, eps: pd.Series) -> pd.Series:
    if not len(M):
        return pd.Series([], dtype=str, index=M.index)
    return "M=" + M.astype(int).astype(str) + ", ε=" + _eps(eps)


def _table_obs(table: str, full: pd.DataFrame) -> list[pd.DataFrame]:
    df = main_rows(full)
    private = df[df["mechanism"].isin(["hamm_soft", "param_avg", "hamm_vote"]) & np.isfinite(df["epsilon"])]
    base = {"dataset": table, "reading": "-", "bound": np.nan}
    frames = [pd.DataFrame({**base, "cell": _cell(private["M"], private["epsilon"]), "rep": private["rep"],
                            "method": private["mechanism"], "metric": "test_error",
                            "value": private["test_error"], "x": np.nan})]
    soft = df[(df["mechanism"] == "hamm_soft") & np.isfinite(df["epsilon"])]
    frames.append(pd.DataFrame({**base, "cell": "ε=" + _eps(soft["epsilon"]), "rep": soft["rep"],
                                "method": "hamm_soft", "metric": "test_error", "value": soft["test_error"],
                                "x": soft["M"].astype(float)}))
    ens = df[df["mechanism"] == "ensemble"][["M", "rep", "test_error"]].rename(columns={"test_error": "ens"})
    gap = soft.merge(ens, on=["M", "rep"])
    frames.append(pd.DataFrame({**base, "cell": "ε=" + _eps(gap["epsilon"]), "rep": gap["rep"],
                                "method": "hamm_soft", "metric": "gap_to_ensemble",
                                "value": gap["test_error"] - gap["ens"], "x": gap["M"].astype(float)}))
    b = soft[soft["lemma6_bound"].notna()]
    frames.append(pd.DataFrame({**base, "cell": _cell(b["M"], b["epsilon"]), "rep": b["rep"], "method": "hamm_soft",
                                "metric": "risk_gap", "value": b["risk_gap"], "x": np.nan,
                                "bound": b["lemma6_bound"]}))
    return frames


def observations(tables: Mapping[str, pd.DataFrame], n_test: Mapping[str, int] | None = None) -> pd.DataFrame:
    """The tidy observations of every voting table (data set = table name), in two readings when the
    tables hold both (issue 34): ``end_to_end`` (the main rows, λ selected privately and charged to
    each row's ε) and ``final_run`` (the oracle rows: non-private selection, the papers' convention).
    Tables with the oracle protocol only give the ``final_run`` reading. ``n_test`` (table -> test-set size)
    gives the test errors their resolution, one test record (issue 42)."""
    frames = []
    for name, full in sorted(tables.items()):
        head = "end_to_end" if (main_rows(full).get("selection", pd.Series(dtype=str)) == "private").any() \
            else "final_run"
        frames += [f.assign(reading=head) for f in _table_obs(name, full) if not f.empty]
    for name, full in sorted(final_run_tables(tables).items()):
        frames += [f.assign(reading="final_run") for f in _table_obs(name, full) if not f.empty]
    if not frames:
        return pd.DataFrame(columns=_COLS)
    out = pd.concat(frames, ignore_index=True)[_COLS]
    out = out.astype({"rep": int, "value": float, "x": float, "bound": float})
    if n_test:
        sizes = out["dataset"].map(lambda t: float(n_test[t]) if t in n_test else np.nan)
        out["n_test"] = sizes.where(out["metric"].isin(["test_error", "gap_to_ensemble"]))
    return out


def _pooled_error(table: pd.DataFrame) -> float:
    """The converged non-private reference: the pooled logistic regression's median test error."""
    pooled = main_rows(table)
    pooled = pooled.loc[pooled["mechanism"] == "pooled_lr", "test_error"].dropna()
    return float(pooled.median()) if len(pooled) else float("nan")


def baselines(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Test error: the majority-class error of each table (always predicting its majority class), with the
    pooled non-private logistic regression as its converged reference (the guard's practical margin). Under
    a split per repetition the majority-class error is their mean over repetitions (:func:`.plan.majority_error`)."""
    rows = [{"dataset": name, "cell": "*", "metric": "test_error", "value": majority_error(t),
             "baseline": "the majority class", "reference": _pooled_error(t)} for name, t in sorted(tables.items())
            if "majority_error" in t and t["majority_error"].notna().any()]
    return pd.DataFrame(rows, columns=["dataset", "cell", "metric", "value", "baseline", "reference"])
