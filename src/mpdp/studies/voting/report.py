"""Report-section helpers of the voting study (notebooks/report.py, section "Output perturbation").

Everything shown is computed from the voting tables when the report is built; with no
tables (study not run) :func:`load` returns an empty section and the notebook says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mpdp.studies.voting import claims
from mpdp.studies.voting.figures import FIGURE_IDS, LABELS, load_tables

#: mechanism -> (spec section, privacy unit, ℓ2 sensitivity binary | multiclass, released model)
METHODS: dict[str, tuple[str, str, str, str]] = {
    "hamm_vote": ("M11 / M13 B.2", "party", "2/λ (tight: 1/λ, I-13) | √2/λ",
                  "ERM on majority-voted auxiliary labels"),
    "hamm_soft": ("M12 / M13 B.3", "party", "2/(Mλ) (tight: 1/(Mλ)) | √2/(Mλ)",
                  "soft-label ERM, (55) form (I-14)"),
    "param_avg": ("M6b / M13 B.4", "party", "2/(Mλ) | 2√2/(Mλ)", "mean of the M local minimisers"),
    "pathak": ("M6a", "record", "2/(n_(1)λ)", "mean of local minimisers (Pathak's calibration)"),
    "jayaraman_output": ("M5", "record", "2/(M n_(1)λ)", "mean of local minimisers inside MPC"),
}

#: [REC] and open choices of this study (spec E5, E7 #21–23)
DEVIATIONS: tuple[tuple[str, str, str], ...] = (
    ("whole protocol", "REC", "Hamm's experimental setup was not recovered (spec E5): data sets, M grid, "
     "ε grid, λ grid, split and repetitions follow spec E5's recommendation."),
    ("auxiliary pool", "REC", "N = aux_frac × (all records), drawn once per data set from the training rows "
     "(fixed across repetitions and M, like the test set); its labels are used only for the non-private "
     "λ validation."),
    ("global λ", "REC", "grid value with the lowest error of noise-free Alg. 2 on the auxiliary pool's "
     "true labels at M = lambda_ref_M, repetition 0; its privacy cost is ignored (E7 #16)."),
    ("averaging baselines", "REC", "param_avg, pathak and jayaraman_output release the mean of the local "
     "classifiers fitted with lambda_local, so their sensitivities use lambda_local."),
    ("ties", "E7 #23", "binary votes tie → +1; multiclass ties → smallest class index."),
    ("Theorem 4", "REC", "held-out pool = the test inputs labelled by the ensemble's α (no true labels); "
     "w_0 = w_s(λ) on that pool (one candidate of B6's minimisation)."),
    ("B5 for softmax", "DER", "smoothness L_J = 1/2 + λ for the softmax objective (1/4 + λ binary)."),
    ("multiclass split", "deviation", "the train/test split is stratified on the binary label (shared with the "
     "other studies), not on the 5 classes; the data card lists per-class counts."),
    ("I-9", "switch", "jayaraman_output uses N-L2 noise; code_faithful_laplace draws the authors' "
     "per-coordinate Laplace (not ε-DP, its accounted ε is √d ε)."),
    ("I-13", "switch", "tight_logistic_sensitivity halves the Alg. 1/2 sensitivities (binary only)."),
)


@dataclass
class Section:
    """Tables and figure files of the voting study for the report."""

    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    figures: dict[str, str] = field(default_factory=dict)


def load(context: Mapping[str, Any] | None) -> Section:
    """The section's inputs from the report context key ``voting`` (absent → empty section)."""
    if not context:
        return Section()
    tables = load_tables(context.get("tables", {}))
    figures = {k: p for k, p in context.get("figures", {}).items() if p and Path(p).is_file()}
    return Section(tables, figures)


def methods_table() -> pd.DataFrame:
    """Mechanisms, spec sections, privacy units and sensitivities."""
    return pd.DataFrame(
        [{"mechanism": m, "name": LABELS[m], "spec": s, "privacy unit": u, "ℓ2 sensitivity (binary | multiclass)": d,
          "released model + N-L2 noise, β = ε/Δ": r} for m, (s, u, d, r) in METHODS.items()]
    )


def ledger(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Per table and private mechanism: unit, λ, sensitivity and β ranges, ε claimed vs accounted."""
    out = []
    for table, df in sorted(tables.items()):
        private = df[df["privacy_unit"] != "none"]
        for mech, g in private.groupby("mechanism", sort=False):
            out.append({
                "table": table, "mechanism": mech, "unit": g["privacy_unit"].iloc[0],
                "noise": g["noise"].iloc[0], "λ": float(g["lambda"].iloc[0]),
                "sensitivity": f"{g['sensitivity'].min():.3g} … {g['sensitivity'].max():.3g}",
                "β": f"{g['beta'].min():.3g} … {g['beta'].max():.3g}",
                "ε claimed": f"{g['eps_claimed'].min():g} … {g['eps_claimed'].max():g}",
                "max ε accounted / claimed": float((g["eps_accounted"] / g["eps_claimed"]).max()),
                "mean ‖η‖": float(g["noise_norm"].mean()), "runs": len(g),
            })
    return pd.DataFrame(out)


def error_summary(tables: Mapping[str, pd.DataFrame], M: int, eps: float) -> pd.DataFrame:
    """Mean test error per mechanism at (M, ε) (controls at their M), one column per table."""
    cols = {}
    for table, df in sorted(tables.items()):
        Ms = sorted(int(m) for m in df["M"].dropna().unique())
        m = max([x for x in Ms if x <= M] or Ms[:1])
        rows = df[(df["M"] == m) & (np.isclose(df["epsilon"], eps) | np.isinf(df["epsilon"]))]
        cols[f"{table} (M = {m})"] = rows.groupby("mechanism")["test_error"].mean()
    frame = pd.DataFrame(cols)
    order = [m for m in LABELS if m in frame.index]
    return frame.loc[order].rename(index=LABELS)


def claims_table(tables: Mapping[str, pd.DataFrame], cfg: Mapping) -> pd.DataFrame:
    """The claims of S-004 / E5 with verdicts and intervals (:mod:`mpdp.studies.voting.claims`)."""
    return claims.evaluate(tables, cfg)


def lambdas(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Global λ per table and how it was chosen."""
    out = []
    for table, df in sorted(tables.items()):
        g = df[df["mechanism"] == "hamm_soft"]
        if not g.empty:
            out.append({"table": table, "global λ": float(g["lambda"].iloc[0]),
                        "source": str(g["lambda_source"].iloc[0]), "N (aux pool)": int(g["N_aux"].iloc[0]),
                        "private records": int(g["n"].iloc[0]), "M grid": sorted(int(m) for m in g["M"].unique())})
    return pd.DataFrame(out)


__all__ = ["DEVIATIONS", "FIGURE_IDS", "METHODS", "Section", "claims_table", "error_summary", "ledger",
           "lambdas", "load", "methods_table"]
