"""The WD-DP study's registry entry (issue 44; spec E3): what planning, the claims build, the
report and the workflow's collect target ``wddp`` need of it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from mpdp import results
from mpdp.claims.declare import Claim
from mpdp.claims.engine import Inputs
from mpdp.report import provenance
from mpdp.report.claims_view import ClaimsTables, study_readings
from mpdp.report.scaffold import StudySection
from mpdp.studies.interface import Cards, Study
from mpdp.studies.wddp import checks, cost, section
from mpdp.studies.wddp import claims as wddp_claims
from mpdp.studies.wddp.figures import load_tables


def tables(cfg: Mapping[str, Any], available: Sequence[str]) -> list[str]:
    """One results table per available data set."""
    return [f"data/results/wddp/{ds}.parquet" for ds in available]


def claims(paths: Sequence[str], cfg: Mapping[str, Any], cards: Cards) -> tuple[tuple[Claim, ...], Inputs]:
    table = pd.concat([results.read(p) for p in paths], ignore_index=True)
    return wddp_claims.CLAIMS, Inputs(wddp_claims.observations(table, cards.test_sizes()), wddp_claims.baselines(table))


def report_section(ctx: Mapping[str, Any], cfg: Mapping[str, Any], view: ClaimsTables) -> StudySection:
    """The section from the report context's results tables and data cards."""
    readings = study_readings(view, "wddp", names={r: r for r in wddp_claims.READINGS}, figures=wddp_claims.FIGURES)
    return section.build(ctx, load_tables(ctx["results"]), provenance.read_cards(ctx["cards"]), readings, view)


STUDY = Study(
    id="wddp", name="WD-DP (Kang, Liu, Wang)", enabled=lambda cfg, available: bool(available), tables=tables,
    claims=claims, section=report_section, check=checks.check_wddp, warnings=checks.warnings,
    cost=cost.cost,
)
