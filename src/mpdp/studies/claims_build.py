"""Every study's claims through the one engine (issue 33): the logic of rule ``claims_tables``.

Each study's registry entry (:data:`mpdp.studies.registry.STUDIES`) provides its observations,
trivial baselines (and unusable references) and declarations (``mpdp.studies.<study>.claims``);
:func:`build` hands them to :func:`mpdp.claims.engine.evaluate` study by study and returns the contract's two tables
(:mod:`mpdp.claims.tables`). A study whose inputs are absent contributes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from mpdp.claims import engine, tables
from mpdp.claims.declare import Claim
from mpdp.studies import registry
from mpdp.studies.interface import Cards


@dataclass(frozen=True)
class Paths:
    """The input files of the claims rule: each study's results tables (by study id; a study
    absent or with no tables did not run) and the data cards (data set -> card.json)."""

    tables: Mapping[str, Sequence[str]] = field(default_factory=dict)
    cards: Mapping[str, str] = field(default_factory=dict)


def study_inputs(paths: Paths, cfg: Mapping[str, Any]) -> list[tuple[tuple[Claim, ...], engine.Inputs]]:
    """(declarations, engine inputs) per study that ran, in registry order."""
    cards = Cards(dict(paths.cards))
    return [study.claims(paths.tables[study.id], cfg, cards) for study in registry.STUDIES
            if study.claims is not None and paths.tables.get(study.id)]


def build(paths: Paths, cfg: Mapping[str, Any]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(cells, verdicts) of every study that ran, in the contract's columns."""
    cells, verdicts = [], []
    for claims, inputs in study_inputs(paths, cfg):
        c = engine.evaluate(claims, inputs)
        cells.append(c)
        verdicts.append(engine.verdicts(claims, c))
    cell_frame = pd.concat([c for c in cells if not c.empty], ignore_index=True) if any(
        not c.empty for c in cells) else pd.DataFrame()
    verdict_frame = pd.concat(verdicts, ignore_index=True) if verdicts else pd.DataFrame()
    return tables.cells_frame(cell_frame), tables.verdicts_frame(verdict_frame)
