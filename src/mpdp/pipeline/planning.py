"""Checks at planning time of what the schema cannot see (spec E8: a bad config stops before
any job, with one line naming the key and the fix).

:func:`check` runs in ``workflow/rules/common.smk`` after the schema and the data-set
availability are known, before Snakemake schedules anything. It raises
:class:`~mpdp.errors.ConfigError` for a user's mistake (a value outside the grid it must come
from, a setting the study cannot run) and returns the warnings of :func:`warnings`: choices
the *data* forces (a party count larger than a data set allows), which the console shows and
the report's deviations section lists.

Data-set sizes: a data card of the current preprocessing gives the exact training size; without
one (a fresh clone) an upper bound from ``max_records`` (and ``preprocess.kdd_sample_size``)
stands in, so only settings impossible for every possible size are refused there; the jobs
check the exact size again.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpdp import config as mpdp_config
from mpdp import io as mpdp_io
from mpdp.audit.adapters import GradientCanaryAdapter, L2OutputPerturbationAdapter
from mpdp.audit.registry import ADAPTERS
from mpdp.data import prepare
from mpdp.errors import ConfigError, InputDataError, MpdpError
from mpdp.multiverse import spec as multiverse_spec
from mpdp.pipeline import planning_budgets
from mpdp.pipeline.planning_studies import (
    audit_warnings,
    check_admm,
    check_audit_settings,
    check_voting,
    check_wddp,
    dataset_warnings,
    wddp_figure_warnings,
)
from mpdp.studies.voting.plan import feasible_M

#: data set id -> its data card (None or absent: not prepared yet)
Cards = Mapping[str, str | Path | None]


@dataclass(frozen=True)
class Size:
    """Records of a prepared data set: exact (from its data card) or an upper bound."""

    n_total: int
    n_train: int
    exact: bool

    def describe(self) -> str:
        return f"{self.n_train} training records" if self.exact else f"at most {self.n_train} training records"


def check(cfg: Mapping[str, Any], available: list[str], cards: Cards) -> list[str]:
    """Raise :class:`ConfigError` for the first planning error; return :func:`warnings`."""
    sizes = {ds: size for ds in available if (size := data_size(cfg, ds, cards.get(ds))) is not None}
    check_wddp(cfg, available, sizes)
    _check_audit(cfg, available, sizes)
    check_audit_settings(cfg)
    _check_admm(cfg, available, sizes)
    check_admm(cfg)
    _check_voting(cfg)
    check_voting(cfg)
    planning_budgets.check(cfg, available, sizes)  # accountants' ranges, selection budgets, trials (issue 47)
    b = cfg.get("benchmark")
    if b is not None and not b["datasets"]:
        raise ConfigError("config key 'benchmark.datasets': empty, so the benchmark would have no table; "
                          "list data sets, or remove the 'benchmark' section to switch the study off")
    check_multiverse(cfg, available, cards)
    return warnings(cfg, available, cards)


def check_multiverse(cfg: Mapping[str, Any], available: list[str], cards: Cards) -> None:
    """Validate every universe of ``multiverse:`` (issue 38) as a config of its own: the base
    overrides and each alternative merged in (:func:`mpdp.multiverse.spec.universe_config`), then
    the schema and :func:`check`. The first bad one raises :class:`ConfigError` in one line naming
    the choice, its key and value, so ``snakemake multiverse`` stops before any universe runs.
    A universe's own config has no ``multiverse`` section, so this does not recurse."""
    if "multiverse" not in cfg:
        return
    for universe in multiverse_spec.universes(cfg):
        where = ("config key 'multiverse.base'" if universe.key is None else
                 f"config key 'multiverse.choices.{universe.index}' (choice {universe.choice!r}, "
                 f"{universe.key} = {universe.value_label})")
        ucfg = multiverse_spec.universe_config(cfg, universe)  # raises for a key not in the config
        try:
            valid = mpdp_config.validate(ucfg)
            check(valid, [ds for ds in valid["datasets"] if ds in available], cards)
        except ConfigError as exc:
            reason = "; ".join(line.strip() for line in str(exc).splitlines()
                               if line.strip() and line.strip() != "invalid configuration:")
            raise ConfigError(f"{where}: this universe's config is invalid: {reason}") from None


#: folders the workflow writes into (relative to its working directory)
OUTPUT_FOLDERS = ("data", "logs", "reports", "reports/figures", ".snakemake")


def check_writable(workdir: str | Path = ".") -> None:
    """Raise :class:`MpdpError` if an existing output folder cannot be written: Snakemake would
    otherwise fail when it removes or writes the first output there, with its own traceback."""
    for folder in OUTPUT_FOLDERS:
        path = Path(workdir) / folder
        if path.is_dir() and not os.access(path, os.W_OK | os.X_OK):
            raise MpdpError(f"the folder {folder}/ is not writable, and the workflow writes its outputs there; "
                            f"make it writable (chmod -R u+w {folder}) or run in a writable copy of the checkout")
    planning_budgets.check_output_tree(workdir)  # every folder below them too (issue 47)


def warnings(cfg: Mapping[str, Any], available: list[str], cards: Cards) -> list[str]:
    """Substitutions and no-ops of this config (one sentence each, naming the key): WD-DP
    figures whose fixed m or (m, ε) is not trained, audit keys without effect
    (:mod:`mpdp.pipeline.planning_studies`), and every M of ``voting.M_grid`` a data set is too small
    for (its tables drop it; the figures at ``voting.h1_M`` then show the largest feasible M
    below it; needs the data cards: data sets not prepared yet are not judged)."""
    v = cfg["voting"]
    out = [*wddp_figure_warnings(cfg), *audit_warnings(cfg), *dataset_warnings(cfg, available),
           *planning_budgets.warnings(cfg), *(multiverse_spec.repeated_defaults(cfg) if "multiverse" in cfg else [])]
    for ds in [d for d in dict.fromkeys([*v["datasets"], *v["multiclass_datasets"]]) if d in available]:
        size = data_size(cfg, ds, cards.get(ds))
        if size is None or not size.exact:
            continue
        n_private = size.n_train - math.ceil(round(v["aux_frac"] * size.n_total, 9))
        feasible = feasible_M(v["M_grid"], n_private, v["min_party_size"])
        dropped = [M for M in v["M_grid"] if M not in feasible]
        if not dropped:
            continue
        line = (f"voting.M_grid: M = {', '.join(map(str, dropped))} dropped for {ds}: its private pool of "
                f"{n_private} records leaves fewer than voting.min_party_size = {v['min_party_size']} per party")
        h1_M = v["h1_M"]
        if h1_M in dropped and feasible:
            shown = max([m for m in feasible if m <= h1_M] or feasible[:1])
            line += f"; the figures at voting.h1_M = {h1_M} show M = {shown} instead"
        out.append(line)
    return out


def data_size(cfg: Mapping[str, Any], dataset: str, card: str | Path | None) -> Size | None:
    """The exact size from ``card`` when it records the preprocessing of ``cfg``; else an upper
    bound from the record caps of the config (None when the config caps nothing)."""
    if card is not None and Path(card).is_file():
        try:
            data = mpdp_io.read_json(card, "data card")
            current = json.loads(json.dumps(prepare.preprocessing(dataset, cfg))) == data.get("preprocessing")
            if current:
                return Size(int(data["n_train"]) + int(data["n_test"]), int(data["n_train"]), exact=True)
        except (InputDataError, ValueError, KeyError, TypeError):
            pass  # an unreadable card is rebuilt by its job; judge by the bound meanwhile
    caps = [cfg.get("max_records")]
    if dataset == "kddcup99":
        caps.append(cfg["preprocess"]["kdd_sample_size"])
    caps = [c for c in caps if c is not None]
    if not caps:
        return None
    n_total = min(caps)
    return Size(n_total, n_total - math.ceil(round(cfg["split"]["test_frac"] * n_total, 9)), exact=False)


def _check_audit(cfg: Mapping[str, Any], available: list[str], sizes: Mapping[str, Size]) -> None:
    for i, setting in enumerate(cfg["audit"]["settings"]):
        key = f"audit.settings.{i}"
        adapter = ADAPTERS.get(setting["mechanism"])
        if adapter is None:
            raise ConfigError(f"config key '{key}.mechanism': no audit adapter {setting['mechanism']!r}; "
                              f"known: {sorted(ADAPTERS)}")
        real_pair = isinstance(adapter, L2OutputPerturbationAdapter) and setting.get("pair") == "real_record"
        if not (isinstance(adapter, GradientCanaryAdapter) or real_pair):
            continue
        ds = setting.get("dataset")
        if ds is None:
            raise ConfigError(f"config key '{key}.dataset': missing; the {setting['mechanism']} audit runs on a "
                              f"real data set's sizes: add dataset: <one of {list(cfg['datasets'])}>")
        if not isinstance(adapter, GradientCanaryAdapter) or adapter.mode == "central":
            continue
        for part in ("m", "u"):
            if setting.get(part) is None:
                raise ConfigError(f"config key '{key}.{part}': missing; the {setting['mechanism']} audit "
                                  "needs the party count m and the size ratio u of its two-group partition")
        size = sizes.get(ds)
        m, u = int(setting["m"]), int(setting["u"])
        if ds in available and size is not None and size.n_train // (m // 2 * (1 + u)) < 1:
            raise ConfigError(
                f"config key '{key}.m': m = {m} parties with u = {u} need at least {m // 2 * (1 + u)} "
                f"training records, {ds} has {size.describe()}; lower {key}.m or {key}.u, or raise max_records"
            )


def _check_admm(cfg: Mapping[str, Any], available: list[str], sizes: Mapping[str, Size]) -> None:
    a = cfg.get("admm")
    if not a:
        return
    extra = sorted(set(map(float, a["f3_alphas"])) - set(map(float, a["alpha_grid"])))
    if extra:
        raise ConfigError(f"config key 'admm.f3_alphas': {extra} not in admm.alpha_grid = {a['alpha_grid']}; "
                          "Z-F3 draws only trained α: pick its α from admm.alpha_grid or add them there")
    if a["footing"] == "per_method_if_stable" and a["tune_draws"] < 2:
        raise ConfigError(f"config key 'admm.tune_draws': {a['tune_draws']} draw cannot show a per-method η "
                          "stable (footing: per_method_if_stable needs at least 2); raise it or set "
                          "admm.footing: shared")
    beyond = [t for t in a["f4_iterations"] if t > a["T"]]
    if beyond:
        raise ConfigError(f"config key 'admm.f4_iterations': {beyond} beyond admm.T = {a['T']}; "
                          "Z-F4's panels show recorded iterations: lower them or raise admm.T")
    size = sizes.get(a["dataset"])
    if a["dataset"] in available and size is not None and size.n_train < 2 * a["P"]:
        raise ConfigError(
            f"config key 'admm.P': P = {a['P']} nodes need at least {2 * a['P']} training records "
            f"(two per node), {a['dataset']} has {size.describe()}; lower admm.P or raise max_records"
        )


def _check_voting(cfg: Mapping[str, Any]) -> None:
    v = cfg["voting"]
    if not v["datasets"]:
        raise ConfigError("config key 'voting.datasets': empty, so H-1…H-4 and B5 would have no binary table; "
                          f"list binary data sets (e.g. {list(cfg['datasets'])[:3]})")
    if v["h1_M"] not in v["M_grid"]:
        raise ConfigError(f"config key 'voting.h1_M': {v['h1_M']} is not in voting.M_grid = {v['M_grid']}; "
                          "H-1 and B5 are drawn at a trained M: pick one of the grid")
