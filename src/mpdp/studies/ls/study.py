"""The least-squares write-up study's registry entry (issue 44; spec M14, M15, B8, E6): config
section ``ls``, collect target ``ls``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mpdp import results
from mpdp.claims.declare import Claim
from mpdp.claims.engine import Inputs
from mpdp.report.claims_view import ClaimsTables
from mpdp.report.scaffold import StudySection
from mpdp.studies.interface import Cards, SizeLike, Study
from mpdp.studies.ls import EXPERIMENTS, cost, plan, section
from mpdp.studies.ls import claims as ls_claims
from mpdp.studies.ls import report as ls_report


def enabled(cfg: Mapping[str, Any], available: Sequence[str]) -> bool:
    """Whether the config has an ``ls`` section (the study makes its own data)."""
    return plan.enabled(dict(cfg))


def tables(cfg: Mapping[str, Any], available: Sequence[str]) -> list[str]:
    """One table per experiment (none when the study is off)."""
    return [plan.table(e) for e in EXPERIMENTS] if enabled(cfg, available) else []


def claims(paths: Sequence[str], cfg: Mapping[str, Any], cards: Cards) -> tuple[tuple[Claim, ...], Inputs]:
    lt = {Path(p).stem: results.read_parquet(p, "least-squares table") for p in paths}
    return ls_claims.CLAIMS, Inputs(ls_claims.observations(lt), ls_claims.baselines(lt))


def report_section(ctx: Mapping[str, Any], cfg: Mapping[str, Any], view: ClaimsTables) -> StudySection:
    return section.build(ctx["studies"].get("ls"), cfg, view)


def check(cfg: Mapping[str, Any], available: Sequence[str], sizes: Mapping[str, SizeLike]) -> None:
    """The study's config cross-checks (:func:`mpdp.studies.ls.plan.check_config`)."""
    plan.check_config(dict(cfg))


STUDY = Study(id="ls", name="least-squares write-up", enabled=enabled, tables=tables, claims=claims,
              section=report_section, context=ls_report.context,
              found=(plan.tail_table(), *plan.derived_tables().values(), *(plan.figure(e) for e in EXPERIMENTS)),
              check=check, cost=cost.cost)
