"""Every study's claims through the one engine (issue 33): the logic of rule ``claims_tables``.

Each study module provides its observations, trivial baselines (and unusable references) and
declarations (``mpdp.studies.<study>.claims``); :func:`build` hands them to
:func:`mpdp.claims.engine.evaluate` study by study and returns the contract's two tables
(:mod:`mpdp.claims.tables`). A study whose inputs are absent contributes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from mpdp import io, results
from mpdp.claims import engine, tables
from mpdp.claims.declare import Claim


@dataclass(frozen=True)
class Paths:
    """The input files of the claims rule (lists may be empty: the study did not run)."""

    wddp: Sequence[str] = ()
    admm: Sequence[str] = ()
    voting: Mapping[str, str] = field(default_factory=dict)  # table id -> path
    ls: Sequence[str] = ()
    benchmark: Sequence[str] = ()
    cards: Mapping[str, str] = field(default_factory=dict)  # data set -> card.json


def _card(paths: Paths, ds: str) -> dict[str, Any]:
    return io.read_json(paths.cards[ds], "data card") if ds in paths.cards else {}


def _n_test(paths: Paths, ds: str) -> int | None:
    """A data set's test-set size from its card (the resolution of its rates), None when unknown."""
    n = _card(paths, ds).get("n_test")
    return int(n) if n else None


def study_inputs(paths: Paths, cfg: Mapping[str, Any]) -> list[tuple[tuple[Claim, ...], engine.Inputs]]:
    """(declarations, engine inputs) per study that ran."""
    from mpdp.studies.admm import claims as admm
    from mpdp.studies.benchmark import claims as bench
    from mpdp.studies.ls import claims as ls
    from mpdp.studies.voting import claims as voting
    from mpdp.studies.wddp import claims as wddp

    out = []
    if paths.wddp:
        table = pd.concat([results.read(p) for p in paths.wddp], ignore_index=True)
        sizes = {ds: n for ds in paths.cards if (n := _n_test(paths, ds))}
        out.append((wddp.CLAIMS, engine.Inputs(wddp.observations(table, sizes), wddp.baselines(table))))
    if paths.admm:
        from mpdp.studies.admm.train import read_table

        table = read_table(paths.admm[0])
        c = dict(cfg)
        out.append((admm.claims(c), engine.Inputs(admm.observations(table, c),
                                                  admm.baselines(c, _card(paths, c["admm"]["dataset"])),
                                                  admm.unusable(table, c))))
    if paths.voting:
        from mpdp.studies.voting.figures import load_tables
        from mpdp.studies.voting.plan import dataset_of

        vt = load_tables(paths.voting)
        sizes = {t: n for t in vt if (n := _n_test(paths, dataset_of(t)[0]))}
        out.append((voting.claims(cfg), engine.Inputs(voting.observations(vt, sizes), voting.baselines(vt))))
    if paths.ls:
        lt = {Path(p).stem: results.read_parquet(p, "least-squares table") for p in paths.ls}
        out.append((ls.CLAIMS, engine.Inputs(ls.observations(lt), ls.baselines(lt))))
    if paths.benchmark:
        from mpdp.studies.benchmark.tables import read_tables

        bt = read_tables(paths.benchmark)
        cards = {ds: _card(paths, ds) for ds in bt["dataset"].astype(str).unique() if ds in paths.cards}
        out.append((bench.CLAIMS, engine.Inputs(bench.observations(bt), bench.baselines(cards))))
    return out


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
