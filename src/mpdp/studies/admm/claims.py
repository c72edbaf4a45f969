"""Claims of Zhang–Zhu (S-001) declared for the claims engine (issue 33; spec E4, I-11).

The study provides (a) :func:`observations`: per repetition, per α cell (``α=…``) and mechanism,
the quantities the claims speak of — the final loss and MER (the MER with its record grid ``n_test``), the
MER over the mechanism's own releases, the oscillation of the loss, the settling iteration and the final
MER along log α (Z1, Z7), DVP's loss drift net of non-private ADMM (Z5) and, one row per α cell with its
study-given interval, the log10 variance ratio of ln L (Z6, :mod:`mpdp.studies.admm.variance`), on every
topology the study ran (cells ``<topology>: α=…``, issue 42); (b) :func:`baselines`: the constant base-rate
predictor's log-loss (final loss) and the majority error (MER), each with its converged non-private
reference (L(θ*); non-private ADMM's final MER) that sets the guard's practical margin; (c) :func:`claims`:
the declarations, each with its practical margin and why. The engine scores each α on its own (no
averaging over α), losses on a log scale. A non-private reference whose final gap to θ* is above
:data:`REFERENCE_TOLERANCE` (relative) is flagged with how much it could move Z5's statistic; it is unusable
(Z5 uninformative) only when that is a material share of Z5's margin. "Own releases" are iterations 1..T−1
for both (PVP's release T is a DVP step).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from mpdp import seeding
from mpdp.claims.declare import Claim
from mpdp.studies.admm import variance
from mpdp.studies.admm.figures import checkpoint_iterations

STUDY = "admm"
_SRC = "seed 001 (Zhang–Zhu, dynamic DP for ADMM), §V Numerical Experiment"

#: a non-private reference is flagged (with how far its gap could move Z5) when its final loss is more than
#: this relative gap above L(θ*) [REC]; the engine judges it against Z5's margin (docs/claims.md)
REFERENCE_TOLERANCE: float = 1e-3

#: Z4's practical margin on log10(L_PVP / L_DVP): the paper claims a *slight* advantage, so a 2 % difference
#: of the final loss already counts (the default 0.05, a factor 1.12, would call a slight advantage none)
Z4_MARGIN: float = 0.01

#: the paper's own qualifiers (seed 001 §V): "more robust to noise than the PVP for most values of α", "a lower
#: error rate for a large range of values of α"
HEDGE_Z2: str = "for most values of α"
HEDGE_Z3: str = "for a large range of values of α"

#: claim id -> the replication's figures it concerns
FIGURES: dict[str, str] = {"Z1-DVP": "zz_f3", "Z1-PVP": "zz_f3", "Z2": "zz_f3, zz_f5", "Z3": "zz_f5",
                           "Z3-iter": "zz_f5", "Z4": "zz_f5", "Z5": "zz_f4", "Z6": "zz_f4, zz_f5",
                           "Z7-DVP": "zz_f5", "Z7-PVP": "zz_f5"}

_COLS = ["dataset", "reading", "cell", "rep", "method", "metric", "value", "x", "bound", "n_test", "lo", "hi", "n"]


def claims(cfg: dict[str, Any]) -> tuple[Claim, ...]:
    """The claims of S-001 (Z5's margin is ``admm.g_margin``), each with its practical margin ±δ and why."""
    loss = {"guard_metric": "final_loss"}
    g_margin = float(cfg["admm"]["g_margin"])
    settle = ("a factor 10^0.05 ≈ 1.12 fewer iterations to settle over the α grid: a smaller speed-up is a few "
              "iterations of T and invisible on Fig. 3")
    mer = "1 point of MER: a smaller difference of error rates does not change which mechanism a user picks"
    more_accurate = ("1 point of MER over the whole α grid: a smaller gain for all the privacy the grid gives up is "
                     "not 'more accurate'")
    return (
        Claim(STUDY, "Z1-DVP", "Larger α converges faster (DVP)", f"{_SRC}, Fig. 3", "settle_iter", ("dvp",),
              "trend", "less", effect_scale="log_ratio", margin_reason=settle, **loss),
        Claim(STUDY, "Z1-PVP", "Larger α converges faster (PVP)", f"{_SRC}, Fig. 3", "settle_iter", ("pvp",),
              "trend", "less", effect_scale="log_ratio", margin_reason=settle, **loss),
        Claim(STUDY, "Z2", "DVP oscillates less than PVP", f"{_SRC}, Figs. 3, 5", "oscillation", ("dvp", "pvp"),
              "compare", "less", effect_scale="log_ratio", hedge=HEDGE_Z2,
              margin_reason="a factor 10^0.05 ≈ 1.12 in the mean iteration-to-iteration change of ln L: smaller "
                            "differences of oscillation are invisible on Fig. 3's loss curves", **loss),
        Claim(STUDY, "Z3", "DVP's final classifier has a lower misclassification error rate than PVP's",
              f"{_SRC}, Fig. 5 (the final classifier, spec E4 Z-F5 ii)", "mer", ("dvp", "pvp"), "compare", "less",
              hedge=HEDGE_Z3, margin_reason=mer),
        Claim(STUDY, "Z3-iter", "DVP has a lower misclassification error rate than PVP over the mechanisms' own "
              "iterations 1..T−1 (second reading of Z3)", f"{_SRC}, Figs. 3, 5", "mer_iter", ("dvp", "pvp"),
              "compare", "less", guard_metric="mer", hedge=HEDGE_Z3, margin_reason=mer),
        Claim(STUDY, "Z4", "PVP has a slightly better final empirical loss than DVP", f"{_SRC}, Fig. 5",
              "final_loss", ("pvp", "dvp"), "compare", "less", effect_scale="log_ratio",
              practical_margin=Z4_MARGIN,
              margin_reason="about 2 % of the final loss (0.01 on log10, a factor 1.023): the paper claims a slight "
                            "advantage only, which the default factor 1.12 would call none"),
        Claim(STUDY, "Z5", "DVP's fitted loss model g(α) is iteration-independent", f"{_SRC}, Fig. 4, Table I",
              "g_drift", ("dvp",), "one_sample", "equivalence", margin=g_margin, uses=("admm",),
              margin_reason=f"a drift of ln(L_DVP / L_ADMM) within ±{g_margin:g} (a factor {math.exp(g_margin):.3g}) "
                            "between the first and last Fig. 4 panels: a larger one changes the fitted g(α) visibly "
                            "from panel to panel (admm.g_margin)", **loss),
        Claim(STUDY, "Z6", "DVP has a smaller variance of the empirical loss than PVP", f"{_SRC}, Figs. 4, 5",
              "log_var_ratio", ("dvp",), "one_sample", "less", guard_methods=("dvp",),
              guard_reason="the claim says DVP's loss varies less than PVP's: DVP must be above chance, PVP is what "
                           "it is compared with (one variance ratio per cell)", **loss),
        Claim(STUDY, "Z7-DVP", "The accuracy of DVP increases as α becomes larger (its final MER falls along α)",
              f"{_SRC} (\"the accuracy of the algorithm increases as α becomes larger\"), Fig. 5", "mer", ("dvp",),
              "trend", "less", margin_reason=more_accurate),
        Claim(STUDY, "Z7-PVP", "The accuracy of PVP increases as α becomes larger (its final MER falls along α)",
              f"{_SRC} (\"the accuracy of the algorithm increases as α becomes larger\"), Fig. 5", "mer", ("pvp",),
              "trend", "less", margin_reason=more_accurate),
    )


def settling_iteration(iterations: np.ndarray, loss: np.ndarray, tol: float) -> float:
    """First iteration after which the loss stays within ``tol`` (relative) of its last value."""
    order = np.argsort(iterations)
    it, loss = np.asarray(iterations)[order], np.asarray(loss, dtype=float)[order]
    outside = np.flatnonzero(np.abs(loss / loss[-1] - 1.0) > tol)
    return float(it[0] if outside.size == 0 else it[outside[-1] + 1])  # the last value is never outside


def _cell(alpha: float, topology: str) -> str:
    return f"{topology}: α={alpha:g}"


def _rows(frame: pd.DataFrame, dataset: str, metric: str, topology: str, x: bool = False) -> pd.DataFrame:
    """``frame`` (columns rep, alpha, mechanism, value) as observations of ``metric`` on ``topology``."""
    return pd.DataFrame({
        "dataset": dataset, "reading": "-",
        "cell": f"{topology}: α-sweep" if x else frame["alpha"].map(lambda a: _cell(a, topology)),
        "rep": frame["rep"].astype(int),
        "method": frame["mechanism"].astype(str), "metric": metric, "value": frame["value"].astype(float),
        "x": np.log10(frame["alpha"].astype(float)) if x else np.nan, "bound": np.nan})


def topologies(table: pd.DataFrame, cfg: dict[str, Any]) -> list[str]:
    """The topologies the study ran (every one is scored, issue 42), the main one first."""
    ran = set(table["topology"].astype(str))
    return [t for t in dict.fromkeys([str(cfg["admm"]["main_topology"]), *sorted(ran)]) if t in ran]


def observations(table: pd.DataFrame, cfg: dict[str, Any], n_test: int | None = None) -> pd.DataFrame:
    """The tidy observations of the ADMM table, every topology it ran (cells ``<topology>: α=…``).

    ``n_test`` is the data set's test-set size (its card's): the MER is the mean over the P nodes of each
    node's error on those same records, so its values lie on the grid 1 / (P · n_test), which the MER rows
    carry as their ``n_test`` (the resolution of a rate and the unit of the guard's 10-record margin).
    """
    frames = [_topology_obs(table[table["topology"] == top], cfg, top) for top in topologies(table, cfg)]
    frames = [f for f in frames if not f.empty]
    out = pd.concat(frames, ignore_index=True).reindex(columns=_COLS) if frames else pd.DataFrame(columns=_COLS)
    if n_test and not out.empty:
        out["n_test"] = np.where(out["metric"] == "mer", float(cfg["admm"]["P"]) * float(n_test), np.nan)
    return out


def _topology_obs(main: pd.DataFrame, cfg: dict[str, Any], top: str) -> pd.DataFrame:
    """The observations of one topology's rows."""
    a = cfg["admm"]
    dataset = str(a["dataset"])
    runs = main[main["mechanism"].isin(["dvp", "pvp"])]
    if runs.empty:
        return pd.DataFrame(columns=_COLS)
    keys = ["rep", "alpha", "mechanism"]
    t_max = runs["iteration"].max()
    final = runs[runs["iteration"] == t_max]
    own = runs[runs["iteration"] < t_max]
    frames = [_rows(final[keys].assign(value=final["train_loss"]), dataset, "final_loss", top),
              _rows(final[keys].assign(value=final["train_loss"]), dataset, "final_loss", top, x=True),
              _rows(final[keys].assign(value=final["mer"]), dataset, "mer", top),
              _rows(final[keys].assign(value=final["mer"]), dataset, "mer", top, x=True),
              _rows(own.groupby(keys)["mer"].mean().rename("value").reset_index(), dataset, "mer_iter", top)]
    osc = runs.sort_values("iteration").groupby(keys)["train_loss"].apply(
        lambda s: float(np.mean(np.abs(np.diff(np.log(s.to_numpy(float)))))) if len(s) > 1 else np.nan)
    frames.append(_rows(osc.rename("value").reset_index(), dataset, "oscillation", top))
    frames.append(_variance_ratio(own, int(cfg["root_seed"]), dataset, top))
    tol = float(a["settle_tol"])
    settle = runs.assign(own_max=np.where(runs["mechanism"] == "pvp", t_max - 1, t_max))
    settle = settle[settle["iteration"] <= settle["own_max"]].groupby(keys).apply(
        lambda g: settling_iteration(g["iteration"].to_numpy(), g["train_loss"].to_numpy(), tol),
        include_groups=False)
    frames.append(_rows(settle.rename("value").reset_index(), dataset, "settle_iter", top, x=True))
    frames.append(_g_drift(runs, reference(main), a, dataset, top))
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True).reindex(columns=_COLS)


def _log_losses(own: pd.DataFrame, mechanism: str) -> pd.DataFrame:
    """ln L of one mechanism's own releases (index: repetition, columns: iteration), repetitions missing an
    iteration dropped."""
    rows = own[own["mechanism"] == mechanism]
    return np.log(rows.pivot_table(index="rep", columns="iteration", values="train_loss", aggfunc="mean").dropna())


def _variance_ratio(own: pd.DataFrame, root_seed: int, dataset: str, top: str) -> pd.DataFrame:
    """Z6 per α: one row (method ``dvp``) with log10(V_DVP / V_PVP) of ln L over the own releases and its
    two-sample bootstrap interval (:mod:`mpdp.studies.admm.variance`; ``n``: the fewer repetitions of the two),
    on a bootstrap stream keyed by (topology, α) under the config's root seed."""
    rows = []
    for alpha, g in own.groupby("alpha"):
        dvp, pvp = _log_losses(g, "dvp"), _log_losses(g, "pvp")
        both = dvp.columns.intersection(pvp.columns)
        dvp, pvp = dvp[both].to_numpy(float), pvp[both].to_numpy(float)
        if both.empty or dvp.size == 0 or pvp.size == 0:
            continue
        rng = seeding.rng(root_seed, "admm_z6_bootstrap", top, float(alpha))
        est, lo, hi = variance.interval(dvp, pvp, rng)
        rows.append({"dataset": dataset, "reading": "-", "cell": _cell(float(alpha), top), "rep": 0,
                     "method": "dvp", "metric": "log_var_ratio", "value": est, "x": np.nan, "bound": np.nan,
                     "lo": lo, "hi": hi, "n": int(min(dvp.shape[0], pvp.shape[0]))})
    return pd.DataFrame(rows, columns=_COLS)


def reference(main: pd.DataFrame) -> pd.DataFrame:
    """Z5's non-private reference in the main topology's rows: non-private ADMM at DVP's own (ρ, η)
    (``admm_ref`` rows whose ``reference_for`` names DVP), so that the statistic measures the noise,
    not a difference in convergence speed; tables without such rows (built before the reference
    runs existed) fall back to non-private ADMM at its own tuned η."""
    if "reference_for" in main.columns:
        ref = main[(main["mechanism"] == "admm_ref") & main["reference_for"].astype(str).str.contains("dvp")]
        if not ref.empty:
            return ref
    return main[main["mechanism"] == "admm"]


def _g_drift(runs: pd.DataFrame, reference: pd.DataFrame, a: dict[str, Any], dataset: str,
             top: str) -> pd.DataFrame:
    """Z5 per (rep, α): change of log(L_DVP / L_ADMM) from the first to the last Fig. 4 iteration.

    With a reference run in every DVP repetition (the split per repetition: each repetition's reference
    ran on its own nodes) each repetition is taken net of its own reference; otherwise (the fixed split:
    one reference for all) net of the reference's mean."""
    dvp = runs[runs["mechanism"] == "dvp"]
    iters = checkpoint_iterations(a["f4_iterations"], dvp["iteration"].to_numpy()) if not dvp.empty else []
    if len(iters) < 2 or reference.empty:
        return pd.DataFrame(columns=_COLS)
    first, last = iters[0], iters[-1]
    ref = reference.groupby("iteration")["train_loss"].mean()
    if first not in ref.index or last not in ref.index:
        return pd.DataFrame(columns=_COLS)
    piv = dvp[dvp["iteration"].isin([first, last])].pivot_table(index=["rep", "alpha"], columns="iteration",
                                                                 values="train_loss")
    own = reference.pivot_table(index="rep", columns="iteration", values="train_loss")
    reps = piv.index.get_level_values("rep")
    if set(reps) <= set(own.index) and {first, last} <= set(own.columns):
        own = own.reindex(reps)
        ref_first, ref_last = own[first].to_numpy(), own[last].to_numpy()
    else:
        ref_first, ref_last = ref[first], ref[last]
    change = np.log(piv[last] / ref_last) - np.log(piv[first] / ref_first)
    return _rows(change.rename("value").reset_index().assign(mechanism="dvp"), dataset, "g_drift", top)


def _base_rate_loss(q: float) -> float:
    """Log-loss of the constant predictor of the class rate ``q`` (binary entropy, nats)."""
    return float(-(q * np.log(q) + (1 - q) * np.log(1 - q))) if 0 < q < 1 else 0.0


_BASELINE_COLS = ["dataset", "cell", "metric", "value", "baseline", "reference"]


def baselines(cfg: dict[str, Any], card: dict[str, Any], table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Final loss: the constant base-rate predictor; MER: the majority class (rates from the data card); with
    ``table``, per cell of every topology it ran, the converged non-private ``reference`` that sets the
    guard's practical margin (a quarter of the way from the baseline to it, docs/claims.md): L(θ*) for the
    final loss (the table's ``optimal_loss``; non-private ADMM's final loss where it has none), non-private
    ADMM's final MER for the MER (:func:`references`).

    The study's loss is Σ_p (C^R/B_p) Σ_i l(·) = C^R Σ_p (mean loss of node p), so the constant predictor
    of the training positive rate q scores P · C^R · H(q) (H: binary entropy, nats) when every node has
    the pooled rate (an approximation: the nodes' rates differ a little). The majority error is
    min(q, 1 − q) of the data set's positive rate.
    """
    a = cfg["admm"]
    q_train = float(card.get("positive_rate_train", card.get("positive_rate", np.nan)))
    q = float(card.get("positive_rate", q_train))
    if not np.isfinite(q_train):
        return pd.DataFrame(columns=_BASELINE_COLS)
    dataset = str(a["dataset"])
    base = {"final_loss": (float(a["P"]) * float(a["C_R"]) * _base_rate_loss(q_train),
                           "the constant base-rate predictor"),
            "mer": (min(q, 1.0 - q), "the majority class")}
    rows = [{"dataset": dataset, "cell": "*", "metric": m, "value": v, "baseline": what, "reference": np.nan}
            for m, (v, what) in base.items()]
    if table is not None:
        for top in topologies(table, cfg):
            rows_top = table[table["topology"] == top]
            refs = references(rows_top)
            alphas = sorted(rows_top.loc[rows_top["mechanism"].isin(["dvp", "pvp"]), "alpha"].dropna().unique())
            cells = [_cell(float(al), top) for al in alphas] + [f"{top}: α-sweep"]
            rows += [{"dataset": dataset, "cell": c, "metric": m, "value": v, "baseline": what,
                      "reference": refs[m]} for c in cells for m, (v, what) in base.items()]
    return pd.DataFrame(rows, columns=_BASELINE_COLS)


def references(rows: pd.DataFrame) -> dict[str, float]:
    """The converged non-private references of one topology's rows: ``final_loss`` L(θ*) (median
    ``optimal_loss``; else non-private ADMM's final loss), ``mer`` non-private ADMM's final MER (mean over its
    runs; NaN without non-private runs)."""
    admm = rows[rows["mechanism"] == "admm"]
    final = admm[admm["iteration"] == admm["iteration"].max()] if not admm.empty else admm
    star = pd.to_numeric(rows["optimal_loss"], errors="coerce").dropna() if "optimal_loss" in rows else pd.Series()
    loss = float(star.median()) if len(star) else (float(final["train_loss"].mean()) if len(final) else np.nan)
    return {"final_loss": loss, "mer": float(final["mer"].mean()) if len(final) else np.nan}


def unusable(table: pd.DataFrame, cfg: dict[str, Any]) -> pd.DataFrame:
    """Z5's non-private reference (:func:`reference`) per topology, when its final loss is above L(θ*) by
    more than :data:`REFERENCE_TOLERANCE`: one row per α cell of that topology, with the most its gap g
    could move Z5's statistic (``effect`` = ln(1 + g): the reference's log-loss at the last Fig. 4
    iteration is off by at most that). The engine keeps the reference when that is immaterial against
    Z5's own margin (issue 42)."""
    a = cfg["admm"]
    cols = ["dataset", "cell", "method", "note", "effect"]
    rows = []
    for top in topologies(table, cfg):
        rows_top = table[table["topology"] == top]
        ref = reference(rows_top)
        if ref.empty or "optimal_loss" not in ref or ref["optimal_loss"].isna().all():
            continue
        final = ref[ref["iteration"] == ref["iteration"].max()]
        # per repetition (the split per repetition: each reference against its own L(θ*)); the worst counts
        optima = [(float(g["train_loss"].mean()), float(g["optimal_loss"].iloc[0]))
                  for _, g in final.groupby("rep", sort=True)]
        by_rep = [(loss - opt) / abs(opt) for loss, opt in optima if np.isfinite(opt)]
        if not by_rep:
            continue
        gap = max(by_rep)
        if gap <= REFERENCE_TOLERANCE:
            continue
        worst = f" in the worst of its {len(by_rep)} repetitions" if len(by_rep) > 1 else ""
        note = (f"non-private ADMM on the {top} not converged: final loss {100 * gap:.2g} % above L(θ*){worst} "
                f"(tolerance {100 * REFERENCE_TOLERANCE:g} %)")
        alphas = sorted(rows_top.loc[rows_top["mechanism"] == "dvp", "alpha"].dropna().unique())
        rows += [{"dataset": str(a["dataset"]), "cell": _cell(al, top), "method": "admm", "note": note,
                  "effect": float(np.log1p(gap))} for al in alphas]
    return pd.DataFrame(rows, columns=cols)


def footing_note(table: pd.DataFrame, cfg: dict[str, Any]) -> str:
    """Whether DVP and PVP, which Z2–Z4 and Z6 compare, ran at the same shared knobs (ρ, ADMM penalty η).

    Issue 33 (equal footing): a comparison of two mechanisms at different values of a shared knob
    measures the knob as much as the mechanism; the report states which case the table is in.
    """
    main = table[(table["topology"] == cfg["admm"]["main_topology"]) & table["mechanism"].isin(["dvp", "pvp"])]
    if main.empty or not {"rho", "admm_penalty"} <= set(main.columns):
        return ""
    knobs = {m: sorted({(float(r), float(p)) for r, p in zip(g["rho"], g["admm_penalty"], strict=True)})
             for m, g in main.groupby("mechanism")}
    if len(knobs) < 2:
        return ""
    text = "; ".join(f"{m.upper()} " + ", ".join(f"ρ = {r:g}, η = {p:g}" for r, p in v) for m, v in knobs.items())
    # within each repetition (per repetition each tunes on its own split; the fixed split: the same in all)
    per_rep = [{m: set(zip(x["rho"].astype(float), x["admm_penalty"].astype(float), strict=True))
                for m, x in g.groupby("mechanism")} for _, g in main.groupby("rep", sort=True)]
    same = sum(k.get("dvp") == k.get("pvp") for k in per_rep)
    if same == len(per_rep):
        return f"DVP and PVP share their knobs ({text}): Z2–Z4 and Z6 compare them on equal footing."
    if same:
        return (f"DVP and PVP shared their knobs in {same} of {len(per_rep)} repetitions, each tuned on its own "
                f"split ({text}): Z2–Z4 and Z6 compare the mechanisms together with their settings in the others.")
    return (f"DVP and PVP ran at different knobs ({text}): Z2–Z4 and Z6 compare the mechanisms together "
            "with their settings, not on equal footing.")
