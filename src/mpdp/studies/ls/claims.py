"""Claims check of the least-squares study (issue 9; bounds.md B8, I-17) with the generic engine
of :mod:`mpdp.claims` (:func:`~mpdp.claims.verdict`, :func:`~mpdp.claims.t_interval`,
:func:`~mpdp.claims.ratio_interval`), rows with :data:`mpdp.claims.COLUMNS`.

Statistics (the unit of replication is a noise draw for SSP and a run for SGD):

* **LS1-formula** (per t, ε, σ₂ on/off; write-up noise model, the formula's own): relative
  error formula/mean − 1 of the printed closed form against the measured mean excess, interval
  from the mean's standard error (a normal interval; the population mean is infinite, so a large
  sample mean is itself evidence against the formula), its lower end raised to half the median's
  lower bound when below (valid for a non-negative variable: E X ≥ q·P(X ≥ q)). Equivalence with margin
  :data:`FORMULA_MARGIN`; expected FAIL.
* **LS1-delta** (per private setting, σ₂ > 0, in the validity region s₁ ≤ κ·c(D)): relative error of the
  delta-method median against the measured median, interval from the median's
  distribution-free interval. Equivalence, margin :data:`DELTA_MARGIN`.
* **LS1-t**: slope of log(median excess) in log t, one slope per ε, t-interval over ε; tested
  against 1 (independent noise: "as t") and 2 ("as t²", the write-up's model).
* **LS-sgd** (LS-2, LS-3; per ε, SGD option and t ∈ {smallest, largest}): log₁₀ of median SGD
  excess over median SSP excess, interval from the two medians' intervals (coverage ≥ 0.95²);
  claim "SGD beats SSP" (less than 0), measured not asserted.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mpdp.claims import COLUMNS, ratio_interval, t_interval, verdict

#: equivalence margin of the printed closed form against the measured mean (relative)
FORMULA_MARGIN: float = 0.05
#: equivalence margin of the delta-method median against the measured median (relative) [REC]
DELTA_MARGIN: float = 0.10
#: equivalence margin of the fitted growth exponent in t
SLOPE_MARGIN: float = 0.15
_Z = 1.959963984540054


def _row(cid: str, claim: str, dataset: str, fig: str, statistic: str, est: float, lo: float,
         hi: float, n: int, kind: str, margin: float, note: str) -> dict:
    v = verdict(lo, hi, kind, margin) if kind != "equivalence" or margin > 0 else "INCONCLUSIVE"
    return dict(zip(COLUMNS, [cid, claim, dataset, fig, statistic, est, lo, hi, n, margin, v, note],
                    strict=True))


def _ssp(table: pd.DataFrame) -> pd.DataFrame:
    return table[table["mechanism"] == "ls_ssp"]


def formula_claims(table: pd.DataFrame) -> list[dict]:
    """LS1-formula rows: the write-up's printed closed form against the measured mean."""
    rows = []
    ssp = _ssp(table)
    ssp = ssp[ssp["noise_model"] == "write_up"].sort_values(["z2", "t", "epsilon"], ascending=[False, True, True])
    for _, r in ssp.iterrows():
        f, mean, se = float(r["writeup_formula"]), float(r["excess_mean"]), float(r["excess_mean_se"])
        if not np.isfinite(f):
            continue
        # the excess is ≥ 0, so E ≥ q·P(X ≥ q) ≥ q/2 for q ≤ median: a lower bound that survives
        # heavy tails (where the normal interval of the mean reaches below 0)
        lo_mean = max(mean - _Z * se, 0.5 * float(r["excess_median_lo"]))
        hi_mean = mean + _Z * se
        est = f / mean - 1
        if lo_mean > 0:
            lo, hi = f / hi_mean - 1, f / lo_mean - 1
            lo, hi = min(lo, hi), max(lo, hi)
        else:
            lo, hi = np.nan, np.nan
        sign = "NEGATIVE " if f < 0 else ""
        note = (f"t={int(r['t'])}, ε={r['epsilon']:g}, σ₂{'>0' if r['z2'] else '=0'}: {sign}formula "
                f"{f:.4g} vs measured mean {mean:.4g} (median {r['excess_median']:.4g}, delta method "
                f"{r['delta_method']:.4g})")
        rows.append(_row("LS1-formula", "The write-up's printed closed form equals the expected excess risk",
                         str(r["dataset"]), "ls_1", "formula/mean − 1", est, lo, hi, int(r["draws"]),
                         "equivalence", FORMULA_MARGIN, note))
    return rows


def delta_claims(table: pd.DataFrame) -> list[dict]:
    """LS1-delta rows: the delta-method median against the measured median, in its validity region."""
    rows = []
    ssp = _ssp(table).dropna(subset=["delta_method_median"])
    ssp = ssp[ssp["z2"]]  # the private mechanism only (σ₂ = 0 is an ablation)
    for _, r in ssp.sort_values(["z2", "noise_model", "t", "epsilon"], ascending=[False, True, True, True]).iterrows():
        pred, med = float(r["delta_method_median"]), float(r["excess_median"])
        lo_m, hi_m = float(r["excess_median_lo"]), float(r["excess_median_hi"])
        setting = (f"{r['noise_model']}, t={int(r['t'])}, ε={r['epsilon']:g}, σ₂{'>0' if r['z2'] else '=0'}: "
                   f"predicted {pred:.4g} vs measured median {med:.4g}")
        if not bool(r["in_validity"]):
            rows.append(_row("LS1-delta", "The delta method (B8) matches the median excess risk in its "
                             "validity region", str(r["dataset"]), "ls_1", "prediction/median − 1",
                             pred / med - 1, np.nan, np.nan, int(r["draws"]), "equivalence", 0.0,
                             setting + "; outside the validity region (s₁ > κ·c(D)), not tested"))
            continue
        lo, hi = pred / hi_m - 1, pred / lo_m - 1
        rows.append(_row("LS1-delta", "The delta method (B8) matches the median excess risk in its "
                         "validity region", str(r["dataset"]), "ls_1", "prediction/median − 1",
                         pred / med - 1, lo, hi, int(r["draws"]), "equivalence", DELTA_MARGIN, setting))
    return rows


def growth_claims(table: pd.DataFrame) -> list[dict]:
    """LS1-t rows: the exponent of the median excess in t, per noise model (σ₂ > 0)."""
    rows = []
    ssp = _ssp(table)
    ssp = ssp[ssp["z2"]]
    for model, target, cid, text in (
        ("independent", 1.0, "LS1-t", "Under independent party noise the excess risk grows as t"),
        ("independent", 2.0, "LS1-t2", "Under independent party noise the excess risk grows as t² "
                                       "(the write-up's analysis)"),
        ("write_up", 2.0, "LS1-t-writeup", "Under the write-up's t·z noise model the excess risk grows as t²"),
    ):
        sub = ssp[ssp["noise_model"] == model]
        if sub.empty or sub["t"].nunique() < 2:
            continue
        slopes = []
        for _, g in sub.groupby("epsilon"):
            slopes.append(np.polyfit(np.log(g["t"].astype(float)), np.log(g["excess_median"]), 1)[0])
        est, lo, hi = t_interval(np.asarray(slopes) - target)
        note = (f"fitted exponents per ε: {', '.join(f'{s:.3f}' for s in slopes)} "
                f"(target {target:g}, t ∈ {sorted(int(t) for t in sub['t'].unique())})")
        rows.append(_row(cid, text, str(sub["dataset"].iloc[0]), "ls_1", "exponent − target", est, lo, hi,
                         len(slopes), "equivalence", SLOPE_MARGIN, note))
    return rows


def sgd_claims(table: pd.DataFrame, experiment: str) -> list[dict]:
    """LS-sgd rows: does noisy SGD (M15) beat SSP (M14, independent noise), per ε?"""
    rows = []
    ssp = _ssp(table)
    ssp = ssp[(ssp["noise_model"] == "independent") & ssp["z2"]]
    sgd = table[(table["mechanism"] == "ls_sgd") & table["epsilon"].notna()]
    if ssp.empty or sgd.empty:
        return rows
    t_values = sorted({int(ssp["t"].min()), int(ssp["t"].max())})
    for option in sorted(sgd["noise_model"].unique()):
        for eps in sorted(sgd["epsilon"].unique()):
            g = sgd[(sgd["noise_model"] == option) & (sgd["epsilon"] == eps)].iloc[0]
            for t in t_values:
                s = ssp[(ssp["t"] == t) & (ssp["epsilon"] == eps)]
                if s.empty:
                    continue
                s = s.iloc[0]
                est = float(np.log10(g["excess_median"] / s["excess_median"]))
                lo, hi = ratio_interval((g["excess_median_lo"], g["excess_median_hi"]),
                                        (s["excess_median_lo"], s["excess_median_hi"]))
                lo, hi = (np.log10(lo), np.log10(hi)) if np.isfinite(lo) else (np.nan, np.nan)
                note = (f"{option}, ε={eps:g}, SSP at t={t}: median SGD {g['excess_median']:.4g} "
                        f"({int(g['draws'])} runs) vs SSP {s['excess_median']:.4g} ({int(s['draws'])} draws)")
                rows.append(_row("LS-sgd", "Noisy SGD (M15) has a smaller excess risk than SSP (M14)",
                                 str(g["dataset"]), experiment, "log10(median SGD / median SSP)", est, lo,
                                 hi, int(g["draws"]), "less", np.nan, note))
    return rows


def evaluate(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """All claim rows of the study from the experiment tables present (``ls_1`` … ``ls_3``)."""
    rows: list[dict] = []
    if "ls_1" in tables:
        t1 = tables["ls_1"]
        rows += formula_claims(t1) + delta_claims(t1) + growth_claims(t1)
    for exp in ("ls_2", "ls_3"):
        if exp in tables:
            rows += sgd_claims(tables[exp], exp)
    return pd.DataFrame(rows, columns=COLUMNS)
