"""The Zhang–Zhu ADMM study's registry entry (issue 44; spec E4): config section ``admm``,
collect target ``admm`` (older name ``zz``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mpdp.claims.declare import Claim
from mpdp.claims.engine import Inputs
from mpdp.report.claims_view import ClaimsTables
from mpdp.report.scaffold import StudySection
from mpdp.studies.admm import checks, cost, section
from mpdp.studies.admm import claims as admm_claims
from mpdp.studies.admm import report as admm_report
from mpdp.studies.admm.train import read_table
from mpdp.studies.interface import Cards, Study


def enabled(cfg: Mapping[str, Any], available: Sequence[str]) -> bool:
    """Whether the config has an ``admm`` section whose data set is available."""
    return bool(cfg.get("admm")) and cfg["admm"]["dataset"] in available


def tables(cfg: Mapping[str, Any], available: Sequence[str]) -> list[str]:
    """The one table of every topology's runs (none when the study does not run)."""
    return [f"data/results/admm/{cfg['admm']['dataset']}.parquet"] if enabled(cfg, available) else []


def claims(paths: Sequence[str], cfg: Mapping[str, Any], cards: Cards) -> tuple[tuple[Claim, ...], Inputs]:
    table = read_table(paths[0])
    c = dict(cfg)
    dataset = c["admm"]["dataset"]
    return admm_claims.claims(c), Inputs(admm_claims.observations(table, c, cards.n_test(dataset)),
                                         admm_claims.baselines(c, cards.get(dataset), table),
                                         admm_claims.unusable(table, c))


def report_section(ctx: Mapping[str, Any], cfg: Mapping[str, Any], view: ClaimsTables) -> StudySection:
    return section.build(ctx["studies"].get("admm"), cfg, view)


STUDY = Study(id="admm", name="Zhang–Zhu ADMM", enabled=enabled, tables=tables, claims=claims,
              section=report_section, context=admm_report.context,
              found=("reports/figures/zz_*.png", "reports/figures/zz_table.csv"), check=checks.check, cost=cost.cost,
              aliases=("zz",))
