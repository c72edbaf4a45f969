"""The benchmark's mechanism registry: names in ``benchmark.mechanisms`` → mechanisms (spec E10).

An entry of ``benchmark.mechanisms`` is

- the id of a registered mechanism (the papers' thirteen, :mod:`mpdp.studies.benchmark.builtin`;
  DP-SGD, :mod:`mpdp.studies.benchmark.dpsgd`; objective perturbation,
  :mod:`mpdp.studies.benchmark.objective`; or one added by :func:`register`);
- a dotted module name (``mypackage.my_mechanism``) or a path ending in ``.py`` (relative to the
  working directory) of a module that defines ``MECHANISM``, a
  :class:`~mpdp.studies.benchmark.interface.Mechanism`; it is imported and registered.

Everything downstream (job groups, tables, figures, the ranking, the report) follows from the
configured list; see docs/extending.md.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mpdp.errors import ConfigError
from mpdp.studies.benchmark import dpsgd, objective
from mpdp.studies.benchmark.builtin import MECHANISMS as PAPERS
from mpdp.studies.benchmark.interface import Mechanism

#: the mechanisms known by id: the four papers', today's standard baseline DP-SGD, and the standard
#: one-shot baseline, objective perturbation (central and per party, issue 56)
BUILTIN: tuple[Mechanism, ...] = (*PAPERS, dpsgd.MECHANISM, objective.MECHANISM, objective.PARTY_MECHANISM)
_REGISTRY: dict[str, Mechanism] = {m.id: m for m in BUILTIN}
#: config entries already resolved (module name or path → id)
_ENTRIES: dict[str, str] = {}
#: config entries that are modules → the file imported
_FILES: dict[str, Path] = {}


def register(mechanism: Mechanism) -> Mechanism:
    """Add ``mechanism`` under its id (re-registering an equal object is a no-op)."""
    if not isinstance(mechanism, Mechanism):
        raise ConfigError(f"benchmark mechanism {mechanism!r} is not a mpdp.studies.benchmark.interface.Mechanism")
    known = _REGISTRY.get(mechanism.id)
    if known is not None and known != mechanism:
        raise ConfigError(f"benchmark mechanism id {mechanism.id!r} is already registered by another "
                          "mechanism; give yours another id")
    _REGISTRY[mechanism.id] = mechanism
    return mechanism


def _import(entry: str) -> Any:
    if entry.endswith(".py"):
        path = Path(entry).resolve()
        if not path.is_file():
            raise ConfigError(f"benchmark.mechanisms: module file {entry!r} does not exist (relative to "
                              f"{Path.cwd()}); fix the path or name a registered id")
        name = f"mpdp_benchmark_ext_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        return module
    try:
        return importlib.import_module(entry)
    except ImportError as exc:
        raise ConfigError(f"benchmark.mechanisms: cannot import module {entry!r} ({exc}); known ids: "
                          f"{sorted(_REGISTRY)}") from None


def resolve(entry: str) -> Mechanism:
    """The mechanism a ``benchmark.mechanisms`` entry names (module docstring)."""
    if entry in _REGISTRY:
        return _REGISTRY[entry]
    if entry in _ENTRIES:
        return _REGISTRY[_ENTRIES[entry]]
    if not (entry.endswith(".py") or "." in entry):
        raise ConfigError(f"benchmark.mechanisms: unknown mechanism {entry!r}; known: {sorted(_REGISTRY)} "
                          "(or a module that defines MECHANISM)")
    module = _import(entry)
    mechanism = getattr(module, "MECHANISM", None)
    if mechanism is None:
        raise ConfigError(f"benchmark.mechanisms: module {entry!r} defines no MECHANISM")
    register(mechanism)
    _ENTRIES[entry] = mechanism.id
    if getattr(module, "__file__", None):
        _FILES[entry] = Path(module.__file__).resolve()
    return mechanism


def module_files(cfg: Mapping[str, Any]) -> tuple[Path, ...]:
    """The files of the modules ``benchmark.mechanisms`` names (imported here by path or name,
    which no import statement shows): the workflow adds them to the code hash of every rule whose
    job can import this registry, so an edit of a plug-in reruns them (mpdp.pipeline.code_hash,
    docs/extending.md)."""
    entries = [str(e) for e in (cfg.get("benchmark") or {}).get("mechanisms", [])]
    for entry in entries:
        resolve(entry)
    return tuple(sorted({_FILES[e] for e in entries if e in _FILES}))


def get(mechanism_id: str) -> Mechanism:
    """A registered mechanism by id (after :func:`configured` resolved the config's modules)."""
    try:
        return _REGISTRY[mechanism_id]
    except KeyError:
        raise ConfigError(f"benchmark: unknown mechanism id {mechanism_id!r}; known: {sorted(_REGISTRY)}") from None


def configured(cfg: Mapping[str, Any]) -> list[Mechanism]:
    """The mechanisms of ``benchmark.mechanisms``, in config order (= legend order)."""
    mechanisms = [resolve(str(e)) for e in cfg["benchmark"]["mechanisms"]]
    ids = [m.id for m in mechanisms]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ConfigError(f"benchmark.mechanisms names {dup} twice; list each mechanism once")
    return mechanisms


def job_groups(cfg: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """Job group → the configured mechanism ids it trains (one Snakemake job per data set each)."""
    groups: dict[str, list[str]] = {}
    for mech in configured(cfg):
        groups.setdefault(mech.job_group, []).append(mech.id)
    return {g: tuple(ids) for g, ids in groups.items()}


def audit_adapters(cfg: Mapping[str, Any]) -> dict[str, str]:
    """Configured mechanism id → the audit adapter id that attacks it (unaudited ones left out)."""
    return {m.id: m.audit for m in configured(cfg) if m.audit}


def audit_settings(cfg: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The audit settings the configured mechanisms declare for their own adapters."""
    return [setting for mech in configured(cfg) for setting in mech.audit_settings(cfg)]
