"""Planning checks of the cross-paper benchmark (spec E10, E8; issues 34, 37, 58): a configured
``benchmark`` section lists data sets, and every one of them has a feasible (m, u) cell
(:func:`check_party_sizes`); a warning when none of its data sets is available. Whether
the private selection protocol's budget split meets every ε of the grid, for every enabled
mechanism, is checked with the other privacy budgets (:mod:`mpdp.pipeline.planning_budgets`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mpdp.errors import ConfigError
from mpdp.studies.benchmark import plan
from mpdp.studies.benchmark.cost import private_pool
from mpdp.studies.interface import SizeLike, unavailable_warning

#: the schema's default ``benchmark.min_party_size`` (named when it would leave a cell)
DEFAULT_MIN_PARTY_SIZE = 20


def check(cfg: Mapping[str, Any], available: Sequence[str], sizes: Mapping[str, SizeLike]) -> None:
    """Raise :class:`ConfigError` for the first setting the study cannot run."""
    b = cfg.get("benchmark")
    if b is None:
        return
    if not b["datasets"]:
        raise ConfigError("config key 'benchmark.datasets': empty, so the benchmark would have no table; "
                          "list data sets, or remove the 'benchmark' section to switch the study off")
    check_party_sizes(cfg, available, sizes)


def check_party_sizes(cfg: Mapping[str, Any], available: Sequence[str], sizes: Mapping[str, SizeLike]) -> None:
    """A data set for which no (m, u) cell leaves ``min_party_size`` records in its smallest party
    (:func:`mpdp.studies.benchmark.plan.cells`; issue 58: the job failed on it), judged on the
    private pool of the size bound when no data card exists (so only settings impossible for every
    size are refused), as the voting study's party counts. Named: ``min_party_size`` when the
    schema's default would leave a cell, else ``m_grid``."""
    b = cfg["benchmark"]
    for ds in plan.datasets(cfg, available):
        size = sizes.get(ds)
        if size is None:
            continue
        n = private_pool(cfg, size.n_train)
        if plan.cells(cfg, n)[0]:
            continue
        m, u = min(b["m_grid"]), min(b["u_grid"])
        largest = n // ((m // 2) * (1 + u))
        bound = "" if size.exact else "at most "
        if largest >= DEFAULT_MIN_PARTY_SIZE:
            raise ConfigError(
                f"config key 'benchmark.min_party_size': {b['min_party_size']} records per party, but no (m, u) cell "
                f"of benchmark.m_grid × benchmark.u_grid leaves that many in the {bound}{n} private records of {ds} "
                f"(the smallest party of m = {m}, u = {u} holds {largest}); lower it (at most {largest})")
        raise ConfigError(
            f"config key 'benchmark.m_grid': no (m, u) cell leaves benchmark.min_party_size = {b['min_party_size']} "
            f"records per party in the {bound}{n} private records of {ds} (m = {m}, u = {u}: {largest}); add a "
            "smaller m or u, or raise max_records / benchmark.max_train_records")


def warnings(cfg: Mapping[str, Any], available: Sequence[str], sizes: Mapping[str, SizeLike]) -> list[str]:
    """No configured benchmark data set is available: its figures would have no table."""
    b = cfg.get("benchmark")
    if not b:
        return []
    return unavailable_warning("benchmark.datasets", b["datasets"], available, "the benchmark figures have no table")
