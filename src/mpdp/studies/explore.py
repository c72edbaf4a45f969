"""A finished build, found on disk: the report context of :mod:`mpdp.report.build` from the files a
build wrote, for the exploration notebook (``notebooks/explore.py``) and anyone who wants the
studies' sections without running Snakemake.

The paths are the workflow's own (``workflow/rules/*.smk``); each study's context is built as the
report builds it (:func:`mpdp.studies.registry.report_context`) from the files of it found in the
build (:func:`mpdp.studies.registry.found_files`), so a study whose files are absent gets the
context of a study that did not run, as in the report. Reads the study registry, so it lives
with the studies, not in the shared report layer.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mpdp import config as mpdp_config
from mpdp.studies import registry

#: environment variable naming the build's folder (the one holding data/ and reports/)
ROOT_ENV = "MPDP_BUILD_DIR"
#: environment variable naming the build's config files (comma-separated, in precedence order)
CONFIG_ENV = "MPDP_CONFIGFILES"


def find_root(start: str | Path | None = None) -> Path:
    """The build folder: $MPDP_BUILD_DIR, else the first of ``start`` (default: the working
    directory) and its parents that holds ``data/results``, else this package's repository."""
    if os.environ.get(ROOT_ENV):
        return Path(os.environ[ROOT_ENV]).resolve()
    here = Path(start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "data" / "results").is_dir():
            return folder
    return Path(__file__).resolve().parents[3]


#: the validated config a build's report was made with (written by the rule report_html)
BUILD_CONFIG = "reports/config.yaml"


def config_source(root: Path, files: list[str] | None = None) -> str:
    """Where :func:`load_config` takes the build's config from, in words (the notebook prints it
    next to the profile, issue 46)."""
    names = files if files is not None else [f for f in os.environ.get(CONFIG_ENV, "").split(",") if f]
    if names:
        return "config/config.yaml then " + ", ".join(names) + f" (${CONFIG_ENV})"
    if (root / BUILD_CONFIG).is_file():
        return f"{BUILD_CONFIG}, the config the build's report was made with"
    return (f"config/config.yaml only (no {BUILD_CONFIG} in the build and ${CONFIG_ENV} unset: "
            "a smoke build explored so is mislabelled; set it, e.g. to config/smoke.yaml)")


def load_config(root: Path, files: list[str] | None = None) -> dict[str, Any]:
    """The validated config of the build: ``config/config.yaml`` then ``files`` (default:
    $MPDP_CONFIGFILES), later files overriding earlier ones key by key, as Snakemake merges them;
    with neither, the config the build's report recorded (:data:`BUILD_CONFIG`), so that a smoke
    build is read as one without being told."""
    names = files if files is not None else [f for f in os.environ.get(CONFIG_ENV, "").split(",") if f]
    if not names and (root / BUILD_CONFIG).is_file():
        return mpdp_config.validate(_yaml(root / BUILD_CONFIG))
    merged: dict[str, Any] = {}
    for name in ["config/config.yaml", *names]:
        path = Path(name) if Path(name).is_absolute() else root / name
        merged = _merge(merged, _yaml(path))
    return mpdp_config.validate(merged)


def _yaml(path: Path) -> dict[str, Any]:
    import yaml

    return yaml.safe_load(path.read_text()) or {}


def _merge(base: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in update.items():
        out[key] = _merge(out[key], value) if isinstance(value, Mapping) and isinstance(out.get(key), Mapping) else value
    return out


def build_context(root: Path, cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The report context (:data:`mpdp.report.build.CONTEXT_KEYS`) of the build in ``root``, from
    the files that exist there: ``studies`` as the report builds it
    (:func:`mpdp.studies.registry.report_context`), from the running studies' files found there
    (:func:`mpdp.studies.registry.found_files`; the config's data sets taken as available)."""
    data, figs = root / "data", root / "reports" / "figures"
    claims = data / "results" / "claims"
    datasets = list(cfg.get("datasets", []))
    results = {ds: str(data / "results" / "wddp" / f"{ds}.parquet") for ds in datasets}
    results = {ds: p if Path(p).is_file() else None for ds, p in results.items()}
    cards = {ds: str(data / "processed" / ds / "card.json") for ds in datasets}
    cards = {ds: p if Path(p).is_file() else None for ds, p in cards.items()}
    figures = {p.stem: str(p) for p in sorted(figs.glob("*.png"))}
    return {
        "config": dict(cfg),
        "invocation": {"cli_configfiles": [], "config_args": [], "mirror": None},
        "results": results,
        "cards": cards,
        "unavailable": {ds: "not built" for ds, p in results.items() if p is None},
        "figures": figures,
        "benchmarks_dir": str(data / "benchmarks"),
        "repo_root": str(root),
        "report_dir": str(root / "reports"),
        "studies": registry.report_context(registry.found_files(cfg, datasets, root)),
        "audit": {"table": str(data / "results" / "audit" / "audit.parquet"),
                  "figure": str(figs / "audit_eps.png")},
        # the claims engine's tables and verdict maps (issue 33), where the build wrote them
        "claims": {"cells": str(claims / "cells.parquet"), "verdicts": str(claims / "verdicts.parquet"),
                   "maps": {p.stem.removeprefix("claims_map_"): str(p) for p in sorted(figs.glob("claims_map_*.png"))},
                   "forests": {p.name.removeprefix("forest_"): str(p) for p in sorted(figs.glob("forest_*"))
                               if p.is_dir()}}
        if (claims / "verdicts.parquet").is_file() else None,
    }
