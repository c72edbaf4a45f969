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

from mpdp.claims.intervals import t_interval
from mpdp.report import names
from mpdp.studies.voting.figures import FIGURE_IDS, LABELS, MULTICLASS_LABELS, load_tables
from mpdp.studies.voting.plan import CURATOR, dataset_of, main_rows, majority_error, sweep_rows
from mpdp.tuning import edge_sentence, edge_warnings

#: mechanism -> (spec section, privacy unit, ℓ2 sensitivity binary | multiclass, released model)
METHODS: dict[str, tuple[str, str, str, str]] = {
    "hamm_vote": ("M11 / M13 B.2", "party", "2/λ (tight: 1/λ, I-13) | √2/λ",
                  "ERM on majority-voted auxiliary labels"),
    "hamm_soft": ("M12 / M13 B.3", "party", "2/(Mλ) (tight: 1/(Mλ)) | √2/(Mλ)",
                  "soft-label ERM, (55) form (I-14)"),
    "param_avg": ("M6b / M13 B.4", "party", "2/(Mλ) | 2√2/(Mλ)", "mean of the M local minimisers"),
    "pathak": ("M6a", "record", "2/(n_(1)λ)", "mean of local minimisers (Pathak's calibration)"),
    "jayaraman_output": ("M5", "record", "2/(M n_(1)λ)", "mean of local minimisers inside MPC"),
    "pooled_output": ("M13 B.1", "record", "— | 2√2/(Nλ)", "softmax ERM on the N pooled private records "
                      "(multiclass tables only: a trusted curator holding all labelled data)"),
}

#: one sentence on what the λ selection costs in privacy (said in the report, like the benchmark)
SELECTION_PRIVACY = ("Protocol `voting.selection.protocol` (mpdp.studies.voting.selection): `private` (default) "
                     "chooses λ by random stopping (Papernot & Steinke 2022) over releases at a share of ε and "
                     "charges that selection to the row's ε (`eps_end_to_end` = ε); `oracle` (the papers' "
                     "convention, rows `voting_final_run`) scores every λ over `tune_draws` private releases "
                     "whose privacy cost is excluded (E7 #16). The validation split lies outside the "
                     "private pool (in no party); under `private` each trial's validation error is scored "
                     "with Laplace noise for one validation record (scale 1/(n_val·ε_s), ε_s = ε/(2 + η)), so "
                     "every row is also (ε, 0)-DP for a validation record (`eps_validation_record`); the "
                     "oracle rows read it without noise (`eps_validation_record` = ∞).")

#: [REC] and open choices of this study (spec E5, E7 #21–23)
DEVIATIONS: tuple[tuple[str, str, str], ...] = (
    ("whole protocol", "REC", "Hamm's experimental setup was not recovered (spec E5): data sets, M grid, "
     "ε grid, λ grid, split and repetitions follow spec E5's recommendation."),
    ("auxiliary pool", "REC", "N = aux_frac × (all records), drawn once per data set from the training rows "
     "(fixed across repetitions and M, like the test set); its labels are never used."),
    ("validation split", "REC", "val_frac × (all records) of the training rows, apart from the pool and the "
     "parties' data; only the λ selection reads its labels, under `private` through scores noised for one "
     "validation record (issue 58)."),
    ("λ with the noise in the loop", "REC, deviation from E5", "E5 picks the global λ by noise-free validation, "
     "which selects the smallest λ while the output noise grows as 1/λ. Here λ is chosen per (M, ε, mechanism) "
     "from lambda_grid by the validation error of the private release averaged over tune_draws noise draws, on "
     "a partition of its own; every draw of the selection comes from a tuning stream disjoint from the "
     "repetitions. The *_np controls use the λ chosen without noise. " + SELECTION_PRIVACY),
    ("averaging baselines", "REC", "param_avg, pathak, jayaraman_output (and B.1) release the mean of local "
     "classifiers (the pooled classifier) fitted with their own tuned λ, so their sensitivities use that λ; "
     "the local classifiers that vote keep lambda_local."),
    ("ties", "E7 #23", "voting.tie_break: fixed (default): binary votes tie → +1; multiclass ties → smallest "
     "class index; random: a tied vote goes to one of the tied classes uniformly at random (stream "
     "voting/tie_break, per table, M, repetition and pool)."),
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


def context(files: Mapping[str, list[str]]) -> dict[str, Any]:
    """The study's entry of the report context (:attr:`mpdp.studies.interface.Study.context`): its
    tables by id (a table's file is named by its id) and its figures by name."""
    return {"tables": {Path(p).stem: p for p in files["tables"]},
            "figures": {Path(p).stem: p for p in files["files"] if p.endswith(".png")}}


def load(context: Mapping[str, Any] | None) -> Section:
    """The section's inputs from the study's entry of the report context (:func:`context`; absent
    → empty section)."""
    if not context:
        return Section()
    tables = load_tables(context.get("tables", {}))
    figures = {k: p for k, p in context.get("figures", {}).items() if p and Path(p).is_file()}
    return Section(tables, figures)


def table_name(table: str) -> str:
    """A voting table as the report names it: the data set's display name, "(5 classes)" for the
    multiclass one (issue 59: no raw id in a table the reader sees)."""
    dataset, multi = dataset_of(table)
    return names.dataset(dataset) + (" (5 classes)" if multi else "")


def method_name(table: str, mechanism: str) -> str:
    """A mechanism's label in ``table`` (the figures' legend labels)."""
    labels = {**LABELS, **MULTICLASS_LABELS} if dataset_of(table)[1] else LABELS
    return labels.get(mechanism, names.method(mechanism))


def methods_table() -> pd.DataFrame:
    """Mechanisms, spec sections, privacy units and sensitivities."""
    return pd.DataFrame(
        [{"mechanism": m, "name": LABELS[m], "spec": s, "privacy unit": u, "ℓ2 sensitivity (binary | multiclass)": d,
          "released model + N-L2 noise, β = ε/Δ": r} for m, (s, u, d, r) in METHODS.items()]
    )


def reading_changes(verdicts: pd.DataFrame) -> pd.DataFrame:
    """Per claim and table: the verdict at end-to-end privacy (headline) and at the final run only,
    from the claims engine's verdicts of the two readings (data/results/claims/verdicts.parquet)."""
    cols = ["claim_id", "verdict (end-to-end)", "verdict (final run)", "changed"]
    v = verdicts[verdicts["study"] == "voting"] if "study" in verdicts else verdicts.iloc[0:0]
    if not {"end_to_end", "final_run"} <= set(v.get("reading", pd.Series(dtype=str))):
        return pd.DataFrame(columns=cols)
    wide = v.pivot_table(index="claim_id", columns="reading", values="verdict", aggfunc="first")
    both = pd.DataFrame({cols[1]: wide["end_to_end"], cols[2]: wide["final_run"]}).dropna().reset_index()
    both["changed"] = both[cols[1]] != both[cols[2]]
    return both[cols]


def reading_sentence(tables: Mapping[str, pd.DataFrame], verdicts: pd.DataFrame) -> str:
    """How much the end-to-end reading changes the voting verdicts (computed from the tables)."""
    heads = {str(p) for df in tables.values() for p in main_rows(df).get("selection", pd.Series(dtype=str)).dropna()}
    if "private" not in heads:
        return ("The verdicts below are at the privacy of the released model only: the λ selection's own privacy "
                "cost is excluded (non-private selection, the papers' convention).")
    changes = reading_changes(verdicts)
    lead = ("The verdicts below are at **end-to-end privacy**: the λ selection is charged to each row's ε "
            "(headline).")
    if changes.empty:
        return lead + " The final-run reading was not computed in this build."
    return (lead + f" Against the papers' convention (non-private selection), the verdict changes for "
            f"{int(changes['changed'].sum())} of {len(changes)} claims (each over every table and cell).")


def ledger(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Per table and private mechanism: unit, λ, sensitivity and β ranges, ε claimed vs accounted."""
    out = []
    for table, df in sorted(tables.items()):
        private = main_rows(df)[main_rows(df)["privacy_unit"] != "none"]
        for mech, g in private.groupby("mechanism", sort=False):
            out.append({
                "table": table_name(table), "mechanism": method_name(table, mech), "unit": g["privacy_unit"].iloc[0],
                "noise": g["noise"].iloc[0], "λ": f"{g['lambda'].min():g} … {g['lambda'].max():g}",
                "sensitivity": f"{g['sensitivity'].min():.3g} … {g['sensitivity'].max():.3g}",
                "β": f"{g['beta'].min():.3g} … {g['beta'].max():.3g}",
                "ε claimed": f"{g['eps_claimed'].min():g} … {g['eps_claimed'].max():g}",
                "max ε accounted / claimed": float((g["eps_accounted"] / g["eps_claimed"]).max()),
                "max ε end-to-end / claimed": (float((g["eps_end_to_end"] / g["eps_claimed"]).max())
                                               if "eps_end_to_end" in g else float("nan")),
                "max ε validation record / claimed": (float((g["eps_validation_record"] / g["eps_claimed"]).max())
                                                      if "eps_validation_record" in g else float("nan")),
                "mean ‖η‖": float(g["noise_norm"].mean()), "runs": len(g),
            })
    return pd.DataFrame(out)


def error_summary(tables: Mapping[str, pd.DataFrame], M: int, eps: float) -> pd.DataFrame:
    """Mean test error per mechanism at (M, ε) (controls at their M), one column per table."""
    cols = {}
    for table, full in sorted(tables.items()):
        df = main_rows(full)
        Ms = sorted(int(m) for m in df["M"].dropna().unique())
        m = max([x for x in Ms if x <= M] or Ms[:1])
        rows = df[(df["M"] == m) & (np.isclose(df["epsilon"], eps) | np.isinf(df["epsilon"]))]
        cols[f"{table_name(table)} (M = {m})"] = rows.groupby("mechanism")["test_error"].mean()
    frame = pd.DataFrame(cols)
    order = [m for m in LABELS if m in frame.index]
    return frame.loc[order].rename(index=LABELS)


def below_majority(errors: np.ndarray, majority: float) -> bool:
    """Whether test errors over repetitions are significantly below the majority-class error
    (the upper end of the 95 % t-interval; with one repetition, the mean)."""
    mean, _, high = t_interval(np.asarray(errors, dtype=float))
    return bool((high if np.isfinite(high) else mean) < majority)


def _h1_rows(df: pd.DataFrame, M: int) -> tuple[pd.DataFrame, int]:
    Ms = sorted(int(m) for m in df["M"].dropna().unique())
    m = max([x for x in Ms if x <= M] or Ms[:1])
    return df[df["M"] == m], m


def lambdas(tables: Mapping[str, pd.DataFrame], cfg: Mapping) -> pd.DataFrame:
    """The λ chosen per (table, mechanism) at M = h1_M, one column per ε (ε = ∞: the noise-free controls)."""
    out = []
    for table, full in sorted(tables.items()):
        rows, M = _h1_rows(main_rows(full), int(cfg["voting"]["h1_M"]))
        for mech, g in rows[rows["privacy_unit"] != "none"].groupby("mechanism", sort=False):
            rec = {"table": table_name(table), "M": M, "method": method_name(table, mech),
                   "source": str(g["lambda_source"].iloc[0])}
            rec.update({f"ε = {e:g}": float(x) for e, x in g.groupby("epsilon")["lambda"].median().items()})
            np_ctrl = {"hamm_vote": "hamm_vote_np", "hamm_soft": "hamm_soft_np", "param_avg": "param_avg_np"}.get(mech)
            if np_ctrl is not None and (rows["mechanism"] == np_ctrl).any():
                rec["no noise (*_np)"] = float(rows.loc[rows["mechanism"] == np_ctrl, "lambda"].median())
            out.append(rec)
    return pd.DataFrame(out)


def pools(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Pool sizes, the majority-class error and the M grid per table."""
    out = []
    for table, full in sorted(tables.items()):
        g = main_rows(full)
        out.append({"table": table_name(table), "N (aux pool)": int(g["N_aux"].iloc[0]),
                    "private records": int(g["n"].iloc[0]),
                    "majority-class test error": majority_error(g),
                    "M grid": sorted(int(m) for m in g["M"].dropna().unique())})
    return pd.DataFrame(out)


def edges(tables: Mapping[str, pd.DataFrame], cfg: Mapping) -> pd.DataFrame:
    """:func:`mpdp.tuning.edge_warnings` over the tuned λ, one item per (table, mechanism, λ, edge)."""
    grid = [float(x) for x in cfg["voting"]["lambda_grid"]]
    groups: dict[tuple[str, str, float], list[tuple[int, float]]] = {}
    for table, full in sorted(tables.items()):
        df = main_rows(full)
        tuned = df[df["lambda_source"].isin(["tuned", "private"])].drop_duplicates(["M", "epsilon", "mechanism"])
        for r in tuned.to_dict("records"):
            groups.setdefault((table, str(r["mechanism"]), float(r["lambda"])), []).append((r["M"], r["epsilon"]))
    choices = [(f"{table_name(t)}, {method_name(t, m)}: {len(s)} of its (M, ε) settings", "λ", lam, grid)
               for (t, m, lam), s in groups.items()]
    return edge_warnings("voting", choices)


def edge_text(tables: Mapping[str, pd.DataFrame], cfg: Mapping) -> str:
    """:func:`mpdp.tuning.edge_sentence` of :func:`edges`."""
    return edge_sentence(edges(tables, cfg))


def beats_majority(tables: Mapping[str, pd.DataFrame], cfg: Mapping) -> pd.DataFrame:
    """Per table and private method at M = h1_M: the smallest ε whose test error is significantly below the
    majority-class error (95 % t-interval over repetitions, :func:`below_majority`)."""
    out = []
    for table, full in sorted(tables.items()):
        rows, M = _h1_rows(main_rows(full), int(cfg["voting"]["h1_M"]))
        maj = majority_error(rows)
        private = rows[rows["privacy_unit"] != "none"]
        for mech in [m for m in LABELS if m in set(private["mechanism"])]:
            g = private[private["mechanism"] == mech]
            first, err = None, float("nan")
            for eps, sub in sorted(g.groupby("epsilon"), key=lambda kv: kv[0]):
                if below_majority(sub["test_error"].to_numpy(), maj):
                    first, err = float(eps), float(sub["test_error"].mean())
                    break
            out.append({"table": table, "M": M, "method": mech, "unit": str(g["privacy_unit"].iloc[0]),
                        "majority-class error": maj,
                        "first ε below it": f"{first:g}" if first is not None else "none in the grid",
                        "mean test error there": err})
    return pd.DataFrame(out)


def _mean(rows: pd.DataFrame, mech: str, eps: float | None = None) -> float:
    sub = rows[rows["mechanism"] == mech]
    if eps is not None:
        sub = sub[np.isclose(sub["epsilon"], eps)]
    return float(sub["test_error"].mean()) if not sub.empty else float("nan")


def _first_eps_sentence(table: str, frame: pd.DataFrame) -> str:
    rows = frame[frame["table"] == table]
    parts = [f"{LABELS.get(r['method'], r['method'])} from ε = {r['first ε below it']}"
             if r["first ε below it"] != "none in the grid" else f"{LABELS.get(r['method'], r['method'])} never"
             for r in rows.to_dict("records")]
    return "; ".join(parts)


def captions(cfg: Mapping) -> dict[str, str]:
    """Each figure's caption: what it shows and what to look at (issue 46), with the config's M and ε."""
    v = cfg["voting"]
    M, eps = v["h1_M"], float(v["h2_eps"])
    return {
        "hamm_h1": (f"H-1: test error against ε at M = {M} parties, one panel per binary data set: Hamm's Alg. 1 "
                    "(majority vote) and Alg. 2 (soft vote), parameter averaging (party-level ε) and the record-level "
                    "baselines, mean with a 95 % t-band; horizontal lines: the non-private controls. Look at the ε "
                    "where each private curve comes down to its control, and at which method is lowest there."),
        "hamm_h2": (f"H-2: test error against the number of parties M at ε = {eps:g}: the same methods, the "
                    "non-private controls as thin curves. Look at the slope: splitting the data among more parties "
                    "costs each method accuracy at a different rate."),
        "hamm_h3": (f"H-3: the multiclass KDDCup99 version of H-1 at M = {M} (spec M13: B.2 majority vote, B.3 soft "
                    "labels, B.4 softmax averaging). Look at whether the voting protocols keep their lead over "
                    "averaging with more than two classes."),
        "hamm_h4": (f"H-4: top rows, the weighted empirical-risk gap of Alg. 1 and 2 (its {1 - float(v['delta_p']):.0%} "
                    "quantile and mean over repetitions) against ε and against M, with the Lemma 6 bound and the "
                    "expected-gap bound; bottom row, Alg. 2's held-out weighted risk with the Theorem 4 bound. Look "
                    "at whether each bound's line lies above the quantile (the bound holds) and by how much "
                    "(orders of magnitude: it says little)."),
        "hamm_b5": (f"Excess risk J(θ_p) − J* of the averaging baselines on the pooled private data at M = {M} "
                    "(mean, min–max band) with each one's B5 bound (pale line of the same colour): every curve "
                    "should stay below its bound."),
        "hamm_lambda": (f"Test error against the regulariser λ at M = {M}, one panel per ε of the sweep: output noise "
                        "falls as 1/λ while the regularisation bias grows. The star marks the λ the private selection "
                        "chose: it should sit near the bottom of its curve."),
    }


def figure_findings(tables: Mapping[str, pd.DataFrame], cfg: Mapping) -> str:
    """What figures H-1…H-4 and hamm_lambda show, as markdown computed from the tables."""
    v = cfg["voting"]
    first = beats_majority(tables, cfg)
    lines = []
    for table, full in sorted(tables.items()):
        df = main_rows(full)
        rows, M = _h1_rows(df, int(v["h1_M"]))
        eps = sorted(float(e) for e in rows.loc[rows["privacy_unit"] != "none", "epsilon"].unique())
        if not eps:
            continue
        maj = majority_error(rows)
        fig = "H-3" if table.endswith("_multiclass") else "H-1"
        lines.append(
            f"- **{fig}, {table} (M = {M}):** Alg. 2's mean test error is {_mean(rows, 'hamm_soft', eps[0]):.3f} at "
            f"ε = {eps[0]:g} and {_mean(rows, 'hamm_soft', eps[-1]):.3f} at ε = {eps[-1]:g} (without noise "
            f"{_mean(rows, 'hamm_soft_np'):.3f}, non-private ensemble {_mean(rows, 'ensemble'):.3f}, majority class "
            f"{maj:.3f}). Significantly below the majority-class error: {_first_eps_sentence(table, first)}.")
        Ms = sorted(int(m) for m in df["M"].dropna().unique())
        at = df[np.isclose(df["epsilon"], float(v["h2_eps"]))]
        if not table.endswith("_multiclass") and len(Ms) >= 2 and not at.empty:
            lo, hi = at[at["M"] == Ms[0]], at[at["M"] == Ms[-1]]
            lines.append(
                f"- **H-2, {table} (ε = {float(v['h2_eps']):g}):** Alg. 2 {_mean(lo, 'hamm_soft'):.3f} at M = {Ms[0]} "
                f"→ {_mean(hi, 'hamm_soft'):.3f} at M = {Ms[-1]}; Alg. 1 {_mean(lo, 'hamm_vote'):.3f} → "
                f"{_mean(hi, 'hamm_vote'):.3f}; averaging {_mean(lo, 'param_avg'):.3f} → {_mean(hi, 'param_avg'):.3f}.")
        gap = df[df["mechanism"].isin(sorted(CURATOR)) & df["lemma6_bound"].notna()]
        if not gap.empty:
            above = int((gap["risk_gap"] > gap["lemma6_bound"]).sum())
            lines.append(f"- **H-4, {table}:** {above} of {len(gap)} draws of Alg. 1/2 have a weighted risk gap above "
                         f"the Lemma 6 line (δ_p = {float(v['delta_p']):g}); the median gap is "
                         f"{float(np.median(gap['risk_gap'] / gap['lemma6_bound'])):.2g} × the line.")
        sw = sweep_rows(full)
        if not sw.empty:
            labels = {**LABELS, **MULTICLASS_LABELS} if table.endswith("_multiclass") else LABELS
            items = []
            for e, g in sw.groupby("epsilon"):
                means = g.groupby(["mechanism", "lambda"])["test_error"].mean()
                best = [f"{labels[m]} λ = {means[m].idxmin():g} ({means[m].min():.3f})" for m in
                        means.index.get_level_values(0).unique()]
                items.append(f"ε = {e:g}: " + ", ".join(best))
            lines.append(f"- **hamm_lambda, {table} (M = {int(sw['M'].iloc[0])}):** λ of the sweep with the lowest "
                         f"mean test error — " + "; ".join(items) + ".")
    return "\n".join(lines)


__all__ = ["DEVIATIONS", "FIGURE_IDS", "METHODS", "SELECTION_PRIVACY", "Section", "beats_majority", "below_majority",
           "captions",
           "edge_text", "edges", "error_summary", "figure_findings", "lambdas", "ledger", "load",
           "methods_table", "pools"]
