"""Claims check of Zhang–Zhu (S-001), rows in the format of :data:`mpdp.claims.COLUMNS`.

Each claim becomes one number per repetition (runs of one repetition index share nothing but
the data split, so differences between mechanisms are paired by repetition index only), a
95 % t-interval over repetitions (:func:`mpdp.claims.t_interval`) and the fixed verdict rule
(:func:`mpdp.claims.verdict`). The seed contradicts itself about which algorithm is better
(I-11): the claims are measured, not assumed. All on the main topology. ρ and η are tuned once
per algorithm at one α (:mod:`mpdp.studies.admm.train`), so comparisons across α and between
DVP and PVP are not driven by a per-α choice of ρ. "The mechanism's own releases" are
iterations 1..T for DVP and 1..T−1 for PVP (its release T is a DVP step).

* Z1 (per mechanism): larger α converges faster — a *speed*, not a loss level: per (repetition,
  α) the settling iteration, the first t after which the loss stays within ``settle_tol`` [REC]
  (relative) of the run's own final loss (its last own release); per repetition the OLS slope
  of log(settling iteration) against log α; claimed < 0.
* Z2: DVP oscillates less than PVP — per repetition, mean over α of the oscillation
  Σ_t |log L(t+1) − log L(t)| / (T − 1) of DVP minus that of PVP; claimed < 0. (The spread
  across repetitions is shown next to it in the report.)
* Z3: DVP has lower MER over a wide α range — over the iterations, as the paper's figures
  show it: per repetition, mean over α and over iterations 1..T−1 (both mechanisms' own
  releases; at T PVP's release is a DVP step) of MER_DVP − MER_PVP; claimed < 0.
* Z4: PVP has a slightly better final empirical loss — mean over α of L_PVP − L_DVP at the
  final iteration (the final classifier); claimed < 0.
* Z5: DVP's fitted g is iteration-independent — the claim is about the loss *privacy causes*,
  so the statistic is taken net of non-private ADMM's own convergence (which alone changes
  the loss between the Fig. 4 iterations and says nothing about g): per repetition, mean over
  α of the change of log(L_DVP(t)/L_ADMM(t)) between the first and last Fig. 4 iterations
  (non-private ADMM is deterministic: one run); equivalence with margin ``g_margin``
  (default 0.1, i.e. ±10 %) [REC].
* Z6: DVP has a smaller variance of the empirical loss than PVP — per repetition, the mean
  over α and iterations 1..T−1 of the squared deviation of log L_DVP from its mean over
  repetitions (same α, t) minus the same for PVP; the mean over repetitions is (R−1)/R times
  the difference of the variances of log L. Log loss makes cells of very different loss
  levels (α from 0.01 to 10) count alike (a relative variance); claimed < 0. The note gives
  the share of (t, α) cells where DVP's standard deviation of the loss is the smaller.
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
        "Z3": Claim("DVP has lower misclassification than PVP over a wide α range (over the iterations)",
                    "zz_f5", "less", _NAN),
        "Z4": Claim("PVP has a slightly better final empirical loss than DVP", "zz_f5", "less", _NAN),
        "Z5": Claim("DVP's fitted loss model g(α) is iteration-independent", "zz_f4, zz_table",
                    "equivalence", float(cfg["admm"]["g_margin"])),
        "Z6": Claim("DVP has a smaller variance of the empirical loss than PVP", "zz_f4, zz_f5", "less", _NAN),
    }


def _slope(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.polyfit(x, y, 1)[0]) if np.unique(x).size >= 2 else _NAN


def _own_releases(sel: pd.DataFrame, mech: str) -> pd.DataFrame:
    """The rows of the mechanism's own releases (PVP: iterations before its final DVP step)."""
    return sel[sel["iteration"] < sel["iteration"].max()] if mech == "pvp" else sel


def settling_iteration(iterations: np.ndarray, loss: np.ndarray, tol: float) -> float:
    """First iteration after which the loss stays within ``tol`` (relative) of its last value."""
    order = np.argsort(iterations)
    it, loss = np.asarray(iterations)[order], np.asarray(loss, dtype=float)[order]
    outside = np.flatnonzero(np.abs(loss / loss[-1] - 1.0) > tol)
    return float(it[0] if outside.size == 0 else it[outside[-1] + 1])  # the last value is never outside


def _z1(runs: pd.DataFrame, mech: str, tol: float) -> tuple[pd.Series, str]:
    sel = _own_releases(runs[runs["mechanism"] == mech], mech)
    settle = sel.groupby(["rep", "alpha"]).apply(
        lambda g: settling_iteration(g["iteration"].to_numpy(), g["train_loss"].to_numpy(), tol),
        include_groups=False).rename("settle").reset_index()
    per_rep = settle.groupby("rep").apply(
        lambda g: _slope(np.log(g["alpha"].to_numpy()), np.log(g["settle"].to_numpy())), include_groups=False)
    return per_rep, f"OLS slope of log(settling iteration: within {tol:g} of the run's final loss) vs log α"


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


def _z3(runs: pd.DataFrame) -> tuple[pd.Series, str]:
    own = runs[runs["iteration"] < runs["iteration"].max()]
    piv = own.pivot_table(index=["rep", "alpha", "iteration"], columns="mechanism", values="mer")
    if "dvp" not in piv or "pvp" not in piv:
        return pd.Series(dtype=float), "needs DVP and PVP"
    diff = (piv["dvp"] - piv["pvp"]).groupby(level="rep").mean().dropna()
    return diff, "MER, DVP − PVP (mean over α and iterations 1..T−1)"


def _z5(runs: pd.DataFrame, reference: pd.DataFrame, cfg: dict[str, Any]) -> tuple[pd.Series, str]:
    sel = runs[runs["mechanism"] == "dvp"]
    iters = checkpoint_iterations(cfg["admm"]["f4_iterations"], sel["iteration"].to_numpy()) if not sel.empty else []
    if len(iters) < 2 or reference.empty:
        return pd.Series(dtype=float), "needs two Fig. 4 iterations and non-private ADMM"
    first, last = iters[0], iters[-1]
    admm = reference.groupby("iteration")["train_loss"].mean()
    if first not in admm.index or last not in admm.index:
        return pd.Series(dtype=float), "non-private ADMM not recorded at the Fig. 4 iterations"
    piv = sel[sel["iteration"].isin([first, last])].pivot_table(index=["rep", "alpha"], columns="iteration",
                                                                  values="train_loss")
    change = np.log(piv[last] / admm[last]) - np.log(piv[first] / admm[first])
    return (change.groupby(level="rep").mean().dropna(),
            f"mean over α of the change of log(L_DVP / L_ADMM) from t = {first} to t = {last}")


def _z6(runs: pd.DataFrame) -> tuple[pd.Series, str, str]:
    own = runs[runs["iteration"] < runs["iteration"].max()].assign(log_loss=lambda f: np.log(f["train_loss"]))
    dev = own["log_loss"] - own.groupby(["mechanism", "alpha", "iteration"])["log_loss"].transform("mean")
    piv = own.assign(sq=dev**2).pivot_table(index=["rep", "alpha", "iteration"], columns="mechanism", values="sq")
    if "dvp" not in piv or "pvp" not in piv:
        return pd.Series(dtype=float), "needs DVP and PVP", ""
    diff = (piv["dvp"] - piv["pvp"]).groupby(level="rep").mean().dropna()
    sd = own.groupby(["alpha", "iteration", "mechanism"])["train_loss"].std().unstack("mechanism").dropna()
    note = (f"DVP's sd of the loss is the smaller in {100 * float((sd['dvp'] < sd['pvp']).mean()):.0f} % of "
            f"{len(sd)} (t, α) cells" if len(sd) else "")
    return (diff, "squared deviation of log loss from its mean over repetitions, DVP − PVP (mean over α and "
            "iterations 1..T−1)", note)


def evaluate(table: pd.DataFrame, cfg: dict[str, Any]) -> pd.DataFrame:
    """One row per claim (columns :data:`mpdp.claims.COLUMNS`)."""
    a = cfg["admm"]
    main = table[table["topology"] == a["main_topology"]]
    runs = main[main["mechanism"].isin(["dvp", "pvp"])]
    reference = main[main["mechanism"] == "admm"]
    tol = float(a["settle_tol"])
    notes: dict[str, str] = {}

    def z6() -> tuple[pd.Series, str]:
        per_rep, statistic, notes["Z6"] = _z6(runs)
        return per_rep, statistic

    stats: dict[str, Callable[[], tuple[pd.Series, str]]] = {
        "Z1-DVP": lambda: _z1(runs, "dvp", tol),
        "Z1-PVP": lambda: _z1(runs, "pvp", tol),
        "Z2": lambda: _z2(runs),
        "Z3": lambda: _z3(runs),
        "Z4": lambda: (_final_diff(runs, "train_loss", "pvp", "dvp"), "final loss, PVP − DVP (mean over α)"),
        "Z5": lambda: _z5(runs, reference, cfg),
        "Z6": z6,
    }
    rows = []
    for cid, claim in claims_table(cfg).items():
        per_rep, statistic = stats[cid]() if not runs.empty else (pd.Series(dtype=float), "no runs")
        values = per_rep.to_numpy(dtype=float)
        est, lo, hi = t_interval(values)
        n = int(np.isfinite(values).sum())
        note = "; ".join(x for x in (notes.get(cid, ""), "" if n >= 2 else "fewer than 2 repetitions: no interval")
                         if x)
        rows.append({
            "claim_id": cid, "claim": claim.text, "dataset": a["dataset"], "figures": claim.figures,
            "statistic": statistic, "estimate": est, "ci_low": lo, "ci_high": hi, "n_reps": n,
            "margin": claim.margin, "verdict": verdict(lo, hi, claim.kind, claim.margin), "note": note,
        })
    return pd.DataFrame(rows, columns=COLUMNS)
