"""Load and validate the pipeline configuration (JSON schema + cross-field checks).

A typo or a bad value stops the run before any job, with a message that names the key.
The schema lives in ``mpdp/schemas/config.schema.yaml``; defaults written there are filled in.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from mpdp.errors import ConfigError

MIRROR_ENV = "MPDP_DATA_MIRROR"


def schema() -> dict[str, Any]:
    text = resources.files("mpdp").joinpath("schemas/config.schema.yaml").read_text()
    return yaml.safe_load(text)


def _fill_defaults(instance: dict[str, Any], node: dict[str, Any]) -> None:
    for key, sub in node.get("properties", {}).items():
        if key not in instance and "default" in sub:
            instance[key] = copy.deepcopy(sub["default"])
        if isinstance(instance.get(key), dict) and sub.get("type") == "object":
            _fill_defaults(instance[key], sub)


def _key_path(error: jsonschema.ValidationError) -> str:
    return ".".join(str(p) for p in error.absolute_path) or "<top level>"


def validate(config: dict[str, Any]) -> dict[str, Any]:
    """Return a validated copy of ``config`` with defaults filled in, or raise ConfigError."""
    cfg = _coerce_cli_strings(copy.deepcopy(dict(config)))
    sch = schema()
    validator = jsonschema.Draft202012Validator(sch)
    errors = sorted(validator.iter_errors(cfg), key=lambda e: list(e.absolute_path))
    if errors:
        lines = []
        for err in errors:
            if err.validator == "additionalProperties":
                lines.append(f"config key '{_key_path(err)}': {err.message} (typo?)")
            else:
                lines.append(f"config key '{_key_path(err)}': {err.message}")
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(lines))
    _fill_defaults(cfg, sch)
    _cross_checks(cfg)
    return cfg


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


def _cross_checks(cfg: dict[str, Any]) -> None:
    w = cfg["wddp"]
    missing = [d for d in cfg["datasets"] if d not in w["u_grid"]]
    if missing:
        raise ConfigError(f"config key 'wddp.u_grid': no u grid for data sets {missing}")
    if w["accountants"] == ["zcdp_code"]:
        raise ConfigError(
            "config key 'wddp.accountants': zcdp_code applies to Jayaraman runs only; "
            "add an accountant for WD-DP and WYX (e.g. ma16)"
        )
    for i, setting in enumerate(w["u_settings"]):
        if setting["eps"] > 2 * math.log(1 / w["delta"]):
            raise ConfigError(f"config key 'wddp.u_settings.{i}.eps': must be <= 2 ln(1/delta)")
    a = cfg.get("admm")
    if a and a["main_topology"] not in a["topologies"]:
        raise ConfigError(
            f"config key 'admm.main_topology': {a['main_topology']!r} is not in admm.topologies"
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
