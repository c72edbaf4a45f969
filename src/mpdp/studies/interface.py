"""What a study is to the pipeline (issue 44): one :class:`Study` object per ``studies/<id>/``
package (its ``study.py``), listed once in :data:`mpdp.studies.registry.STUDIES`.

Planning (:func:`mpdp.pipeline.planning.check`), the claims build
(:mod:`mpdp.studies.claims_build`), the report (``notebooks/report.py``), the explore notebook
and the workflow's collect targets loop over the registry; nothing else names the studies. The
study's ``id`` is used everywhere: its config section, its collect target (``snakemake <id>``),
its results folder ``data/results/<id>/``, its claims' ``study`` column and its report anchor
(docs/development.md "How to add a study").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mpdp.claims.declare import Claim
from mpdp.claims.engine import Inputs
from mpdp.data import registry as data_registry
from mpdp.io import read_json
from mpdp.report.claims_view import ClaimsTables
from mpdp.report.scaffold import StudySection


class SizeLike(Protocol):
    """What a planning check needs of a data set's size (:class:`mpdp.pipeline.planning.Size`):
    exact from its data card, or an upper bound from the config's record caps."""

    n_total: int
    n_train: int
    exact: bool

    def describe(self) -> str: ...


#: ``check(cfg, available, sizes)``: raise :class:`~mpdp.errors.ConfigError` for a setting the
#: study cannot run (spec E8: one line naming the key and the fix)
Check = Callable[[Mapping[str, Any], Sequence[str], Mapping[str, SizeLike]], None]
#: ``warnings(cfg, available, sizes)``: choices the data or the config force (one sentence each)
Warnings = Callable[[Mapping[str, Any], Sequence[str], Mapping[str, SizeLike]], list[str]]
#: ``cost(cfg, available, sizes)``: the study's work estimate, one :class:`CostTerm` per part
#: (checked at planning before anything is expanded: it must not enumerate runs, only count them)
Cost = Callable[[Mapping[str, Any], Sequence[str], Mapping[str, SizeLike]], list["CostTerm"]]
#: ``tables(cfg, available)``: the study's results tables (workflow paths) that its claims read
Tables = Callable[[Mapping[str, Any], Sequence[str]], list[str]]
#: ``claims(tables, cfg, cards)``: (declarations, engine inputs) from the study's tables
ClaimsInputs = Callable[[Sequence[str], Mapping[str, Any], "Cards"], tuple[tuple[Claim, ...], Inputs]]
#: ``section(ctx, cfg, claims)``: the study's report section from the report context (its own
#: entry is ``ctx["studies"].get(<id>)``, absent when it did not run)
Section = Callable[[Mapping[str, Any], Mapping[str, Any], ClaimsTables], StudySection]
#: ``context(files)``: the study's entry ``ctx["studies"][<id>]`` of the report context from its
#: files (``{"tables": [...], "files": [...]}``, absolute paths; :func:`mpdp.studies.registry.report_files`)
Context = Callable[[Mapping[str, list[str]]], Any]


@dataclass(frozen=True)
class CostTerm:
    """One part of a study's work estimate at planning (issue 58; :mod:`mpdp.pipeline.planning_cost`
    checks the sum against ``limits.cpu_hours`` and the largest ``memory`` against
    ``limits.memory_gib``). An estimate, from the counts the study's jobs really run (runs, steps,
    draws) times a cost per unit documented where it is set; the aim is the order of magnitude.

    ``factors`` maps the config keys that multiply this part to their values; the largest is the
    key an error names (:attr:`key`), ``memory_key`` the key named for ``memory``.
    """

    what: str
    seconds: float
    factors: Mapping[str, float]
    memory: float = 0.0
    memory_key: str | None = None

    @property
    def key(self) -> str:
        """The factor with the largest value (lowering it cuts this part the most)."""
        return max(self.factors, key=lambda k: float(self.factors[k]))


#: nominal number of features of a data set without a paper shape (an added data set)
DEFAULT_FEATURES = 100


def work_shape(dataset: str, size: SizeLike | None) -> tuple[int, int]:
    """(training records, features) of ``dataset`` for a work estimate: the records of ``size``
    (exact from the data card, else the config's bound) or, without one, the paper's training
    size (:attr:`mpdp.data.info.DatasetInfo.paper_shape`); the paper's feature count."""
    paper = data_registry.DATASETS[dataset].paper_shape if dataset in data_registry.DATASETS else None
    n_paper, p = paper if paper is not None else (None, DEFAULT_FEATURES)
    if size is not None:
        n = size.n_train if size.exact or n_paper is None else min(size.n_train, n_paper)
    else:
        n = n_paper if n_paper is not None else 0
    return int(n), int(p)


def _no_check(cfg: Mapping[str, Any], available: Sequence[str], sizes: Mapping[str, SizeLike]) -> None:
    return None


def _no_warnings(cfg: Mapping[str, Any], available: Sequence[str], sizes: Mapping[str, SizeLike]) -> list[str]:
    return []


def _no_cost(cfg: Mapping[str, Any], available: Sequence[str], sizes: Mapping[str, SizeLike]) -> list[CostTerm]:
    return []


def files_as_context(files: Mapping[str, list[str]]) -> dict[str, list[str]]:
    """The default :attr:`Study.context`: the study's files as they are."""
    return {key: list(paths) for key, paths in files.items()}


def unavailable_warning(key: str, listed: Sequence[str], available: Sequence[str], consequence: str) -> list[str]:
    """A study's data-set list none of whose entries is available (one sentence, or none)."""
    if listed and not [d for d in listed if d in available]:
        return [f"{key}: none of {list(listed)} is an available data set (available: {list(available)}; "
                f"config key 'datasets', or their raw files are missing), so {consequence}; "
                "list available data sets"]
    return []


@dataclass(frozen=True)
class Cards:
    """The data cards of the prepared data sets: data set -> card.json path, read on demand."""

    paths: Mapping[str, str] = field(default_factory=dict)

    def get(self, dataset: str) -> dict[str, Any]:
        """The card of ``dataset`` ({} when it was not prepared)."""
        return read_json(Path(self.paths[dataset])) if dataset in self.paths else {}

    def n_test(self, dataset: str) -> int | None:
        """The test-set size of ``dataset`` from its card (the resolution of its rates, issue 42),
        None when unknown."""
        n = self.get(dataset).get("n_test")
        return int(n) if n else None

    def test_sizes(self) -> dict[str, int]:
        """Every known test-set size: data set -> n_test."""
        return {ds: n for ds in self.paths if (n := self.n_test(ds))}


@dataclass(frozen=True)
class Study:
    """One study of the replication: how the pipeline plans, claims and reports it."""

    #: the one id: config section, collect target, data/results/<id>/, claims ``study``, anchor
    id: str
    #: its name in the report and the logs
    name: str
    #: whether the config and the available data sets run it
    enabled: Callable[[Mapping[str, Any], Sequence[str]], bool]
    #: the results tables its claims read (empty when it does not run)
    tables: Tables
    #: its claims through the engine (None: a study without claims)
    claims: ClaimsInputs | None
    #: its report section
    section: Section
    #: its entry of the report context, ``ctx["studies"][id]``, from its files (issue 57;
    #: :func:`mpdp.studies.registry.report_context`)
    context: Context = files_as_context
    #: glob patterns, relative to a build folder, of its files beyond its tables: how a finished
    #: build's files are found without the workflow (:func:`mpdp.studies.registry.found_files`)
    found: tuple[str, ...] = ()
    #: config checks at planning, every multiverse universe included
    check: Check = _no_check
    #: planning warnings (the report lists them too)
    warnings: Warnings = _no_warnings
    #: its work estimate at planning (issue 58; :mod:`mpdp.pipeline.planning_cost`)
    cost: Cost = _no_cost
    #: older names of its collect target, kept working (``zz``, ``hamm``)
    aliases: tuple[str, ...] = ()
    #: whether it replicates a paper (the report's verdict summary lists papers, then the rest)
    paper: bool = True
