"""Planning checks of the cross-paper benchmark (spec E10, E8; issues 34, 37): a configured
``benchmark`` section lists data sets; a warning when none of its data sets is available. Whether
the private selection protocol's budget split meets every ε of the grid, for every enabled
mechanism, is checked with the other privacy budgets (:mod:`mpdp.pipeline.planning_budgets`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mpdp.errors import ConfigError
from mpdp.studies.interface import SizeLike, unavailable_warning


def check(cfg: Mapping[str, Any], available: Sequence[str], sizes: Mapping[str, SizeLike]) -> None:
    """Raise :class:`ConfigError` for the first setting the study cannot run."""
    b = cfg.get("benchmark")
    if b is None:
        return
    if not b["datasets"]:
        raise ConfigError("config key 'benchmark.datasets': empty, so the benchmark would have no table; "
                          "list data sets, or remove the 'benchmark' section to switch the study off")


def warnings(cfg: Mapping[str, Any], available: Sequence[str], sizes: Mapping[str, SizeLike]) -> list[str]:
    """No configured benchmark data set is available: its figures would have no table."""
    b = cfg.get("benchmark")
    if not b:
        return []
    return unavailable_warning("benchmark.datasets", b["datasets"], available, "the benchmark figures have no table")
