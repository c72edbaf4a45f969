"""The declared alternatives of the ``multiverse:`` config section and the universes they
define (issue 38; the open choices of spec experiments.md E7, E4, E5).

``multiverse.choices`` is a list of ``{choice, key, values, source[, also]}``: ``key`` a dotted path
into the validated config (``wddp.lambda``), ``values`` the alternatives to its default,
``source`` why each is plausible (a spec row or a paper), ``also`` (issue 60) dotted keys set
together with every value of the choice, where a value needs another setting to run at all
(``scaling_bounds: train_split`` needs ``split.per_repetition: false``). ``multiverse.base`` maps dotted keys
to the values every universe, the default's included, runs with (fewer repetitions, smaller
grids: the time budget of docs/multiverse.md). A universe's config is the validated config
without its ``multiverse`` section, with the base and then the one alternative set
(:func:`universe_config`); it is validated like any config, with its warnings, by
:func:`mpdp.pipeline.planning.check_multiverse` when the multiverse is built (a plain build
checks only the section's own structure: :func:`universes` and :func:`universe_config`).

``multiverse.reseeds`` (issue 48) lists reseeded defaults: each maps seed keys (``root_seed``,
``split.seed``; no other key, :func:`check_seed_keys`) to other values, and runs as a universe of
its own (choice :data:`RESEED`). They
are the reseeding baseline: a verdict change under a choice is fragile only beyond what
reseeding alone does (:mod:`.collect`). ``multiverse.joint`` names choices to vary together: a
random sample of their combinations runs as universes of kind ``joint`` (:func:`joint_sample`).
"""

from __future__ import annotations

import copy
import itertools
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from mpdp import config as mpdp_config
from mpdp.errors import ConfigError

#: the private selections' knobs (issue 43: final share, expected trials, score clip), which the
#: shipped robustness runs vary (config/config.yaml, config/smoke.yaml; tested)
SELECTION_KNOBS = ("benchmark.selection.final_share", "benchmark.selection.trials.mean",
                   "benchmark.selection.score_clip", "voting.selection.final_share",
                   "voting.selection.trials.mean")

#: the universe that runs the base config with no alternative
DEFAULT = "default"
#: where each universe runs (its own data/, logs/, .snakemake/), relative to the workflow root
ROOT = "data/multiverse"
#: the collected table (issue 38 contract)
TABLE_PATH = "data/results/claims/multiverse.parquet"
#: the figure (claims × alternatives)
FIGURE_PNG = "reports/figures/multiverse.png"
FIGURE_PDF = "reports/figures/multiverse.pdf"
#: the specification curves (issue 48): per claim, every universe's estimate and interval, sorted
CURVES_PNG = "reports/figures/multiverse_curves.png"
CURVES_PDF = "reports/figures/multiverse_curves.pdf"
#: every figure of the multiverse (rule ``multiverse``'s outputs besides the table)
FIGURES = (FIGURE_PNG, FIGURE_PDF, CURVES_PNG, CURVES_PDF)
#: the ``choice`` of a reseeded default universe (issue 48: the reseeding baseline)
RESEED = "reseed"
#: the ``choice`` of a universe that varies several choices at once (issue 48: ``multiverse.joint``)
JOINT = "joint"
#: universe kinds whose ``value`` maps dotted keys to values (several keys at once)
MULTI_KEY = (RESEED, JOINT)


@dataclass(frozen=True)
class Universe:
    """One run of the claims: ``choice`` is None for the default universe; :data:`RESEED` for a
    reseeded default (``value`` then maps each dotted seed key to its value, ``key`` names them)."""

    choice: str | None
    key: str | None
    value: Any
    source: str
    index: int | None = None  # position of the choice in multiverse.choices (or of the reseed)
    #: a choice's ``also`` (issue 60): (dotted key, value) pairs set with its value
    also: tuple[tuple[str, Any], ...] = ()

    @property
    def id(self) -> str:
        """The universe's folder name under :data:`ROOT` (``<choice>=<value slug>``)."""
        return DEFAULT if self.choice is None else f"{self.choice}={slug(self.value)}"

    @property
    def kind(self) -> str:
        """``default``, ``reseed`` (the reseeding baseline), ``joint`` (several choices at once) or
        ``choice`` (one alternative)."""
        if self.choice is None:
            return "default"
        return str(self.choice) if self.choice in MULTI_KEY else "choice"

    @property
    def settings(self) -> dict[str, Any]:
        """Dotted key -> value this universe sets over the default (empty for the default; a
        choice's value with its ``also`` settings)."""
        if self.choice is None:
            return {}
        return dict(self.value) if self.kind in MULTI_KEY else {str(self.key): self.value, **dict(self.also)}

    @property
    def value_label(self) -> str:
        """The value as the table and the report show it (JSON, so lists and booleans are exact;
        a reseed or joint universe as ``key = value`` pairs)."""
        if self.choice is None:
            return "default"
        if self.kind in MULTI_KEY:
            return ", ".join(f"{k} = {json.dumps(v)}" for k, v in self.value.items())
        return json.dumps(self.value)


def slug(value: Any) -> str:
    """A file-name-safe, deterministic rendering of ``value`` (``[0.05, 0.1]`` -> ``0.05_0.1``)."""
    text = re.sub(r"[^A-Za-z0-9.+-]+", "_", json.dumps(value, sort_keys=True)).strip("_")
    return text or "empty"


#: the config sections of optional studies: a config without one switches that study off, and the
#: multiverse's base keys and choices inside it are then skipped (no universe varies a study that
#: does not run)
OPTIONAL_SECTIONS = ("ls", "voting", "admm", "audit", "benchmark")


def switched_off(cfg: Mapping[str, Any], key: str) -> bool:
    """Whether dotted ``key`` lies in an optional study's section that ``cfg`` does not have."""
    top = key.split(".", 1)[0]
    return top in OPTIONAL_SECTIONS and top not in cfg


def section(cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    """The ``multiverse`` section (empty when the config has none)."""
    return cfg.get("multiverse") or {}


def full_grid(cfg: Mapping[str, Any]) -> bool:
    """``multiverse.full_grid`` (issue 48): every universe on the headline's own grid, without
    ``multiverse.base``; the default universe is then the main build itself (its config is the
    main config), so it is not rerun (:func:`mpdp.multiverse.universe.adopt_main_build`)."""
    return bool(section(cfg).get("full_grid", False))


def universes(cfg: Mapping[str, Any]) -> list[Universe]:
    """The default universe, then one per (choice, value) in declaration order."""
    out = [Universe(None, None, None, "the main build (multiverse.full_grid)" if full_grid(cfg)
                    else "the pipeline's defaults with multiverse.base")]
    for i, seeds in enumerate(section(cfg).get("reseeds", [])):
        check_seed_keys(seeds, f"multiverse.reseeds.{i}")
        seeds = {k: v for k, v in seeds.items() if not switched_off(cfg, k)}
        if seeds:
            out.append(Universe(RESEED, ", ".join(seeds), seeds, "the default with other random streams "
                                "(the reseeding baseline)", i))
    for i, ch in enumerate(section(cfg).get("choices", [])):
        if ch["choice"] in MULTI_KEY:
            raise ConfigError(f"config key 'multiverse.choices.{i}.choice': {ch['choice']!r} names the reseeded "
                              "defaults or the joint sample (multiverse.reseeds, multiverse.joint); give the choice "
                              "another name")
        if switched_off(cfg, ch["key"]):
            continue
        if ch["key"] in ch.get("also", {}):
            raise ConfigError(f"config key 'multiverse.choices.{i}.also': sets the choice's own key {ch['key']!r}; "
                              "list its values under values")
        also = tuple(ch.get("also", {}).items())
        out += [Universe(ch["choice"], ch["key"], v, ch["source"], i, also) for v in ch["values"]]
    combos, total = joint_sample(cfg)
    names = ", ".join(section(cfg).get("joint", {}).get("choices", []))
    out += [Universe(JOINT, ", ".join(c), c, f"joint variation of {names}: a random sample of {len(combos)} of the "
                     f"{total} combinations that vary two or more of them (Steegen et al. 2016)", j)
            for j, c in enumerate(combos)]
    ids = [u.id for u in out]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        raise ConfigError(f"config key 'multiverse.choices': universes {dup} declared twice; "
                          "give each choice a unique name and each of its values once")
    return out


#: the workflow's multiverse rules (``snakemake multiverse`` and one universe's job)
RULES = ("multiverse", "multiverse_universe")
#: targets that build the report, which depends on the robustness table once it exists
#: (``multiverse_report_files`` in workflow/rules/common.smk): the default target among them
REPORT_TARGETS = ("all", "report_html", "reports/report.html")


def in_build(targets: Iterable[str] | None, table_exists: bool) -> bool:
    """Whether a Snakemake call with ``targets`` (its command line's; none: the default target;
    None: unknown, counted as built) builds the multiverse (issue 58: only then are its universes
    checked and its warnings shown): a multiverse rule or output is named, or the report is built
    while the robustness table exists (the report then depends on it, so a stale table is rebuilt
    first)."""
    if targets is None:
        return True
    targets = [str(t) for t in targets]
    outputs = (TABLE_PATH, *FIGURES)
    if any(t in RULES or t in outputs or t.startswith(ROOT + "/") for t in targets):
        return True
    return table_exists and (not targets or any(t in REPORT_TARGETS for t in targets))


def seed_keys() -> tuple[str, ...]:
    """The config's seed keys (issue 58): every schema leaf named ``seed`` or ``root_seed``
    outside the ``multiverse`` section (``root_seed``, ``split.seed``); a seed key added to the
    schema is one here too."""
    return tuple(leaf for leaf in mpdp_config.schema_leaves()
                 if leaf.rsplit(".", 1)[-1] in ("seed", "root_seed") and not leaf.startswith("multiverse."))


def check_seed_keys(seeds: Mapping[str, Any], where: str) -> None:
    """A reseeded default sets seed keys only (issue 58): any other key would vary a choice inside
    the reseeding baseline, which every choice's verdict change is measured against."""
    allowed = seed_keys()
    for key in seeds:
        if key not in allowed:
            raise ConfigError(f"config key '{where}.{key}': {key!r} is not a seed key, and a reseeded default may "
                              f"set only seed keys ({', '.join(allowed)}); declare it in multiverse.choices instead")


def joint_sample(cfg: Mapping[str, Any]) -> tuple[list[dict[str, Any]], int]:
    """``multiverse.joint`` (issue 48): the combinations of the named choices' values (each choice
    at its default or one of its alternatives) that vary at least two of them, and a random sample
    of ``sample`` of them (``seed``; without replacement, in enumeration order). Returns the
    sample, each as its non-default settings, and the number of combinations it was drawn from.
    A named choice that ``multiverse.choices`` does not declare (e.g. a config that replaces the
    choices list) is left out with a planning warning (:func:`joint_warnings`), like a choice of a
    study switched off."""
    joint = section(cfg).get("joint")
    if not joint:
        return [], 0
    by_name = {ch["choice"]: ch for ch in section(cfg).get("choices", [])}
    chosen = [by_name[n] for n in joint["choices"] if n in by_name and not switched_off(cfg, by_name[n]["key"])]
    default = universe_config(cfg, Universe(None, None, None, ""))
    options = [[None, *ch["values"]] for ch in chosen]  # None: the key at its default
    combos = []
    for pick in itertools.product(*(range(len(o)) for o in options)):
        setting = {ch["key"]: opts[k] for ch, opts, k in zip(chosen, options, pick, strict=True) if k > 0}
        for ch, k in zip(chosen, pick, strict=True):  # a chosen value's own ``also`` settings (issue 60)
            if k > 0:
                setting.update(ch.get("also", {}))
        varied = {ch["key"] for ch, k in zip(chosen, pick, strict=True) if k > 0}
        if len(varied) >= 2 and not all(_same(get(default, key), v) for key, v in setting.items()):
            combos.append(setting)
    rng = np.random.default_rng(joint.get("seed", 0))
    picked = sorted(rng.choice(len(combos), size=min(joint["sample"], len(combos)), replace=False).tolist())
    return [combos[i] for i in picked], len(combos)


def get(cfg: Mapping[str, Any], key: str) -> Any:
    """The value at dotted ``key``; KeyError naming the first missing part."""
    node: Any = cfg
    for i, part in enumerate(key.split(".")):
        if not isinstance(node, Mapping) or part not in node:
            raise KeyError(".".join(key.split(".")[: i + 1]))
        node = node[part]
    return node


def put(cfg: dict[str, Any], key: str, value: Any) -> None:
    """Set dotted ``key`` of ``cfg`` in place (the key must exist: see :func:`get`)."""
    *parents, last = key.split(".")
    node = cfg
    for part in parents:
        node = node[part]
    node[last] = copy.deepcopy(value)


def universe_config(cfg: Mapping[str, Any], universe: Universe) -> dict[str, Any]:
    """The full config a universe runs with (no ``multiverse`` section: a universe never nests).

    ``cfg`` is the validated config; raises :class:`ConfigError` naming ``multiverse.base`` or
    the choice when a key is not in it (a typo, or a study switched off in this config).
    """
    out = {k: copy.deepcopy(v) for k, v in cfg.items() if k != "multiverse"}
    for key, value in ({} if full_grid(cfg) else section(cfg).get("base", {})).items():
        if switched_off(out, key):
            continue
        _check_key(out, key, f"config key 'multiverse.base.{key}'")
        put(out, key, value)
    if universe.kind in MULTI_KEY:
        for key, value in universe.settings.items():
            where = (f"config key 'multiverse.reseeds.{universe.index}.{key}'" if universe.kind == "reseed"
                     else f"config key 'multiverse.joint' ({key})")
            _check_key(out, key, where)
            _check_alternative(out, Universe(universe.choice, key, value, universe.source, universe.index), where)
            put(out, key, value)
    elif universe.key is not None:
        where = f"config key 'multiverse.choices.{universe.index}.key' (choice {universe.choice!r})"
        _check_key(out, universe.key, where)
        _check_alternative(out, universe, where)
        put(out, universe.key, universe.value)
        for key, value in universe.also:
            also = f"config key 'multiverse.choices.{universe.index}.also.{key}' (choice {universe.choice!r})"
            _check_key(out, key, also)
            _check_alternative(out, Universe(universe.choice, key, value, universe.source, universe.index), also)
            put(out, key, value)
    return out


def _check_alternative(cfg: Mapping[str, Any], universe: Universe, where: str) -> None:
    """A choice names one leaf key and an alternative differs from that key's value in every
    universe (issue 47): a whole section set to a mapping silently replaces its other keys too,
    (a value equal to the default, which makes an "alternative" identical to the default universe, is
    a planning warning: :func:`repeated_defaults`)."""
    current = get(cfg, str(universe.key))
    if isinstance(current, Mapping):
        leaves = ", ".join(f"{universe.key}.{k}" for k in list(current)[:4])
        raise ConfigError(f"{where}: {universe.key!r} is a whole section, so an alternative would replace its "
                          f"other keys too; name one leaf key (e.g. {leaves}) per choice")


def repeats_default(cfg: Mapping[str, Any], universe: Universe) -> bool:
    """Whether ``universe`` sets only values the default universe already has (it would repeat the
    default universe: :func:`repeated_defaults` warns, and it is not run but listed in the table)."""
    if universe.kind == "default":
        return False
    default = universe_config(cfg, universes(cfg)[0])
    return all(_same(get(default, k), v) for k, v in universe.settings.items())


def to_run(cfg: Mapping[str, Any]) -> list[Universe]:
    """The universes that run: every one of :func:`universes` except those that repeat the default."""
    return [u for u in universes(cfg) if not repeats_default(cfg, u)]


def joint_warnings(cfg: Mapping[str, Any]) -> list[str]:
    """Planning warnings of ``multiverse.joint``: named choices not declared in ``multiverse.choices``."""
    joint = section(cfg).get("joint")
    if not joint:
        return []
    declared = {ch["choice"] for ch in section(cfg).get("choices", [])}
    unknown = [n for n in joint["choices"] if n not in declared]
    if not unknown:
        return []
    return [f"multiverse.joint.choices: {unknown} are not declared in multiverse.choices, so the joint sample "
            f"leaves them out (it varies {len(joint['choices']) - len(unknown)} choices jointly; with fewer than two "
            "it has no universe); name declared choices"]


def planning_warnings(cfg: Mapping[str, Any]) -> list[str]:
    """The multiverse's planning warnings: :func:`repeated_defaults` and :func:`joint_warnings`."""
    return [*repeated_defaults(cfg), *joint_warnings(cfg)]


def repeated_defaults(cfg: Mapping[str, Any]) -> list[str]:
    """Planning warnings (issue 47): each alternative whose value is the one its key has in every
    universe (the default with ``multiverse.base``), so that its universe repeats the default one.
    A warning, not an error: a user who sets that key in the main config must still be able to build."""
    repeated = [u for u in universes(cfg) if repeats_default(cfg, u)]
    out = [f"multiverse.reseeds.{u.index}: {u.value_label} are the values every universe has (the default with "
           "multiverse.base), so this reseeded default would repeat the default universe: it is not run (listed in "
           "the robustness table) and the reseeding baseline is weaker; give another seed"
           for u in repeated if u.kind == "reseed"]
    return out + [f"multiverse.choices.{u.index}.values: {u.value_label} (choice {u.choice!r}) is the value {u.key} "
                  "has in every universe (the default with multiverse.base), so this alternative would repeat the "
                  "default universe: it is not run (listed in the robustness table); remove it or give another value"
                  for u in repeated if u.kind == "choice"]


def same(a: Any, b: Any) -> bool:
    """Equal as config values (1 and 1.0 are, True and 1 are not): :func:`_same`."""
    return _same(a, b)


def _same(a: Any, b: Any) -> bool:
    """Equal as config values: 1 and 1.0 are, True and 1 are not."""
    def norm(v: Any) -> Any:
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return v
        if isinstance(v, int | float):
            return float(v)
        if isinstance(v, Mapping):
            return {str(k): norm(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [norm(x) for x in v]
        return v
    return json.dumps(norm(a), sort_keys=True) == json.dumps(norm(b), sort_keys=True)


def _check_key(cfg: Mapping[str, Any], key: str, where: str) -> None:
    try:
        get(cfg, key)
    except KeyError as exc:
        raise ConfigError(f"{where}: {key!r} is not a key of this config ({exc.args[0]!r} missing: a typo, "
                          "or a study this config switches off); name a key of config/config.yaml") from None
