"""Planning checks of the studies' grids and settings (spec E8; issue 37): what the schema
cannot see and each study's jobs used to find only after other jobs had run.

Called by :func:`mpdp.pipeline.planning.check` (errors: :class:`~mpdp.errors.ConfigError`, one line
naming the key and the fix) and :func:`mpdp.pipeline.planning.warnings` (settings that run but leave a
figure without a curve or make a key a no-op; the console and the report's deviations
section show them).

- WD-DP (spec E2.1, E2.2, E3.4): every party count of ``wddp.m_grid`` and every two-group
  layout of ``wddp.u_settings`` × ``wddp.u_grid`` must fit the training records (the size
  bound of :func:`mpdp.pipeline.planning.data_size`); a too large ``split.test_frac`` is named itself;
  the figures' fixed m and (m, ε) of :data:`~mpdp.studies.wddp.figure_spec.FIGURES` must be
  trained, else their curves are missing (warning) or, for an empty ``wddp.u_settings``,
  every u-sweep figure is empty (error).
- Audit (spec audit.md A0-A4): each setting carries the fields its adapter reads, an
  accountant its mode can calibrate, and no key its adapter ignores (``pair`` outside the N-L2
  adapter, ``planted_bug: largest_party_sigma`` where every party has the same σ).
- Voting (spec E5), ADMM (spec E4), benchmark (spec E10): data-set lists with no available
  entry (a warning), ``voting.h2_eps`` outside ``voting.eps_grid``, an empty ``admm.f3_alphas``, Fig. 4's
  iterations not recorded under ``admm.record_every``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Protocol

from mpdp.audit.adapters import GradientCanaryAdapter, L2OutputPerturbationAdapter
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
from mpdp.studies.wddp import plan as wddp_plan
from mpdp.studies.wddp.figure_spec import FIGURES

#: the schema's default split.test_frac (a larger one is named when it alone makes a setting fail)
DEFAULT_TEST_FRAC = 0.2


class SizeLike(Protocol):
    """What the checks need of :class:`mpdp.pipeline.planning.Size`."""

    n_total: int
    n_train: int
    exact: bool

    def describe(self) -> str: ...


# ----------------------------------------------------------------------------- WD-DP


def wddp_needs(cfg: Mapping[str, Any], dataset: str) -> list[tuple[str, int, str]]:
    """(key, training records needed, what needs them) of every WD-DP layout of ``dataset``.

    Random sizes (spec E2.1): m parties of at least τ = max(2, ⌊tau_frac·n/m⌋) records need
    m·τ ≤ n, i.e. n ≥ 2m. Two groups (spec E2.2): the small parties get ⌊n/((m/2)(1+u))⌋ ≥ 1.
    """
    w = cfg["wddp"]
    out = [("wddp.m_grid", 2 * int(m), f"m = {m} parties (random sizes of at least 2 records each)")
           for m in w["m_grid"]]
    grid = [int(u) for u in w["u_grid"].get(dataset, [])]
    for i, s in enumerate(w["u_settings"]):
        m = int(s["m"])
        if grid and m // 2 * (1 + min(grid)) > 0:
            out.append((f"wddp.u_settings.{i}.m", m // 2 * (1 + min(grid)),
                        f"m = {m} parties of the u-sweep at ε = {s['eps']:g} (u = {min(grid)})"))
        for u in grid:
            out.append((f"wddp.u_grid.{dataset}", m // 2 * (1 + u),
                        f"u = {u} with m = {m} parties (two groups, the small parties non-empty)"))
    return out


def check_wddp(cfg: Mapping[str, Any], available: list[str], sizes: Mapping[str, SizeLike]) -> None:
    """Every WD-DP layout fits every available data set (else the partition job fails)."""
    w = cfg["wddp"]
    if not w["u_settings"]:
        figs = [f for f, s in FIGURES.items() if s.x == "u"]
        wanted = sorted({(s.m, s.epsilon) for s in FIGURES.values() if s.x == "u"})
        raise ConfigError(
            f"config key 'wddp.u_settings': empty, so the u-sweep figures {', '.join(figs)} would have "
            "empty panels; list their settings, e.g. [" + ", ".join(f"{{m: {m}, eps: {e:g}}}" for m, e in wanted)
            + "]"
        )
    split = cfg["split"]["test_frac"]
    for ds in available:
        size = sizes.get(ds)
        if size is None:
            continue
        n_default = size.n_total - math.ceil(round(DEFAULT_TEST_FRAC * size.n_total, 9))
        for key, need, what in wddp_needs(cfg, ds):
            if size.n_train >= need:
                continue
            if split > DEFAULT_TEST_FRAC and n_default >= need:
                raise ConfigError(
                    f"config key 'split.test_frac': {split:g} leaves {ds} {size.describe()}, too few for "
                    f"{what} ({need} needed; config key '{key}'); lower split.test_frac "
                    f"(default {DEFAULT_TEST_FRAC:g})"
                )
            raise ConfigError(
                f"config key '{key}': {what} need at least {need} training records, {ds} has "
                f"{size.describe()}; lower that value, or raise max_records"
            )


def wddp_figure_warnings(cfg: Mapping[str, Any]) -> list[str]:
    """Figures whose fixed m (ε-sweeps) or (m, ε) (u-sweeps) the config does not train: they
    would be drawn with the centralised curve only, or with empty panels."""
    w = cfg["wddp"]
    out = []
    missing_m: dict[int, list[str]] = {}
    missing_u: dict[tuple[int, float], list[str]] = {}
    trained_u = [(int(s["m"]), float(s["eps"])) for s in w["u_settings"]]
    for fig, spec in FIGURES.items():
        if spec.x == "epsilon" and spec.m not in w["m_grid"]:
            missing_m.setdefault(spec.m, []).append(fig)
        if spec.x == "u" and spec.epsilon is not None and not any(
                m == spec.m and math.isclose(e, spec.epsilon) for m, e in trained_u):
            missing_u.setdefault((spec.m, spec.epsilon), []).append(fig)
    for m, figs in sorted(missing_m.items()):
        out.append(f"wddp.m_grid: m = {m} is not in wddp.m_grid = {list(w['m_grid'])}, so {', '.join(figs)} "
                   "show only the centralised Wang–Ye–Xu curve; add it to draw WD-DP and Jayaraman")
    for (m, eps), figs in sorted(missing_u.items()):
        out.append(f"wddp.u_settings: no setting {{m: {m}, eps: {eps:g}}}, so {', '.join(figs)} have empty "
                   "panels; add it to wddp.u_settings")
    if w.get("equal_privacy", False) and wddp_plan.equal_privacy_undefined(cfg):
        out.append("wddp.equal_privacy: the literal mode's equal-privacy runs calibrate each party to its own "
                   "noise, which wddp.noise_sharing: shared does not have; the -eq figures show the centralised "
                   "runs only and the equal-privacy claims are uninformative")
    return out


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


# ----------------------------------------------------------------------------- voting, ADMM, benchmark


def dataset_warnings(cfg: Mapping[str, Any], available: list[str]) -> list[str]:
    """Study data-set lists none of whose entries is available: the study's figures would be
    drawn without a table. A warning, not an error (unlike an empty list): restricting a run
    with ``--config 'datasets=[breast_cancer]'`` leaves the voting study without data, and the
    targets of the other studies must still run."""
    out = []
    lists = [("voting.datasets", cfg["voting"]["datasets"], "H-1…H-4 and B5 have no binary table")]
    if cfg.get("benchmark"):
        lists.append(("benchmark.datasets", cfg["benchmark"]["datasets"], "the benchmark figures have no table"))
    for key, listed, consequence in lists:
        if listed and not [d for d in listed if d in available]:
            out.append(f"{key}: none of {list(listed)} is an available data set (available: {available}; "
                       f"config key 'datasets', or their raw files are missing), so {consequence}; "
                       "list available data sets")
    return out


def check_voting(cfg: Mapping[str, Any]) -> None:
    v = cfg["voting"]
    if not any(math.isclose(float(v["h2_eps"]), float(e)) for e in v["eps_grid"]):
        raise ConfigError(f"config key 'voting.h2_eps': {v['h2_eps']} is not in voting.eps_grid = "
                          f"{v['eps_grid']}; H-2 is drawn at a trained ε: pick one of the grid")


def check_admm(cfg: Mapping[str, Any]) -> None:
    a = cfg.get("admm")
    if not a:
        return
    if not a["f3_alphas"]:
        raise ConfigError("config key 'admm.f3_alphas': empty, so Z-F3 would have no panel; "
                          f"list α from admm.alpha_grid = {a['alpha_grid']}")
    every = int(a["record_every"])
    unrecorded = [t for t in a["f4_iterations"] if t % every]
    if unrecorded:
        raise ConfigError(
            f"config key 'admm.record_every': {every} records only multiples of {every}, not Z-F4's "
            f"admm.f4_iterations {unrecorded}; use a record_every that divides them (e.g. 1)"
        )
