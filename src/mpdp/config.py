"""Load and validate the pipeline configuration (JSON schema + cross-field checks).

A typo or a bad value stops the run before any job, with a message that names the key.
The schema lives in ``mpdp/schemas/config.schema.yaml``; defaults written there are filled in.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import math
import os
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from mpdp.data import registry
from mpdp.errors import ConfigError

MIRROR_ENV = "MPDP_DATA_MIRROR"


#: the schema's placeholder for the ids of the data-set registry: ``x-registry: datasets`` in a
#: node becomes ``enum: [every data set]`` (``multiclass_datasets``: those with a multiclass
#: label), and a ``patternProperties`` key ``"x-registry: datasets"`` the pattern of exactly their
#: ids; so a data set added to mpdp.data.registry is a valid config value without a schema edit
_REGISTRY_MARK = "x-registry"


def _registry_ids(kind: str) -> list[str]:
    if kind == "datasets":
        return list(registry.DATASETS)
    if kind == "multiclass_datasets":
        return list(registry.multiclass())
    raise ValueError(f"config schema: unknown {_REGISTRY_MARK} {kind!r}")


def _fill_registry(node: Any) -> Any:
    """The schema with the data-set registry's ids in place of its placeholders (see above)."""
    if isinstance(node, list):
        return [_fill_registry(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == _REGISTRY_MARK:
            out["enum"] = _registry_ids(value)
        elif key == "patternProperties":
            out[key] = {
                (f"^({registry.pattern(tuple(_registry_ids(k.split(':', 1)[1].strip())))})$"
                 if k.startswith(_REGISTRY_MARK + ":") else k): _fill_registry(v)
                for k, v in value.items()
            }
        else:
            out[key] = _fill_registry(value)
    return out


@functools.lru_cache(maxsize=1)
def _schema_cached() -> dict[str, Any]:
    text = resources.files("mpdp").joinpath("schemas/config.schema.yaml").read_text()
    return _fill_registry(yaml.safe_load(text))


def schema() -> dict[str, Any]:
    """The config schema (a fresh copy: callers may edit it)."""
    return copy.deepcopy(_schema_cached())


def _fill_defaults(instance: dict[str, Any], node: dict[str, Any]) -> None:
    for key, sub in node.get("properties", {}).items():
        if key not in instance and "default" in sub:
            instance[key] = copy.deepcopy(sub["default"])
        if isinstance(instance.get(key), dict) and sub.get("type") == "object":
            _fill_defaults(instance[key], sub)


def _key_path(error: jsonschema.ValidationError) -> str:
    return ".".join(str(p) for p in error.absolute_path) or "<top level>"


def _is_integer(checker: Any, instance: Any) -> bool:
    """JSON Schema's ``integer``, without the floats it accepts (``1e6`` in YAML is a string that
    :func:`_coerce_cli_strings` reads as the float 1000000.0): a count or a seed in a config is
    written as an integer, so a float there is refused at validation (issue 58), not passed to a
    job that would fail on it or run it as a float."""
    return isinstance(instance, int) and not isinstance(instance, bool)


#: the schema's validator with :func:`_is_integer` for ``type: integer``
_VALIDATOR = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer),
)


def _message(err: jsonschema.ValidationError) -> str:
    if err.validator == "additionalProperties":
        return f"config key '{_key_path(err)}': {err.message} (typo?)"
    if err.validator == "type" and "integer" in err.validator_value and isinstance(err.instance, float):
        fix = (f"write it without a decimal point or exponent: {int(err.instance)}" if err.instance.is_integer()
               else "write a whole number")
        return f"config key '{_key_path(err)}': {err.instance!r} is not an integer; {fix}"
    return f"config key '{_key_path(err)}': {err.message}"


def validate(config: dict[str, Any]) -> dict[str, Any]:
    """Return a validated copy of ``config`` with defaults filled in, or raise ConfigError."""
    cfg = _coerce_cli_strings(copy.deepcopy(dict(config)))
    _reject_dotted_keys(cfg)
    sch = schema()
    validator = _VALIDATOR(sch)
    errors = sorted(validator.iter_errors(cfg), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [_message(err) for err in errors]
        if len(lines) == 1:
            raise ConfigError(f"invalid configuration: {lines[0]}")
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(lines))
    _fill_defaults(cfg, sch)
    _cross_checks(cfg)
    return cfg


def _reject_dotted_keys(cfg: Mapping[str, Any]) -> None:
    """A top-level key with a dot (``wddp.T: 10`` in a config file) is not a nested key: say
    how to write one. (Snakemake's own ``--config wddp.T=10`` fails before the workflow is
    read; README "Configuration" shows the accepted ``--config 'wddp={T: 10}'``.)"""
    for key, value in cfg.items():
        if "." in str(key):
            section, rest = str(key).split(".", 1)
            nested = "{" + ": {".join(rest.split(".")) + f": {value}" + "}" * (rest.count(".") + 1)
            raise ConfigError(
                f"config key '{key}': a dotted key is not a nested one; write it as a section with a "
                f"YAML value, e.g. --config '{section}={nested}' (merged into the section), or in a "
                "--configfile"
            )


def _coerce_cli_strings(value: Any) -> Any:
    """Turn numbers, booleans and nulls given as text (``snakemake --config``) into values."""
    if isinstance(value, dict):
        return {k: _coerce_cli_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_coerce_cli_strings(v) for v in value]
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.lower() in ("null", "none", "~"):
        return None
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return value


def _non_finite(value: Any, path: str = "") -> list[str]:
    """Dotted paths of NaN or infinite numbers (YAML ``.nan``/``.inf`` pass the schema's ``number``)."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _non_finite(v, f"{path}.{k}" if path else str(k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _non_finite(v, f"{path}.{i}")]
    if isinstance(value, float) and not math.isfinite(value):
        return [path]
    return []


def _cross_checks(cfg: dict[str, Any]) -> None:
    bad = _non_finite(cfg)
    if bad:
        raise ConfigError(f"config key '{bad[0]}': must be a finite number; write a number (not .nan or .inf)")
    w = cfg["wddp"]
    missing = [d for d in cfg["datasets"] if d not in w["u_grid"]]
    if missing:
        raise ConfigError(f"config key 'wddp.u_grid': no u grid for data sets {missing}; "
                          f"add e.g. wddp.u_grid.{missing[0]}: [1, 3, 9]")
    if w["accountants"] == ["zcdp_code"]:
        raise ConfigError(
            "config key 'wddp.accountants': zcdp_code applies to Jayaraman runs only; "
            "add an accountant for WD-DP and WYX (e.g. ma16)"
        )
    seen: set[tuple[int, float]] = set()
    for i, setting in enumerate(w["u_settings"]):
        if setting["eps"] > 2 * math.log(1 / w["delta"]):
            raise ConfigError(f"config key 'wddp.u_settings.{i}.eps': must be <= 2 ln(1/delta) = "
                              f"{2 * math.log(1 / w['delta']):.4g}; lower it")
        key = (int(setting["m"]), float(setting["eps"]))
        if key in seen:
            raise ConfigError(f"config key 'wddp.u_settings.{i}': repeats the setting m = {key[0]}, "
                              f"eps = {key[1]!r}; remove the repeat")
        seen.add(key)
    if cfg["preprocess"]["scaling_bounds"] == "train_split" and cfg["split"]["per_repetition"]:
        raise ConfigError("config key 'preprocess.scaling_bounds': train_split takes the min-max bounds from the fixed "
                          "split's training rows, which under split.per_repetition: true are other repetitions' test "
                          "rows (spec E1.2 as amended); set split.per_repetition: false with it, or use full_data")
    b = cfg.get("benchmark")
    if b:
        sizes = {k: len(v) for k, v in (("benchmark.gradient.eta_candidates", b["gradient"]["eta_candidates"]),
                                        ("benchmark.output.lambda_candidates", b["output"]["lambda_candidates"]),
                                        ("benchmark.admm.penalty_candidates", b["admm"]["penalty_candidates"]))}
        first, count = next(iter(sizes.items()))
        if len(set(sizes.values())) > 1:
            odd = next(k for k, v in sizes.items() if v != count)
            raise ConfigError(f"config key '{odd}': {sizes[odd]} candidates, but {first} has {count}: every "
                              f"mechanism must get the same selection budget (spec E10), got candidate counts "
                              f"{sizes}; give them equally many")
    a = cfg.get("admm")
    if a and a["main_topology"] not in a["topologies"]:
        raise ConfigError(
            f"config key 'admm.main_topology': {a['main_topology']!r} is not in admm.topologies = "
            f"{a['topologies']}; pick one of them or add it there"
        )


def load(path: str | Path, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Read a YAML config file, apply ``overrides`` (top-level keys) and validate it."""
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"config file {path} does not exist")
    try:
        cfg = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path} is not valid YAML: {exc}") from None
    cfg.update(overrides or {})
    return validate(cfg)


def data_mirror(cfg: dict[str, Any]) -> Path | None:
    """The mirror folder: ``$MPDP_DATA_MIRROR`` if set, else the config key ``data_mirror``."""
    value = os.environ.get(MIRROR_ENV) or cfg.get("data_mirror")
    if not value:
        return None
    path = Path(value).expanduser()
    if not path.is_dir():
        raise ConfigError(
            f"data mirror {path} (from ${MIRROR_ENV} or config key 'data_mirror') is not a folder"
        )
    return path.resolve()


def allow_download(cfg: dict[str, Any]) -> bool:
    """Whether raw files may be downloaded: ``auto`` means only when no mirror is configured."""
    value = cfg.get("allow_download", "auto")
    if value == "auto":
        return data_mirror(cfg) is None
    return bool(value)


def config_hash(cfg: dict[str, Any]) -> str:
    """A short stable hash of the validated config (recorded in the report's provenance)."""
    text = json.dumps(cfg, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def lookup(cfg: Mapping[str, Any], dotted: str) -> Any:
    """The value at a dotted key (``wddp.T``) of ``cfg``."""
    node: Any = cfg
    for part in dotted.split("."):
        node = node[part]
    return node


def select(cfg: Mapping[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    """``{dotted key: value}`` for ``keys`` (a Snakemake param: a change reruns the job)."""
    return {key: copy.deepcopy(lookup(cfg, key)) for key in keys}


class UndeclaredKeyError(KeyError):
    """A job read a config key its rule does not declare (see :mod:`mpdp.pipeline.rule_keys`)."""

    def __str__(self) -> str:
        return str(self.args[0])


class _Restricted(dict):
    """A config section that raises :class:`UndeclaredKeyError` for keys left out."""

    def __init__(self, data: dict[str, Any], prefix: str, owner: str) -> None:
        super().__init__(data)
        self._prefix, self._owner = prefix, owner

    def _fail(self, key: object) -> UndeclaredKeyError:
        return UndeclaredKeyError(
            f"config key '{self._prefix}{key}' is read by {self._owner} but not declared for it in "
            "mpdp.pipeline.rule_keys.RULE_KEYS: add it there (changing it must rerun the job)"
        )

    def __missing__(self, key: object) -> Any:
        raise self._fail(key)

    def get(self, key: object, default: Any = None) -> Any:
        if key in self:
            return self[key]
        raise self._fail(key)


def restrict(cfg: Mapping[str, Any], keys: Iterable[str], owner: str = "this job") -> dict[str, Any]:
    """A copy of ``cfg`` holding only ``keys``; any other key raises :class:`UndeclaredKeyError`."""
    tree: dict[str, Any] = {}
    for key in keys:
        parts = key.split(".")
        node = tree
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = copy.deepcopy(lookup(cfg, key))

    def wrap(node: Any, prefix: str) -> Any:
        if not isinstance(node, dict):
            return node
        return _Restricted({k: wrap(v, f"{prefix}{k}.") for k, v in node.items()}, prefix, owner)

    return wrap(tree, "")


def schema_leaves(node: Mapping[str, Any] | None = None, prefix: str = "") -> list[str]:
    """Every leaf key of the schema as a dotted path; ``*`` stands for a list index or a
    pattern key (``audit.settings.*.kappa``, ``wddp.u_grid.*``). For the tests' guard that
    every key has a bad-config case (tests/test_bad_configs.py)."""
    node = schema() if node is None else node
    children: list[tuple[str, Mapping[str, Any]]] = [(k, v) for k, v in node.get("properties", {}).items()]
    children += [("*", v) for v in node.get("patternProperties", {}).values()]
    items = node.get("items")
    if isinstance(items, Mapping) and (items.get("properties") or items.get("patternProperties")):
        children.append(("*", items))
    if not children:
        return [prefix]
    return [leaf for key, sub in children for leaf in schema_leaves(sub, f"{prefix}.{key}" if prefix else key)]


def schema_path(dotted: str) -> str:
    """The schema path of a concrete dotted key: list indices and pattern keys become ``*``
    (``audit.settings.3.kappa`` -> ``audit.settings.*.kappa``); unknown keys stay as given."""
    node: Mapping[str, Any] | None = schema()
    out = []
    for part in dotted.split("."):
        if node is None:
            out.append(part)
            continue
        if part in node.get("properties", {}):
            out.append(part)
            node = node["properties"][part]
        elif node.get("patternProperties"):
            out.append("*")
            node = next(iter(node["patternProperties"].values()))
        elif part.isdigit() and isinstance(node.get("items"), Mapping):
            out.append("*")
            node = node["items"]
        else:
            out.append(part)
            node = None
    return ".".join(out)
