"""Checks at planning time of what the schema cannot see (spec E8: a bad config stops before
any job, with one line naming the key and the fix).

:func:`check` runs in ``workflow/rules/common.smk`` after the schema and the data-set
availability are known, before Snakemake schedules anything. It raises
:class:`~mpdp.errors.ConfigError` for a user's mistake (a value outside the grid it must come
from, a setting the study cannot run) and returns the warnings of :func:`warnings`: choices
the *data* forces (a party count larger than a data set allows), which the console shows and
the report's deviations section lists.

Data-set sizes: a data card of the current preprocessing gives the exact training size; without
one (a fresh clone) an upper bound from ``max_records`` (and a data set's own cap, e.g. ``preprocess.kdd_sample_size``)
stands in, so only settings impossible for every possible size are refused there; the jobs
check the exact size again.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpdp import config as mpdp_config
from mpdp import io as mpdp_io
from mpdp.audit.adapters import GradientCanaryAdapter, L2OutputPerturbationAdapter
from mpdp.audit.registry import ADAPTERS
from mpdp.data import prepare, registry
from mpdp.data.partition import two_group_records
from mpdp.errors import ConfigError, InputDataError, MpdpError
from mpdp.multiverse import reseeding
from mpdp.multiverse import spec as multiverse_spec
from mpdp.pipeline import planning_budgets, planning_cost
from mpdp.pipeline.planning_studies import audit_warnings, check_audit_settings
from mpdp.studies.registry import STUDIES

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


def check(cfg: Mapping[str, Any], available: list[str], cards: Cards, multiverse: bool = False) -> list[str]:
    """Raise :class:`ConfigError` for the first planning error; return :func:`warnings`. First
    the cost check (:mod:`mpdp.pipeline.planning_cost`, before anything expands a run), then each
    study's checks from its registry entry (:data:`mpdp.studies.registry.STUDIES`), the audit's,
    the budgets' and the structure of the ``multiverse`` section (:func:`check_multiverse_spec`).
    ``multiverse``: the build includes the multiverse (``snakemake multiverse``): every universe's
    config is checked too, and its warnings and the multiverse's are returned (issue 58: a
    universe never stops, nor warns in, a plain build)."""
    sizes = _sizes(cfg, available, cards)
    planning_cost.check(cfg, available, sizes)  # first: nothing below may expand a runaway grid (issue 58)
    for study in STUDIES:
        study.check(cfg, available, sizes)
    _check_audit(cfg, available, sizes)
    check_audit_settings(cfg)
    planning_budgets.check(cfg, available, sizes)  # accountants' ranges, selection budgets, trials (issue 47)
    check_multiverse_spec(cfg)
    lines = warnings(cfg, available, cards, multiverse)
    if multiverse and "multiverse" in cfg:
        lines += [line for line in check_multiverse(cfg, available, cards) if line not in lines]
    return lines


def _sizes(cfg: Mapping[str, Any], available: list[str], cards: Cards) -> dict[str, Size]:
    return {ds: size for ds in available if (size := data_size(cfg, ds, cards.get(ds))) is not None}


def check_multiverse_spec(cfg: Mapping[str, Any]) -> None:
    """The ``multiverse`` section's own structure, on every build (the workflow lists the
    universes at parse time): its universes (reseeds of seed keys only, no universe twice) and
    each one's config built (:func:`mpdp.multiverse.spec.universe_config`: every key it names is a
    leaf key of this config). Raises :class:`ConfigError` naming the multiverse key."""
    if "multiverse" not in cfg:
        return
    for universe in multiverse_spec.universes(cfg):
        multiverse_spec.universe_config(cfg, universe)
    reseeding.reseeds(cfg)  # the reseeding check's own (multiverse.check_reseeds): seed keys only


def _where(universe: multiverse_spec.Universe) -> tuple[str, str]:
    """The multiverse key that defines ``universe``, and what it sets there ("" for the default)."""
    if universe.kind == "default":
        return "multiverse.base", ""
    if universe.kind == "reseed":
        return f"multiverse.reseeds.{universe.index}", f" ({universe.value_label})"
    if universe.kind == "joint":
        return "multiverse.joint", f" ({universe.value_label})"
    also = "".join(f", {k} = {json.dumps(v)}" for k, v in universe.also)
    return (f"multiverse.choices.{universe.index}",
            f" (choice {universe.choice!r}, {universe.key} = {universe.value_label}{also})")


#: a planning warning about a figure (``fig06``): a universe builds the claims tables only
#: (:data:`mpdp.multiverse.universe.TARGETS`), so its reduced grid's missing curves are no news
FIGURE_WARNING = re.compile(r"\bfig\d\d\b")


def check_multiverse(cfg: Mapping[str, Any], available: list[str], cards: Cards) -> list[str]:
    """Validate every universe of ``multiverse:`` that runs (issue 38) as a config of its own: the base
    overrides and each alternative merged in (:func:`mpdp.multiverse.spec.universe_config`), then
    the schema and :func:`check`. The first bad one raises :class:`ConfigError` in one line naming
    the choice, its key and value, so ``snakemake multiverse`` stops before any universe runs.
    Returns the universes' planning warnings that the main config does not have (issue 58: a
    universe's ``wddp.reps: 1`` warns as the main config's would), each once, with the universes
    that have it: ``multiverse.base`` when every universe does; warnings about a figure
    (:data:`FIGURE_WARNING`) are left out. Called only when the build
    includes the multiverse (:func:`check` with ``multiverse``). A universe's own config has no
    ``multiverse`` section, so this does not recurse."""
    if "multiverse" not in cfg:
        return []
    main = set(warnings(cfg, available, cards))
    found: dict[str, list[multiverse_spec.Universe]] = {}
    universes = multiverse_spec.to_run(cfg)
    for universe in universes:
        ucfg = multiverse_spec.universe_config(cfg, universe)  # raises for a key not in the config
        try:
            valid = mpdp_config.validate(ucfg)
            lines = check(valid, [ds for ds in valid["datasets"] if ds in available], cards)
        except ConfigError as exc:
            reason = "; ".join(line.strip() for line in str(exc).splitlines()
                               if line.strip() and line.strip() != "invalid configuration:")
            key, what = _where(universe)
            raise ConfigError(f"config key '{key}'{what}: this universe's config is invalid: {reason}") from None
        for line in lines:
            if line not in main and not FIGURE_WARNING.search(line):
                found.setdefault(line, []).append(universe)
    out = []
    for line, where in found.items():
        ids = [u.id for u in where]
        shown = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
        head = "multiverse.base" if len(where) == len(universes) else _where(where[0])[0]
        out.append(f"{head}: in the multiverse's universe{'s' if len(ids) > 1 else ''} {shown}: {line}")
    return out


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


def warnings(cfg: Mapping[str, Any], available: list[str], cards: Cards, multiverse: bool = False) -> list[str]:
    """Substitutions and no-ops of this config (one sentence each, naming the key): each study's
    (its registry entry: e.g. WD-DP figures whose fixed m or (m, ε) is not trained, every M of
    ``voting.M_grid`` a data set is too small for, at the data cards or the size bound), then audit keys
    without effect (:mod:`mpdp.pipeline.planning_studies`) and the privacy budgets' warnings
    (:mod:`mpdp.pipeline.planning_budgets`); with ``multiverse`` (the build includes it) the
    multiverse section's own (:func:`mpdp.multiverse.spec.planning_warnings`: an alternative equal
    to the default, which a plain build has no reason to mention, issue 58)."""
    sizes = _sizes(cfg, available, cards)
    own = multiverse_spec.planning_warnings(cfg) if multiverse and "multiverse" in cfg else []
    return [*(line for study in STUDIES for line in study.warnings(cfg, available, sizes)), *audit_warnings(cfg),
            *planning_budgets.warnings(cfg), *own]


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
    cap_key = registry.get(dataset).record_cap_key  # e.g. KDDCup99's sample size
    if cap_key is not None:
        caps.append(mpdp_config.lookup(cfg, cap_key))
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
        if ds in available and size is not None and size.n_train < two_group_records(m, u):
            raise ConfigError(
                f"config key '{key}.m': m = {m} parties with u = {u} need at least {two_group_records(m, u)} "
                f"training records, {ds} has {size.describe()}; lower {key}.m or {key}.u, or raise max_records"
            )


