"""The Zhang–Zhu ADMM study's report section, in the anatomy of :mod:`mpdp.report.scaffold`.

Tables and sentences come from :mod:`mpdp.studies.admm.report`; this module arranges them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpdp.data import splits
from mpdp.report import claims_view
from mpdp.report.scaffold import FigureItem, StudySection, bullets, md, table
from mpdp.studies.admm import claims as zz_claims
from mpdp.studies.admm import report as zz

KEY = "admm"
TITLE = "ADMM with dual and primal variable perturbation (DVP, PVP; Zhang and Zhu)"
PAPER = "Zhang–Zhu ADMM"
INTRO = ("The second replicated paper (seed S-001; spec experiments.md E4, mechanisms.md M7–M10, "
         "bounds.md B7, inconsistency I-11). Numbers are computed from "
         "`data/results/admm/<dataset>.parquet` when the report is built.")


def build(ctx: Mapping[str, Any] | None, cfg: Mapping[str, Any],
          view: claims_view.ClaimsTables = claims_view.EMPTY) -> StudySection:
    """The ADMM section from its entry of the report context (``ctx["studies"]["admm"]``,
    :func:`mpdp.studies.admm.report.context`) and the claims tables (not run: a section saying so)."""
    loaded = zz.load(ctx)
    section = StudySection(KEY, TITLE, PAPER, INTRO)
    if loaded is None:
        section.not_run = ("the ADMM study did not run in this build (no `admm` section in the "
                           "config, or Adult not available).")
        return section
    zcfg, frame = cfg["admm"], loaded["frame"]
    section.results = {KEY: frame}
    i11 = zz.I11.format(delta=zcfg["delta"])
    section.claims_tables = claims_view.study_readings(view, KEY, figures=zz_claims.FIGURES)
    section.claims_map = view.maps.get(KEY)
    section.method = [md(zz.METHOD), md(i11), md("**What the replication shows.**"),
                      bullets(zz.findings(frame, zcfg["main_topology"]))]
    section.figures = [FigureItem(name, caption, loaded["figures"].get(name), after=(md(f"*{i11}*"),))
                       for name, caption in zz.CAPTIONS.items()]
    section.figures += [md("**Fitted trade-off model and α*** (zz_table, spec B7)."),
                        table(zz.fit_table(loaded.get("fit_table")))]
    section.claims = [
        md("Each claim is scored by the claims engine (docs/claims.md) per α, on every topology the study ran "
           "(cells `<topology>: α=…`; Z1 and Z7 along log α): never averaged over α, losses as log-ratios, a "
           "cell informative only if the mechanism the claim says is better has a final loss below the constant "
           "base-rate predictor's (its MER below the majority error for Z3, Z3-iter, Z7) by the practical margin, "
           "a quarter of the way to the converged non-private reference; a cell is for only beyond the claim's "
           "own margin ±δ. Z3 reads the final classifier, Z3-iter the mean over the own iterations; Z6 is the "
           "log10 variance ratio of ln L, DVP / PVP, with a bootstrap interval; Z5 is net of non-private ADMM, "
           "and uninformative only where that reference's gap to L(θ*) could move Z5's statistic by more than a "
           "quarter of its margin. The seed contradicts itself on which algorithm is better (I-11): measured "
           "here, not assumed."),
        md("**Equal footing.** " + (zz_claims.footing_note(frame, dict(cfg)) or "not determinable from the table.")),
        table(claims_view.significant_cells(view, KEY)),
        md("Spread across repetitions of the final loss (compare claim Z6):"),
        table(zz.spread(frame, zcfg["main_topology"])),
    ]
    section.ledger = [md("Per node: the claimed α, its composition, and the ε the releases really give (I-20)."),
                      md(i11), table(zz.ledger(frame))]
    where = (" in every repetition on its own training records (each repetition its own split, "
             "split.per_repetition)" if splits.per_repetition(cfg) else " on the one fixed split's training records")
    section.deviations = [md(f"**Tuned settings** (ρ = {zcfg['rho']:g} fixed [REC], not tuned; η by the final "
                             f"training loss at the one α = {zcfg['tune_alpha']:g}{where}, over {zcfg['tune_draws']} "
                             "independent tuning draws on noise streams disjoint from every evaluated repetition; "
                             "`admm_ref`: non-private ADMM at the private mechanisms' (ρ, η), the reference of "
                             "statistics net of convergence)."),
                          table(zz.settings(frame))]
    for why in (zz.footing_sentence(frame), zz.edge_note(frame, dict(cfg))):
        if why:
            section.deviations.append(md(why))
    section.deviations += [md("Non-private ADMM against the centralised optimum (same ρ):"),
                           table(zz.nonprivate_gap(frame)), table(zz.rec_choices(dict(cfg)))]
    section.tuning_edges = zz.edges(frame, dict(cfg))
    return section
