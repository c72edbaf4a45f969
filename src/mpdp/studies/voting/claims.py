"""Claims of S-004 and spec E5 checked on the voting tables (generic engine of :mod:`mpdp.claims`).

* **V1** Alg. 2 beats party-level parameter averaging (test error, ε grid at M = h1_M);
* **V2** Alg. 2 beats Alg. 1 (same setting);
* **V3** Alg. 2 approaches the non-private ensemble as M grows (gap to the ensemble at
  ε = h2_eps, largest M minus smallest M, should be < 0);
* **V4** Lemma 6 (spec B6): the fraction of (M, ε, repetition) draws whose weighted risk gap
  exceeds the Lemma 6 line is at most δ_p (Clopper–Pearson interval).

V1–V3 are paired within a repetition (same partition and local classifiers), averaged over
the settings, and tested with :func:`mpdp.claims.t_interval` / :func:`mpdp.claims.verdict`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from mpdp.claims import COLUMNS, binomial_interval, t_interval, verdict

CLAIMS: dict[str, str] = {
    "V1": "Alg. 2 (soft vote) has lower test error than party-level parameter averaging",
    "V2": "Alg. 2 (soft vote) has lower test error than Alg. 1 (majority vote)",
    "V3": "Alg. 2 approaches the non-private voted ensemble as M grows",
    "V4": "Lemma 6: P[R_S(w_p) − R_S(w_s) > bound] ≤ δ_p",
}


def _paired(df: pd.DataFrame, worse: str, better: str, M: int) -> pd.Series:
    rows = df[df["M"] == M]
    a = rows[rows["mechanism"] == worse].set_index(["epsilon", "rep"])["test_error"]
    b = rows[rows["mechanism"] == better].set_index(["epsilon", "rep"])["test_error"]
    return (a - b).dropna().groupby(level="rep").mean()


def _row(cid: str, table: str, statistic: str, est: float, lo: float, hi: float, n: int, kind: str,
         note: str = "", margin: float = float("nan")) -> dict:
    return {"claim_id": cid, "claim": CLAIMS[cid], "dataset": table, "figures": "hamm_h1, hamm_h2, hamm_h4",
            "statistic": statistic, "estimate": est, "ci_low": lo, "ci_high": hi, "n_reps": n,
            "margin": margin, "verdict": verdict(lo, hi, kind) if n >= 2 else "INCONCLUSIVE", "note": note}


def evaluate(tables: Mapping[str, pd.DataFrame], cfg: Mapping) -> pd.DataFrame:
    """One row per (claim, table) in the common claims-table columns."""
    v = cfg["voting"]
    out = []
    for table, df in sorted(tables.items()):
        Ms = sorted(int(m) for m in df["M"].dropna().unique())
        if not Ms:
            continue
        M = max([m for m in Ms if m <= v["h1_M"]] or Ms[:1])
        for cid, worse in (("V1", "param_avg"), ("V2", "hamm_vote")):
            per_rep = _paired(df, worse, "hamm_soft", M)
            est, lo, hi = t_interval(per_rep.to_numpy())
            out.append(_row(cid, table, f"error({worse}) − error(hamm_soft), mean over ε at M = {M}",
                            est, lo, hi, len(per_rep), "greater"))
        at = df[np.isclose(df["epsilon"], float(v["h2_eps"])) | (df["mechanism"] == "ensemble")]
        if len(Ms) >= 2:
            gaps = {}
            for m in (Ms[0], Ms[-1]):
                rows = at[at["M"] == m]
                soft = rows[rows["mechanism"] == "hamm_soft"].set_index("rep")["test_error"]
                ens = rows[rows["mechanism"] == "ensemble"].set_index("rep")["test_error"]
                gaps[m] = soft - ens
            per_rep = (gaps[Ms[-1]] - gaps[Ms[0]]).dropna()
            est, lo, hi = t_interval(per_rep.to_numpy())
            out.append(_row("V3", table, f"[error(Alg. 2) − error(ensemble)] at M = {Ms[-1]} minus at M = {Ms[0]}, "
                            f"ε = {v['h2_eps']:g}", est, lo, hi, len(per_rep), "less"))
        soft = df[(df["mechanism"] == "hamm_soft") & df["lemma6_bound"].notna()]
        if not soft.empty:
            above = int((soft["risk_gap"] > soft["lemma6_bound"]).sum())
            frac, lo, hi = binomial_interval(above, len(soft))
            dp = float(v["delta_p"])
            row = _row("V4", table, f"fraction of {len(soft)} draws above the Lemma 6 line (δ_p = {dp:g})",
                       frac, lo, hi, int(soft["rep"].nunique()), "less",
                       note="Clopper–Pearson 95 % interval; PASS if it lies below δ_p")
            row["verdict"] = verdict(lo - dp, hi - dp, "less")
            row["figures"] = "hamm_h4"
            out.append(row)
    return pd.DataFrame(out, columns=COLUMNS)
