"""Report section "All mechanisms on one footing" (spec experiments.md E10; issue 10).

Every number is computed from the benchmark tables and the selection records
(``<dataset>.hparams.json``) when the report is built.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mpdp import tuning
from mpdp.studies.benchmark import ranking
from mpdp.studies.benchmark.figures import catalogue, data_sizes, read_tables

CAPTIONS: dict[str, str] = {
    "xp_eps": "Test accuracy (top) and optimality gap against the pooled θ* of the same λ (bottom) "
              "versus the record-level ε, at the reference m and u; every mechanism calibrated so that "
              "its whole released transcript is (ε, δ)-DP.",
    "xp_m": "The same versus the number of parties m, at the reference ε and u.",
    "xp_u": "The same versus the size unevenness u, at the reference ε and m.",
    "xp_rank": "Best mechanism of every cell of the grid on the pre-declared primary metric (colour) and "
               "the number of mechanisms not significantly worse than it (paired over repetitions, "
               "Holm-corrected); hatched \"u\": uninformative cell, no mechanism's accuracy significantly "
               "above the majority rate.",
}

@dataclass(frozen=True)
class Benchmark:
    """What the report reads of the benchmark: the tables, selection records and figures."""

    table: pd.DataFrame
    hparams: list[dict[str, Any]]
    figures: dict[str, str]
    ranking: pd.DataFrame  # per-cell ranking table (data/results/benchmark/ranking.parquet)


def load(ctx: dict[str, Any] | None) -> Benchmark | None:
    """The benchmark's outputs, or None when the benchmark was not part of this build."""
    if not ctx or not ctx.get("tables"):
        return None
    tables = [p for p in ctx["tables"] if Path(p).is_file()]
    if not tables:
        return None
    hparams = [json.loads(Path(p).read_text()) for p in ctx.get("hparams", []) if Path(p).is_file()]
    figures = {k: v for k, v in ctx.get("figures", {}).items() if Path(v).is_file()}
    ranked = [p for p in ctx.get("ranking", []) if Path(p).is_file()]
    table = read_tables(tables)
    return Benchmark(table, hparams, figures,
                     pd.read_parquet(ranked[0]) if ranked else ranking.ranking_table(table))


def _label(bench: Benchmark, mechanism: str) -> str:
    """The legend label of ``mechanism`` (from its rows)."""
    labels = catalogue(bench.table)["label"]
    return str(labels.get(mechanism, mechanism))


def captions(bench: Benchmark, cfg: dict[str, Any]) -> dict[str, str]:
    """:data:`CAPTIONS` with the data size of every data set (private records and the cap)."""
    sizes = data_sizes(bench.table, cfg.get("benchmark", {}).get("max_train_records"))
    size_text = " Data: " + "; ".join(f"{ds} {n}" for ds, n in sizes.items()) + "."
    return {k: v + size_text for k, v in CAPTIONS.items()}


def footing(bench: Benchmark, cfg: dict[str, Any]) -> list[str]:
    """The common footing in a few computed lines (unit, δ, accountants, check, selection, knobs)."""
    t = bench.table
    private = t[t["family"] != "reference"]
    lines = []
    units = private.groupby("privacy_unit")["mechanism"].unique()
    unit_text = "; ".join(f"{u}: {', '.join(sorted(m))}" for u, m in units.items())
    lines.append("**Privacy unit**: replace one record of one party (record-level, bounded DP); "
                 f"mechanisms with a party-level guarantee run at their party-level ε, which implies the "
                 f"record-level one ({unit_text}).")
    acc = private.groupby("family")["accountant"].unique()
    deltas = sorted({float(d) for d in private["delta_total"].dropna()})
    lines.append("**Accounting of the whole transcript** (accountant per family): "
                 + "; ".join(f"{fam}: {', '.join(sorted(a))}" for fam, a in acc.items())
                 + f". δ of the statements: {', '.join(f'{d:g}' for d in deltas)} (0 = pure ε-DP).")
    finite = private[np.isfinite(private["eps_total"])]
    rel = (finite["eps_total"] - finite["epsilon"]).abs() / finite["epsilon"]
    lines.append(f"**Equal accounted privacy**: over all {len(finite)} private runs the accounted ε of the "
                 f"transcript differs from the target by at most {100 * rel.max():.2g} % (relative)."
                 + _calibration_notes(private))
    if bench.hparams:
        h = bench.hparams[0]
        caps = ", ".join(f"{r['dataset']} {r['n_private']} of {r['n_private_before_cap']}" for r in bench.hparams)
        ref = h["reference_cell"]
        cell = f"m = {ref['m']}, u = {ref['u']}, ε = {ref['epsilon']:g}"
        lines.append(f"**Hyper-parameters**: {h['protocol']} (reference cell {cell}). The "
                     f"selection's privacy cost is **{h['privacy_cost_of_selection']}**: it is not part of "
                     "the accounted ε.")
        lines.append(f"**Private records per data set** ([REC] cap `benchmark.max_train_records`, one "
                     f"seeded uniform subsample shared by every mechanism): {caps}.")
    b = cfg.get("benchmark", {})
    if b:
        lines.append(f"**Grid**: ε ∈ {b['eps_grid']}, m ∈ {b['m_grid']}, u ∈ {b['u_grid']}, "
                     f"R = {b['reps']}; gradient mechanisms T = {b['gradient']['T']} steps, ADMM "
                     f"T = {b['admm']['T']} iterations on a {b['admm']['topology']} (both [REC] time knobs).")
    return lines


def _calibration_notes(private: pd.DataFrame) -> str:
    """What the accounted ε rests on for mechanisms whose calibration departs from their paper.

    Read from the rows' ``calibration`` column: PVP's noise is calibrated to its hidden-state
    bound Δ_p/(1 − r) (spec I-20), without which its per-release α would not hold given the
    released history and its accounted ε would overstate its privacy.
    """
    if "calibration" not in private:
        return ""
    bound = sorted(private.loc[private["calibration"].fillna("").str.contains("hidden-state"), "mechanism"].unique())
    if not bound:
        return ""
    labels = catalogue(private)["label"]
    return (f" For {', '.join(labels[m] for m in bound)} this holds because its noise is calibrated to the "
            "hidden-state bound Δp/(1−r) of its conditional sensitivity (spec I-20): the paper's noise, "
            "calibrated to Δp, is not α-DP per release given the released history.")


def leaderboard(bench: Benchmark) -> pd.DataFrame:
    """Per mechanism: cells, best, best-or-tied and their share, mean rank, with readable labels."""
    board = ranking.leaderboard(bench.ranking)
    spec = bench.table.drop_duplicates("mechanism").set_index("mechanism")["spec"]
    board.insert(0, "mechanism (spec)", [f"{_label(bench, m)} [{spec.get(m, '')}]" for m in board["mechanism"]])
    board["share_best_or_tied"] = board["share_best_or_tied"].map(lambda v: f"{100 * v:.0f} %")
    board["mean_rank"] = board["mean_rank"].round(2)
    return board.drop(columns="mechanism")


def leader_sentence(bench: Benchmark) -> str:
    """Which mechanism is best or tied in the most cells, and how many cells are uninformative."""
    board = ranking.leaderboard(bench.ranking)
    if board.empty:
        return "No competing mechanisms in the tables."
    top = board.iloc[0]
    metric = str(bench.ranking["primary_metric"].iloc[0])
    flat = int(bench.ranking["uninformative"].sum())
    return (f"Ranked on the pre-declared primary metric, {ranking.PRIMARY_METRICS[metric]} (lower is better; "
            f"accuracy secondary). Over {int(top['cells'])} cells, **{_label(bench, top['mechanism'])}** is best or not "
            f"significantly worse than the best in {int(top['best_or_tied'])} cells "
            f"({100 * top['share_best_or_tied']:.0f} %), best outright in {int(top['best'])}. "
            f"{flat} of {len(bench.ranking)} cells are uninformative (no mechanism's accuracy significantly "
            "above the majority rate): their winners are ranked on the metric only.")


def edges(bench: Benchmark) -> pd.DataFrame:
    """Tuned knobs on an edge of their candidate grid (:func:`mpdp.tuning.edge_warnings`)."""
    choices = []
    for record in bench.hparams:
        for mech, h in record.get("mechanisms", {}).items():
            if h.get("candidates"):
                choices.append((f"{record['dataset']}, {_label(bench, mech)}", h["hparam"], float(h["chosen"]),
                                h["candidates"]))
    return tuning.edge_warnings("benchmark", choices)


def edge_sentence(bench: Benchmark) -> str:
    """Tuned knobs on an edge of their candidate grid (:func:`mpdp.tuning.edge_sentence` of :func:`edges`)."""
    return tuning.edge_sentence(edges(bench))


#: today's standard baseline, compared with the four papers' mechanisms
BASELINE = "dpsgd"


def baseline_standing(bench: Benchmark, baseline: str = BASELINE) -> pd.DataFrame:
    """Where ``baseline`` stands per data set, ε and m (over the u cells), from the ranking table.

    Columns: its mean rank on the primary metric among all competitors, the number of
    competitors, the u cells where it is best or tied with the best, and the papers' mechanism
    ranked highest (the first non-baseline mechanism of the cell's order, most often over u).
    """
    r = bench.ranking
    rows = []
    for (ds, eps, m), cells in r.groupby(["dataset", "epsilon", "m"], sort=True):
        ranks, top, tied = [], [], 0
        for cell in cells.itertuples():
            order = cell.ranked.split(",")
            if baseline not in order:
                continue
            ranks.append(order.index(baseline) + 1)
            top.append(next(x for x in order if x != baseline))
            tied += baseline in cell.tied.split(",")
        if ranks:
            best_paper = pd.Series(top).value_counts().index[0]
            rows.append({"dataset": ds, "ε": eps, "m": int(m), "rank of DP-SGD (mean over u)": float(np.mean(ranks)),
                         "competitors": len(cells.iloc[0]["ranked"].split(",")),
                         "best or tied (u cells)": f"{tied} of {len(ranks)}",
                         "highest-ranked paper mechanism": _label(bench, best_paper)})
    return pd.DataFrame(rows)


def baseline_sentence(bench: Benchmark, baseline: str = BASELINE) -> str:
    """One sentence on the standard baseline against the papers' mechanisms (from the ranking)."""
    r = bench.ranking
    has = r[r["ranked"].str.split(",").map(lambda order: baseline in order)]
    if has.empty:
        return f"{baseline} is not among the benchmark's mechanisms in this build."
    best = int((has["best_mechanism"] == baseline).sum())
    tied = int(has["tied"].str.split(",").map(lambda t: baseline in t).sum())
    flat = int(has["uninformative"].sum())
    metric = ranking.PRIMARY_METRICS[str(has["primary_metric"].iloc[0])]
    return (f"At equal accounted privacy, **{_label(bench, baseline)}** is best on the primary metric ({metric}) in "
            f"{best} of {len(has)} cells and best or not significantly worse than the best in {tied}; in the other "
            f"{len(has) - tied} cells another mechanism is significantly better "
            f"({flat} of the {len(has)} cells are uninformative on accuracy). Per data set, ε and m:")


def rec_choices(cfg: dict[str, Any]) -> pd.DataFrame:
    """The benchmark's [REC] settings as configured (reconstructions, not from a seed)."""
    b = cfg.get("benchmark", {})
    keys = {"lambda": "common λ", "aux_frac": "public pool fraction (Hamm)", "val_frac": "validation split",
            "max_train_records": "cap on private records", "min_party_size": "smallest party (else skipped)",
            "tune_seeds": "seeds per candidate"}
    rows = [{"key": f"benchmark.{k}", "meaning": v, "value": b.get(k)} for k, v in keys.items() if k in b]
    for fam, knob in (("gradient", "eta_candidates"), ("gradient", "T"), ("output", "lambda_candidates"),
                      ("admm", "penalty_candidates"), ("admm", "T")):
        if knob in b.get(fam, {}):
            rows.append({"key": f"benchmark.{fam}.{knob}", "meaning": f"{fam} family", "value": b[fam][knob]})
    return pd.DataFrame(rows)
