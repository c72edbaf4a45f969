"""The audit registry: mechanism id → adapter (spec audit.md; experiments.md E10).

Every audit setting names a ``mechanism``; :func:`get` returns its adapter. To audit a new
family, write one
class with the :class:`~mpdp.audit.adapters.Adapter` interface — ``id``, ``method``
(``many_draws`` for one cheap release whose exact pre-noise output can be computed once,
``one_run`` for iterative mechanisms that can carry canaries), ``privacy_unit`` (``party``
for M6b/M11/M12: their pairs must be party-level, spec A6.11) and ``run(setting, ctx)``
returning one row of :data:`mpdp.audit.table.COLUMNS` — reusing the mechanism's own
calibration and samplers, then call :func:`register` in this module (or in the family's
package) and add settings with that ``mechanism`` to ``audit.settings`` in the config.
E.g. the voting family: the A3 M11/M12 pairs, solved once, noise redrawn — the
:class:`~mpdp.audit.adapters.L2OutputPerturbationAdapter` pattern with ``privacy_unit =
"party"``. The config schema accepts any registered id (checked when the audit runs).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpdp.audit import dpsgd_adapter, objective_adapter
from mpdp.audit.adapters import Adapter, GradientCanaryAdapter, L2OutputPerturbationAdapter
from mpdp.audit.pvp_history import PVPHistoryAdapter
from mpdp.audit.release_adapters import (
    DVPFirstIterationAdapter,
    OutputMechanismAdapter,
    PVPNoiseAdapter,
)
from mpdp.audit.selection_adapter import SelectionProcedureAdapter
from mpdp.errors import ConfigError
from mpdp.studies.benchmark import registry as benchmark_registry
from mpdp.studies.benchmark.calibration import GRADIENT as BENCHMARK_GRADIENT

#: every auditable mechanism by id
ADAPTERS: dict[str, Adapter] = {}


def register(adapter: Adapter) -> Adapter:
    """Add ``adapter`` under its id (an id may be registered once)."""
    if adapter.id in ADAPTERS:
        raise ValueError(f"audit adapter {adapter.id!r} is already registered")
    ADAPTERS[adapter.id] = adapter
    return adapter


def get(mechanism: str) -> Adapter:
    """The adapter of ``mechanism``; a one-line error naming the known ids otherwise."""
    try:
        return ADAPTERS[mechanism]
    except KeyError:
        raise ConfigError(
            f"config key 'audit.settings': no audit adapter for mechanism {mechanism!r}; "
            f"known: {sorted(ADAPTERS)}"
        ) from None


def register_benchmark(cfg: Mapping[str, Any]) -> list[str]:
    """Register the adapters of their own that the configured benchmark mechanisms bring
    (:meth:`mpdp.studies.benchmark.interface.Mechanism.audit_adapter`; the benchmark never
    imports the audit: the audit reads the benchmark's registry, one way).

    Returns the ids registered now (those already there are left as they are).
    """
    added = []
    for mech in benchmark_registry.configured(cfg):
        adapter = mech.audit_adapter()
        if adapter is not None and adapter.id not in ADAPTERS:
            register(adapter)
            added.append(adapter.id)
    return added


for _adapter in (
    GradientCanaryAdapter("wyx", "wyx", "central"),
    GradientCanaryAdapter("wddp_per_round", "wddp", "per_round"),
    GradientCanaryAdapter("wddp_literal", "wddp", "local_then_aggregate"),
    GradientCanaryAdapter("jayaraman_per_round", "jayaraman", "per_round"),
    GradientCanaryAdapter("jayaraman_literal", "jayaraman", "local_then_aggregate"),
    # the cross-paper benchmark's gradient runs (spec E10): its RunSpec and ledger
    *(GradientCanaryAdapter(f"xp_{mech}", mech, mode, source="benchmark")
      for mech, (_, mode, _) in BENCHMARK_GRADIENT.items()),
    L2OutputPerturbationAdapter(),
    *(OutputMechanismAdapter(mech) for mech in ("jayaraman_output", "pathak", "param_avg", "hamm_vote", "hamm_soft")),
    PVPNoiseAdapter(),
    PVPHistoryAdapter(),
    DVPFirstIterationAdapter(),
    dpsgd_adapter.ADAPTER,  # multi-party DP-SGD (the benchmark's baseline, mpdp.mechanisms.dpsgd)
    *objective_adapter.ADAPTERS,  # objective perturbation, central and per party (issue 56)
    SelectionProcedureAdapter(),
):
    register(_adapter)
