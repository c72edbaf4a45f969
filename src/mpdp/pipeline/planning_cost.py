"""The cost check at planning (issue 58; spec E8: a config that cannot finish stops before any job,
with one line naming the key and the fix).

Every study's registry entry estimates its work (:attr:`mpdp.studies.interface.Study.cost`: runs,
steps and draws counted from the config, never listed, times a cost per unit calibrated on the
shipped full config's measured jobs; docstrings of ``mpdp.studies.<id>.cost``), and
:func:`audit_cost` the audit's. :func:`check` runs first in :func:`mpdp.pipeline.planning.check`,
before anything expands a run, so ``snakemake -n`` of a runaway config stops in about a second.
A study whose estimated CPU time exceeds ``limits.cpu_hours``, or whose largest array one job
holds exceeds ``limits.memory_gib``, stops planning with one line: the key that multiplies the
costliest part most (lowering it cuts the work the most), the estimate and the cap. The caps are
the documented override: raise them to run a larger config on purpose (docs/reruns.md
"Cost at planning"). The estimate aims at the order of magnitude: the shipped full config's
largest study comes to about 2 CPU hours and its largest array to 0.15 GiB (docs/reruns.md), the
default caps (50 CPU hours, 16 GiB) leave a wide margin.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping, Sequence
from typing import Any

from mpdp import config as mpdp_config
from mpdp.audit.adapters import GradientCanaryAdapter, L2OutputPerturbationAdapter
from mpdp.audit.dpsgd_adapter import DEFAULTS as DPSGD_DEFAULTS
from mpdp.audit.dpsgd_adapter import DpsgdAdapter, training_draws
from mpdp.audit.registry import ADAPTERS
from mpdp.errors import ConfigError
from mpdp.studies.interface import CostTerm, SizeLike, work_shape
from mpdp.studies.registry import STUDIES

#: flops per CPU second of the shipped trainer (the audit's gradient runs; as the WD-DP study's)
FLOPS_PER_SECOND = 5e10
#: CPU seconds per draw of a many-draws audit (one release and its score; docs/audit.md measured
#: the full config's 46 settings at 73 s, 57 s of them DP-SGD)
SECONDS_PER_DRAW = 2e-7
#: CPU seconds per training step of a DP-SGD audit draw (each draw a whole training:
#: 2 × 10⁵ draws of T = 10 took 57 s, docs/audit.md)
SECONDS_PER_DPSGD_STEP = 3e-5
#: CPU seconds per simulated canary coordinate and step of a canary-draws audit
SECONDS_PER_CANARY_STEP = 1e-8
GIB = 2.0 ** 30


def audit_cost(cfg: Mapping[str, Any], available: Sequence[str], sizes: Mapping[str, SizeLike]) -> list[CostTerm]:
    """One term per audit setting that runs (its data set available or none needed), the
    settings the benchmark's mechanisms declare included: draws per side × 2 × the cost per draw,
    and the two sides' scores (float64; an N-L2 release on a real record: its p coordinates)."""
    audit = cfg["audit"]
    md, one = audit["many_draws"], audit["one_run"]
    settings = [(f"audit.settings.{i}", s) for i, s in enumerate(audit["settings"])]
    if cfg.get("benchmark"):
        from mpdp.studies.benchmark import registry as benchmark_registry

        with contextlib.suppress(ConfigError):  # an unknown mechanism: named by planning_budgets.check_benchmark
            settings += [("audit.many_draws", s) for s in benchmark_registry.audit_settings(cfg)]
    terms = []
    for where, setting in settings:
        adapter = ADAPTERS.get(setting["mechanism"])
        ds = setting.get("dataset")
        if adapter is None or (ds is not None and ds not in available):
            continue
        own = f"{where}.draws" if "draws" in setting and where != "audit.many_draws" else None
        what = f"audit {setting['mechanism']} ({where})"
        if isinstance(adapter, GradientCanaryAdapter):
            n, p = work_shape(ds, sizes.get(ds)) if ds else (0, 1)
            T = int(setting.get("T") or one["T"])
            canaries = int(setting.get("canaries") or one["canaries"])
            if setting.get("method") == "canary_draws":
                draws = int(setting.get("draws") or md["draws"])
                trainings = math.ceil(2 * draws / canaries)
                seconds = (trainings * T * (n + canaries) * p * 4 / FLOPS_PER_SECOND
                           + 2 * draws * T * SECONDS_PER_CANARY_STEP)
                key = own or "audit.many_draws.draws"
                terms.append(CostTerm(what, seconds, {key: draws, f"{where}.T" if setting.get("T") else
                                                      "audit.one_run.T": T}, 2 * draws * 8.0, key))
            else:
                seconds = T * (n + canaries) * p * 4 / FLOPS_PER_SECOND
                terms.append(CostTerm(what, seconds, {"audit.one_run.T" if not setting.get("T") else f"{where}.T": T,
                                                      "audit.one_run.canaries": canaries}))
            continue
        if isinstance(adapter, DpsgdAdapter):
            draws = int(setting.get("draws") or training_draws(md))
            T = int(setting.get("T") or DPSGD_DEFAULTS["T"])
            key = own or "audit.many_draws.training_draws"
            terms.append(CostTerm(what, 2 * draws * T * SECONDS_PER_DPSGD_STEP, {key: draws}, 2 * draws * 8.0, key))
            continue
        draws = int(setting.get("draws") or md["draws"])
        p = 1
        if isinstance(adapter, L2OutputPerturbationAdapter) and ds:
            p = work_shape(ds, sizes.get(ds))[1]
        key = own or "audit.many_draws.draws"
        terms.append(CostTerm(what, 2 * draws * SECONDS_PER_DRAW, {key: draws}, 2 * draws * p * 8.0, key))
    return terms


def estimates(cfg: Mapping[str, Any], available: Sequence[str],
              sizes: Mapping[str, SizeLike]) -> dict[str, list[CostTerm]]:
    """Study name -> its work estimate's terms: every running study's, then the audit's."""
    out = {study.name: terms for study in STUDIES if (terms := study.cost(cfg, available, sizes))}
    if terms := audit_cost(cfg, available, sizes):
        out["the audit"] = terms
    return out


def _value(cfg: Mapping[str, Any], key: str) -> str:
    """The config value of ``key`` as the message shows it (a long list by its length)."""
    try:
        value = mpdp_config.lookup(cfg, key)
    except (KeyError, TypeError):
        return "?"
    text = repr(value)
    return text if len(text) <= 40 else f"{len(value)} entries" if isinstance(value, list | dict) else text[:40]


def check(cfg: Mapping[str, Any], available: Sequence[str], sizes: Mapping[str, SizeLike]) -> None:
    """Raise :class:`ConfigError` for the first study whose estimate exceeds a cap (module docstring)."""
    limits = cfg["limits"]
    cap_hours, cap_gib = float(limits["cpu_hours"]), float(limits["memory_gib"])
    for name, terms in estimates(cfg, available, sizes).items():
        hours = sum(t.seconds for t in terms) / 3600
        if hours > cap_hours:
            top = max(terms, key=lambda t: t.seconds)
            raise ConfigError(
                f"config key '{top.key}': {top.key} = {_value(cfg, top.key)} makes {name} take about {hours:.2g} "
                f"CPU hours (estimated at planning; {top.what}: {top.seconds / 3600:.2g} h), above "
                f"limits.cpu_hours = {cap_hours:g}; lower {top.key}, or raise limits.cpu_hours to run it on purpose")
        top = max(terms, key=lambda t: t.memory)
        if top.memory / GIB > cap_gib:
            key = top.memory_key or top.key
            raise ConfigError(
                f"config key '{key}': {key} = {_value(cfg, key)} makes a job of {name} hold an array of about "
                f"{top.memory / GIB:.2g} GiB ({top.what}, estimated at planning), above limits.memory_gib = "
                f"{cap_gib:g}; lower {key}, or raise limits.memory_gib to run it on purpose")
