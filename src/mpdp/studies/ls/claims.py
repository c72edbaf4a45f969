"""Claims of the least-squares study (issue 9; bounds.md B8, I-17) declared for the claims engine
(issue 33). The unit of replication is a noise draw for SSP and a run for SGD; the tables keep
per-setting summaries (medians with distribution-free intervals, means with standard errors), so
the observations are *study-given intervals* (columns ``lo``/``hi``, one row per cell):

* **LS1-formula** (per t, ε, σ₂; write-up noise model): formula/mean − 1 of the printed closed form
  against the measured mean excess; interval from the mean's standard error, its lower end raised
  to half the median's lower bound (valid for a non-negative variable: E X ≥ q·P(X ≥ q)).
  Equivalence, margin :data:`FORMULA_MARGIN`; expected to fail.
* **LS1-delta** (per private setting in the validity region s₁ ≤ κ·c(D)): the delta-method median
  against the measured median (its distribution-free interval). Equivalence, :data:`DELTA_MARGIN`.
* **LS1-t / LS1-t2 / LS1-t-writeup**: the fitted exponent of the median excess in t minus its
  target, per ε (a cell each), on every repetition of the settings (``ls.reps`` disjoint blocks of the
  draws, their medians in ``excess_rep_medians``): a one-sample test over real repetitions (issue 42).
  Equivalence, :data:`SLOPE_MARGIN`.
* **LS-sgd** (LS-2, LS-3; per SGD option, ε and SSP's t ∈ {smallest, largest}): median SGD excess vs
  median SSP excess on the log scale (conservative interval from the two medians' intervals), practical
  margin :data:`SGD_MARGIN` (a factor 1.25). Guard: SGD, the method the claim says is better, must beat
  releasing θ = 0 (excess θ*ᵀXᵀXθ*, the ``zero_excess`` column) by a quarter of that excess (its converged
  reference is 0, θ* itself); otherwise the cell is uninformative.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from mpdp.claims.declare import Claim

STUDY = "ls"
#: equivalence margin of the printed closed form against the measured mean (relative)
FORMULA_MARGIN: float = 0.05
#: equivalence margin of the delta-method median against the measured median (relative) [REC]
DELTA_MARGIN: float = 0.10
#: equivalence margin of the fitted growth exponent in t
SLOPE_MARGIN: float = 0.15
#: practical margin of LS-sgd on log10(excess SGD / excess SSP): a factor 1.25 (docs/claims.md: 25 %)
SGD_MARGIN: float = math.log10(1.25)
_Z = 1.959963984540054
_SRC = "seed 002 (multi-party DP write-up 1), least-squares analysis (bounds.md B8, I-17)"
#: claim id -> the study's figures it concerns
FIGURES: dict[str, str] = {"LS1-formula": "ls_1", "LS1-delta": "ls_1", "LS1-t": "ls_1", "LS1-t2": "ls_1",
                           "LS1-t-writeup": "ls_1", "LS-sgd": "ls_2, ls_3"}
_COLS = ["dataset", "reading", "cell", "rep", "method", "metric", "value", "x", "bound", "lo", "hi", "n"]

#: (claim id, noise model, target exponent, text)
GROWTH: tuple[tuple[str, str, float, str], ...] = (
    ("LS1-t", "independent", 1.0, "Under independent party noise the excess risk grows as t"),
    ("LS1-t2", "independent", 2.0, "Under independent party noise the excess risk grows as t² (the write-up's analysis)"),
    ("LS1-t-writeup", "write_up", 2.0, "Under the write-up's t·z noise model the excess risk grows as t²"),
)

CLAIMS: tuple[Claim, ...] = (
    Claim(STUDY, "LS1-formula", "The write-up's printed closed form equals the expected excess risk", _SRC,
          "rel_error", ("closed_form",), "one_sample", "equivalence", margin=FORMULA_MARGIN,
          margin_reason="5 % of the measured mean: a closed form off by more misstates the risk a user plans for"),
    Claim(STUDY, "LS1-delta", "The delta method (B8) matches the median excess risk in its validity region", _SRC,
          "rel_error", ("delta_method",), "one_sample", "equivalence", margin=DELTA_MARGIN,
          margin_reason="10 % of the measured median [REC]: a first-order approximation is not asked to be closer"),
    *(Claim(STUDY, cid, text, _SRC, "exponent_error", (f"exponent_{cid}",), "one_sample", "equivalence",
            margin=SLOPE_MARGIN,
            margin_reason="±0.15 on the exponent: t versus t² differ by 1, and 0.15 keeps the two readings apart "
                          "with room for the curvature of a finite t grid") for cid, _, _, text in GROWTH),
    Claim(STUDY, "LS-sgd", "Noisy SGD (M15) has a smaller excess risk than SSP (M14)", f"{_SRC}; spec E9 LS-2, LS-3",
          "excess_risk", ("ls_sgd", "ls_ssp"), "compare", "less", effect_scale="log_ratio", summary="median",
          practical_margin=SGD_MARGIN,
          margin_reason="a factor 1.25 of the excess risk (the docs' 25 %): a smaller gain is within the spread of "
                        "the medians over draws and does not change which release a user picks"),
)


def _row(dataset: str, cell: str, method: str, metric: str, value: float, lo: float = np.nan,
         hi: float = np.nan, n: int = 1, rep: int = 0) -> dict:
    return {"dataset": dataset, "reading": "-", "cell": cell, "rep": rep, "method": method, "metric": metric,
            "value": value, "x": np.nan, "bound": np.nan, "lo": lo, "hi": hi, "n": n}


def _setting(r: pd.Series) -> str:
    return f"t={int(r['t'])}, ε={r['epsilon']:g}, σ₂{'>0' if r['z2'] else '=0'}"


def _ssp(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["mechanism"] == "ls_ssp"]


def _formula(table: pd.DataFrame) -> list[dict]:
    rows = []
    ssp = _ssp(table)
    for _, r in ssp[ssp["noise_model"] == "write_up"].iterrows():
        f, mean, se = float(r["writeup_formula"]), float(r["excess_mean"]), float(r["excess_mean_se"])
        if not np.isfinite(f):
            continue
        lo_mean = max(mean - _Z * se, 0.5 * float(r["excess_median_lo"]))
        hi_mean = mean + _Z * se
        lo, hi = (sorted((f / hi_mean - 1, f / lo_mean - 1)) if lo_mean > 0 else (np.nan, np.nan))
        rows.append(_row(str(r["dataset"]), f"write-up model, {_setting(r)}", "closed_form", "rel_error",
                         f / mean - 1, lo, hi, int(r["draws"])))
    return rows


def _delta(table: pd.DataFrame) -> list[dict]:
    rows = []
    ssp = _ssp(table).dropna(subset=["delta_method_median"])
    ssp = ssp[ssp["z2"] & ssp["in_validity"].fillna(False).astype(bool)]  # private, in its validity region
    for _, r in ssp.iterrows():
        pred, med = float(r["delta_method_median"]), float(r["excess_median"])
        rows.append(_row(str(r["dataset"]), f"{r['noise_model']} model, {_setting(r)}", "delta_method", "rel_error",
                         pred / med - 1, pred / float(r["excess_median_hi"]) - 1,
                         pred / float(r["excess_median_lo"]) - 1, int(r["draws"])))
    return rows


def _growth(table: pd.DataFrame) -> list[dict]:
    """Per (claim, ε): the exponent of the median excess in t fitted on each repetition of the settings
    (``excess_rep_medians``: the medians of disjoint blocks of draws, ``ls.reps`` of them) minus its target —
    real repetitions (issue 42), one cell per ε."""
    rows = []
    ssp = _ssp(table)
    ssp = ssp[ssp["z2"]]
    for cid, model, target, _ in GROWTH:
        sub = ssp[ssp["noise_model"] == model]
        if sub.empty or sub["t"].nunique() < 2:
            continue
        for eps, g in sub.groupby("epsilon"):
            medians = np.vstack([np.asarray(m, dtype=float) for m in g["excess_rep_medians"]])  # (t, rep)
            log_t = np.log(g["t"].astype(float).to_numpy())
            for rep, col in enumerate(medians.T):
                slope = np.polyfit(log_t, np.log(col), 1)[0]
                rows.append(_row(str(g["dataset"].iloc[0]), f"{model} noise, target t^{target:g}, ε={eps:g}",
                                 f"exponent_{cid}", "exponent_error", float(slope - target), rep=rep))
    return rows


def _sgd(table: pd.DataFrame) -> list[dict]:
    rows = []
    ssp = _ssp(table)
    ssp = ssp[(ssp["noise_model"] == "independent") & ssp["z2"]]
    sgd = table[(table["mechanism"] == "ls_sgd") & table["epsilon"].notna()]
    if ssp.empty or sgd.empty:
        return rows
    for option in sorted(sgd["noise_model"].unique()):
        for eps in sorted(sgd["epsilon"].unique()):
            g = sgd[(sgd["noise_model"] == option) & (sgd["epsilon"] == eps)].iloc[0]
            for t in sorted({int(ssp["t"].min()), int(ssp["t"].max())}):
                s = ssp[(ssp["t"] == t) & (ssp["epsilon"] == eps)]
                if s.empty:
                    continue
                s = s.iloc[0]
                cell = f"{g['experiment']}: {option}, ε={eps:g}, SSP at t={t}"
                for method, r in (("ls_sgd", g), ("ls_ssp", s)):
                    rows.append(_row(str(g["dataset"]), cell, method, "excess_risk", float(r["excess_median"]),
                                     float(r["excess_median_lo"]), float(r["excess_median_hi"]), int(r["draws"])))
    return rows


def observations(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The observations of the experiment tables present (``ls_1`` … ``ls_3``)."""
    rows: list[dict] = []
    if "ls_1" in tables:
        t1 = tables["ls_1"]
        rows += _formula(t1) + _delta(t1) + _growth(t1)
    for exp in ("ls_2", "ls_3"):
        if exp in tables:
            rows += _sgd(tables[exp].assign(experiment=exp))
    return pd.DataFrame(rows, columns=_COLS).astype({"rep": int, "value": float, "x": float, "bound": float})


def baselines(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Excess risk: releasing θ = 0 (``zero_excess``, per data set of each experiment table), with its converged
    reference 0 (θ* itself has no excess), so the guard's practical margin is a quarter of θ = 0's excess."""
    rows = []
    for table in tables.values():
        if "zero_excess" not in table:
            continue
        for ds, g in table.groupby("dataset"):
            zero = g["zero_excess"].dropna()
            if not zero.empty:
                rows.append({"dataset": str(ds), "cell": "*", "metric": "excess_risk", "value": float(zero.iloc[0]),
                             "baseline": "releasing θ = 0", "reference": 0.0})
    return pd.DataFrame(rows, columns=["dataset", "cell", "metric", "value", "baseline", "reference"])
