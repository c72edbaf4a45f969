"""The WD-DP study's report tables and sentences, computed from the results (spec E3.4, E7, §16).

Everything the report states about the WD-DP replication is computed here from the results
tables, the data cards, the config and the claims check (:mod:`mpdp.studies.wddp.claims`);
the notebook ``notebooks/report.py`` only arranges it. No number in the report is typed by hand.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mpdp import bounds, io
from mpdp.figures import style
from mpdp.report.claims_view import verdict_table
from mpdp.studies.wddp.claims import survival
from mpdp.studies.wddp.figure_spec import DATASET_PANELS, FIGURES, VARIANTS, FigureSpec
from mpdp.studies.wddp.figures import select_rows

Tables = Mapping[str, pd.DataFrame | None]

#: x-axis id -> the symbol used in tables and sentences
X_SYMBOL = {"epsilon": "ε", "u": "u"}


def _present(tables: Tables) -> list[pd.DataFrame]:
    """The non-empty tables, in panel order."""
    order = [ds for ds in DATASET_PANELS if ds in tables] + [
        ds for ds in tables if ds not in DATASET_PANELS
    ]
    return [t for ds in order if (t := tables[ds]) is not None and not t.empty]


def combined(tables: Tables) -> pd.DataFrame:
    """All results tables stacked (empty frame if there are none)."""
    frames = _present(tables)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def display_name(dataset: str) -> str:
    """Panel name of a data set (its id if unknown)."""
    panel = DATASET_PANELS.get(dataset)
    return f"({panel.letter}) {panel.name}" if panel else dataset


# --------------------------------------------------------------------------------------------
# warnings shown at the top of the report
# --------------------------------------------------------------------------------------------


def data_warnings(
    config: Mapping[str, Any],
    cards: Mapping[str, Mapping[str, Any] | None],
    tables: Tables,
    unavailable: Mapping[str, str],
) -> list[str]:
    """Reasons a reader must not take the numbers as the full replication.

    Synthetic data (cards or result rows), subsampled data sets (``max_records``), a
    reduced profile (``smoke``) and data sets whose raw data was not available.
    """
    warnings = []
    synthetic_cards = sorted(ds for ds, c in cards.items() if c and c.get("synthetic"))
    synthetic_rows = sorted(
        ds
        for ds, t in tables.items()
        if t is not None and not t.empty and bool(t["synthetic"].fillna(False).any())
    )
    if synthetic_cards or synthetic_rows:
        names = sorted(set(synthetic_cards) | set(synthetic_rows))
        warnings.append(
            "SYNTHETIC DATA: the results of " + ", ".join(names) + " come from generated "
            "test fixtures, not from the real data sets. Nothing here is a replication result."
        )
    subsampled = sorted(ds for ds, c in cards.items() if c and c.get("subsampled"))
    if subsampled or config.get("max_records") is not None:
        warnings.append(
            f"SUBSAMPLED DATA: max_records = {config.get('max_records')} caps the data sets "
            + (", ".join(subsampled) if subsampled else "")
            + " below the paper's sizes; accuracies and gaps are not comparable with the paper."
        )
    if config.get("profile") == "smoke":
        w = config.get("wddp", {})
        warnings.append(
            f"SMOKE PROFILE: T = {w.get('T')}, {w.get('reps')} repetitions, ε grid "
            f"{w.get('eps_grid')}: a pipeline check, not the paper's settings."
        )
    for ds, reason in sorted(unavailable.items()):
        warnings.append(f"NOT AVAILABLE: {display_name(ds)} — {reason}")
    return warnings


# --------------------------------------------------------------------------------------------
# data cards
# --------------------------------------------------------------------------------------------


def data_card_table(
    cards: Mapping[str, Mapping[str, Any] | None], unavailable: Mapping[str, str]
) -> pd.DataFrame:
    """One row per data set: sizes, p, positive rate and the subsampled/synthetic flags."""
    rows = []
    for ds in [d for d in DATASET_PANELS if d in cards or d in unavailable]:
        card = cards.get(ds)
        if card is None:
            rows.append(
                {"data set": display_name(ds), "status": unavailable.get(ds, "no data card")}
            )
            continue
        rows.append(
            {
                "data set": display_name(ds),
                "status": "prepared",
                "raw records": card.get("n_raw"),
                "records used": card.get("n_total"),
                "train": card.get("n_train"),
                "test": card.get("n_test"),
                "p (incl. intercept)": card.get("n_features"),
                "positive label": card.get("positive_label"),
                "positive rate": card.get("positive_rate"),
                "subsampled": bool(card.get("subsampled")),
                "synthetic": bool(card.get("synthetic")),
            }
        )
    return pd.DataFrame(rows)


def optimum_path(results_path: str | None) -> Path | None:
    """The θ* file of a data set, next to its results table (``optimum/<id>.npz``)."""
    if not results_path:
        return None
    path = Path(results_path).parent / "optimum" / f"{Path(results_path).stem}.npz"
    return path if path.is_file() else None


def eta_path(results_path: str | None) -> Path | None:
    """The η table of a data set, next to its results table (``eta/<id>.json``)."""
    if not results_path:
        return None
    path = Path(results_path).parent / "eta" / f"{Path(results_path).stem}.json"
    return path if path.is_file() else None


def accuracy_range(tables: Tables, results_paths: Mapping[str, str | None]) -> pd.DataFrame:
    """Floor and ceilings of every accuracy panel, per data set (issue 11).

    Majority-class rate of the test set and the test accuracy of θ* (the non-private ERM
    optimum at the configured λ) from the θ* file (under a split per repetition, issue 60: the
    mean over the repetitions of each one's θ* on its own test records), and the mean test accuracy of the
    non-private GD after the same T steps (spec M1b, ε-sweep runs) from the results, with its
    largest gap to L(θ*) (its convergence; wddp.reference_gap_tol decides). The last column says when private curves cannot be told from predicting the majority class.
    """
    rows = []
    for ds in [d for d in DATASET_PANELS if d in results_paths]:
        path = optimum_path(results_paths[ds])
        table = tables.get(ds)
        record: dict[str, Any] = {"data set": display_name(ds)}
        if path is not None:
            f = io.load_npz(path, "optimum file")
            if "majority_rate" in f:  # a split per repetition (issue 60): the mean over its repetitions
                record["majority-class rate (test)"] = float(np.mean(f["majority_rate"]))
                record["θ* test accuracy"] = float(np.mean(f["test_accuracy"]))
        if table is not None and not table.empty:
            ref = table[_is(table["mechanism"], "nonprivate") & _is(table["experiment"], "eps_sweep")]
            if not ref.empty:
                record["non-private GD test accuracy"] = float(ref["accuracy"].mean())
                # its convergence (issue 33): the largest L_D(θ_ref) − L_D(θ*) over its repetitions
                record["non-private GD gap to L*"] = float(ref["optimal_gap"].max())
        floor, top = record.get("majority-class rate (test)"), record.get("θ* test accuracy")
        if floor is not None and top is not None:
            record["headroom θ* − majority"] = top - floor
            record["note"] = (
                "every accuracy curve lies between the majority class and θ*: a gap under one "
                "point leaves nothing to compare"
                if top - floor < 0.01
                else ""
            )
        rows.append(record)
    return pd.DataFrame(rows)


def lambda_sensitivity_table(results_paths: Mapping[str, str | None]) -> pd.DataFrame:
    """θ* test accuracy and ‖θ*‖ per λ of the sensitivity grid (issue 11, spec E7 #4); under a split
    per repetition on one repetition's split (the file's ``lambda_rep``, column "split")."""
    rows = []
    for ds in [d for d in DATASET_PANELS if d in results_paths]:
        path = optimum_path(results_paths[ds])
        if path is None:
            continue
        f = io.load_npz(path, "optimum file")
        if "lambda_grid" not in f:
            continue
        for lam, acc, norm, ok in zip(f["lambda_grid"], f["lambda_test_accuracy"],
                                      f["lambda_theta_norm"], f["lambda_converged"], strict=True):
            rows.append({"data set": display_name(ds), "λ": float(lam),
                         "θ* test accuracy": float(acc), "‖θ*‖": float(norm),
                         "solver converged": bool(ok),
                         **({"split": f"repetition {int(f['lambda_rep'])}"} if "lambda_rep" in f else {})})
    return pd.DataFrame(rows)


def cv_scores(results_paths: Mapping[str, str | None]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The CV curves (score ± SE per η) and the selections, from the η tables (spec E3.3).

    A table of a selection per repetition (issue 60; rows with ``rep``) gives every repetition's
    selection in ``chosen`` and its curves averaged over the repetitions in ``scores``: the mean of
    the repetitions' mean accuracies, with SE ``sqrt(Σ_r se_r²) / R`` (independent repetitions)."""
    scores, chosen = [], []
    for ds in [d for d in DATASET_PANELS if d in results_paths]:
        path = eta_path(results_paths[ds])
        if path is None:
            continue
        table = io.read_json(path, "η table")
        for row in table.get("scores", []):
            scores.append({"dataset": ds, **row})
        if table.get("source") == "cv":
            for row in table["chosen"]:
                chosen.append({"dataset": ds, **row})
    scores_df = pd.DataFrame(scores)
    if not scores_df.empty and "se" not in scores_df:
        scores_df["se"] = scores_df["std_accuracy"] / np.sqrt(scores_df["n"])
    if "rep" in scores_df:
        keys = ["dataset", "mechanism", "mode", "accountant", "eta"]
        scores_df = scores_df.assign(se2=scores_df["se"] ** 2).groupby(keys, as_index=False, sort=False).agg(
            mean_accuracy=("mean_accuracy", "mean"), se2=("se2", "sum"), reps=("rep", "nunique"), n=("n", "sum"))
        scores_df["se"] = np.sqrt(scores_df.pop("se2")) / scores_df["reps"]
    return scores_df, pd.DataFrame(chosen)


def cv_choice_table(chosen: pd.DataFrame) -> pd.DataFrame:
    """Chosen η per data set, mechanism, mode and accountant, with the best η and the rule."""
    if chosen.empty:
        return chosen
    out = chosen.assign(
        dataset=chosen["dataset"].map(display_name),
        mechanism=chosen["mechanism"].map(style.mechanism_label),
    )
    cols = ["dataset", "mechanism", "mode", "accountant", "rep", "eta", "mean_accuracy", "se",
            "best_eta", "best_mean_accuracy", "best_se", "selected_as"]
    return out[[c for c in cols if c in out]].rename(columns={
        "dataset": "data set", "rep": "repetition", "eta": "chosen η", "mean_accuracy": "its accuracy",
        "se": "its SE", "best_eta": "best η", "best_mean_accuracy": "best accuracy",
        "best_se": "best SE", "selected_as": "selected with (pooled group)",
    })


def twin_identity(tables: Tables) -> str:
    """Whether per-round WD-DP and Wang–Ye–Xu coincide in the results (spec M3.2), in words."""
    table = combined(tables)
    if table.empty:
        return "No results."
    keys = ["dataset", "accountant", "epsilon", "rep"]
    wd = table[_is(table["mechanism"], "wddp") & _is(table["mode"], "per_round")
               & _is(table["experiment"], "eps_sweep")]
    wyx = table[_is(table["mechanism"], "wyx") & _is(table["experiment"], "eps_sweep")]
    pairs = wd[[*keys, "m", "eta", "accuracy", "optimal_gap"]].merge(
        wyx[[*keys, "eta", "accuracy", "optimal_gap"]], on=keys, suffixes=("", "_wyx")
    )
    if pairs.empty:
        return "No per-round WD-DP run shares (data set, accountant, ε, repetition) with a WYX run."
    same_eta = bool((pairs["eta"] == pairs["eta_wyx"]).all())
    acc = float((pairs["accuracy"] - pairs["accuracy_wyx"]).abs().max())
    gap = float(((pairs["optimal_gap"] - pairs["optimal_gap_wyx"]).abs()
                 / pairs["optimal_gap_wyx"].abs().clip(lower=1e-300)).max())
    return (
        f"Per-round WD-DP and Wang–Ye–Xu share the η selection ({'same' if same_eta else 'DIFFERENT'}"
        f" η in all {len(pairs)} paired runs) and the noise stream; over these pairs (every m) the "
        f"largest test-accuracy difference is {acc:.3g} and the largest relative optimal-gap "
        f"difference {gap:.3g} (float32 rounding: different record order per m)."
    )


def parsing_notes(cards: Mapping[str, Mapping[str, Any] | None]) -> pd.DataFrame:
    """What the data preparation dropped or imputed, per data set (card key ``parsing``)."""
    rows = []
    for ds, card in cards.items():
        notes = (card or {}).get("parsing") or {}
        items = notes.items() if isinstance(notes, Mapping) else enumerate(notes)
        for key, value in items:
            rows.append({"data set": display_name(ds), "item": str(key), "note": str(value)})
    return pd.DataFrame(rows, columns=["data set", "item", "note"])


# --------------------------------------------------------------------------------------------
# claims check
# --------------------------------------------------------------------------------------------


def survival_table(paper: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """:func:`mpdp.studies.wddp.claims.survival` for display (verdicts over all cells of each reading)."""
    table = survival(paper, other)
    if table.empty:
        return table
    return table.rename(columns={"claim_id": "id", "paper": "paper's reading", "other": "equal privacy"})


def claims_matrix(claims: pd.DataFrame) -> pd.DataFrame:
    """A reading's verdict rows for display (:func:`mpdp.report.claims_view.verdict_table`)."""
    return verdict_table(claims)


def _figure_numbers(figures: str) -> set[int]:
    return {
        int(part) for part in str(figures).replace(";", ",").split(",") if part.strip().isdigit()
    }


def figure_claims(claims: pd.DataFrame, spec: FigureSpec) -> tuple[pd.DataFrame, str]:
    """Claims-check rows about figure ``spec`` and a note on where they come from.

    A figure no claim names gets the rows of its companion figure (the accuracy figure of the same
    setting), and the note says so.
    """
    if claims.empty:
        return claims, "No claims check (no results)."
    hits = claims[claims["figures"].map(lambda f: spec.number in _figure_numbers(f))]
    if not hits.empty:
        return hits, ""
    pair = FIGURES[spec.pair]
    hits = claims[claims["figures"].map(lambda f: pair.number in _figure_numbers(f))]
    note = (
        f"No claim of the check is stated on this figure's metric; shown are the verdicts of "
        f"its companion Fig. {pair.number} ({pair.shows}), which tests the same statement."
    )
    return hits, note


# --------------------------------------------------------------------------------------------
# per-figure observations
# --------------------------------------------------------------------------------------------


def figure_observations(spec: FigureSpec, tables: Tables, variant: str = "") -> pd.DataFrame:
    """Mean metric per mechanism at the smallest and the largest x of each panel.

    Columns: data set, x (ε or u), one column per mechanism (legend names), the best
    mechanism at that x (highest accuracy / smallest gap) and the number of runs behind each
    mean (minimum over mechanisms).
    """
    var = VARIANTS[variant]
    records = []
    for ds in [d for d in DATASET_PANELS if d in tables] + [
        d for d in tables if d not in DATASET_PANELS
    ]:
        table = tables[ds]
        if table is None or table.empty:
            continue
        rows = select_rows(table, spec, var)
        if rows.empty:
            continue
        means = rows.groupby(["x", "mechanism"])[spec.metric].agg(["mean", "size"])
        xs = sorted(rows["x"].unique())
        for x in dict.fromkeys((xs[0], xs[-1])):
            at = means.loc[x]
            mechs = sorted(at.index, key=style.mechanism_sort_key)
            values = at["mean"]
            best_value = values.max() if spec.metric == "accuracy" else values.min()
            best = [
                m
                for m in mechs
                if math.isclose(values[m], best_value, rel_tol=1e-12, abs_tol=1e-15)
            ]
            record: dict[str, Any] = {"data set": display_name(ds), X_SYMBOL[spec.x]: x}
            record |= {style.mechanism_label(m): float(values[m]) for m in mechs}
            names = " = ".join(style.mechanism_label(m) for m in best)
            record["best"] = names if len(best) == 1 else f"tie: {names}"
            record["runs per mean"] = int(at["size"].min())
            records.append(record)
    return pd.DataFrame(records)


def figure_findings(spec: FigureSpec, observations: pd.DataFrame) -> list[str]:
    """Plain-language findings for one figure, derived from :func:`figure_observations`."""
    if observations.empty:
        return ["No runs of this figure's setting are in the results."]
    wd, jy = style.mechanism_label("wddp"), style.mechanism_label("jayaraman")
    symbol = X_SYMBOL[spec.x]
    findings = []
    for ds, group in observations.groupby("data set", sort=False):
        first, last = group.iloc[0], group.iloc[-1]
        text = f"{ds}: best at {symbol} = {first[symbol]:g} is {first['best']}"
        if len(group) > 1:
            text += f", at {symbol} = {last[symbol]:g} {last['best']}"
        if wd in group and jy in group:
            if spec.metric == "accuracy":
                diffs = (group[wd] - group[jy]).to_numpy()
                text += "; WD-DP − Jayaraman accuracy " + " → ".join(f"{d:+.3f}" for d in diffs)
            else:
                ratios = (group[jy] / group[wd]).to_numpy()
                text += "; Jayaraman/WD-DP gap ratio " + " → ".join(f"{r:.3g}×" for r in ratios)
        if wd in group and len(group) > 1:
            change = last[wd] - first[wd]
            text += f"; WD-DP {spec.metric.replace('_', ' ')} changes by {change:+.3g} over the {symbol} range"
        findings.append(text + ".")
    return findings


# --------------------------------------------------------------------------------------------
# privacy ledger (spec I-1, I-3)
# --------------------------------------------------------------------------------------------


#: ledger scope id -> what the ``eps_accounted`` column means for those runs
SCOPE_NAMES: dict[str, str] = {
    "aggregate": "exact: ε of the released aggregate",
    "worst_party": "upper bound: worst party's trajectory, by post-processing",
    "unaccounted": "none: noise shared by the parties, no valid ε known (refused)",
}


def delta_at_zero(sigma: float, sensitivity: float, T: int) -> float:
    """δ at ε = 0 of T Gaussian steps with std σ and sensitivity Δ: 2Φ(1/(2s')) − 1.

    s' = (σ/Δ)/sqrt(T) is the multiplier of the composed mechanism (Gaussian DP). When it is
    below the target δ, the release is (0, δ)-DP and the ledger's ε is 0.
    """
    s_eff = sigma / sensitivity / math.sqrt(T)
    return float(math.erf(1.0 / (2.0 * s_eff) / math.sqrt(2.0)))


def _ledger_explanation(group: pd.DataFrame, mode: str, accountant: str, scope: str) -> str:
    """Why accounted ε differs from claimed ε for one (mode, accountant), from its runs."""
    parts = []
    per_eps = group.groupby("eps_claimed")["ratio"].median()
    by_eps = ", ".join(f"{e:g}: {r:.3g}" for e, r in per_eps.items())
    if scope == "worst_party" and accountant != "exact_per_party":
        parts.append(
            "I-1: Algorithm 1 as printed calibrates to the total n, but each party's local "
            "trajectory has sensitivity 2G/n_j; the value is an upper bound via the worst "
            "party (post-processing)"
        )
    if accountant == "exact_per_party":
        parts.append(
            "equal privacy: each party calibrated to its own n_j with the exact accountant, so "
            "every party (and the aggregate) is (ε, δ)-DP at the claimed ε"
        )
    elif accountant == "ma16" and scope == "aggregate":
        parts.append(f"I-3: c = 16 is conservative; accounted/claimed ε (median) per claimed ε: {by_eps}")
    elif accountant == "ma16":
        parts.append(
            "I-3: c = 16 is conservative (its ratio for the aggregate is in the per-round and "
            f"central rows); here accounted/claimed ε (median) per claimed ε: {by_eps}"
        )
    elif accountant == "exact" and scope == "aggregate":
        parts.append("exact accountant: tight, accounted ε = claimed ε for the aggregate")
    if scope == "unaccounted":
        parts.append(
            "noise_sharing: shared: all parties add the same z_t, so the parties' releases are "
            "correlated and the worst-party argument does not hold; the ledger refuses to give "
            "an ε (empty)"
        )
    if mode == "per_round":
        parts.append(
            "per-round reading: exactly the (ε, δ) analysis of the proof; WD-DP = WYX in distribution"
        )
    zero = group[(group["eps_accounted"] == 0).to_numpy(dtype=bool)]
    if not zero.empty:
        deltas = [
            delta_at_zero(float(r.sigma), float(r.sensitivity), int(r.T))
            for r in zero.itertuples()
        ]
        eps0 = ", ".join(f"{e:g}" for e in sorted(zero["eps_claimed"].unique()))
        parts.append(
            f"accounted ε = 0 at claimed ε {eps0} ({len(zero)} runs): the noise is so large that "
            f"δ(0) = 2Φ(1/(2s′)) − 1 ≤ {max(deltas):.2g} is below δ = "
            f"{float(zero['delta'].iloc[0]):g}, i.e. the release is (0, δ)-DP — correct, not an error"
        )
    if not parts:
        parts.append(f"accounted/claimed ε (median) per claimed ε: {by_eps}")
    return "; ".join(parts) + "."


def privacy_ledger(tables: Tables) -> pd.DataFrame:
    """Per mechanism, mode and accountant: σ range, claimed vs accounted ε and why they differ.

    The scope column says what ``eps_accounted`` is for those runs (:data:`SCOPE_NAMES`):
    exact for per-round and central runs, an upper bound for the literal mode.
    """
    table = combined(tables)
    if table.empty:
        return pd.DataFrame()
    table = table[table["experiment"].isin(["eps_sweep", "u_sweep"]).to_numpy(dtype=bool)]
    table = table.assign(ratio=table["eps_accounted"] / table["eps_claimed"])
    keys = ["mechanism", "mode", "accountant", "eps_accounted_scope"]
    grouped = table.groupby(keys, dropna=False).agg(
        runs=("sigma", "size"),
        sigma_min=("sigma", "min"),
        sigma_max=("sigma", "max"),
        eps_claimed_min=("eps_claimed", "min"),
        eps_claimed_max=("eps_claimed", "max"),
        ratio_mean=("ratio", "mean"),
        ratio_max=("ratio", "max"),
        eps_accounted_max=("eps_accounted", "max"),
    )
    grouped = grouped.reset_index()
    groups = dict(list(table.groupby(keys, dropna=False)))
    grouped["explanation"] = [
        _ledger_explanation(
            groups[(r.mechanism, r.mode, r.accountant, r.eps_accounted_scope)],
            str(r.mode), str(r.accountant), str(r.eps_accounted_scope),
        )
        for r in grouped.itertuples()
    ]
    grouped = grouped.sort_values(
        ["mechanism", "mode", "accountant"],
        key=lambda s: s.map(style.mechanism_sort_key) if s.name == "mechanism" else s,
    ).reset_index(drop=True)
    grouped["mechanism"] = grouped["mechanism"].map(style.mechanism_label)
    grouped["eps_accounted_scope"] = [
        f"{scope} ({SCOPE_NAMES.get(str(scope), '?')})" for scope in grouped["eps_accounted_scope"]
    ]
    return grouped.rename(
        columns={
            "eps_accounted_scope": "scope of accounted ε",
            "sigma_min": "σ min",
            "sigma_max": "σ max",
            "eps_claimed_min": "claimed ε min",
            "eps_claimed_max": "claimed ε max",
            "ratio_mean": "accounted/claimed ε (mean)",
            "ratio_max": "accounted/claimed ε (max)",
            "eps_accounted_max": "accounted ε (max)",
        }
    )


def ma16_ratio_sentence(tables: Tables) -> str:
    """What the tight accountant gives for the paper's c = 16, per claimed ε, from the ledger."""
    table = combined(tables)
    if table.empty:
        return "No runs: the ratio of accounted to claimed ε under c = 16 is not available."
    rows = table[
        _is(table["accountant"], "ma16") & _is(table["eps_accounted_scope"], "aggregate")
        & table["experiment"].isin(["eps_sweep", "u_sweep"]).to_numpy(dtype=bool)
    ]
    if rows.empty:
        return "No per-round or central ma16 runs: the c = 16 ratio is not available."
    ratio = (rows["eps_accounted"] / rows["eps_claimed"]).groupby(rows["eps_claimed"]).median()
    return (
        "The tight accounting of the same noise gives accounted/claimed ε (median over runs) of "
        + ", ".join(f"{r:.3g} at claimed ε = {e:g}" for e, r in ratio.items())
    )


def printed_eps_ratio(tables: Tables) -> float:
    """Mean over runs of accounted/claimed ε of WD-DP as printed (Algorithm 1 literally, c = 16):
    how many times the claimed ε the ledger's bound really is (spec I-1). NaN: no such runs."""
    table = combined(tables)
    if table.empty:
        return float("nan")
    rows = table[_is(table["mechanism"], "wddp") & _is(table["mode"], "local_then_aggregate")
                 & _is(table["accountant"], "ma16")
                 & table["experiment"].isin(["eps_sweep", "u_sweep"]).to_numpy(dtype=bool)]
    if rows.empty:
        return float("nan")
    return float((rows["eps_accounted"] / rows["eps_claimed"]).mean())


def printed_eps_fact(tables: Tables, rounded: Callable[[float], str]) -> str:
    """A plain sentence with :func:`printed_eps_ratio` (``rounded`` formats it for reading)."""
    ratio = printed_eps_ratio(tables)
    if not np.isfinite(ratio):
        return ""
    if ratio <= 1.0 + 1e-6:
        return "Algorithm 1 as printed gives the privacy it claims."
    return (f"Algorithm 1 as printed spends about {rounded(ratio)}× the privacy budget ε it claims "
            "(mean over runs; the bound for the party it protects least), so its comparisons "
            "are not at equal privacy.")


def _is(column: pd.Series, value: str) -> np.ndarray:
    return (column == value).fillna(False).to_numpy(dtype=bool)


def size_ratios(tables: Tables) -> pd.DataFrame:
    """Realised n/(m n_(1)) per data set and ε-sweep m (spec E2.1, B9): σ_J/σ_WD of those runs."""
    table = combined(tables)
    if table.empty:
        return pd.DataFrame()
    rows = table[
        (table["experiment"] == "eps_sweep").fillna(False).to_numpy(dtype=bool)
        & (table["mechanism"] == "wddp").fillna(False).to_numpy(dtype=bool)
    ]
    out = rows.groupby(["dataset", "m"])["size_ratio"].agg(["mean", "min", "max"]).reset_index()
    out["dataset"] = out["dataset"].map(display_name)
    return out.rename(
        columns={"dataset": "data set", "mean": "n/(m n_(1)) mean", "min": "min", "max": "max"}
    )


# --------------------------------------------------------------------------------------------
# learning rates and the step-size condition (spec I-4, B1′)
# --------------------------------------------------------------------------------------------


def learning_rates(tables: Tables) -> pd.DataFrame:
    """η used per data set, mechanism and mode, where it came from and whether η ≤ 1/L holds."""
    table = combined(tables)
    if table.empty:
        return pd.DataFrame()
    rows = table[table["experiment"].isin(["eps_sweep", "u_sweep"]).to_numpy(dtype=bool)]
    out = rows.groupby(["dataset", "mechanism", "mode", "accountant"]).agg(
        eta=("eta", "first"),
        etas=("eta", "nunique"),
        source=("eta_source", "first"),
        lam=("lambda", "first"),
    )
    out = out.reset_index()
    out["1/L"] = [1.0 / bounds.smoothness(lam) for lam in out["lam"]]
    out["η ≤ 1/L (B1′ applies)"] = [
        bool(bounds.step_size_ok(e, 1.0 / inv))
        for e, inv in zip(out["eta"], out["1/L"], strict=True)
    ]
    out["dataset"] = out["dataset"].map(display_name)
    out["mechanism"] = out["mechanism"].map(style.mechanism_label)
    return out.drop(columns=["lam"]).rename(
        columns={"dataset": "data set", "eta": "η", "etas": "distinct η"}
    )


# --------------------------------------------------------------------------------------------
# reconstructed choices and the inconsistency register (spec E7, mechanisms.md §16)
# --------------------------------------------------------------------------------------------

#: config key -> (spec reference, what it decides); every key here is [REC] or an open choice
CONFIG_CHOICES: dict[str, tuple[str, str]] = {
    "split.test_frac": ("E1.2, E7 #7 [REC]", "test fraction of the stratified split"),
    "split.seed": ("E1.2 [REC]", "seed of the split"),
    "preprocess.intercept": ("E1.3, E7 #8 [REC]", "row-normalise then append a constant intercept"),
    "preprocess.row_scaling": ("E1.3, E7 #8 [REC]", "rows to norm ≤ 1: each by its own ℓ2 norm, or all by the largest"),
    "preprocess.scaling_bounds": ("E1.3, E7 #9 [REC]", "numeric min–max bounds: full data or training split only"),
    "preprocess.kdd_sample_size": (
        "E1 (a) [REC law]",
        "KDDCup99 subsample size (sampled without replacement)",
    ),
    "preprocess.bank_keep_duration": ("E7 #17 [REC]", "keep Bank's `duration` attribute"),
    "preprocess.breast_cancer_missing": ("E7 #18 [REC]", "missing Bare Nuclei: median or drop"),
    "preprocess.credit_card_normals": (
        "E7 #19 [REC]",
        "normal transactions sampled next to the 492 frauds",
    ),
    "wddp.lambda": ("E7 #4 [REC], I-4", "L2 regulariser λ (the paper mentions none)"),
    "wddp.reps": ("E7 #6 [REC]", "repetitions per setting"),
    "wddp.eps_grid": ("E7 #5 [REC]", "ε grid within the paper's 0.01–0.25"),
    "wddp.modes": ("E7 #1, I-1", "execution modes run (Algorithm 1 literal / per-round)"),
    "wddp.noise_sharing": (
        "E7 #2 [REC], I-2",
        "per-party noise independent or shared in the literal mode",
    ),
    "wddp.accountants": ("E7 #3, I-3", "noise calibrations (ma16 = c = 16 of the proof)"),
    "wddp.eta": ("E3.3", "fixed η (null: cross-validated)"),
    "wddp.eta_grid": ("E3.3 [S-000]", "η candidates of the cross-validation"),
    "wddp.cv": ("E3.3, E7 #15 [REC]", "CV protocol for η"),
    "wddp.tau_frac": ("E7 #10 [REC]", "minimum party size τ = max(2, ⌊τ_frac·n/m⌋)"),
    "wddp.small_group_frac": ("E7 #12 [REC]", "u-design: share of the m parties in the small group (0.5 = m/2 and m/2)"),
    "wddp.leftover": ("E7 #13 [REC]", "u-design leftover records: drop (for all methods) or give to the large group"),
    "wddp.init_std": ("E7 #14 [REC]", "θ₀ ~ N(0, init_std² I)"),
    "wddp.reference_step": (
        "M1b [REC], issue 33",
        "step of the non-private GD reference: inverse_smoothness = 1/L (L = 1/4 + λ), so that it reaches θ* "
        "(M1b's WYX η, chosen for noisy GD, left Breast Cancer's reference at the majority rate); private = "
        "M1b as written",
    ),
    "wddp.reference_gap_tol": (
        "issue 33 [REC]",
        "largest L_D(θ_ref) − L_D(θ*) at which the reference counts as converged; claims using an unconverged "
        "reference are uninformative",
    ),
    "max_records": ("E8", "cap on records per data set (null = paper sizes)"),
}

#: choices fixed in code (no config key), spec E7
FIXED_CHOICES: list[tuple[str, str, str]] = [
    ("E7 #11 [REC]", "random party sizes", "τ + Multinomial(n − mτ, Dirichlet(1)) shares"),
    ("E7 #12 [REC]", "u-design group counts", "m/2 parties of size a, m/2 of size u·a"),
    ("E7 #9 [REC]", "numeric scaling bounds", "min–max of the full data set, treated as public"),
    ("E7 #16", "privacy cost of CV and preprocessing", "not accounted, as in the paper"),
]


def _lookup(config: Mapping[str, Any], dotted: str) -> Any:
    node: Any = config
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def reconstructed_choices(
    config: Mapping[str, Any], cards: Mapping[str, Mapping[str, Any] | None]
) -> pd.DataFrame:
    """Every open or reconstructed choice used: config values, card preprocessing, fixed code."""
    rows = [
        {
            "choice": key,
            "value used": _lookup(config, key),
            "spec": ref,
            "what it decides": what,
            "source": "config",
        }
        for key, (ref, what) in CONFIG_CHOICES.items()
    ]
    seen: dict[tuple[str, str], list[str]] = {}
    for ds, card in cards.items():
        for name, choice in ((card or {}).get("preprocessing") or {}).items():
            if not isinstance(choice, Mapping) or choice.get("tag") not in ("REC", "S-000"):
                continue
            key = (str(name), repr(choice.get("value")))
            if key not in seen:
                seen[key] = []
                rows.append(
                    {
                        "choice": f"preprocessing: {name}",
                        "value used": choice.get("value"),
                        "spec": f"{choice.get('spec')} [{choice.get('tag')}]",
                        "what it decides": "",
                        "source": "",
                    }
                )
            seen[key].append(ds)
    for row in rows:
        if row["choice"].startswith("preprocessing: "):
            name = row["choice"].removeprefix("preprocessing: ")
            row["source"] = "data cards: " + ", ".join(seen[(name, repr(row["value used"]))])
    rows += [
        {
            "choice": name,
            "value used": value,
            "spec": ref,
            "what it decides": "",
            "source": "fixed in code",
        }
        for ref, name, value in FIXED_CHOICES
    ]
    frame = pd.DataFrame(rows)
    frame["value used"] = frame["value used"].map(lambda v: "null" if v is None else str(v))
    return frame


def inconsistencies(config: Mapping[str, Any], tables: Tables) -> pd.DataFrame:
    """Entries of the spec's inconsistency register that shape the figures, with this run's choice."""
    w = config.get("wddp", {})
    table = combined(tables)
    eta_sources = sorted(set(table["eta_source"].dropna())) if not table.empty else []
    rows = [
        (
            "I-1",
            "Algorithm 1 (T local noisy steps, one weighted average, σ calibrated to the total n) is not "
            "the per-round mechanism the privacy proof analyses; literally it is only (ε·n/n_(1), δ)-DP.",
            f"both readings are run (modes {w.get('modes')}): main figures = Algorithm 1 as printed, "
            "'-pr' figures = per-round reading (identical to Wang–Ye–Xu: shared η selection and "
            "noise stream, see the learning-rate section); the ledger reports an upper bound, the "
            "worst party's ε"
            + (
                "; '-eq' figures calibrate each party to its own n_j (equal real privacy)."
                if w.get("equal_privacy")
                else "."
            ),
        ),
        (
            "I-2",
            "The noise z_t of Algorithm 1 has no party index (shared or independent?).",
            f"noise_sharing = {w.get('noise_sharing')}"
            + (
                "; with shared noise the ledger refuses to give an ε (correlated releases: the "
                "worst-party argument fails)."
                if w.get("noise_sharing") == "shared"
                else "."
            )
            + " Spec M3.2's optional noise_placement: per_party (per-round mode with each party "
            "adding its own noise) is NOT implemented.",
        ),
        (
            "I-3",
            "The constant c of σ² is unspecified; the proof needs c ≥ 16, which over-noises. "
            + ma16_ratio_sentence(tables) + ".",
            f"accountants {w.get('accountants')}: main figures c = 16, '-exact' figures the tight calibration.",
        ),
        (
            "I-4",
            "The theory needs λ-strong convexity and η = 1/L; the experiments use cross-validated η and no regulariser.",
            f"λ = {w.get('lambda')}; η source(s): {', '.join(eta_sources) or 'n/a'}; bound overlays use B1′ "
            "(any η ≤ 1/L) and are labelled vacuous where they exceed ln 2.",
        ),
        (
            "I-5",
            "Eq. (1) (mean of local means, what the simple average optimises) is not the objective whose "
            "optimum θ* defines the optimal gap.",
            "the gap is always L_D(θ) − L_D(θ*) on the pooled training data; Jayaraman's gap includes the "
            "aggregation bias b_F drawn on the gap-vs-u figures.",
        ),
        (
            "I-7",
            "λ denotes both the moment order of the accountant and the strong-convexity constant.",
            "λ is the regulariser only; the moment order is λ_ma (no effect on the numbers).",
        ),
        (
            "I-19",
            "Data-set sizes are given, but no split, normalisation, size threshold or repetition count.",
            "reconstructed choices listed in the table above (spec E7).",
        ),
    ]
    return pd.DataFrame(
        rows, columns=["id", "issue (spec mechanisms.md §16)", "what this run does"]
    )


# --------------------------------------------------------------------------------------------
# Table 1 (spec B4)
# --------------------------------------------------------------------------------------------


def table1_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Compact view of :func:`mpdp.studies.wddp.figures.table1_frame`: risk bounds per method and setting.

    One row per data set and ε-sweep m (u-sweeps at their smallest and largest u), columns
    the explicit excess-risk bound of each Table 1 row plus WD-DP's computed and claimed
    risk factor against Jayaraman et al.
    """
    if frame.empty:
        return frame
    keep = frame[frame["experiment"] == "eps_sweep"]
    u_rows = frame[frame["experiment"] == "u_sweep"]
    if not u_rows.empty:
        extremes = u_rows.groupby(["dataset", "m", "epsilon"])["u"].transform(
            lambda s: s.isin([s.min(), s.max()])
        )
        keep = pd.concat([keep, u_rows[extremes.astype(bool)]])
    keys = ["dataset", "experiment", "m", "u", "epsilon", "n", "n_min", "p"]
    methods = list(dict.fromkeys(keep["method"]))
    records = []
    for key, block in keep.groupby(keys, dropna=False, sort=False):
        by_method = block.set_index("method")
        record = dict(zip(keys, key, strict=True))
        record |= {
            m: by_method.loc[m, "excess_risk_bound"] for m in methods if m in by_method.index
        }
        jay = by_method.loc["Jayaraman et al. 2018"]
        record["risk_factor"] = jay["risk_factor"]
        record["claimed_risk_factor"] = jay["claimed_risk_factor"]
        records.append(record)
    out = pd.DataFrame(records)
    out["dataset"] = out["dataset"].map(display_name)
    out = out.dropna(axis=1, how="all")
    return out.rename(
        columns={
            "dataset": "data set",
            "risk_factor": "WD-DP/Jayaraman risk (computed)",
            "claimed_risk_factor": "WD-DP/Jayaraman risk (claimed)",
        }
    )


