"""Planning checks of privacy budgets and of settings that run but say nothing (issue 47; issue 43
item 5; spec E8: a bad config stops before any job, with one line naming the key and the fix).

Called by :func:`mpdp.pipeline.planning.check` (:func:`check`, errors as
:class:`~mpdp.errors.ConfigError`) and :func:`mpdp.pipeline.planning.warnings` (:func:`warnings`).
Feasibility is decided by the privacy layer's own calibration functions, never by a formula
written again here:

- **Accountants' validity ranges** (spec §0.5 C1, C2): every (accountant, ε) a WD-DP job or an
  audit setting calibrates, through :func:`mpdp.privacy.calibration.noise_multiplier` (``ma16``
  needs ε ≤ 2 ln(1/δ)): ``wddp.eps_grid`` × ``wddp.accountants``, ``wddp.cv.ref_eps`` and each
  gradient audit setting at the audit's δ (spec A0: ``benchmark.delta`` when the benchmark
  runs); every ε of ``ls.eps_grid`` under ``ls.calibration`` (classical C3: each part's ε < 1)
  through :func:`mpdp.mechanisms.least_squares.ssp_calibrate`. ``zcdp_code`` is Jayaraman's code's accountant: a gradient audit of another mechanism
  with it audits a calibration no study runs (error).
- **Selection budgets** (spec E10 "Hyper-parameters"; :mod:`mpdp.studies.benchmark.selection`):
  under the private protocol every enabled mechanism (DP-SGD and ADMM included) must have a
  per-trial ε > 0 at every ε of ``benchmark.eps_grid``. The bisection of
  :func:`mpdp.privacy.private_selection.calibrate_trial_epsilon` finds one exactly when the final
  run's RDP curve at ``final_share``·ε plus the selection's overhead with vanishing trials
  converts to less than ε (the trial curves vanish with ε_t), so that sum is checked with the
  mechanism's own run curve (:func:`mpdp.studies.benchmark.selection.run_curve`). The key named:
  ``trials.mean`` when the overhead alone exceeds ε, ``final_share`` when the default share
  would meet it, else ``benchmark.eps_grid`` (the ε is too small for that mechanism's
  accounting). The voting study's split is feasible by construction
  (:func:`mpdp.studies.voting.selection.budget`: ε_t = (1 − share)·ε/(2 + η) > 0).
- **Mechanisms resolved under every protocol**: ``benchmark.mechanisms`` through
  :func:`mpdp.studies.benchmark.registry.configured` (an added mechanism's module is imported
  then, also in a dry run: docs/benchmark.md), not only under the private protocol.
- **Trials**: ``selection.trials.mean`` above :data:`MAX_TRIALS_MEAN` (a truncated negative
  binomial with mean 10⁶ drew 16 666 to 1 678 092 trainings per cell).
- **Voting party counts**: a data set for which *no* M of ``voting.M_grid`` leaves
  ``voting.min_party_size`` records per party (with the size bound when no data card exists,
  so only settings impossible for every size are refused; dropping some M stays a warning of
  :func:`mpdp.pipeline.planning.warnings`).
- **Candidates**: DP-SGD's ``benchmark.dpsgd.candidates`` count must equal the other
  mechanisms' (spec E10: every mechanism gets the same selection budget).
- **Output folders**: every existing folder below ``data/``, ``logs/`` and ``reports/`` must be
  writable (:func:`check_output_tree`).

Warnings (:func:`warnings`): ``reps`` < 2 (no interval: every claim of the study is
uninformative), an ``nl2_output`` audit without ``pair`` (it audits the noise stage only).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from mpdp.audit.adapters import GradientCanaryAdapter, L2OutputPerturbationAdapter
from mpdp.audit.registry import ADAPTERS
from mpdp.errors import ConfigError, MpdpError
from mpdp.privacy import private_selection as ps
from mpdp.privacy.calibration import PrivacyParameterError, noise_multiplier

#: the largest expected number of private-selection trials per cell (defaults: 6 voting, 8 benchmark)
MAX_TRIALS_MEAN = 100.0
#: the schema's default ``benchmark.selection.final_share`` (named when it would meet the budget)
DEFAULT_FINAL_SHARE = 0.5
#: folders whose whole tree the workflow writes into
OUTPUT_TREES = ("data", "logs", "reports")
#: study -> its repetitions key (warned about below 2)
REPS_KEYS = {"wddp": "wddp.reps", "voting": "voting.reps", "admm": "admm.reps", "benchmark": "benchmark.reps"}


class SizeLike(Protocol):
    """What the checks need of :class:`mpdp.pipeline.planning.Size`."""

    n_total: int
    n_train: int
    exact: bool

    def describe(self) -> str: ...


def check(cfg: Mapping[str, Any], available: list[str], sizes: Mapping[str, SizeLike]) -> None:
    """Raise :class:`ConfigError` for the first budget this config cannot meet (module docstring)."""
    check_wddp_accountants(cfg)
    check_ls_calibration(cfg)
    check_audit_accountants(cfg)
    check_trials(cfg)
    check_voting_parties(cfg, available, sizes)
    check_benchmark(cfg)


def _multiplier(accountant: str, eps: float, delta: float, T: int, key: str, what: str) -> None:
    try:
        noise_multiplier(accountant, float(eps), float(delta), int(T))
    except PrivacyParameterError as exc:
        raise ConfigError(f"config key '{key}': {what}: {exc}") from None


def check_wddp_accountants(cfg: Mapping[str, Any]) -> None:
    """Every ε a WD-DP job calibrates, under every accountant of ``wddp.accountants``."""
    w = cfg["wddp"]
    for accountant in w["accountants"]:
        for eps in w["eps_grid"]:
            _multiplier(accountant, eps, w["delta"], w["T"], "wddp.eps_grid",
                        f"ε = {eps:g} cannot be calibrated by accountant {accountant} (wddp.accountants)")
    from mpdp.studies.wddp import plan as wddp_plan

    cv_accountants = (w["accountants"] if w["cv"].get("per_accountant", False)
                      else [wddp_plan.reference_accountant(cfg)])
    for accountant in cv_accountants:  # the cross-validation's selection runs (mpdp.studies.wddp.cv)
        _multiplier(accountant, w["cv"]["ref_eps"], w["delta"], w["T"], "wddp.cv.ref_eps",
                    f"the cross-validation's ε = {w['cv']['ref_eps']:g} cannot be calibrated by {accountant}")


def check_ls_calibration(cfg: Mapping[str, Any]) -> None:
    """Every ε of ``ls.eps_grid`` under ``ls.calibration`` (spec M14; classical C3 needs each of
    the two parts' ε below 1, I-15), by the mechanism's own calibration. The data dimension only
    scales the sensitivities, so any d decides it."""
    ls = cfg.get("ls")
    if not ls:
        return
    from mpdp.mechanisms import least_squares as lsq

    for eps in ls["eps_grid"]:
        try:
            lsq.ssp_calibrate(float(eps), float(ls["delta"]), 2, ls["calibration"], float(ls["eps_split"]),
                              float(ls["delta_split"]))
        except PrivacyParameterError as exc:
            raise ConfigError(f"config key 'ls.eps_grid': ε = {eps:g} cannot be calibrated with ls.calibration = "
                              f"{ls['calibration']} (eps_split {ls['eps_split']:g}): {exc}") from None


def audit_delta(cfg: Mapping[str, Any]) -> float:
    """δ of the audit's Gaussian mechanisms (spec A0; :func:`mpdp.audit.table.context_from_config`)."""
    b = cfg.get("benchmark")
    return float(b["delta"] if b else cfg["audit"]["delta"])


def check_audit_accountants(cfg: Mapping[str, Any]) -> None:
    """Each gradient audit setting's accountant can calibrate its ε at the audit's δ."""
    delta = audit_delta(cfg)
    for i, setting in enumerate(cfg["audit"]["settings"]):
        adapter = ADAPTERS.get(setting["mechanism"])
        accountant = setting.get("accountant")
        if not isinstance(adapter, GradientCanaryAdapter) or accountant is None:
            continue
        key = f"audit.settings.{i}.accountant"
        if accountant == "zcdp_code" and not str(setting["mechanism"]).startswith("jayaraman"):
            raise ConfigError(f"config key '{key}': zcdp_code is the accountant of Jayaraman et al.'s code, and "
                              f"no study calibrates {setting['mechanism']} with it, so the audit would test a "
                              "calibration nothing runs; use ma16, ma_tight, ma_int, exact or rdp")
        _multiplier(accountant, setting["epsilon"], delta, setting.get("T") or 1, f"audit.settings.{i}.epsilon",
                    f"the {setting['mechanism']} audit's accountant {accountant} cannot calibrate it")


def check_trials(cfg: Mapping[str, Any]) -> None:
    """A cap on the expected number of private-selection trials per cell."""
    for study in ("voting", "benchmark"):
        section = cfg.get(study)
        if not section or section["selection"]["protocol"] != "private":
            continue
        mean = float(section["selection"]["trials"]["mean"])
        if mean > MAX_TRIALS_MEAN:
            raise ConfigError(
                f"config key '{study}.selection.trials.mean': {mean:g} trials on average per cell (each a "
                f"training; the truncated negative binomial's tail draws many times more) is above the cap of "
                f"{MAX_TRIALS_MEAN:g}; lower it (the default is a few)")


def check_voting_parties(cfg: Mapping[str, Any], available: list[str], sizes: Mapping[str, SizeLike]) -> None:
    """A data set for which every M of ``voting.M_grid`` is infeasible."""
    from mpdp.studies.voting.plan import feasible_M

    v = cfg["voting"]
    for ds in dict.fromkeys([*v["datasets"], *v["multiclass_datasets"]]):
        size = sizes.get(ds)
        if ds not in available or size is None:
            continue
        n_private = size.n_train - math.ceil(round(v["aux_frac"] * size.n_total, 9))
        if not feasible_M(v["M_grid"], n_private, v["min_party_size"]):
            raise ConfigError(
                f"config key 'voting.M_grid': no M of {list(v['M_grid'])} is feasible for {ds}: its private pool "
                f"of {'at most ' if not size.exact else ''}{n_private} records leaves fewer than "
                f"voting.min_party_size = {v['min_party_size']} per party; add a smaller M (at most "
                f"{max(n_private // v['min_party_size'], 0)})")


def check_benchmark(cfg: Mapping[str, Any]) -> None:
    """Mechanisms resolved under every protocol; equal candidate counts; private budgets."""
    b = cfg.get("benchmark")
    if not b:
        return
    from mpdp.studies.benchmark import registry

    try:  # resolves (and registers) added mechanisms, under every protocol
        specs = registry.configured(cfg)
    except ConfigError as exc:
        reason = str(exc).removeprefix("benchmark.mechanisms").lstrip(": ")
        raise ConfigError(f"config key 'benchmark.mechanisms': {reason}") from None
    ids = [s.id for s in specs]
    others = len(b["gradient"]["eta_candidates"])
    if "dpsgd" in ids and len(b["dpsgd"]["candidates"]) != others:
        raise ConfigError(
            f"config key 'benchmark.dpsgd.candidates': {len(b['dpsgd']['candidates'])} candidate(s), but every "
            f"other mechanism has {others} (benchmark.gradient.eta_candidates): every mechanism must get the same "
            "selection budget (spec E10); give DP-SGD as many")
    if b["selection"]["protocol"] != "private":
        return
    for spec in specs:
        if spec.family == "reference":
            continue
        for eps in (float(e) for e in b["eps_grid"]):
            key = budget_key(cfg, spec.id, eps)
            if key is not None:
                s, t = b["selection"], b["selection"]["trials"]
                raise ConfigError(
                    f"config key '{key}': mechanism {spec.id!r} cannot meet ε = {eps:g} under the private "
                    f"selection (final_share = {s['final_share']:g}, trials shape {t['shape']:g}, mean "
                    f"{t['mean']:g}): its final run and the selection's overhead alone exceed it; "
                    + _FIXES[key])


_FIXES = {
    "benchmark.selection.trials.mean": "lower benchmark.selection.trials.mean (or trials.shape)",
    "benchmark.selection.final_share": f"lower benchmark.selection.final_share (default {DEFAULT_FINAL_SHARE:g})",
    "benchmark.eps_grid": "raise the smallest ε of benchmark.eps_grid, or remove the mechanism from "
                          "benchmark.mechanisms",
}


def _exceeds(cfg: Mapping[str, Any], mech: str, eps: float, share: float, overhead: np.ndarray) -> bool:
    """Whether the final run at share·ε plus ``overhead`` converts to ε or more (infeasible)."""
    from mpdp.studies.benchmark import selection

    delta = float(cfg["benchmark"]["delta"])
    try:
        final = selection.run_curve(cfg, mech, share * eps)
    except (PrivacyParameterError, ValueError) as exc:
        raise ConfigError(f"config key 'benchmark.eps_grid': mechanism {mech!r} cannot be calibrated at "
                          f"ε = {share * eps:g} ({exc}); raise that ε") from None
    return ps.rdp_to_epsilon(overhead + final, delta) >= eps


def budget_key(cfg: Mapping[str, Any], mech: str, eps: float) -> str | None:
    """None if ``mech`` has a private-selection budget at ``eps``; else the key to change
    (module docstring, "Selection budgets")."""
    s = cfg["benchmark"]["selection"]
    overhead = ps.repeat_and_select_rdp(np.zeros_like(ps.ORDERS), float(s["trials"]["shape"]),
                                        float(s["trials"]["mean"]))
    if ps.rdp_to_epsilon(overhead, float(cfg["benchmark"]["delta"])) >= eps:
        return "benchmark.selection.trials.mean"
    from mpdp.studies.benchmark import selection

    if selection.releases_selected_trial(mech):  # party level: no final run, the trial is released
        return None if selection.can_meet(cfg, mech, eps) else "benchmark.eps_grid"
    share = float(s["final_share"])
    if not _exceeds(cfg, mech, eps, share, overhead):
        return None
    if share > DEFAULT_FINAL_SHARE and not _exceeds(cfg, mech, eps, DEFAULT_FINAL_SHARE, overhead):
        return "benchmark.selection.final_share"
    return "benchmark.eps_grid"


def check_output_tree(workdir: str | Path = ".") -> None:
    """Raise :class:`MpdpError` naming the first existing folder below :data:`OUTPUT_TREES` that
    cannot be written (Snakemake would fail there with its own traceback). Folders only, no
    links followed: cheap even for a full build's tree."""
    root = Path(workdir)
    for top in OUTPUT_TREES:
        for folder, subfolders, _ in os.walk(root / top):
            if not os.access(folder, os.W_OK | os.X_OK):
                rel = os.path.relpath(folder, root)
                raise MpdpError(f"the folder {rel}/ is not writable, and the workflow writes its outputs there; "
                                f"make it writable (chmod -R u+w {rel}) or run in a writable copy of the checkout")
            subfolders.sort()


def warnings(cfg: Mapping[str, Any]) -> list[str]:
    """Settings that run but say nothing (module docstring)."""
    out = []
    for study, key in REPS_KEYS.items():
        section = cfg.get(study)
        if section and int(section["reps"]) < 2:
            out.append(f"{key}: {section['reps']} repetition gives the {study} claims no interval, so every one "
                       "of them is uninformative; use at least 2")
    for i, setting in enumerate(cfg["audit"]["settings"]):
        if isinstance(ADAPTERS.get(setting["mechanism"]), L2OutputPerturbationAdapter) and "pair" not in setting:
            out.append(f"audit.settings.{i}.pair: not set, so this nl2_output audit tests the noise stage alone "
                       "(pair: noise_stage); set pair: noise_stage, record or real_record to say which")
    return out
