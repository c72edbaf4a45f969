"""Report-section helpers of the least-squares study (notebooks/report.py, section 10).

The study's entry of the report context, ``ctx["studies"]["ls"]`` (:func:`context`), holds the
paths of the experiment tables, the heavy-tail draws, the negative-closed-form table and the
figures; it is absent or ``None`` when the config does not run the study. :func:`load` reads what exists; every helper works on
whatever subset is present, so the report builds when the study's outputs are absent. All
numbers in the prose come from the tables (:func:`findings`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from mpdp import results
from mpdp.studies.ls import EXPERIMENTS
from mpdp.studies.ls.experiment import COLUMNS
from mpdp.studies.ls.figures import SYNTHETIC_NOTE

#: the write-up's statements and what is wrong with them (spec I-15 … I-18, B8)
WRITEUP_ISSUES: list[tuple[str, str, str]] = [
    ("I-15", "Theorem 1: σ = Δ·sqrt(2 ln(2/δ))/ε gives (ε, δ)-DP, for any ε.",
     "Only proven for ε < 1; enforced here (classical calibration), the analytic Gaussian "
     "mechanism is the option for larger ε."),
    ("I-16", "B's output has no privacy guarantee when c(D) is unbounded; add z₃.",
     "B's output is post-processing of (ε₁+ε₂, δ₁+δ₂)-DP releases: private without z₃ (off by default)."),
    ("I-17", "B's output is (d(D) + t z₂)/(c(D) + t z₁) and E[excess] = "
     "((d²+t²σ₂²)/(c²+t²σ₁²) − d²/c²)·c.",
     "t independent parties add √t·z, not t·z; the expectation of a ratio is not the ratio of "
     "expectations: the closed form is negative when σ₂²/σ₁² < d²/c² (e.g. σ₂ = 0), and the "
     "true expectation is infinite (Gaussian denominator). Corrected: exact identity, delta "
     "method, median (bounds.md B8)."),
    ("I-18", "SGD: the owner broadcasts the un-noised gradient G_i; σ, η(i), 𝒞 unspecified.",
     "Broadcast the noisy G_i + z_i; 𝒞 = ball of radius R_𝒞; noise from zCDP over the n touches "
     "of each record (printed permutation schedule) or BST sampling (mechanisms.md M15)."),
]


class LSResults(NamedTuple):
    tables: dict[str, pd.DataFrame]
    tail: pd.DataFrame | None
    negative: pd.DataFrame | None
    figures: dict[str, str]


def read_table(path: str | Path) -> pd.DataFrame:
    """A study table, with a one-line error if it is missing or unreadable."""
    return results.read_parquet(path, "least-squares table")


def context(files: Mapping[str, list[str]]) -> dict[str, Any] | None:
    """The study's entry of the report context (:attr:`mpdp.studies.interface.Study.context`) from
    its files (None when it has none)."""
    outputs = files["files"]
    if not outputs:
        return None
    paths = {Path(p).stem: p for p in outputs if p.endswith(".parquet")}
    return {
        "tables": {e: paths[e] for e in EXPERIMENTS if e in paths},
        "tail": paths.get("ls_1_tail"),
        "negative": paths.get("negative_closed_form"),
        "figures": {Path(p).stem: p for p in outputs if p.endswith(".png")},
    }


def load(ctx: dict[str, Any] | None) -> LSResults | None:
    """Read what exists of the study's outputs; None if the study is off or nothing was built."""
    if not ctx:
        return None

    def _opt(path: str | None) -> pd.DataFrame | None:
        return read_table(path) if path and Path(path).is_file() else None

    tables = {e: read_table(p) for e, p in ctx.get("tables", {}).items() if Path(p).is_file()}
    if not tables:
        return None
    figures = {k: v for k, v in ctx.get("figures", {}).items() if Path(v).is_file()}
    return LSResults(tables, _opt(ctx.get("tail")), _opt(ctx.get("negative")), figures)


def issues_table() -> pd.DataFrame:
    return pd.DataFrame(WRITEUP_ISSUES, columns=["id", "the write-up says", "what is right"])


def data_lines(res: LSResults) -> list[str]:
    """One line per experiment saying what its data is (synthetic by design or real)."""
    lines = []
    for exp, table in res.tables.items():
        row = table.iloc[0]
        kind = SYNTHETIC_NOTE if bool(row["synthetic"]) else "real data (scikit-learn's bundled diabetes set)"
        lines.append(f"{exp}: {row['dataset']}, n = {int(row['n'])}, d = {int(row['d'])} — {kind}")
    return lines


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def findings(res: LSResults) -> list[str]:
    """Key numbers of the study, computed from the tables (markdown bullets)."""
    out = []
    t1 = res.tables.get("ls_1")
    if t1 is not None:
        ssp = t1[t1["mechanism"] == "ls_ssp"]
        neg = ssp[ssp["writeup_formula"] < 0]
        zero = ssp[~ssp["z2"]]
        if not zero.empty:
            out.append(
                f"**Printed closed form negative.** With σ₂ = 0 the formula is negative at "
                f"{len(neg[~neg['z2']].drop_duplicates(['t', 'epsilon']))} of "
                f"{len(zero.drop_duplicates(['t', 'epsilon']))} (t, ε) settings "
                f"(from {_fmt(zero['writeup_formula'].min())} to {_fmt(zero['writeup_formula'].max())}), "
                f"while the measured median excess risk is positive at all of them "
                f"({_fmt(zero['excess_median'].min())} to {_fmt(zero['excess_median'].max())})."
            )
        pos = ssp[ssp["z2"] & (ssp["noise_model"] == "write_up")]
        if not pos.empty:
            rel = pos["writeup_formula"] / pos["delta_method"] - 1
            out.append(
                f"**Even where it is positive** (σ₂ > 0, the write-up's own t·z model) the formula is "
                f"{_fmt(100 * rel.min())} % to {_fmt(100 * rel.max())} % off the delta-method mean it "
                f"should approximate: it subtracts θ*²s₁²/c(D) where the correct first-order term adds it."
            )
        ratio = (ssp["excess_mean"] / ssp["excess_median"]).replace([np.inf, -np.inf], np.nan)
        if ratio.notna().any():
            worst = ssp.loc[ratio.idxmax()]
            out.append(
                f"**Heavy tail.** The sample mean over {int(worst['draws'])} draws reaches "
                f"{_fmt(worst['excess_mean'])} at t = {int(worst['t'])}, ε = {worst['epsilon']:g} "
                f"({worst['noise_model']}), {_fmt(ratio.max())} × the median ({_fmt(worst['excess_median'])}): "
                f"the expectation the write-up computes does not exist."
            )
        ind = ssp[ssp["z2"] & (ssp["noise_model"] == "independent")]
        if ind["t"].nunique() > 1:
            slopes = {m: [np.polyfit(np.log(g["t"].astype(float)), np.log(g["excess_median"]), 1)[0]
                          for _, g in ssp[ssp["z2"] & (ssp["noise_model"] == m)].groupby("epsilon")]
                      for m in ssp["noise_model"].unique()}
            text = "; ".join(f"{m}: {_fmt(min(s))}–{_fmt(max(s))}" for m, s in slopes.items())
            out.append(f"**Growth with t.** Fitted exponent of the median excess in t, per ε: {text} "
                       "(independent parties give t, the write-up's t·z model t²).")
        priv = ssp[ssp["z2"]]
        out.append(
            f"**Ledger.** With the {priv['calibration'].iloc[0]} calibration the noise really gives "
            f"ε = {_fmt(priv['eps_accounted'].min())} … {_fmt(priv['eps_accounted'].max())} at δ for "
            f"target ε = {priv['epsilon'].min():g} … {priv['epsilon'].max():g} (exact accounting of the "
            f"two Gaussian releases)."
        )
    for exp in ("ls_2", "ls_3"):
        table = res.tables.get(exp)
        if table is None:
            continue
        ssp = table[(table["mechanism"] == "ls_ssp") & (table["noise_model"] == "independent")]
        sgd = table[(table["mechanism"] == "ls_sgd") & table["epsilon"].notna()]
        if ssp.empty or sgd.empty:
            continue
        wins, total = 0, 0
        for (eps, _t), s in ssp.groupby(["epsilon", "t"]):
            for _, g in sgd[sgd["epsilon"] == eps].iterrows():
                total += 1
                wins += int(g["excess_median"] < s["excess_median"].iloc[0])
        floor = table[(table["mechanism"] == "ls_sgd") & (table["noise_model"] == "nonprivate")]
        out.append(
            f"**{exp}.** Noisy SGD has the smaller median excess risk in {wins} of {total} (ε, t, option) "
            f"comparisons; SSP needed the positive-definite fallback in "
            f"{_fmt(100 * ssp['pd_fallback'].mean())} % of draws (median excess "
            f"{_fmt(ssp['excess_median'].min())} … {_fmt(ssp['excess_median'].max())}); SGD medians "
            f"{_fmt(sgd['excess_median'].min())} … {_fmt(sgd['excess_median'].max())}"
            + (f", noise-free projected SGD {_fmt(floor['excess_median'].iloc[0])}." if not floor.empty else ".")
        )
        for option, g in sgd.groupby("noise_model"):
            g = g.sort_values("epsilon")
            if len(g) > 1:
                out.append(
                    f"**{exp}, SGD ({option}) against the B8 shape.** From ε = {g['epsilon'].iloc[0]:g} to "
                    f"{g['epsilon'].iloc[-1]:g} the median excess changes by a factor "
                    f"{_fmt(g['excess_median'].iloc[0] / g['excess_median'].iloc[-1])}; the bound's 1/ε shape "
                    f"predicts {_fmt(g['epsilon'].iloc[-1] / g['epsilon'].iloc[0])} (a factor near 1 means the "
                    "noise dominates the gradient signal at this n: the iterate wanders in 𝒞)."
                )
    return out


def negative_table(res: LSResults) -> pd.DataFrame:
    """The negative-closed-form table for the report (rounded, readable names)."""
    if res.negative is None:
        return pd.DataFrame()
    return res.negative.rename(columns={"writeup_formula": "printed closed form",
                                        "excess_median": "measured median", "excess_mean": "measured mean",
                                        "delta_method": "delta method (mean)", "z2": "σ₂ > 0"})


def ledger(res: LSResults) -> pd.DataFrame:
    """Noise used and ε really given, per experiment, mechanism, noise model and ε."""
    frames = []
    for table in res.tables.values():
        sub = table[table["mechanism"] != "ols"]
        sub = sub[sub["z2"]].drop_duplicates(["experiment", "mechanism", "noise_model", "epsilon"])
        frames.append(sub[["experiment", "mechanism", "noise_model", "calibration", "epsilon", "delta",
                           "sigma1", "sigma2", "eps_accounted"]])
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def reconstructed_choices(cfg: dict[str, Any]) -> pd.DataFrame:
    """The study's [REC] and open choices with the values used."""
    ls = cfg.get("ls")
    if not ls:
        return pd.DataFrame()
    rows = [
        ("calibration", ls["calibration"], "C3 as in the write-up (ε < 1) or analytic Gaussian (I-15)"),
        ("eps_split / delta_split", f"{ls['eps_split']} / {ls['delta_split']}", "M14 default split"),
        ("symmetric_noise", ls["symmetric_noise"], "M14 open choice: symmetric Z₁"),
        ("ls_1.noise_models", ", ".join(ls["ls_1"]["noise_models"]),
         "M14 switch writeup_noise_model: independent (algorithm) | write_up (= scaled_single_draw)"),
        ("sigma3", ls["sigma3"], "I-16: z₃ off"),
        ("pd_floor", ls["pd_floor"], "M14 fallback τI when ΣCᵢ is not positive definite"),
        ("validity_ratio", ls["validity_ratio"], "[REC] delta method tested where s₁ ≤ κ·c(D)"),
        ("sgd.radius", ls["sgd"]["radius"], "E6: R_𝒞 = 2"),
        ("sgd.accountant", ls["sgd"]["accountant"], "M15 permutation_zcdp: zCDP formula or exact"),
        ("sgd step size", "η(i) = 2R/√(i(n²L²+dσ²))", "[REC] BST schedule for both options; last iterate"),
        ("sgd.reps", ls["sgd"]["reps"], "[REC] SGD runs per setting"),
        ("ls_2 data", f"n = {ls['ls_2']['n']}, d = {ls['ls_2']['d']}", "[REC] law and n (SGD needs n² steps)"),
        ("ls_3 data", "diabetes, X/max‖x‖, centred y/max|y|", "[REC] bounding of the real set"),
    ]
    return pd.DataFrame(rows, columns=["choice", "value", "why"])


__all__ = ["COLUMNS", "LSResults", "context", "data_lines", "findings",
           "issues_table", "ledger", "load", "negative_table", "read_table", "reconstructed_choices"]
