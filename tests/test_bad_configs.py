"""Bad configs, one table (issue 37): case -> override of the smoke profile -> expected outcome.

Outcomes: ``err(key)`` stops at validation or planning (:func:`mpdp.config.validate`, then
:func:`mpdp.pipeline.planning.check`) with one line naming ``config key '<key>'``; ``warn(key)`` plans
and warns with a line starting with ``<key>``; ``RUNS`` plans without error or warning.
Every leaf key of the schema needs at least one case (:func:`test_every_schema_key_has_a_case`),
so a new key cannot be added without its case.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import yaml

from mpdp import config
from mpdp.errors import ConfigError
from mpdp.pipeline import planning

ROOT = Path(__file__).resolve().parents[1]
DELETE = object()  # override value: remove the key


class Outcome(NamedTuple):
    kind: str  # error | warning | runs
    key: str = ""


def err(key: str) -> Outcome:
    return Outcome("error", key)


def warn(key: str) -> Outcome:
    return Outcome("warning", key)


RUNS = Outcome("runs")

_WDDP4 = ["kddcup99", "adult", "bank", "breast_cancer"]
SMOKE_AVAILABLE = ["kddcup99", "adult", "bank", "breast_cancer", "credit_card"]

#: (case id, {dotted key: value}, expected outcome, data sets whose raw files are missing)
CASES: list[tuple[str, dict[str, Any], Outcome, tuple[str, ...]]] = [
    ("smoke as shipped", {}, RUNS, ()),
    ("smoke with a smaller T", {"wddp.T": 10}, RUNS, ()),
    # ---- issue 37: found only inside jobs before
    ("m the data cannot hold", {"wddp.m_grid": [2, 4, 8, 16, 32, 4096]}, err("wddp.m_grid"), ()),
    ("u-sweep m the data cannot hold", {"wddp.u_settings": [{"m": 2048, "eps": 0.05}]},
     err("wddp.u_settings.0.m"), ()),
    ("u the data cannot hold", {"wddp.u_grid.adult": [1, 5000]}, err("wddp.u_grid.adult"), ()),
    ("test split leaves too few records", {"split.test_frac": 0.99}, err("split.test_frac"), ()),
    ("pvp without kappa", {"audit.settings.19.kappa": DELETE}, err("audit.settings.19.kappa"), ()),
    ("hamm_vote without parties", {"audit.settings.17.parties": DELETE}, err("audit.settings.17.parties"), ()),
    ("pvp_history without rho", {"audit.settings.22.rho": DELETE}, err("audit.settings.22.rho"), ()),
    ("N-L2 record pair without n", {"audit.settings.12.n": DELETE}, err("audit.settings.12.n"), ()),
    ("selection audit with an unknown unit", {"audit.settings.25.unit": "parties"}, err("audit.settings.25.unit"), ()),
    ("gradient audit without accountant", {"audit.settings.0.accountant": DELETE},
     err("audit.settings.0.accountant"), ()),
    ("exact_per_party on a per-round audit", {"audit.settings.2.accountant": "exact_per_party"},
     err("audit.settings.2.accountant"), ()),
    ("accountant on a benchmark audit", {"audit.settings.7.accountant": "exact"}, err("audit.settings.7.accountant"), ()),
    # ---- issue 37: accepted silently, misleading output
    ("no u-sweep settings", {"wddp.u_settings": []}, err("wddp.u_settings"), ()),
    ("figures' m not trained", {"wddp.m_grid": [3, 5]}, warn("wddp.m_grid"), ()),
    ("u-sweep figure settings not trained", {"wddp.u_settings": [{"m": 16, "eps": 0.05}]},
     warn("wddp.u_settings"), ()),
    ("voting data sets all unavailable", {"datasets": ["adult", "breast_cancer"], "voting.datasets": ["bank"]},
     warn("voting.datasets"), ()),
    ("voting data set whose raw files are missing", {"voting.datasets": ["bank"]}, warn("voting.datasets"), ("bank",)),
    ("benchmark data sets all unavailable", {"datasets": _WDDP4, "benchmark.datasets": ["credit_card"]},
     warn("benchmark.datasets"), ()),
    ("H-2 at an untrained eps", {"voting.h2_eps": 0.3}, err("voting.h2_eps"), ()),
    ("no Z-F3 alpha", {"admm.f3_alphas": []}, err("admm.f3_alphas"), ()),
    ("Fig. 4 iterations not recorded", {"admm.record_every": 4}, err("admm.record_every"), ()),
    ("largest-party bug on central wyx", {"audit.settings.0.planted_bug": "largest_party_sigma"},
     err("audit.settings.0.planted_bug"), ()),
    ("largest-party bug on literal ma16", {"audit.settings.4.planted_bug": "largest_party_sigma"},
     err("audit.settings.4.planted_bug"), ()),
    ("record pair on a gradient audit", {"audit.settings.2.pair": "record"}, err("audit.settings.2.pair"), ()),
    ("training draws above draws", {"audit.many_draws.training_draws": 200000},
     warn("audit.many_draws.training_draws"), ()),
    ("dotted key (--config wddp.T=10 in a file)", {"wddp.T=": 10}, err("wddp.T"), ()),
    # ---- issue 47: budgets only a job discovered
    ("eps beyond ma16's range in the WD-DP grid", {"wddp.eps_grid": [0.05, 20]}, err("wddp.eps_grid"), ()),
    ("cross-validation eps beyond ma16's range", {"wddp.cv.ref_eps": 20}, err("wddp.cv.ref_eps"), ()),
    ("least-squares eps beyond classical C3's range", {"ls.eps_grid": [0.5, 2.5]}, err("ls.eps_grid"), ()),
    ("audit eps beyond ma16's range", {"audit.settings.2.epsilon": 30}, err("audit.settings.2.epsilon"), ()),
    ("benchmark eps too small for the gradient mechanisms' selection", {"benchmark.eps_grid": [0.004, 1]},
     err("benchmark.eps_grid"), ()),
    ("a final share some mechanism cannot meet", {"benchmark.selection.final_share": 0.88},
     err("benchmark.selection.final_share"), ()),
    ("selection overhead above eps", {"benchmark.eps_grid": [0.001, 1]}, err("benchmark.selection.trials.mean"), ()),
    ("ADMM cannot meet the final share", {"benchmark.mechanisms": ["nonprivate", "dvp"],
                                          "benchmark.eps_grid": [0.01, 1], "benchmark.selection.final_share": 0.88},
     err("benchmark.selection.final_share"), ()),
    ("no voting M is feasible", {"voting.M_grid": [1000, 2000], "voting.h1_M": 1000}, err("voting.M_grid"), ()),
    ("a runtime bomb of benchmark trials", {"benchmark.selection.trials.mean": 1e6},
     err("benchmark.selection.trials.mean"), ()),
    ("a runtime bomb of voting trials", {"voting.selection.trials.mean": 1e6}, err("voting.selection.trials.mean"), ()),
    ("unknown mechanism under the oracle protocol",
     {"benchmark.mechanisms": ["nonprivate", "wyx", "no_such_mech"], "benchmark.selection.protocol": "oracle"},
     err("benchmark.mechanisms"), ()),
    ("unknown mechanism under the public protocol",
     {"benchmark.mechanisms": ["nonprivate", "wyx", "no_such_mech"], "benchmark.selection.protocol": "public"},
     err("benchmark.mechanisms"), ()),
    ("a single DP-SGD candidate", {"benchmark.dpsgd.candidates": [{"q": 0.1, "T": 30, "eta": 1.0}]},
     err("benchmark.dpsgd.candidates"), ()),
    ("a multiverse choice on a whole section", {"multiverse.choices.7.key": "wddp.cv",
                                                "multiverse.choices.7.values": [{"folds": 3}]},
     err("multiverse.choices.7.key"), ()),
    # issue 58: what only the multiverse's own build sees does not touch a plain build (MULTIVERSE_CASES)
    ("a multiverse alternative equal to the default", {"multiverse.choices.0.values": [1.0e-3]}, RUNS, ()),
    ("a multiverse reseed of a key the config lacks", {"multiverse.reseeds": [{"no_such_seed": 1}]},
     err("multiverse.reseeds.0.no_such_seed"), ()),
    ("a multiverse reseed of a key that is no seed", {"multiverse.reseeds": [{"wddp.T": 10}]},
     err("multiverse.reseeds.0.wddp.T"), ()),
    ("a multiverse reseed of a seed and another key", {"multiverse.reseeds": [{"root_seed": 2, "wddp.lambda": 0.1}]},
     err("multiverse.reseeds.0.wddp.lambda"), ()),
    ("a multiverse reseed equal to the default", {"multiverse.reseeds": [{"root_seed": 0}]}, RUNS, ()),
    ("a reseeding-check reseed of a key that is no seed", {"multiverse.check_reseeds": [{"wddp.T": 10}]},
     err("multiverse.check_reseeds.0.wddp.T"), ()),
    ("a reseeding-check reseed of a key the config lacks", {"multiverse.check_reseeds": [{"no_such_seed": 1}]},
     err("multiverse.check_reseeds.0.no_such_seed"), ()),
    ("a multiverse choice named like the reseeds", {"multiverse.choices.0.choice": "reseed"},
     err("multiverse.choices.0.choice"), ()),
    ("a joint multiverse sample naming an undeclared choice",
     {"multiverse.joint": {"choices": ["wddp_lambda", "no_such_choice"], "sample": 2}}, RUNS, ()),
    ("wyx audited with Jayaraman's accountant", {"audit.settings.0.accountant": "zcdp_code"},
     err("audit.settings.0.accountant"), ()),
    # ---- issue 47: valid but pointless (warned)
    ("one WD-DP repetition", {"wddp.reps": 1}, warn("wddp.reps"), ()),
    ("one voting repetition", {"voting.reps": 1}, warn("voting.reps"), ()),
    ("one ADMM repetition", {"admm.reps": 1}, warn("admm.reps"), ()),
    ("one benchmark repetition", {"benchmark.reps": 1}, warn("benchmark.reps"), ()),
    ("nl2_output without pair", {"audit.settings.10.pair": DELETE}, warn("audit.settings.10.pair"), ()),
    # ---- planning checks that existed before (kept here so the table is complete)
    ("audit m too large", {"audit.settings.2.m": 1000}, err("audit.settings.2.m"), ()),
    ("audit setting without dataset", {"audit.settings.0.dataset": DELETE}, err("audit.settings.0.dataset"), ()),
    ("audit setting without u", {"audit.settings.2.u": DELETE}, err("audit.settings.2.u"), ()),
    ("unknown audit mechanism", {"audit.settings.0.mechanism": "wxy"}, err("audit.settings.0.mechanism"), ()),
    ("ADMM P too large", {"admm.P": 100000}, err("admm.P"), ()),
    ("Z-F3 alpha not trained", {"admm.f3_alphas": [0.1, 0.5]}, err("admm.f3_alphas"), ()),
    ("Z-F4 iteration beyond T", {"admm.f4_iterations": [2, 4, 60]}, err("admm.f4_iterations"), ()),
    ("H-1 at an untrained M", {"voting.h1_M": 100}, err("voting.h1_M"), ()),
    ("no voting data set", {"voting.datasets": []}, err("voting.datasets"), ()),
    ("no benchmark data set", {"benchmark.datasets": []}, err("benchmark.datasets"), ()),
    ("main topology not run", {"admm.main_topology": "complete"}, err("admm.main_topology"), ()),
    ("only the Jayaraman accountant", {"wddp.accountants": ["zcdp_code"]}, err("wddp.accountants"), ()),
    ("eps above 2 ln(1/delta)", {"wddp.u_settings.0.eps": 100}, err("wddp.u_settings.0.eps"), ()),
    ("u grid missing for a data set", {"wddp.u_grid.adult": DELETE}, err("wddp.u_grid"), ()),
    ("unequal selection budgets", {"benchmark.output.lambda_candidates": [0.1]},
     err("benchmark.output.lambda_candidates"), ()),
    ("small group not a whole number of parties", {"wddp.small_group_frac": 0.3}, err("wddp.small_group_frac"), ()),
    # the full grid drops multiverse.base: smoke's own ADMM grid has only the ring, so the topology choice is
    # invalid, in a universe: only the multiverse's build is refused (MULTIVERSE_CASES), not this one (issue 58)
    ("multiverse on the main grid", {"multiverse.full_grid": True}, RUNS, ()),
    ("small group three quarters of the parties", {"wddp.small_group_frac": 0.75}, RUNS, ()),
    # the multiverse's alternatives set in the main config: valid settings, no warning here (issue 58)
    ("scaling alternatives", {"preprocess.row_scaling": "global_max", "preprocess.scaling_bounds": "train_split",
                              "split.per_repetition": False}, RUNS, ()),
    # issue 60: the training split's bounds come from rows that are other repetitions' test rows
    ("training-split bounds with a split per repetition", {"preprocess.scaling_bounds": "train_split"},
     err("preprocess.scaling_bounds"), ()),
    ("a multiverse choice's also naming no key", {"multiverse.choices.3.also": {"split.per_repetitio": False}},
     err("multiverse.choices.3.also"), ()),
    ("CV per setting, random vote ties", {"wddp.cv.scope": "per_setting", "voting.tie_break": "random"}, RUNS, ()),
    # ---- issue 58: runtime bombs stop at planning (the cost check, mpdp.pipeline.planning_cost)
    ("a count written as 1e6 (a float in YAML)", {"wddp.T": "1e6"}, err("wddp.T"), ()),
    ("a float among the party counts", {"voting.M_grid": [10, 30, "1e6"]}, err("voting.M_grid.2"), ()),
    ("a non-integral count", {"admm.P": 2.5}, err("admm.P"), ()),
    ("WD-DP steps beyond the CPU cap", {"wddp.T": 10 ** 8}, err("wddp.T"), ()),
    ("WD-DP repetitions beyond the CPU cap", {"wddp.reps": 10 ** 7}, err("wddp.reps"), ()),
    ("least-squares draws beyond the memory cap", {"ls.draws": 10 ** 9}, err("ls.draws"), ()),
    ("least-squares SGD records beyond the CPU cap", {"ls.ls_2.n": 100000}, err("ls.ls_2.n"), ()),
    ("audit draws beyond the memory cap", {"audit.many_draws.draws": 10 ** 10}, err("audit.many_draws.draws"), ()),
    ("a setting's own audit draws beyond the memory cap", {"audit.settings.9.draws": 10 ** 10},
     err("audit.settings.9.draws"), ()),
    ("ADMM iterations beyond the CPU cap", {"admm.T": 10 ** 7}, err("admm.T"), ()),
    ("voting repetitions beyond the CPU cap", {"voting.reps": 10 ** 7}, err("voting.reps"), ()),
    ("benchmark repetitions beyond the CPU cap", {"benchmark.reps": 10 ** 7}, err("benchmark.reps"), ()),
    ("a CPU cap below the smoke profile", {"limits.cpu_hours": 1e-4}, err("wddp.T"), ()),
    ("a memory cap below the smoke profile", {"limits.memory_gib": 1e-6}, err("wddp.reps"), ()),
    ("a raised CPU cap lets a large config plan", {"wddp.T": 10 ** 8, "limits.cpu_hours": 1e5}, RUNS, ()),
    ("a party count no data set can hold", {"voting.M_grid": [10, 30, 1000000]}, warn("voting.M_grid"), ()),
    ("benchmark parties larger than any cell", {"benchmark.min_party_size": 5000}, err("benchmark.min_party_size"), ()),
    ("benchmark parties no cell can hold", {"benchmark.m_grid": [1000], "benchmark.reference.m": 1000},
     err("benchmark.m_grid"), ()),
    ("CV per setting", {"wddp.cv.scope": "per_setting"}, RUNS, ()),
    ("typo", {"wddp.lamda": 0.1}, err("wddp"), ()),
    ("NaN", {"wddp.G": float("nan")}, err("wddp.G"), ()),
    ("optional study off", {"admm": DELETE, "benchmark": DELETE, "ls": DELETE}, RUNS, ()),
]

#: one out-of-schema value per key (type, range or enum): validation names the key
SCHEMA_CASES: dict[str, Any] = {
    "root_seed": -1, "profile": "huge", "data_mirror": 5, "allow_download": "maybe", "datasets": [],
    "max_records": 10, "split.test_frac": 1.5, "split.seed": -1, "preprocess.intercept": "x",
    "preprocess.row_scaling": "per_column", "preprocess.scaling_bounds": "public",
    "preprocess.kdd_sample_size": 5, "preprocess.bank_keep_duration": "x",
    "preprocess.breast_cancer_missing": "mean", "preprocess.credit_card_normals": 0,
    "wddp.T": 0, "wddp.delta": 1.5, "wddp.G": 0, "wddp.lambda": -1, "wddp.reps": 0, "wddp.dtype": "float16",
    "wddp.eps_grid": [], "wddp.m_grid": [0], "wddp.u_settings.0.m": 7, "wddp.u_settings.0.eps": 0,
    "wddp.u_grid.adult": [], "wddp.modes": ["x"], "wddp.noise_sharing": "x", "wddp.accountants": ["x"],
    "wddp.extra_accountant_modes": ["x"], "wddp.eta_grid": [0], "wddp.eta": 0, "wddp.cv.scope": "x",
    "wddp.cv.folds": 1, "wddp.cv.seeds": 0, "wddp.cv.ref_m": 0, "wddp.cv.ref_eps": 0,
    "wddp.cv.per_accountant": "x", "wddp.tau_frac": 2, "wddp.leftover": "random", "wddp.small_group_frac": 1, "wddp.init_std": -1, "wddp.dedup": "x",
    "wddp.nonprivate_reference": "x", "wddp.equal_privacy": "x",
    "ls.delta": 0, "ls.eps_grid": [], "ls.t_grid": [0], "ls.draws": 5, "ls.reps": 1, "ls.calibration": "x", "ls.eps_split": 1,
    "ls.delta_split": 0, "ls.symmetric_noise": "x", "ls.sigma3": -1, "ls.pd_floor": 0, "ls.validity_ratio": 0,
    "ls.sgd.radius": 0, "ls.sgd.options": ["x"], "ls.sgd.accountant": "x", "ls.sgd.reps": 0, "ls.ls_1.n": 5,
    "ls.ls_1.slope": "x", "ls.ls_1.noise": -1, "ls.ls_1.noise_models": [], "ls.ls_1.sigma2_zero": "x",
    "ls.ls_2.n": 5, "ls.ls_2.d": 1, "ls.ls_2.theta_norm": -1, "ls.ls_2.noise": -1, "ls.ls_2.noise_models": ["x"],
    "ls.ls_3.max_records": 5, "ls.ls_3.noise_models": [],
    "voting.datasets": ["x"], "voting.multiclass_datasets": ["adult"], "voting.M_grid": [1],
    "voting.min_party_size": 0, "voting.aux_frac": 1, "voting.eps_grid": [], "voting.lambda_grid": [0],
    "voting.lambda": 0, "voting.lambda_local": 0, "voting.val_frac": 0, "voting.tune_draws": 0,
    "voting.lambda_sweep_eps": [], "voting.reps": 0, "voting.delta_p": 1, "voting.delta_thm4": 0.5,
    "voting.h1_M": 1, "voting.h2_eps": 0, "voting.tight_logistic_sensitivity": "x",
    "voting.code_faithful_laplace": "x", "voting.tie_break": "first",
    "admm.dataset": "bank", "admm.P": 1, "admm.topologies": [], "admm.main_topology": "star", "admm.C_R": 0,
    "admm.T": 1, "admm.reps": 0, "admm.alpha_grid": [], "admm.rho": 0, "admm.tune_draws": 0, "admm.footing": "x", "admm.penalty_grid": [],
    "admm.tune_reps": 0, "admm.tune_alpha": 0, "admm.delta": 0, "admm.own_unperturbed_in_dual": "x",
    "admm.record_every": 0, "admm.f3_alphas": [0], "admm.f4_iterations": [], "admm.utility_q": 0,
    "admm.g_margin": 0, "admm.settle_tol": 0,
    "benchmark.datasets": ["x"], "benchmark.delta": 0, "benchmark.mechanisms": [""],
    "benchmark.primary_metric": "accuracy", "benchmark.eps_grid": [], "benchmark.m_grid": [3],
    "benchmark.u_grid": [0], "benchmark.reps": 0, "benchmark.lambda": 0, "benchmark.G": 0,
    "benchmark.aux_frac": 0.5, "benchmark.val_frac": 0.5, "benchmark.max_train_records": 5,
    "benchmark.min_party_size": 1, "benchmark.tune_seeds": 0, "benchmark.reference.m": 3,
    "benchmark.reference.u": 0, "benchmark.reference.epsilon": 0, "benchmark.gradient.T": 0,
    "benchmark.gradient.eta_candidates": [], "benchmark.gradient.init_std": -1, "benchmark.gradient.dtype": "x",
    "benchmark.output.lambda_candidates": [], "benchmark.admm.T": 1, "benchmark.admm.topology": "x",
    "benchmark.admm.C_R": 0, "benchmark.admm.accountant": "x", "benchmark.admm.penalty_candidates": [],
    "benchmark.dpsgd.candidates.0.q": 0, "benchmark.dpsgd.candidates.0.T": 0,
    "benchmark.dpsgd.candidates.0.eta": 0,
    "audit.beta": 0.5, "audit.delta": 0, "audit.bug_noise_factor.many_draws": 1,
    "audit.bug_noise_factor.one_run": 0, "audit.bug_noise_factor.canary_draws": 1, "audit.one_run.canaries": 1,
    "audit.one_run.T": 0, "audit.one_run.eta": 0, "audit.one_run.lambda": -1, "audit.one_run.G": 0,
    "audit.one_run.k_fractions": [0.6], "audit.many_draws.draws": 10, "audit.many_draws.training_draws": 10,
    "audit.many_draws.f_sel": 1, "audit.settings.0.mechanism": 5, "audit.settings.0.epsilon": 0,
    "audit.settings.0.dataset": "x", "audit.settings.0.accountant": "x", "audit.settings.0.method": "x",
    "audit.settings.9.draws": 10, "audit.settings.2.m": 3, "audit.settings.2.u": 0,
    "audit.settings.3.placement": "x", "audit.settings.9.canaries": 1, "audit.settings.10.pair": "x",
    "audit.settings.12.n": 1, "audit.settings.14.parties": 1, "audit.settings.19.T": 0,
    "audit.settings.19.kappa": 0, "audit.settings.12.lambda": 0, "audit.settings.22.rho": 0,
    "audit.settings.22.penalty": 0, "audit.settings.1.planted_bug": "x",
    "wddp.reference_step": "x", "wddp.reference_gap_tol": 0,
    "voting.selection.protocol": "public", "voting.selection.final_run_reading": "x",
    "voting.selection.final_share": 1, "voting.selection.trials.shape": -1, "voting.selection.trials.mean": 1,
    "benchmark.selection.protocol": "x", "benchmark.selection.final_run_reading": "x",
    "benchmark.selection.final_share": 0, "benchmark.selection.score_clip": 0,
    "benchmark.selection.trials.shape": -1, "benchmark.selection.trials.mean": 0.5,
    "multiverse.base": 5, "multiverse.full_grid": "yes", "multiverse.choices.0.choice": "Bad Name", "multiverse.choices.0.key": "no spaces",
    "multiverse.choices.0.values": [], "multiverse.choices.0.source": "", "multiverse.reseeds": [{}],
    "multiverse.check_reseeds": [],
    "multiverse.joint.sample": 0, "multiverse.joint.choices": ["only_one"], "multiverse.joint.seed": -1,
    "limits.cpu_hours": 0, "limits.memory_gib": -1,
}

ALL_CASES = CASES + [(f"out of schema: {key}", {key: value}, err(key), ()) for key, value in SCHEMA_CASES.items()]


def _smoke_raw() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "config" / "smoke.yaml").read_text())


def _apply(cfg: dict[str, Any], key: str, value: Any) -> None:
    if key.endswith("="):  # a literal dotted top-level key, as Snakemake's --config would pass it
        cfg[key[:-1]] = value
        return
    *parents, last = key.split(".")
    node: Any = cfg
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    if isinstance(node, list):
        node[int(last)] = value
    elif value is DELETE:
        del node[last]
    else:
        node[last] = value


def outcome(override: dict[str, Any], missing: tuple[str, ...] = (), multiverse: bool = False,
            ignore: tuple[str, ...] = ()) -> tuple[Outcome, str]:
    """Validate and plan the smoke profile with ``override``: (outcome, message). ``multiverse``:
    plan a build of the multiverse (``snakemake multiverse``); warnings in ``ignore`` do not count."""
    raw = _smoke_raw()
    for key, value in override.items():
        _apply(raw, key, copy.deepcopy(value) if value is not DELETE else value)
    try:
        cfg = config.validate(raw)
        available = [d for d in cfg["datasets"] if d not in missing]
        lines = [line for line in planning.check(cfg, available, {}, multiverse=multiverse) if line not in ignore]
    except ConfigError as exc:
        message = str(exc)
        key = message.split("config key '", 1)[1].split("'", 1)[0] if "config key '" in message else ""
        return err(key), message
    if lines:
        return warn(lines[0].split(":", 1)[0]), "\n".join(lines)
    return RUNS, ""


@pytest.mark.parametrize(("override", "expected", "missing"), [c[1:] for c in ALL_CASES],
                         ids=[c[0] for c in ALL_CASES])
def test_bad_config(override, expected, missing):
    got, message = outcome(override, missing)
    assert got.kind == expected.kind, message
    assert got.key == expected.key or got.key.startswith(expected.key + "."), message  # a list item: its list
    if expected.kind == "error":
        assert "\n" not in message, "one line"
        if not message.startswith("invalid configuration"):  # schema messages name the allowed values
            assert "; " in message, f"the fix is missing: {message}"


def _base(settings: dict[str, Any]) -> dict[str, Any]:
    """The smoke profile's ``multiverse.base`` with ``settings`` (dotted keys) set too."""
    return {**_smoke_raw()["multiverse"]["base"], **settings}


#: issue 58: planned as a build of the multiverse (``snakemake multiverse``), which checks every
#: universe's config and shows its warnings and the multiverse's; the plain build of each is in CASES
MULTIVERSE_CASES: list[tuple[str, dict[str, Any], Outcome]] = [
    ("smoke as shipped", {}, RUNS),
    ("a multiverse alternative equal to the default", {"multiverse.choices.0.values": [1.0e-3]},
     warn("multiverse.choices.0.values")),
    ("a multiverse reseed equal to the default", {"multiverse.reseeds": [{"root_seed": 0}]},
     warn("multiverse.reseeds.0")),
    ("a joint multiverse sample naming an undeclared choice",
     {"multiverse.joint": {"choices": ["wddp_lambda", "no_such_choice"], "sample": 2}}, warn("multiverse.joint.choices")),
    ("multiverse on the main grid", {"multiverse.full_grid": True}, err("multiverse.choices")),
    ("scaling alternatives", {"preprocess.row_scaling": "global_max", "preprocess.scaling_bounds": "train_split",
                              "split.per_repetition": False}, warn("multiverse.choices")),
    ("one repetition in every universe", {"multiverse.base": _base({"wddp.reps": 1})}, warn("multiverse.base")),
    ("one repetition in one universe",
     {"multiverse.choices.0": {"choice": "few", "key": "voting.reps", "values": [1], "source": "x"}},
     warn("multiverse.choices.0")),
    ("a universe beyond the CPU cap",
     {"multiverse.choices.0": {"choice": "long", "key": "wddp.T", "values": [10 ** 9], "source": "x"}},
     err("multiverse.choices.0")),
]


@functools.cache
def _shipped_multiverse_warnings() -> tuple[str, ...]:
    return tuple(planning.check(config.validate(_smoke_raw()), SMOKE_AVAILABLE, {}, multiverse=True))


@pytest.mark.parametrize(("override", "expected"), [c[1:] for c in MULTIVERSE_CASES],
                         ids=[c[0] for c in MULTIVERSE_CASES])
def test_bad_multiverse_config(override, expected):
    """The same table's outcomes when the build includes the multiverse; the shipped smoke
    profile's own multiverse warning (its noise_sharing universe has no equal-privacy runs) aside."""
    got, message = outcome(override, multiverse=True, ignore=_shipped_multiverse_warnings())
    assert got.kind == expected.kind, message
    assert got.key == expected.key or got.key.startswith(expected.key + "."), message
    if expected.kind == "error":
        assert "\n" not in message, "one line"


def test_a_universe_warning_names_the_universes_and_says_what_the_main_config_would():
    _, message = outcome({"multiverse.base": _base({"wddp.reps": 1})}, multiverse=True)
    line = next(x for x in message.splitlines() if "wddp.reps" in x)
    main = next(x for x in outcome({"wddp.reps": 1})[1].splitlines() if x.startswith("wddp.reps"))
    assert line.startswith("multiverse.base: in the multiverse's universes default, ") and line.endswith(main)


def _covered(leaf: str, keys: set[str]) -> bool:
    return any(k == leaf or k.startswith(leaf + ".") for k in keys)


def test_every_schema_key_has_a_case():
    keys = {config.schema_path(k.rstrip("=")) for _, override, _, _ in ALL_CASES for k in override}
    missing = [leaf for leaf in config.schema_leaves() if not _covered(leaf, keys)]
    assert missing == [], f"add a case to tests/test_bad_configs.py for {missing}"


def test_the_guard_sees_a_new_key(monkeypatch):
    """A key added to the schema without a case fails the guard."""
    sch = config.schema()
    sch["properties"]["wddp"]["properties"]["new_knob"] = {"type": "integer", "default": 1}
    monkeypatch.setattr(config, "schema", lambda: sch)
    keys = {config.schema_path(k.rstrip("=")) for _, override, _, _ in ALL_CASES for k in override}
    assert [leaf for leaf in config.schema_leaves() if not _covered(leaf, keys)] == ["wddp.new_knob"]
