"""Which config keys each Snakemake rule reads: one table, used by the rules and the tests.

Snakemake reruns a job when one of its params changes (``--rerun-triggers params``, on by
default). Each rule declares as its ``settings`` param exactly the config values its job reads
(:func:`settings`), and its script receives a config that holds *only* those keys
(:func:`rule_config`): reading an undeclared key fails at once with a message naming this
table, so the declaration cannot silently fall behind the code. Every job script gets its config
through :func:`rule_config` (``tests/test_rule_keys.py`` checks each script of
``workflow/scripts/`` statically); the few jobs that read the whole config say so, with the
reason, in :data:`WHOLE_CONFIG`, and the keys a job reads that are deliberately not a param in
:data:`UNTRACKED_KEYS`. The rerun table of docs/reruns.md
("When does a step rerun?") is checked against real dry runs by the dry runs of ``tests/test_workflow.py``.

Keys are dotted paths into the validated config (``wddp.T``; a section name such as
``split`` means the whole section). Adding a key a rule reads = adding it to the tuple here.
Values that a rule gets through its wildcards (a training job's m, u and ε) or through an
explicit param (the partition layouts of an experiment) are not config keys of that rule.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from mpdp import config as mpdp_config
from mpdp.data.registry import DATASETS
from mpdp.studies.admm.schema import TRAIN_KEYS as _ADMM_TRAIN

#: the keys of each repetition's train/test split (issue 60, mpdp.data.splits)
_SPLIT = ("split.per_repetition", "split.seed", "split.test_frac")

#: what every training job reads (spec E3), whatever its experiment
_TRAIN = (
    "root_seed", "wddp.T", "wddp.delta", "wddp.G", "wddp.lambda", "wddp.reps", "wddp.dtype",
    "wddp.modes", "wddp.noise_sharing", "wddp.accountants", "wddp.extra_accountant_modes",
    "wddp.init_std", "wddp.dedup", "wddp.nonprivate_reference", "wddp.reference_step", "wddp.equal_privacy",
    *_SPLIT,
)

def _section_without(section: str, *left_out: str) -> tuple[str, ...]:
    """Every key of a config section (from the schema, so a new key is included) but
    ``left_out``: the keys a job of the section does not read (issue 37: changing them must not
    rerun it)."""
    keys = mpdp_config.schema()["properties"][section]["properties"]
    missing = set(left_out) - set(keys)
    if missing:
        raise KeyError(f"no keys {sorted(missing)} in config section {section!r}")
    return tuple(f"{section}.{k}" for k in keys if k not in left_out)


#: keys of the ``ls`` section every least-squares experiment reads (spec E6)
_LS_COMMON = ("delta", "eps_grid", "t_grid", "draws", "reps", "calibration", "eps_split", "delta_split",
              "symmetric_noise", "sigma3", "pd_floor", "validity_ratio", "sgd")

#: rule (or rule variant) -> the config keys its job reads
RULE_KEYS: dict[str, tuple[str, ...]] = {
    # data stage (spec E1); plus the data set's own key of DATASET_KEYS
    "prepare": ("root_seed", "max_records", "split.test_frac", "split.seed", "preprocess.intercept", "preprocess.row_scaling",
                "preprocess.scaling_bounds"),
    # spec E2; the (m, u) layouts come as the param ``layouts`` (plan.partition_settings)
    # each repetition's partition lies within its own training records (issue 60)
    "partition": ("root_seed", "wddp.reps", "wddp.tau_frac", "wddp.leftover", "wddp.small_group_frac", *_SPLIT),
    # one θ* per repetition's training records (keys_for adds wddp.reps under a split per repetition)
    "optimum": ("wddp.lambda", *_SPLIT),
    # η fixed by the config: no cross-validation
    "learning_rates:fixed": ("wddp.eta", "wddp.modes"),
    # η by cross-validation (spec E3.3)
    "learning_rates:cv": (
        "root_seed", "wddp.eta", "wddp.modes", "wddp.cv", "wddp.eta_grid", "wddp.accountants",
        "wddp.tau_frac", "wddp.T", "wddp.delta", "wddp.G", "wddp.lambda", "wddp.noise_sharing",
        "wddp.init_std", "wddp.dtype", "wddp.dedup", "wddp.equal_privacy",
        "wddp.extra_accountant_modes",  # read when cv.per_accountant selects η per accountant
        *_SPLIT,  # a selection per repetition, within its training records (issue 60; + wddp.reps)
    ),
    # ε-sweep jobs train every ε of the grid; a u-sweep job's ε is in its id, and it trains
    # every u of its data set's grid (keys_for adds wddp.u_grid.<data set>)
    "train_job:eps_sweep": (*_TRAIN, "wddp.eps_grid"),
    "train_job:u_sweep": _TRAIN,
    # the data set's table and its reference's convergence check (mpdp.studies.wddp.reference)
    "collect_results": ("wddp.reference_gap_tol",),
    # the other studies: each job reads its study's section (the ADMM job only the keys of
    # mpdp.studies.admm.schema.TRAIN_KEYS, and the split design: each repetition's own split,
    # mpdp.studies.admm.cases; a least-squares job only its own experiment)
    "admm_job": ("root_seed", "split.per_repetition", "split.seed", "split.test_frac",
                 *(f"admm.{k}" for k in _ADMM_TRAIN)),
    "admm_figure": ("admm",),
    # the figures' ε of H-2 is not trained for (every ε of voting.eps_grid is); δ_p is: the
    # tables hold the Lemma 6 line at δ_p (column lemma6_bound, read by the claims); the split
    # keys: each repetition's train/test split of the pool (issue 60, mpdp.data.splits)
    "voting_train": ("root_seed", "split.per_repetition", "split.seed", "split.test_frac",
                     *_section_without("voting", "h2_eps")),
    "voting_figure": ("voting.h1_M", "voting.h2_eps", "voting.delta_p", "voting.delta_thm4"),
    **{f"ls_experiment:{exp}": ("root_seed", *(f"ls.{k}" for k in _LS_COMMON), f"ls.{exp}")
       for exp in ("ls_1", "ls_2", "ls_3")},
    "audit_table": ("root_seed", "audit"),
    # cross-paper benchmark (spec E10): every job reads the section (grid, selection) but the
    # ranking's primary metric, and the split (issue 60: each repetition's own, split.per_repetition)
    "benchmark_job": ("root_seed", "split", *_section_without("benchmark", "primary_metric")),
    # the private selection's budgets, once for every job (mpdp.studies.benchmark.budgets)
    "benchmark_budgets": _section_without("benchmark", "primary_metric"),
    "benchmark_collect": ("benchmark.reference", "benchmark.val_frac", "benchmark.tune_seeds",
                          "benchmark.mechanisms", "benchmark.selection"),
    "benchmark_figure": ("benchmark.reference", "benchmark.delta", "benchmark.max_train_records",
                         "benchmark.selection"),
    "benchmark_ranking": ("benchmark.primary_metric", "benchmark.selection"),
    # the multiverse (issue 38): the collection reads the declared choices; each universe job
    # also gets its whole config as a param (mpdp.multiverse.spec.universe_config), so any key
    # of it reruns that universe
    "multiverse": ("multiverse",),
    "multiverse_universe": ("multiverse",),
    # the reseeding check (issue 60 item 5): a reseeded run gets its whole config as a param; the
    # comparison reads none
    "reseeding_universe": ("multiverse",),
    # the claims tables (issue 33); keys_for adds those of the optional studies' sections present
    "claims_tables": (),
    "claims_map": (),
    "claims_forest": (),
}

#: rules whose job reads the whole validated config (:func:`rule_config` gives it all of it), and why
WHOLE_CONFIG: dict[str, str] = {
    "report_html": "the report shows the whole configuration and the command that rebuilds it; its "
                   "settings param is the hash of the whole config",
    "multiverse_universe": "a universe runs the main config with its choice applied "
                           "(mpdp.multiverse.spec.universe_config); its settings param is the hash of that config",
    "reseeding_universe": "a reseeded run of one study runs the main config with the reseed's seed keys set "
                          "(mpdp.multiverse.reseeding.reseed_config); its settings param is the hash of that config",
    "multiverse": "the universes are derived from the whole config (the study sections switched on, the joint "
                  "sample's default universe: mpdp.multiverse.spec.universes); its settings param is the "
                  "multiverse section, and each universe's status, an input, changes with any other key",
}

#: keys a job reads that are deliberately not in its settings param: where the raw files come
#: from (the fetch verifies their checksums, so moving the mirror or switching downloads reruns nothing)
UNTRACKED_KEYS: dict[str, tuple[str, ...]] = {
    "fetch_raw": ("data_mirror", "allow_download"),
}

#: per optional study section: the keys the claims engine reads of it (mpdp.studies.<study>.claims)
_CLAIMS_KEYS: dict[str, tuple[str, ...]] = {
    # root_seed: the stream of Z6's bootstrap interval (mpdp.studies.admm.claims)
    "admm": ("admm.dataset", "admm.main_topology", "admm.settle_tol", "admm.f4_iterations", "admm.g_margin",
             "admm.P", "admm.C_R", "root_seed"),
    "voting": ("voting.delta_p",),
}

#: preprocessing keys that only one data set's preparation reads (mpdp.data.registry)
DATASET_KEYS: dict[str, tuple[str, ...]] = {ds: info.preprocess_keys for ds, info in DATASETS.items()}


def keys_for(rule: str, cfg: Mapping[str, Any], dataset: str | None = None,
             experiment: str | None = None) -> tuple[str, ...]:
    """The keys a job of ``rule`` reads (the variant chosen by the config or the wildcards)."""
    if rule == "learning_rates":
        rule = "learning_rates:fixed" if cfg["wddp"]["eta"] is not None else "learning_rates:cv"
    elif rule == "train_job":
        if experiment is None:
            raise ValueError("train_job keys depend on the experiment")
        rule = f"train_job:{experiment}"
    elif rule == "ls_experiment":
        if experiment is None:
            raise ValueError("ls_experiment keys depend on the experiment")
        rule = f"ls_experiment:{experiment}"
    if rule not in RULE_KEYS:
        raise KeyError(f"rule {rule!r} declares no config keys in mpdp.pipeline.rule_keys.RULE_KEYS")
    keys = RULE_KEYS[rule]
    if rule == "train_job:u_sweep":
        if dataset is None:
            raise ValueError("u-sweep train_job keys depend on the data set")
        keys = (*keys, f"wddp.u_grid.{dataset}")
    if rule == "audit_table" and cfg.get("benchmark"):  # δ of the Gaussian audits (spec A0)
        # and the benchmark mechanisms' own audit settings (mpdp.studies.benchmark.registry)
        keys = (*keys, "benchmark.delta", "benchmark.mechanisms", "benchmark.reference", "benchmark.dpsgd")
    if rule == "claims_tables":
        keys = (*keys, *(k for section, ks in _CLAIMS_KEYS.items() if cfg.get(section) for k in ks))
    if rule == "learning_rates:cv" and cfg["wddp"]["cv"]["scope"] == "per_setting":
        # one selection per training setting (mpdp.studies.wddp.cv.cv_settings)
        keys = (*keys, "wddp.eps_grid", "wddp.m_grid", "wddp.u_settings", "wddp.u_grid",
                "wddp.leftover", "wddp.small_group_frac")
    if rule in ("optimum", "learning_rates:cv") and cfg["split"].get("per_repetition", True):
        keys = (*keys, "wddp.reps")  # one θ* (one η selection) per repetition
    if rule == "prepare":
        if dataset is None:
            raise ValueError("prepare keys depend on the data set")
        keys = (*keys, *DATASET_KEYS[dataset])
    return keys


def settings(cfg: Mapping[str, Any], rule: str, **wildcards: str | None) -> dict[str, Any]:
    """The ``settings`` param of a job: ``{dotted key: value}`` for the keys it reads."""
    return mpdp_config.select(cfg, keys_for(rule, cfg, **wildcards))


def param(cfg: Mapping[str, Any], rule: str, **wildcards: str | None) -> str:
    """The ``settings`` param of a job, compact: a hash of ``{dotted key: value}`` over the keys
    it reads and how many, e.g. ``sha256:3f2a…(17 keys read by rule 'train_job')``. A
    change of any of them reruns the job; Snakemake's rerun reason prints this line (issue 37:
    the whole section printed twice was ~2 KB per job). ``snakemake --list-params-changes``
    lists the jobs; :func:`settings` gives the values."""
    values = settings(cfg, rule, **wildcards)
    digest = hashlib.sha256(json.dumps(values, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return f"sha256:{digest} ({len(values)} keys read by rule {rule!r})"


def rule_config(raw: Mapping[str, Any], rule: str, **wildcards: str | None) -> dict[str, Any]:
    """The validated config reduced to the keys a job of ``rule`` reads (for its script): those of
    :func:`keys_for`, or of :data:`UNTRACKED_KEYS`; the whole config for a rule of
    :data:`WHOLE_CONFIG`. Any other key raises :class:`mpdp.config.UndeclaredKeyError`."""
    cfg = mpdp_config.validate(dict(raw))
    if rule in WHOLE_CONFIG:
        return cfg
    keys = UNTRACKED_KEYS[rule] if rule in UNTRACKED_KEYS else keys_for(rule, cfg, **wildcards)
    return mpdp_config.restrict(cfg, keys, owner=f"rule {rule!r}")


def all_keys(cfg: Mapping[str, Any]) -> Iterable[str]:
    """Every dotted leaf key of ``cfg`` (sections expanded), for the tests. A mapping whose own keys
    are dotted paths (``multiverse.base``) is one leaf."""
    for key, value in cfg.items():
        if isinstance(value, Mapping) and value and not any("." in str(k) for k in value):
            yield from (f"{key}.{sub}" for sub in all_keys(value))
        else:
            yield str(key)
