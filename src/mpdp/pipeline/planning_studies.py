"""Planning checks of the audit's settings (spec audit.md A0-A4, E8; issue 37): what the schema
cannot see. Called by :func:`mpdp.pipeline.planning.check` (errors: :class:`~mpdp.errors.ConfigError`,
one line naming the key and the fix) and :func:`mpdp.pipeline.planning.warnings` (keys without
effect; the console and the report's deviations section show them): each setting carries the
fields its adapter reads, an accountant its mode can calibrate, and no key its adapter ignores
(``pair`` outside the N-L2 adapter, ``planted_bug: largest_party_sigma`` where every party has the
same σ, ``objective_noise_scale`` outside objective perturbation's audit and any other bug inside it). The studies' own checks live in their packages (``studies/<id>/checks.py``, called
through :data:`mpdp.studies.registry.STUDIES`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mpdp.audit.adapters import GradientCanaryAdapter, L2OutputPerturbationAdapter
from mpdp.audit.bugs import bug_name
from mpdp.audit.objective_adapter import ObjectiveAudit
from mpdp.audit.pvp_history import PVPHistoryAdapter
from mpdp.audit.registry import ADAPTERS
from mpdp.audit.release_adapters import (
    DVPFirstIterationAdapter,
    OutputMechanismAdapter,
    PVPNoiseAdapter,
)
from mpdp.errors import ConfigError
from mpdp.privacy.calibration import PER_PARTY_ACCOUNTANTS
from mpdp.studies.benchmark.calibration import GRADIENT as BENCHMARK_GRADIENT

# ----------------------------------------------------------------------------- audit

#: adapter class -> the setting fields its ``run`` requires (mpdp.audit.release_adapters, pvp_history)
REQUIRED_FIELDS: dict[type, tuple[str, ...]] = {
    OutputMechanismAdapter: ("n", "parties", "lambda"),
    PVPNoiseAdapter: ("T", "n", "kappa"),
    DVPFirstIterationAdapter: ("T", "n", "kappa"),
    PVPHistoryAdapter: ("T", "n", "rho", "penalty"),
}

#: N-L2 pair -> the fields it reads (mpdp.audit.adapters.L2OutputPerturbationAdapter.pair)
PAIR_FIELDS: dict[str, tuple[str, ...]] = {"noise_stage": (), "record": ("n", "lambda"),
                                           "real_record": ("lambda",)}


def required_fields(adapter: object, setting: Mapping[str, Any]) -> tuple[str, ...]:
    """The fields a setting of ``adapter`` must give (besides mechanism and epsilon)."""
    if isinstance(adapter, L2OutputPerturbationAdapter):
        return PAIR_FIELDS.get(str(setting.get("pair", "noise_stage")), ())
    if isinstance(adapter, GradientCanaryAdapter) and adapter.source == "wddp":
        return ("accountant",)
    return REQUIRED_FIELDS.get(type(adapter), ())


def check_audit_settings(cfg: Mapping[str, Any]) -> None:
    """Fields each audit adapter needs, accountants its mode has, keys that would be no-ops."""
    for i, setting in enumerate(cfg["audit"]["settings"]):
        key = f"audit.settings.{i}"
        adapter = ADAPTERS.get(setting["mechanism"])
        if adapter is None:
            continue  # named by mpdp.pipeline.planning._check_audit
        mech = setting["mechanism"]
        for name in required_fields(adapter, setting):
            if setting.get(name) is None:
                raise ConfigError(f"config key '{key}.{name}': missing; the {mech} audit needs it "
                                  f"(it needs {list(required_fields(adapter, setting))}): add {name}: <value>")
        if setting.get("pair") is not None and not isinstance(adapter, L2OutputPerturbationAdapter):
            raise ConfigError(f"config key '{key}.pair': the {mech} audit has no pair choice (only nl2_output "
                              "has: noise_stage | record | real_record); remove it")
        if isinstance(adapter, GradientCanaryAdapter) and adapter.source == "benchmark" \
                and setting.get("accountant") is not None:
            raise ConfigError(f"config key '{key}.accountant': the {mech} audit runs the benchmark's own "
                              f"calibration (accountant {BENCHMARK_GRADIENT[adapter.id.removeprefix('xp_')][2]}), so this key "
                              "would be ignored; remove it")
        accountant = _effective_accountant(adapter, setting)
        literal = isinstance(adapter, GradientCanaryAdapter) and adapter.mode == "local_then_aggregate"
        per_party = accountant in PER_PARTY_ACCOUNTANTS
        if per_party and not literal:
            raise ConfigError(
                f"config key '{key}.accountant': {accountant} calibrates each party to its own "
                f"n_j, which only the literal local mode has (wddp_literal, jayaraman_literal); {mech} "
                "needs one of ma16, ma_tight, ma_int, exact, rdp"
            )
        if setting.get("planted_bug") == "largest_party_sigma" and not (literal and per_party):
            with_acc = f" with accountant {accountant}" if accountant else ""
            raise ConfigError(
                f"config key '{key}.planted_bug': largest_party_sigma changes the per-party σ mapping, "
                f"which {mech}{with_acc} does not have (every party gets one σ), so the bug would do "
                "nothing; plant it on wddp_literal or jayaraman_literal with accountant: exact_per_party, "
                "or use planted_bug: true"
            )
        objective = isinstance(adapter, ObjectiveAudit)
        if (setting.get("planted_bug") == "objective_noise_scale") != objective and bug_name(setting) is not None:
            raise ConfigError(
                f"config key '{key}.planted_bug': {setting['planted_bug']!r} cannot be planted in the {mech} audit "
                "(objective_noise_scale is objective perturbation's bug, and objpert/objpert_avg take only it)"
            )


def _effective_accountant(adapter: object, setting: Mapping[str, Any]) -> str | None:
    """The accountant a gradient audit calibrates with: the setting's (WD-DP study runs) or the
    benchmark's own (mpdp.studies.benchmark.calibration.GRADIENT); None for other adapters."""
    if not isinstance(adapter, GradientCanaryAdapter):
        return None
    if adapter.source == "benchmark":
        return BENCHMARK_GRADIENT[adapter.id.removeprefix("xp_")][2]
    return setting.get("accountant")


def audit_warnings(cfg: Mapping[str, Any]) -> list[str]:
    """Audit keys that have no effect as set."""
    md = cfg["audit"]["many_draws"]
    if md["training_draws"] > md["draws"]:
        return [f"audit.many_draws.training_draws: {md['training_draws']} is more than audit.many_draws.draws "
                f"= {md['draws']}, which caps it (the DP-SGD audit draws {md['draws']} per side); lower it"]
    return []


