"""What a data set is to the pipeline (spec experiments.md E1, E1.1): its pinned raw files,
label convention, provenance, and how it is parsed and prepared. Every data set is one
:class:`DatasetInfo` in :data:`mpdp.data.registry.DATASETS`; nothing outside :mod:`mpdp.data`
names a data set (docs/development.md "How to add a data set").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Source:
    """One place to download a raw file from.

    ``unpack`` lists the steps that turn the downloaded bytes into the raw file, applied in
    order: ``"gzip"`` decompresses, ``"zip:<member>"`` takes that member of a zip archive.
    """

    url: str
    unpack: tuple[str, ...] = ()


@dataclass(frozen=True)
class RawFile:
    """A raw data file as the pipeline stores it (uncompressed) in ``data/raw/<id>/``."""

    name: str
    sha256: str
    size: int
    mirror_path: str
    sources: tuple[Source, ...]


@dataclass(frozen=True)
class DatasetInfo:
    """A data set of spec E1: its raw files, label convention and provenance."""

    id: str
    display_name: str
    files: tuple[RawFile, ...]
    positive_label: str
    homepage: str
    license: str
    doi: str
    citation: str
    #: config keys (dotted) that only this data set's preparation reads (its rerun params,
    #: mpdp.pipeline.rule_keys), e.g. ``preprocess.bank_keep_duration``
    preprocess_keys: tuple[str, ...] = ()
    #: its parser yields a multiclass label too (spec E5; prepared into the class arrays that
    #: the voting study's multiclass table reads)
    multiclass: bool = False
    #: training-split size and features (n, p) after preparation of the paper's data, for
    #: scheduling before a data card exists (spec E1.2); None: unknown (scheduled last)
    paper_shape: tuple[int, int] | None = None
    #: a config key (dotted) that caps its records besides ``max_records`` (KDDCup99's sample)
    record_cap_key: str | None = None
    #: its parser, for a data set added by its own module: (raw file name -> path, the config's
    #: ``preprocess`` section) -> :class:`mpdp.data.parsers.Parsed`; None: the built-in parsers
    parse: Callable[[Mapping[str, Path], Mapping[str, Any]], Any] | None = None

    def file(self, name: str) -> RawFile:
        """The raw file called ``name``."""
        for raw in self.files:
            if raw.name == name:
                return raw
        raise KeyError(f"{self.id} has no raw file {name!r}")
