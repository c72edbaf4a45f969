"""The cross-paper benchmark's registry entry (issue 44; spec E10): config section ``benchmark``,
collect target ``benchmark``; not a paper of its own."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mpdp.claims.declare import Claim
from mpdp.claims.engine import Inputs
from mpdp.report.claims_view import ClaimsTables
from mpdp.report.scaffold import StudySection
from mpdp.studies.benchmark import checks, cost, plan, section
from mpdp.studies.benchmark import claims as bench_claims
from mpdp.studies.benchmark import report as bench_report
from mpdp.studies.benchmark.ranking import ranking_path
from mpdp.studies.benchmark.tables import read_tables
from mpdp.studies.interface import Cards, Study


def tables(cfg: Mapping[str, Any], available: Sequence[str]) -> list[str]:
    """One table per configured, available data set (none without a ``benchmark`` section)."""
    return [plan.table_path(ds) for ds in plan.datasets(cfg, available)] if cfg.get("benchmark") else []


def claims(paths: Sequence[str], cfg: Mapping[str, Any], cards: Cards) -> tuple[tuple[Claim, ...], Inputs]:
    bt = read_tables(paths)
    used = {ds: cards.get(ds) for ds in bt["dataset"].astype(str).unique() if ds in cards.paths}
    return bench_claims.CLAIMS, Inputs(bench_claims.observations(bt), bench_claims.baselines(used, bt))


def report_section(ctx: Mapping[str, Any], cfg: Mapping[str, Any], view: ClaimsTables) -> StudySection:
    return section.build(ctx["studies"].get("benchmark"), cfg, view)


STUDY = Study(id="benchmark", name="cross-paper benchmark", enabled=lambda cfg, available: bool(tables(cfg, available)),
              tables=tables, claims=claims, section=report_section, context=bench_report.context,
              found=(plan.hparams_path("*"), ranking_path(), "reports/figures/xp_*.png"), check=checks.check, warnings=checks.warnings,
              cost=cost.cost, paper=False)
