"""The study registry (issue 44): every study of the replication, one line each.

A line names the module that defines the study's :class:`~mpdp.studies.interface.Study` as
``STUDY`` (``studies/<id>/study.py``). Planning, the claims build, the report, the explore
notebook and the workflow's collect targets loop over :data:`STUDIES`, in this order (the order
of the claims tables' rows and of the report's sections); adding a study is its package plus one
line here (docs/development.md "How to add a study").
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mpdp.errors import ConfigError
from mpdp.studies.interface import Study

#: one line per study: the module defining its STUDY
MODULES: tuple[str, ...] = (
    "mpdp.studies.wddp.study",
    "mpdp.studies.admm.study",
    "mpdp.studies.voting.study",
    "mpdp.studies.ls.study",
    "mpdp.studies.benchmark.study",
)

STUDIES: tuple[Study, ...] = tuple(importlib.import_module(module).STUDY for module in MODULES)


def get(study_id: str) -> Study:
    """The study ``study_id``; a one-line error naming the known ids otherwise."""
    for study in STUDIES:
        if study.id == study_id:
            return study
    raise ConfigError(f"unknown study {study_id!r}; known: {[s.id for s in STUDIES]}")


def running(cfg: Mapping[str, Any], available: Sequence[str]) -> list[Study]:
    """The studies this config runs on the available data sets, in registry order."""
    return [s for s in STUDIES if s.enabled(cfg, available)]


def report_files(cfg: Mapping[str, Any], available: Sequence[str],
                 outputs: Mapping[str, Sequence[str]]) -> dict[str, dict[str, list[str]]]:
    """What the report reads of every running study, in registry order (rule ``report_html``).

    Per study id: ``tables``, the results tables its claims read (:attr:`Study.tables`), and
    ``files``, those tables and every output of its collect target (``outputs[id]``: the
    workflow's ``STUDY_OUTPUTS``, its figures and tables), each once, in order. A study added by
    its package and its registry line reaches the report's inputs with no edit of the rule.
    """
    files = {}
    for study in running(cfg, available):
        tables = [str(p) for p in study.tables(cfg, available)]
        # plain strings: the workflow's paths may be its rules' file objects (not picklable)
        listed = [*tables, *(str(p) for p in outputs.get(study.id, []))]
        files[study.id] = {"tables": tables, "files": list(dict.fromkeys(listed))}
    return files


def found_files(cfg: Mapping[str, Any], available: Sequence[str], root: Path) -> dict[str, dict[str, list[str]]]:
    """What a finished build in ``root`` holds of every running study, in the shape of
    :func:`report_files` (``notebooks/explore.py``, :func:`mpdp.studies.explore.build_context`):
    ``tables``, those of :attr:`Study.tables` that exist; ``files``, them and every existing match
    of :attr:`Study.found`, each once, in order."""
    files = {}
    for study in running(cfg, available):
        tables = [str(root / p) for p in study.tables(cfg, available) if (root / p).is_file()]
        found = [str(p) for pattern in study.found for p in sorted(root.glob(pattern)) if p.is_file()]
        files[study.id] = {"tables": tables, "files": list(dict.fromkeys([*tables, *found]))}
    return files


def report_context(files: Mapping[str, Mapping[str, Sequence[str]]]) -> dict[str, Any]:
    """The report context's ``studies`` (issue 57): per study id of ``files`` (:func:`report_files`
    or :func:`found_files`), its :attr:`Study.context` of its files, paths made absolute. The one
    place both the report (``workflow/scripts/report.py``) and the explore notebook build it."""
    return {sid: get(sid).context({key: [str(Path(p).resolve()) for p in paths] for key, paths in own.items()})
            for sid, own in files.items()}
