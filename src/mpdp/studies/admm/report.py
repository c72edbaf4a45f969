"""Helpers of the report section on Zhang–Zhu (notebooks/report.py, after the WD-DP sections).

The section reads the context key ``admm`` (``workflow/scripts/report.py``): ``None`` when the
study did not run (a config without an ``admm`` section or without Adult), else the paths of
its table, figures and fit table. Every number shown is computed here from those files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mpdp.studies.admm import claims as zz_claims
from mpdp.studies.admm.train import read_table

#: context key of the section
CONTEXT_KEY = "admm"

METHOD = (
    "Zhang and Zhu train L2-regularised logistic regression over P nodes of a graph with ADMM "
    "(Algorithm 1, spec M8): each node minimises its local loss plus the regulariser, a dual "
    "term and a penalty η pulling it towards its neighbours, broadcasts its primal and updates "
    "its dual. **DVP** (Algorithm 2, M9) perturbs the dual before every primal step with noise "
    "of density ∝ exp(−ζ‖ε‖) calibrated by objective perturbation (two cases: extra penalty "
    "Φ = 0 if α′ > 0, else Φ > 0 and α′ = α/2) and releases the exact minimiser. **PVP** "
    "(Algorithm 3, M10) releases every primal with output-perturbation noise (sensitivity "
    "2C^R/(B_p(ρ/P + 2ηV_p))) and ends with one DVP step. The reference of every loss is the "
    "centralised optimum of CR-ERM (eq. 1). Subproblems are solved exactly (gradient norm ≤ "
    "1e−9, batched Newton-CG)."
)

I11 = (
    "**Privacy accounting (I-11).** The paper's guarantee is *per node and per iteration* "
    "(\u201cdynamic α-DP\u201d): each release is α-DP given the history. It gives no composition over "
    "iterations, so after t iterations a node has spent tα under basic composition; the optimal "
    "composition of t pure (α, 0) steps (dp-accounting's PLD, and the exact Kairouz–Oh–Viswanath "
    "formula) at δ = {delta:g} is at most tα and still grows with t. Both are in the table and on the figures."
)

CAPTIONS = {
    "zz_f3": ("Convergence (Z-F3): total empirical loss Σ_p (C^R/B_p)Σ_i l(y f_p(t)ᵀx) of the released "
              "iterates vs iteration, DVP (left) and PVP (right) at several α, non-private ADMM (black) "
              "and the centralised optimum (dash-dot); right axis: cumulative privacy loss per node "
              "(dashed tα, dotted PLD at δ)."),
    "zz_f4": ("Trade-off (Z-F4): loss vs α at three iterations, DVP (top) and PVP (bottom), mean ± 95 % CI "
              "over repetitions, the fitted g(α) = κ₁e^{−κ₂α} + κ₃ and α* = argmax U^p − g; twin axis: "
              "the B7 mean noise norm E‖ε‖ = d/ζ and the mean norm actually drawn."),
    "zz_f5": ("Final classifier (Z-F5): empirical loss and test misclassification rate vs α at the last "
              "iteration, DVP vs PVP with 95 % bands over repetitions; black: non-private ADMM."),
}


def load(context: dict[str, Any]) -> dict[str, Any] | None:
    """The study's entry of the report context, or None when the study did not run."""
    entry = context.get(CONTEXT_KEY)
    if not entry or not entry.get("table") or not Path(entry["table"]).is_file():
        return None
    return {**entry, "frame": read_table(entry["table"])}


def settings(table: pd.DataFrame) -> pd.DataFrame:
    """The tuned ρ and η per (topology, mechanism, α), with the tuning loss and repetitions."""
    cols = ["topology", "mechanism", "alpha", "rho", "admm_penalty", "tuning_loss"]
    out = table.groupby(cols[:3], dropna=False, sort=True).agg(
        rho=("rho", "first"), eta=("admm_penalty", "first"), tuning_loss=("tuning_loss", "first"),
        reps=("rep", "nunique")).reset_index()
    return out.rename(columns={"eta": "η (ADMM penalty)", "rho": "ρ"})


def ledger(table: pd.DataFrame) -> pd.DataFrame:
    """Per (topology, mechanism, α): calibration (α′, Φ, case, ζ), the B7 expected noise norm, the
    mean norm drawn, and the cumulative ε of a node after T iterations (basic, PLD, exact)."""
    private = table[table["mechanism"] != "admm"]
    if private.empty:
        return pd.DataFrame()
    last = private[private["iteration"] == private["iteration"].max()]
    out = private.groupby(["topology", "mechanism", "alpha"], sort=True).agg(
        alpha_prime=("alpha_prime", "first"), phi=("phi", "first"), case=("dvp_case", "first"),
        zeta=("zeta", "first"), expected_noise=("noise_norm_expected", "first"),
        drawn_noise=("noise_norm", "mean")).reset_index()
    cum = last.groupby(["topology", "mechanism", "alpha"], sort=True).agg(
        T=("iteration", "first"), basic=("eps_cumulative_basic", "first"), pld=("eps_cumulative_pld", "first"),
        exact=("eps_cumulative_exact", "first"), delta=("delta", "first")).reset_index()
    out = out.merge(cum, on=["topology", "mechanism", "alpha"])
    return out.rename(columns={
        "alpha": "α per iteration", "alpha_prime": "α′ (DVP step)", "phi": "Φ", "case": "case",
        "zeta": "ζ (regular releases)", "expected_noise": "E‖ε‖ = d/ζ (B7)", "drawn_noise": "mean ‖ε‖ drawn",
        "basic": "cumulative ε after T: tα", "pld": "… PLD at δ", "exact": "… exact at δ"})


def claims(table: pd.DataFrame, cfg: dict[str, Any]) -> pd.DataFrame:
    """The claims rows (mpdp.claims.COLUMNS)."""
    return zz_claims.evaluate(table, cfg)


def spread(table: pd.DataFrame, main_topology: str) -> pd.DataFrame:
    """Standard deviation across repetitions of the final loss, DVP vs PVP per α (claim Z2)."""
    runs = table[(table["topology"] == main_topology) & table["mechanism"].isin(["dvp", "pvp"])]
    if runs.empty:
        return pd.DataFrame()
    final = runs[runs["iteration"] == runs["iteration"].max()]
    piv = final.pivot_table(index="alpha", columns="mechanism", values="train_loss", aggfunc="std")
    return piv.rename(columns=lambda m: f"sd of final loss, {m.upper()}").reset_index().rename(
        columns={"alpha": "α"})


def findings(table: pd.DataFrame, main_topology: str) -> list[str]:
    """A few sentences with numbers computed from the table (final iteration, main topology)."""
    runs = table[table["topology"] == main_topology]
    if runs.empty:
        return ["No runs on the main topology."]
    final = runs[runs["iteration"] == runs["iteration"].max()]
    lines = []
    admm = final[final["mechanism"] == "admm"]
    if not admm.empty:
        lines.append(f"Non-private ADMM reaches loss {admm['train_loss'].mean():.4g} (centralised optimum "
                     f"{admm['optimal_loss'].mean():.4g}) and MER {admm['mer'].mean():.4f} after "
                     f"{int(final['iteration'].max())} iterations.")
    for mech in ("dvp", "pvp"):
        sel = final[final["mechanism"] == mech]
        if sel.empty:
            continue
        by = sel.groupby("alpha")[["train_loss", "mer"]].mean()
        lo, hi = by.index.min(), by.index.max()
        lines.append(f"{mech.upper()}: final loss {by.loc[lo, 'train_loss']:.4g} at α = {lo:g} and "
                     f"{by.loc[hi, 'train_loss']:.4g} at α = {hi:g}; MER {by.loc[lo, 'mer']:.4f} → "
                     f"{by.loc[hi, 'mer']:.4f}.")
    return lines


def rec_choices(cfg: dict[str, Any]) -> pd.DataFrame:
    """The [REC] choices of this study actually used (config values) and where they come from."""
    a = cfg["admm"]
    items = [
        ("admm.P, admm.topologies", f"P = {a['P']}, {', '.join(a['topologies'])} (main: {a['main_topology']})",
         "E4: ring gives equal V_p, so equal ζ (Assumption 5)"),
        ("admm.C_R", a["C_R"], "E4: local term is the average loss"),
        ("admm.T, admm.reps", f"T = {a['T']}, R = {a['reps']}", "E4"),
        ("admm.alpha_grid", a["alpha_grid"], "E4"),
        ("admm.rho_grid, admm.penalty_grid", f"ρ ∈ {a['rho_grid']}, η ∈ {a['penalty_grid']}", "E4"),
        ("admm.tune_reps, admm.tune_penalty_alpha", f"{a['tune_reps']} repetition(s); η chosen at α = "
         f"{a['tune_penalty_alpha']:g}, ρ per α at that η", "tuning by mean final training loss (S-001: ρ tuned "
         "per algorithm and α)"),
        ("admm.delta", a["delta"], "δ of the PLD / exact composition (I-11; the paper has none)"),
        ("admm.own_unperturbed_in_dual", a["own_unperturbed_in_dual"], "M10 eq. (20)"),
        ("admm.utility_q", a["utility_q"], "B7: U^p(α) = q e^{−α}; g(α) = κ₁e^{−κ₂α} + κ₃"),
        ("admm.g_margin", a["g_margin"], "claim Z5 equivalence margin on the mean log loss ratio"),
        ("calibrations", "M9 two-case α′/Φ/ζ; M10 ζ = B_p(ρ/P + 2ηV_p)α/(2C^R)",
         "reconstructed from the Chaudhuri et al. template (M7); exact scalings of the paper not retrieved"),
        ("PVP final step", "iterations 1..T−1 PVP, iteration T a DVP step", "E4 \u201cPVP's final DVP step at T\u201d"),
        ("node split", "one equal random split for all repetitions; repetitions redraw the noise",
         "runs share each node's data (batched solver)"),
        ("train_loss", "Σ_p (C^R/B_p) Σ_i l(y f_p(t)ᵀx) of the released iterates (no regulariser)",
         "E4 metric; f̃_p for PVP's intermediate iterations"),
    ]
    return pd.DataFrame(items, columns=["choice", "value used", "source / reason"])


def fit_table(path: str | None) -> pd.DataFrame:
    """The zz_table CSV (fitted κ and α*), or an empty frame."""
    if not path or not Path(path).is_file():
        return pd.DataFrame()
    frame = pd.read_csv(path)
    return frame.replace({np.nan: None})
