"""Report section "All mechanisms on one footing" (spec experiments.md E10; issue 10).

Every number is computed from the benchmark tables and the selection records
(``<dataset>.hparams.json``) when the report is built.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from mpdp import io, tuning
from mpdp.report import names
from mpdp.studies.benchmark import ranking
from mpdp.studies.benchmark.figures import (
    GLANCE_BASELINE,
    catalogue,
    data_sizes,
    glance_reading,
    glance_rows,
)
from mpdp.studies.benchmark.tables import headline_rows, read_ranking, read_tables

CAPTIONS: dict[str, str] = {
    "xp_eps": "Test accuracy (top) and optimality gap against the pooled θ* of the same λ (bottom) "
              "versus the record-level ε, at the reference m and u; every mechanism calibrated so that "
              "its whole released transcript is (ε, δ)-DP.",
    "xp_m": "The same versus the number of parties m, at the reference ε and u.",
    "xp_u": "The same versus the size unevenness u, at the reference ε and m.",
    "xp_rank": "Best mechanism of every cell of the grid on the pre-declared primary metric (colour; "
               "median over repetitions) at end-to-end privacy (selection included), and the number of "
               "mechanisms not significantly worse than it (paired over repetitions, Holm-corrected); hatched "
               "\"u\": uninformative cell, no mechanism significantly better than the trivial baseline on "
               "the primary metric (log-loss: the constant base-rate predictor).",
}


def glance_caption(table: pd.DataFrame, reference: dict[str, Any]) -> str:
    """The caption of ``xp_glance``, from the rows it draws (:func:`.figures.glance_rows`)."""
    rows = glance_rows(table, reference)
    r = glance_reading(rows)
    ratio = (f" (largest ratio of `{r['column']}` to the target over the {r['runs']} private runs drawn: "
             f"{r['ratio']:.6f})" if np.isfinite(r["ratio"]) else "")
    return (f"Test log-loss (the primary metric; mean and 95 % t-band over repetitions, log scale) versus ε of "
            f"every private mechanism ({r['mechanisms']} drawn, objective perturbation among them) at "
            f"m = {reference['m']:g}, u = {reference['u']:g}, one column per data set, rows of selection "
            f"protocol `{r['protocol']}`: equal accounted privacy, {r['text']}{ratio}. Objective "
            f"perturbation (`{GLANCE_BASELINE}`, the standard one-shot baseline) is the thick wine curve with square "
            "marks, the non-private θ* the grey dotted line, the constant base-rate predictor (chance) the "
            "dash-dot line.")


@dataclass(frozen=True)
class Benchmark:
    """What the report reads of the benchmark: the tables, selection records and figures."""

    table: pd.DataFrame
    hparams: list[dict[str, Any]]
    figures: dict[str, str]
    ranking: pd.DataFrame  # per-cell ranking table (data/results/benchmark/ranking.parquet)
    #: every selection protocol's rows (the oracle reading beside the headline); None: ``table``
    every: pd.DataFrame | None = None

    @property
    def rows(self) -> pd.DataFrame:
        return self.table if self.every is None else self.every


def context(files: Mapping[str, list[str]]) -> dict[str, Any]:
    """The benchmark's entry of the report context (:attr:`mpdp.studies.interface.Study.context`):
    its tables, the selection record of each (``<dataset>.hparams.json``, :func:`~mpdp.studies.benchmark.plan.hparams_path`),
    its figures by name and its ranking table (the one other table of its files)."""
    tables = list(files["tables"])
    records = {str(Path(t).with_suffix(".hparams.json")) for t in tables}
    return {"tables": tables,
            "hparams": [p for p in files["files"] if p in records],
            "figures": {Path(p).stem: p for p in files["files"] if p.endswith(".png")},
            "ranking": [p for p in files["files"] if p.endswith(".parquet") and p not in tables]}


def load(ctx: Mapping[str, Any] | None) -> Benchmark | None:
    """The benchmark's outputs, or None when the benchmark was not part of this build."""
    if not ctx or not ctx.get("tables"):
        return None
    tables = [p for p in ctx["tables"] if Path(p).is_file()]
    if not tables:
        return None
    hparams = [io.read_json(p, "benchmark hyper-parameter file") for p in ctx.get("hparams", []) if Path(p).is_file()]
    figures = {k: v for k, v in ctx.get("figures", {}).items() if Path(v).is_file()}
    ranked = [p for p in ctx.get("ranking", []) if Path(p).is_file()]
    every = read_tables(tables, every_protocol=True)
    ranks = read_ranking(ranked[0]) if ranked else ranking.ranking_table(every)
    return Benchmark(headline_rows(every), hparams, figures, ranks, every)


def _label(bench: Benchmark, mechanism: str) -> str:
    """The legend label of ``mechanism`` (from its rows)."""
    labels = catalogue(bench.table)["label"]
    return str(labels.get(mechanism, mechanism))


def captions(bench: Benchmark, cfg: dict[str, Any]) -> dict[str, str]:
    """:data:`CAPTIONS` with the data size of every data set (private records and the cap)."""
    sizes = data_sizes(bench.table, cfg.get("benchmark", {}).get("max_train_records"))
    size_text = " Data: " + "; ".join(f"{names.dataset(ds)} {n}" for ds, n in sizes.items()) + "."
    out = {k: v + size_text for k, v in CAPTIONS.items()}
    if reference := reference_cell(bench, cfg):
        out["xp_glance"] = glance_caption(bench.table, reference) + size_text
    return out


def footing(bench: Benchmark, cfg: dict[str, Any]) -> list[str]:
    """The common footing in a few computed lines (unit, δ, accountants, check, selection, knobs)."""
    t = bench.table
    private = t[t["family"] != "reference"]
    lines = []
    units = private.groupby("privacy_unit")["mechanism"].unique()
    unit_text = "; ".join(f"{u}: {', '.join(sorted(_label(bench, x) for x in m))}" for u, m in units.items())
    lines.append("**Privacy unit of every row** (the unit of its `eps_end_to_end`, selection included): replace "
                 "one record of one party (record-level, bounded DP) or one party's whole data (party-level, "
                 "which implies the record-level one for the parties' records) — "
                 f"{unit_text}. **Validation records** (the split the selection scores; `eps_validation_record`, "
                 "replace one of them): the record-level rows hold them in the private pool, noise their scores "
                 "per record and train the final run on them, so `eps_end_to_end` covers them; the party-level "
                 "rows hold them out of every party, run their trials on the released partition, noise the "
                 "trials' scores for one validation record and release the selected trial (docs/benchmark.md, "
                 "issues 43, 58).")
    acc = private.groupby("family")["accountant"].unique()
    deltas = sorted({float(d) for d in private["delta_total"].dropna()})
    lines.append("**Accounting of the whole transcript** (accountant per family): "
                 + "; ".join(f"{fam}: {', '.join(sorted(a))}" for fam, a in acc.items())
                 + f". δ of the statements: {', '.join(f'{d:g}' for d in deltas)} (0 = pure ε-DP).")
    if "eps_end_to_end" in private and np.isfinite(private["eps_end_to_end"]).any():
        e2e = private[np.isfinite(private["eps_end_to_end"])]
        worst = float((e2e["eps_end_to_end"] / e2e["epsilon"]).max())
        lines.append(f"**Equal end-to-end privacy**: over all {len(e2e)} private runs the ε of the whole procedure "
                     f"— hyper-parameter selection included — is at most the target for every individual it reads: "
                     f"a party member in the row's unit (largest ratio {worst:.6f})"
                     + _validation_text(e2e) + "; the record-level rows' final run alone is accounted at "
                     f"{_share_text(e2e[e2e['privacy_unit'] == 'record'])} of the target, the party-level rows' "
                     f"released trial at {_share_text(e2e[e2e['privacy_unit'] == 'party'])}."
                     + _calibration_notes(private))
    else:
        finite = private[np.isfinite(private["eps_total"])]
        rel = (finite["eps_total"] - finite["epsilon"]).abs() / finite["epsilon"]
        lines.append(f"**Equal accounted privacy of the final run**: over all {len(finite)} private runs the "
                     f"accounted ε of the transcript differs from the target by at most {100 * rel.max():.2g} % "
                     "(relative); the selection is not accounted." + _calibration_notes(private))
    if bench.hparams:
        caps = ", ".join(f"{r['dataset']} {r['n_private']} of {r['n_private_before_cap']}" for r in bench.hparams)
        for line in selection_lines(bench):
            lines.append(line)
        per_rep = bool(bench.hparams[0].get("split_per_repetition"))
        lines.append(f"**Private records per data set** ([REC] cap `benchmark.max_train_records`, one "
                     f"seeded uniform subsample{' per repetition' if per_rep else ''} shared by every mechanism): "
                     f"{caps}.")
        if split := bench.hparams[0].get("split"):
            lines.append(f"**Split**: {split}." + (
                " Each repetition's auxiliary pool, capped private pool, partitions, hyper-parameter selection and "
                "references (θ*(λ), optimal accuracy) lie within its own training records, its metrics on its own "
                "test records." if per_rep else ""))
    b = cfg.get("benchmark", {})
    if b:
        lines.append(f"**Grid**: ε ∈ {b['eps_grid']}, m ∈ {b['m_grid']}, u ∈ {b['u_grid']}, "
                     f"R = {b['reps']}; gradient mechanisms T = {b['gradient']['T']} steps, ADMM "
                     f"T = {b['admm']['T']} iterations on a {b['admm']['topology']} (both [REC] time knobs).")
    return lines


def _validation_text(e2e: pd.DataFrame) -> str:
    """The validation records' guarantee over the end-to-end rows (``eps_validation_record``), or
    what the rows say instead where it is not finite (public split, tables before issue 58)."""
    if "eps_validation_record" not in e2e or e2e["eps_validation_record"].isna().all():
        return " (these tables do not state the validation records' guarantee: rebuild them)"
    val = e2e["eps_validation_record"] / e2e["epsilon"]
    if not np.isfinite(val).all():
        bad = sorted(e2e.loc[~np.isfinite(val), "validation_records"].dropna().unique())
        return (f"; {int((~np.isfinite(val)).sum())} rows give their validation records no finite ε ("
                + "; ".join(bad) + ")")
    return f" and one validation record (largest ratio {float(val.max()):.6f})"


def _share_text(rows: pd.DataFrame) -> str:
    if rows.empty:
        return "— (no such rows)"
    shares = sorted({round(float(v), 6) for v in rows["eps_accounted"] / rows["epsilon"]})
    return f"{100 * shares[0]:.0f} %" if len(shares) == 1 else f"{100 * shares[0]:.0f}–{100 * shares[-1]:.0f} %"


def selection_lines(bench: Benchmark) -> list[str]:
    """The selection protocols of this build, what they cost, from the hparams records."""
    h = bench.hparams[0]
    out = []
    protocols = h.get("protocols", {"oracle": "non-private selection (the papers' convention)"})
    # a split per repetition (issue 60): one selection per repetition, on its own private pool
    each, per_rep = ("repetition, " if h.get("split_per_repetition") else "",
                     " on each repetition's own private pool" if h.get("split_per_repetition") else "")
    for protocol, label in protocols.items():
        trials = [rec.get("trials_drawn", 0) for r in bench.hparams
                  for rec in r.get("mechanisms", {}).get(protocol, {}).values()]
        text = f"**Selection `{protocol}`**: {label}"
        if protocol == "private":
            t = h["trials"]
            text += (f"; K ~ truncated negative binomial (shape {t['shape']:g}, E[K] = {t['mean']:g}) trials "
                     f"per ({each}mechanism, ε), each a candidate drawn at random, trained at ε_t on the fit part"
                     f"{per_rep} at the reference cell and scored by the clipped validation log-loss (clip {h['score_clip']:g}) plus "
                     f"Gaussian noise; then a fresh final run at {100 * h['final_share']:.0f} % of ε "
                     f"(record-level mechanisms). Party-level mechanisms: the trials per (cell, repetition, ε) on the "
                     f"released partition, scored on the validation records held out of every party plus Gaussian "
                     f"noise for one validation record, the selected trial released. {sum(trials)} trials were "
                     f"drawn in all.")
        elif protocol == "public":
            n_pub = sorted({rec.get("n_public") for r in bench.hparams
                            for rec in r.get("mechanisms", {}).get(protocol, {}).values()})
            text += (f"; the public split holds {', '.join(str(n) for n in n_pub)} records, not trained on privately "
                     "and declared public: they get no DP guarantee (`eps_validation_record` = ∞).")
        else:
            ref = h["reference_cell"]
            text += (f"; best mean validation accuracy{per_rep} at the reference cell m = {ref['m']}, u = {ref['u']}, "
                     f"ε = {ref['epsilon']:g}, frozen for {'its repetition' if per_rep else 'the grid'}. Its privacy cost is **excluded**: the "
                     f"validation records have no finite ε.")
        out.append(text)
    return out


#: every read of private records that no row's ε accounts for (issue 43; spec audit.md A0)
OUTSIDE_ACCOUNTING = (
    "**Train/test split and caps stratified on the label**: which records are private and which are test "
    "records (`split`, spec E1.2), the `max_records` cap and the benchmark's private-record cap depend on the "
    "labels of every record (`mpdp.data.prepare.stratified_split`, `stratified_take`); credit-card's normals "
    "are subsampled by label too.",
    "**Preprocessing fitted on the whole parsed data set**: the one-hot categories and min-max bounds "
    "(`mpdp.data.prepare.Encoding.fit`) and breast-cancer's median imputation read the private records.",
    "**Metrics computed on the private pool**: `train_loss`, `optimal_loss`, `optimal_gap` and `init_loss` are "
    "L_D on the private records (evaluation only, never released by a mechanism).",
    "**The `oracle` rows' selection** reads the validation records without noise (`eps_end_to_end` = "
    "`eps_validation_record` = ∞).",
)


def outside_accounting() -> list[str]:
    """The reads of private records outside every row's accounting, for the report's privacy ledger."""
    return list(OUTSIDE_ACCOUNTING)


def reading_sentence(bench: Benchmark) -> str:
    """How much the end-to-end reading changes the ranking, per data set (from the ranking table)."""
    changes = ranking.winner_changes(bench.ranking)
    head = ranking.headline(bench.ranking)
    reading = str(head["privacy_reading"].iloc[0]) if "privacy_reading" in head and len(head) else "final_run"
    if reading != "end_to_end":
        return ("The ranking below is at the privacy of the final run only (non-private selection, the papers' "
                "convention): the selection's privacy cost is excluded.")
    if changes.empty:
        return ("The ranking below is at **end-to-end privacy**: the hyper-parameter selection is accounted in the "
                "cell's ε" + guarantee_sentence(head) + ". The final-run reading was not computed in this build.")
    per = "; ".join(f"{names.dataset(r.dataset)}: {int(r.changed)} of {int(r.cells)} cells ({int(r.changed_informative)} of "
                    f"{int(r.informative_cells)} informative)" for r in changes.itertuples())
    return ("The ranking below is at **end-to-end privacy**: the hyper-parameter selection is accounted in the "
            "cell's ε (headline)" + guarantee_sentence(head) + ". Against the papers' convention (final run only, non-private selection), the best "
            f"mechanism changes in {per}. The two readings also differ in the selection criterion (validation "
            "log-loss, the primary metric, for the end-to-end reading; validation accuracy, as before, for the "
            "papers' convention), so a change is not due to privacy alone.")


def guarantee_sentence(head: pd.DataFrame) -> str:
    """What every ranked row of the headline reading guarantees, from the ranking's guarantee columns
    (:func:`mpdp.studies.benchmark.ranking.guarantee`): empty for a ranking without them."""
    if "eps_validation_record_max" not in head or head.empty or head["eps_validation_record_max"].isna().all():
        return ""
    party = float((head["eps_end_to_end_max"] / head["epsilon"]).max())
    val = head["eps_validation_record_max"] / head["epsilon"]
    text = (f"; in every cell each ranked mechanism's whole procedure is at most the cell's ε for a party member "
            f"in its privacy unit (largest ratio {party:.6f})")
    if np.isfinite(val).all():
        return text + f" and for one validation record (largest ratio {float(val.max()):.6f})"
    return text + (f", while in {int((~np.isfinite(val)).sum())} of {len(head)} cells some row's validation records "
                   "have no finite ε (declared public)")


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
    head = ranking.headline(bench.ranking)
    metric = str(head["primary_metric"].iloc[0])
    flat = int(head["uninformative"].sum())
    summary = str(head["summary"].iloc[0]) if "summary" in head else "mean over repetitions"
    return (f"Ranked on the pre-declared primary metric, {ranking.PRIMARY_METRICS[metric]} (lower is better; "
            f"{summary}; accuracy secondary). Over {int(top['cells'])} cells, **{_label(bench, top['mechanism'])}** "
            f"is best or not significantly worse than the best in {int(top['best_or_tied'])} cells "
            f"({100 * top['share_best_or_tied']:.0f} %), best outright in {int(top['best'])}. "
            f"{flat} of {len(head)} cells are uninformative (no mechanism significantly better than the trivial "
            "baseline on the primary metric): their winners are ranked on the metric only.")


def edges(bench: Benchmark) -> pd.DataFrame:
    """Tuned knobs on an edge of their candidate grid (:func:`mpdp.tuning.edge_warnings`)."""
    choices = []
    for record in bench.hparams:
        protocol = record.get("selection", "oracle")
        mechs = record.get("mechanisms", {})
        for mech, merged in mechs.get(protocol, mechs).items():
            if not merged.get("candidates"):
                continue
            picks = []
            # a split per repetition (issue 60): one selection per repetition
            for rep, h in enumerate(merged.get("by_repetition", [merged])):
                at = f", repetition {rep}" if "by_repetition" in merged else ""
                if "by_epsilon" not in h:
                    picks.append((at, h["chosen"]))
                elif all("chosen" in v for v in h["by_epsilon"].values()):
                    picks += [(f", ε = {float(e):g}{at}", v["chosen"]) for e, v in h["by_epsilon"].items()]
                else:  # party level (issue 43): chosen per released row, on its own partition
                    picks = _row_choices(bench, record["dataset"], mech, protocol)
                    break
            h = merged
            for where, chosen in picks:
                choices.append((f"{record['dataset']}, {_label(bench, mech)}{where}", h["hparam"], float(chosen),
                                h["candidates"]))
    return tuning.edge_warnings("benchmark", choices)


def _row_choices(bench: Benchmark, dataset: str, mech: str, protocol: str) -> list[tuple[str, float]]:
    """Each ε's distinct chosen values of ``mech`` in the table's rows (``hparam_value``), for a
    mechanism whose selection chooses per released row."""
    t = bench.table
    rows = t[(t["dataset"] == dataset) & (t["mechanism"] == mech) & (t["selection"] == protocol)]
    return [(f", ε = {float(eps):g}", float(v)) for eps, group in rows.groupby("epsilon")
            for v in sorted(group["hparam_value"].dropna().unique())]


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
    r = ranking.headline(bench.ranking)
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
    r = ranking.headline(bench.ranking)
    has = r[r["ranked"].str.split(",").map(lambda order: baseline in order)]
    if has.empty:
        return f"{baseline} is not among the benchmark's mechanisms in this build."
    best = int((has["best_mechanism"] == baseline).sum())
    tied = int(has["tied"].str.split(",").map(lambda t: baseline in t).sum())
    flat = int(has["uninformative"].sum())
    metric = ranking.PRIMARY_METRICS[str(has["primary_metric"].iloc[0])]
    return (f"At equal end-to-end privacy, **{_label(bench, baseline)}** is best on the primary metric ({metric}) in "
            f"{best} of {len(has)} cells and best or not significantly worse than the best in {tied}; in the other "
            f"{len(has) - tied} cells another mechanism is significantly better "
            f"({flat} of the {len(has)} cells are uninformative on the primary metric). Per data set, ε and m:")


def rec_choices(cfg: dict[str, Any]) -> pd.DataFrame:
    """The benchmark's [REC] settings as configured (reconstructions, not from a seed)."""
    b = cfg.get("benchmark", {})
    keys = {"lambda": "common λ", "aux_frac": "public pool fraction (Hamm)", "val_frac": "validation split",
            "max_train_records": "cap on private records", "min_party_size": "smallest party (else skipped)",
            "tune_seeds": "seeds per candidate (oracle, public)"}
    rows = [{"key": f"benchmark.{k}", "meaning": v, "value": b.get(k)} for k, v in keys.items() if k in b]
    for knob, value in b.get("selection", {}).items():
        rows.append({"key": f"benchmark.selection.{knob}", "meaning": "selection protocol", "value": value})
    for fam, knob in (("gradient", "eta_candidates"), ("gradient", "T"), ("output", "lambda_candidates"),
                      ("admm", "penalty_candidates"), ("admm", "T")):
        if knob in b.get(fam, {}):
            rows.append({"key": f"benchmark.{fam}.{knob}", "meaning": f"{fam} family", "value": b[fam][knob]})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# What the papers' tuning rule does, and DVP's plateau (issue 56), from the tables
# ---------------------------------------------------------------------------------------------

#: the selection protocol of the papers' reading (λ by validation accuracy, frozen for every ε)
PAPERS_PROTOCOL = "oracle"


def _fmt_eps(values: Any) -> str:
    return ", ".join(f"{float(e):g}" for e in sorted({float(v) for v in values}))


def chance_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The λ-tuned private rows of ``rows`` with their base-rate log-loss and whether their noise-free
    reference θ*(λ) (``optimal_logloss``) is at or above it (column ``at_chance``): such a row cannot be
    expected to beat the constant predictor at any ε, its noise-free limit does not."""
    tuned = rows[(rows["family"] != ranking.REFERENCE_FAMILY) & (rows["hparam"] == "lambda")]
    tuned = tuned.dropna(subset=["optimal_logloss"])
    base = ranking.base_rate_logloss(tuned["majority_rate"].astype(float).to_numpy())
    return tuned.assign(base_rate=base, at_chance=tuned["optimal_logloss"].to_numpy(float) >= base)


def _chance_text(bench: Benchmark, rows: pd.DataFrame, grid: set[float]) -> str:
    """Per mechanism with rows at chance: its λ, θ*(λ)'s log-loss beside the base rate, rows and cells."""
    parts = []
    for mech, sub in rows.groupby("mechanism", sort=False):
        hit = sub[sub["at_chance"]]
        if hit.empty:
            continue
        cells = sub.groupby(["epsilon", "m", "u"])["at_chance"].all()
        eps = {float(e) for e in hit["epsilon"]}
        where = f"every ε of the grid ({_fmt_eps(grid)})" if eps >= grid else f"ε = {_fmt_eps(eps)}"
        parts.append(f"{_label(bench, str(mech))} (λ = {_fmt_eps(hit['lambda'])}: θ*(λ) test log-loss "
                     f"{hit['optimal_logloss'].median():.4f} ≥ {hit['base_rate'].median():.4f}; its rows' own "
                     f"{hit['test_logloss'].median():.3f}) in {len(hit)} of {len(sub)} rows, at {where}, every "
                     f"repetition in {int(cells.sum())} of {len(cells)} (ε, m, u) cells")
    return "; ".join(parts)


def tuning_rule_sentence(bench: Benchmark) -> str:
    """What the papers' tuning rule (λ by validation accuracy, ``oracle``) does to the λ-tuned
    mechanisms, per data set, from the rows' ``optimal_logloss`` (issue 56); the headline protocol's
    count beside it."""
    every = bench.rows
    head = ("**What the papers' tuning rule does to the λ-tuned mechanisms** (issue 56). The papers' reading "
            "(`oracle`) picks λ by validation accuracy at the reference cell and freezes it for every ε. A row "
            "whose λ's noise-free θ*(λ) already has test log-loss (`optimal_logloss`) at or above the constant "
            "base-rate predictor's (H of the test base rate) cannot be expected to beat chance at any ε.")
    if "optimal_logloss" not in every or every["optimal_logloss"].isna().all():
        return head + " These tables do not carry `optimal_logloss`: rebuild them (`snakemake benchmark`)."
    if "selection" not in every or not (every["selection"] == PAPERS_PROTOCOL).any():
        return head + (" This build has no `oracle` rows (`benchmark.selection.final_run_reading` is off): the "
                       "papers' reading was not run.")
    grid = {float(e) for e in every["epsilon"]}
    per = []
    for ds, rows in chance_rows(every).groupby("dataset", sort=True):
        papers = rows[rows["selection"] == PAPERS_PROTOCOL]
        text = _chance_text(bench, papers, grid) or "no row"
        headline = rows[rows["selection"] != PAPERS_PROTOCOL]
        if not headline.empty:
            protocol = ", ".join(sorted(headline["selection"].unique()))
            text += (f" (headline `{protocol}` selection, on validation log-loss: {int(headline['at_chance'].sum())} "
                     f"of {len(headline)} λ-tuned rows)")
        per.append(f"{names.dataset(str(ds))}: {text}")
    return head + " Measured here — " + "; ".join(per) + "."


def _paired_change(lo: pd.DataFrame, hi: pd.DataFrame) -> tuple[float, float, float]:
    """Mean change of test log-loss from ``lo`` to ``hi`` paired by repetition, and its 95 % t-interval."""
    d = (hi.set_index("rep")["test_logloss"] - lo.set_index("rep")["test_logloss"]).dropna()
    if len(d) < 2:
        return float(d.mean()) if len(d) else float("nan"), float("nan"), float("nan")
    half = float(stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d)))
    return float(d.mean()), float(d.mean()) - half, float(d.mean()) + half


def reference_cell(bench: Benchmark, cfg: dict[str, Any]) -> dict[str, Any] | None:
    """The benchmark's reference cell (``benchmark.reference``, else the selection records'), or None."""
    if ref := cfg.get("benchmark", {}).get("reference"):
        return dict(ref)
    return dict(bench.hparams[0]["reference_cell"]) if bench.hparams and "reference_cell" in bench.hparams[0] else None


def dvp_plateau_sentence(bench: Benchmark, reference: dict[str, Any], mechanism: str = "dvp") -> str:
    """DVP's test log-loss from the smallest to the largest ε of the grid at the reference cell, per
    data set and selection protocol, beside θ*(λ) and the base rate (issue 56, from the rows)."""
    rows = bench.rows
    rows = rows[(rows["mechanism"] == mechanism) & np.isclose(rows["m"].astype(float), float(reference["m"]))
                & np.isclose(rows["u"].astype(float), float(reference["u"]))]
    label = _label(bench, mechanism) if mechanism in set(bench.rows["mechanism"]) else mechanism
    if rows.empty:
        return f"{label} has no rows at the reference cell in this build."
    per = []
    for (ds, protocol), sub in rows.groupby(["dataset", "selection"], sort=True):
        lo_eps, hi_eps = float(sub["epsilon"].min()), float(sub["epsilon"].max())
        lo, hi = sub[sub["epsilon"] == lo_eps], sub[sub["epsilon"] == hi_eps]
        change, c_lo, c_hi = _paired_change(lo, hi)
        knob = _fmt_eps(sub["hparam_value"].dropna())
        frozen = "frozen" if sub["hparam_value"].nunique() == 1 else "chosen per ε"
        alpha = (f", per-release α {lo['alpha_step'].mean():.3g} → {hi['alpha_step'].mean():.3g}"
                 if "alpha_step" in sub and sub["alpha_step"].notna().any() else "")
        star = ("" if "optimal_logloss" not in sub or sub["optimal_logloss"].isna().all()
                else f"; θ*(λ) {sub['optimal_logloss'].mean():.3f}")
        base = float(np.mean(ranking.base_rate_logloss(sub["majority_rate"].astype(float).to_numpy())))
        per.append(f"{names.dataset(str(ds))}, `{protocol}` (penalty {knob}, {frozen}; T = "
                   f"{int(sub['T'].max())}{alpha}): {lo['test_logloss'].mean():.3f} at ε = {lo_eps:g} → "
                   f"{hi['test_logloss'].mean():.3f} at ε = {hi_eps:g} (paired change {change:+.3f}, 95 % CI "
                   f"[{c_lo:+.3f}, {c_hi:+.3f}]; base rate {base:.3f}{star})")
    return (f"**{label}'s plateau** (issue 56): its test log-loss at the reference cell (m = {reference['m']:g}, "
            f"u = {reference['u']:g}) from the smallest to the largest ε of the grid — " + "; ".join(per)
            + ". The tables hold no noise-free run of it at the selected penalty; docs/benchmark.md measures one: "
              "a large penalty, frozen for every ε, bounds what T iterations reach without noise (its optimisation "
              "limit), so a larger budget cannot buy more; a penalty chosen per ε escapes that limit.")
