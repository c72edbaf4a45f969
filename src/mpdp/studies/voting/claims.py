"""Claims of S-004 and spec E5 checked on the voting tables (generic engine of :mod:`mpdp.claims`).

* **V1** Alg. 2 beats party-level parameter averaging (test error, ε grid at M = h1_M);
* **V2** Alg. 2 beats Alg. 1 (same setting);
* **V3** Alg. 2 approaches the non-private ensemble as M grows (gap to the ensemble at
  ε = h2_eps, largest M minus smallest M, should be < 0);
* **V4** Lemma 6 (spec B6): the fraction of (M, ε, repetition) draws whose weighted risk gap
  exceeds the Lemma 6 line is at most δ_p (Clopper–Pearson interval).

V1–V3 are paired within a repetition (same partition and local classifiers), averaged over
the settings, and scored by the shared rule (:func:`mpdp.claims.evaluate_one`). A comparison
of classifiers that are not better than always predicting the majority class says nothing
about the claim: V1 and V2 use only the ε at which one of the two compared classifiers is
significantly below the majority-class error (:func:`below_majority`), and V1–V3 raise
:class:`mpdp.claims.Uninformative` (verdict UNINFORMATIVE) when no such setting is left.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from mpdp.claims import (
    COLUMNS,
    Claim,
    NoData,
    Result,
    Uninformative,
    binomial_interval,
    evaluate_one,
    t_interval,
    verdict,
)
from mpdp.studies.voting.plan import main_rows

CLAIMS: dict[str, Claim] = {
    "V1": Claim("Alg. 2 (soft vote) has lower test error than party-level parameter averaging", "hamm_h1",
                "greater", float("nan")),
    "V2": Claim("Alg. 2 (soft vote) has lower test error than Alg. 1 (majority vote)", "hamm_h1",
                "greater", float("nan")),
    "V3": Claim("Alg. 2 approaches the non-private voted ensemble as M grows", "hamm_h2", "less", float("nan")),
    "V4": Claim("Lemma 6: P[R_S(w_p) − R_S(w_s) > bound] ≤ δ_p", "hamm_h4", "less", float("nan")),
}


def below_majority(errors: np.ndarray, majority: float) -> bool:
    """Whether test errors over repetitions are significantly below the majority-class error.

    Significant: the upper end of the 95 % t-interval lies below ``majority``; with a single
    repetition (no interval) the mean is compared.
    """
    mean, _, high = t_interval(np.asarray(errors, dtype=float))
    return bool((high if np.isfinite(high) else mean) < majority)


def _errors(rows: pd.DataFrame, mech: str) -> pd.DataFrame:
    """Test errors of ``mech``: one column per ε, one row per repetition."""
    sub = rows[rows["mechanism"] == mech]
    return sub.pivot_table(index="rep", columns="epsilon", values="test_error")


def majority(df: pd.DataFrame) -> float:
    """Majority-class test error of a table."""
    return float(df["majority_error"].iloc[0])


def _paired_check(df: pd.DataFrame, worse: str, M: int):
    def check(_runs) -> Result:
        rows = df[df["M"] == M]
        a, b = _errors(rows, worse), _errors(rows, "hamm_soft")
        if a.empty or b.empty:
            raise NoData(f"no {worse} or hamm_soft rows at M = {M}")
        maj = majority(df)
        eps = [e for e in a.columns.intersection(b.columns)
               if below_majority(a[e].to_numpy(), maj) or below_majority(b[e].to_numpy(), maj)]
        if not eps:
            raise Uninformative(f"neither {worse} nor hamm_soft has a test error significantly below the "
                                f"majority-class error {maj:.3f} at any ε (M = {M})")
        per_rep = (a[eps] - b[eps]).mean(axis=1)
        return Result(per_rep, f"error({worse}) − error(hamm_soft), mean over ε ∈ {{{', '.join(f'{e:g}' for e in eps)}}} "
                      f"at M = {M}", f"ε where one of them beats the majority class ({maj:.3f})")
    return check


def _v3_check(df: pd.DataFrame, Ms: list[int], eps: float):
    def check(_runs) -> Result:
        at = df[np.isclose(df["epsilon"], eps) | (df["mechanism"] == "ensemble")]
        maj = majority(df)
        gaps, informative = {}, False
        for m in (Ms[0], Ms[-1]):
            rows = at[at["M"] == m]
            soft = rows[rows["mechanism"] == "hamm_soft"].set_index("rep")["test_error"]
            ens = rows[rows["mechanism"] == "ensemble"].set_index("rep")["test_error"]
            if soft.empty or ens.empty:
                raise NoData(f"no Alg. 2 rows at ε = {eps:g} (voting.h2_eps) or no ensemble rows at M = {m}")
            informative |= below_majority(soft.to_numpy(), maj)
            gaps[m] = soft - ens
        if not informative:
            raise Uninformative(f"Alg. 2 is not significantly below the majority-class error {maj:.3f} at "
                                f"ε = {eps:g} for M = {Ms[0]} or M = {Ms[-1]}")
        return Result((gaps[Ms[-1]] - gaps[Ms[0]]).dropna(),
                      f"[error(Alg. 2) − error(ensemble)] at M = {Ms[-1]} minus at M = {Ms[0]}, ε = {eps:g}", "")
    return check


def _reading(df: pd.DataFrame) -> str:
    sources = sorted(set(df.loc[df["mechanism"] == "hamm_soft", "lambda_source"].astype(str)))
    return "λ " + "/".join(sources)


def _v4_row(table: str, df: pd.DataFrame, delta_p: float) -> dict | None:
    soft = df[(df["mechanism"] == "hamm_soft") & df["lemma6_bound"].notna()]
    if soft.empty:
        return None
    above = int((soft["risk_gap"] > soft["lemma6_bound"]).sum())
    frac, lo, hi = binomial_interval(above, len(soft))
    c = CLAIMS["V4"]
    return {"claim_id": "V4", "claim": c.text, "dataset": table, "figures": c.figures,
            "statistic": f"fraction of {len(soft)} draws above the Lemma 6 line (δ_p = {delta_p:g})",
            "estimate": frac, "ci_low": lo, "ci_high": hi, "n_reps": int(soft["rep"].nunique()),
            "margin": float("nan"), "verdict": verdict(lo - delta_p, hi - delta_p, "less"),
            "note": "Clopper–Pearson 95 % interval; PASS if it lies below δ_p"}


def evaluate(tables: Mapping[str, pd.DataFrame], cfg: Mapping) -> pd.DataFrame:
    """One row per (claim, table) in the common claims-table columns."""
    v = cfg["voting"]
    out = []
    for table, full in sorted(tables.items()):
        df = main_rows(full)
        Ms = sorted(int(m) for m in df["M"].dropna().unique())
        if not Ms:
            continue
        M = max([m for m in Ms if m <= v["h1_M"]] or Ms[:1])
        reading = _reading(df)
        for cid, worse in (("V1", "param_avg"), ("V2", "hamm_vote")):
            out.append(evaluate_one(cid, CLAIMS[cid], _paired_check(df, worse, M), None, table, reading))
        if len(Ms) >= 2:
            out.append(evaluate_one("V3", CLAIMS["V3"], _v3_check(df, Ms, float(v["h2_eps"])), None, table, reading))
        v4 = _v4_row(table, df, float(v["delta_p"]))
        if v4 is not None:
            out.append(v4)
    return pd.DataFrame(out, columns=COLUMNS)
