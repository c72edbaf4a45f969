"""The voting study's registry entry (issue 44; spec E5): config section ``voting``, collect
target ``voting`` (older name ``hamm``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mpdp.claims.declare import Claim
from mpdp.claims.engine import Inputs
from mpdp.report.claims_view import ClaimsTables
from mpdp.report.scaffold import StudySection
from mpdp.studies.interface import Cards, Study
from mpdp.studies.voting import checks, cost, plan, section
from mpdp.studies.voting import claims as voting_claims
from mpdp.studies.voting import report as voting_report
from mpdp.studies.voting.figures import load_tables


def tables(cfg: Mapping[str, Any], available: Sequence[str]) -> list[str]:
    """One table per available data set of ``voting.datasets`` (and each multiclass one)."""
    return [plan.table_path(t) for t in plan.tables(cfg, available)]


def claims(paths: Sequence[str], cfg: Mapping[str, Any], cards: Cards) -> tuple[tuple[Claim, ...], Inputs]:
    vt = load_tables({Path(p).stem: p for p in paths})  # a table's file is named by its id
    sizes = {t: n for t in vt if (n := cards.n_test(plan.dataset_of(t)[0]))}  # each table's test-set size
    return voting_claims.claims(cfg), Inputs(voting_claims.observations(vt, sizes), voting_claims.baselines(vt))


def report_section(ctx: Mapping[str, Any], cfg: Mapping[str, Any], view: ClaimsTables) -> StudySection:
    return section.build(ctx["studies"].get("voting"), cfg, view)


STUDY = Study(id="voting", name="Hamm–Cao–Belkin voting", enabled=lambda cfg, available: bool(tables(cfg, available)),
              tables=tables, claims=claims, section=report_section, context=voting_report.context,
              found=("reports/figures/hamm_*.png",), check=checks.check, warnings=checks.warnings,
              cost=cost.cost, aliases=("hamm",))
