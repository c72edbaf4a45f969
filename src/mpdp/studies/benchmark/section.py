"""The cross-paper benchmark's report section, in the anatomy of :mod:`mpdp.report.scaffold`.

Tables and sentences come from :mod:`mpdp.studies.benchmark.report`; this module arranges them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpdp.report import claims_view
from mpdp.report.scaffold import FigureItem, StudySection, bullets, md, table
from mpdp.studies.benchmark import ranking
from mpdp.studies.benchmark import report as xr

KEY = "benchmark"
TITLE = "All mechanisms on one footing (cross-paper benchmark)"
PAPER = "cross-paper benchmark"
INTRO = (
    "No seed compares its mechanism with the others on equal terms: each uses its own privacy "
    "unit, its own accounting and its own data. Here every mechanism of the four papers runs on the "
    "same data sets, parties and grid of ε × m × u, calibrated so that its whole procedure — the "
    "hyper-parameter selection and everything it releases, not only the final model — is (ε, δ)-DP "
    "for every individual whose data it reads, under the tightest accountant available (spec "
    "experiments.md E10; headline protocol `private`): a member of a party, in the unit of the row's "
    "`privacy_unit` (one record of one party, or one party's whole data; column `eps_end_to_end`), "
    "and one record of the validation split the selection scores (column `eps_validation_record`). "
    "Everything is computed from `data/results/benchmark/<dataset>.parquet` when the report is built."
)

TIES = (" A mechanism is *tied* in a cell when it is not significantly worse than the cell's best "
        "(one-sided paired t-test over repetitions, Holm-corrected within the cell at 0.05). Every "
        "ranked row of the end-to-end reading protects both kinds of individual at the cell's ε: the "
        "party-level mechanisms give a party-level guarantee end to end (selection included), stronger "
        "than the record-level one at the same ε for the parties' records, which is part of the "
        "comparison, and their validation records (held out of every party) the record-level one, "
        "through noised scores; the record-level mechanisms cover their validation records with the "
        "rest of the pool.")


def build(ctx: Mapping[str, Any] | None, cfg: Mapping[str, Any],
          view: claims_view.ClaimsTables = claims_view.EMPTY) -> StudySection:
    """The benchmark section from its entry of the report context (``ctx["studies"]["benchmark"]``) and
    the claims tables (absent: not run)."""
    bench = xr.load(dict(ctx) if ctx else None)
    section = StudySection(KEY, TITLE, PAPER, INTRO)
    if bench is None:
        section.not_run = ("the cross-paper benchmark was not part of this build (no `benchmark:` "
                           "section or no available data set): run `snakemake --cores all benchmark`.")
        return section
    section.claims_tables = {"each paper's comparison at equal accounted privacy": claims_view.study_readings(
        view, KEY).get("", claims_view.EMPTY.verdicts)}
    section.claims_map = view.maps.get(KEY)
    section.summary_note = (xr.reading_sentence(bench) + " " + xr.leader_sentence(bench)
                            + " ([leaderboard](#benchmark-method))")
    section.method = [md("**Privacy of the whole procedure.** " + xr.reading_sentence(bench)),
                      table(ranking.winner_changes(bench.ranking)),
                      md("**The common footing.**"), bullets(xr.footing(bench, dict(cfg))),
                      md("**Leaderboard.** " + xr.leader_sentence(bench) + TIES), table(xr.leaderboard(bench)),
                      md("**Today's standard baseline: DP-SGD with Poisson subsampling.** "
                         + xr.baseline_sentence(bench)),
                      table(xr.baseline_standing(bench)),
                      md(xr.tuning_rule_sentence(bench))]
    if (reference := xr.reference_cell(bench, dict(cfg))) is not None:
        section.method.append(md(xr.dvp_plateau_sentence(bench, reference)))
    section.figures = [FigureItem(name, caption, bench.figures.get(name))
                       for name, caption in xr.captions(bench, dict(cfg)).items()]
    section.claims = [
        md("Each paper's comparison re-checked at equal *accounted* privacy (the ε of the whole transcript "
           "equals the target), declared as a claim of the claims engine (docs/claims.md): the primary "
           "metric, test log-loss, of the mechanism the paper favours against its competitor, as a "
           "log-ratio paired by repetition in every (data set, ε, m, u) cell, summarised by a 20 % trimmed "
           "mean (heavy-tailed repetitions), Holm across the cells. A cell is informative only if both "
           "mechanisms' log-loss is significantly below the constant base-rate predictor's. HOLDS = the "
           "paper's conclusion holds in some cell and fails in none; FAILS / MIXED say where it fails."),
        table(claims_view.significant_cells(view, KEY)),
    ]
    section.ledger = [md("Every mechanism is calibrated to the target (ε, δ) for its whole transcript "
                         "(the common footing above), in the unit of its `privacy_unit` column; the "
                         "calibration is part of the method. **Reads of private records outside the "
                         "accounting** (no row's ε covers them):"),
                      bullets(xr.outside_accounting())]
    section.deviations = [md("**[REC] choices of the benchmark** (reconstructions, not from a seed)."),
                          table(xr.rec_choices(dict(cfg)))]
    section.tuning_edges = xr.edges(bench)
    return section
