"""Planning checks of the voting study (spec E5, E8; issues 37, 44): what the schema cannot see.

Errors: an empty ``voting.datasets``, ``voting.h1_M`` outside ``voting.M_grid``,
``voting.h2_eps`` outside ``voting.eps_grid``. Warnings: no configured data set available (the
figures would have no table; a warning, since ``--config 'datasets=[breast_cancer]'`` must still run
the other studies), and every M of ``voting.M_grid`` a data set is too small for (its tables drop it;
the figures at ``voting.h1_M`` then show the largest feasible M below it; judged on data cards, or
on the size bound when no card exists: an M too large at the bound is too large at any size).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from mpdp.errors import ConfigError
from mpdp.studies.interface import SizeLike, unavailable_warning
from mpdp.studies.voting.plan import feasible_M


def check(cfg: Mapping[str, Any], available: Sequence[str], sizes: Mapping[str, SizeLike]) -> None:
    """Raise :class:`ConfigError` for the first setting the study cannot run."""
    v = cfg["voting"]
    if not v["datasets"]:
        raise ConfigError("config key 'voting.datasets': empty, so H-1…H-4 and B5 would have no binary table; "
                          f"list binary data sets (e.g. {list(cfg['datasets'])[:3]})")
    if v["h1_M"] not in v["M_grid"]:
        raise ConfigError(f"config key 'voting.h1_M': {v['h1_M']} is not in voting.M_grid = {v['M_grid']}; "
                          "H-1 and B5 are drawn at a trained M: pick one of the grid")
    if not any(math.isclose(float(v["h2_eps"]), float(e)) for e in v["eps_grid"]):
        raise ConfigError(f"config key 'voting.h2_eps': {v['h2_eps']} is not in voting.eps_grid = "
                          f"{v['eps_grid']}; H-2 is drawn at a trained ε: pick one of the grid")


def warnings(cfg: Mapping[str, Any], available: Sequence[str], sizes: Mapping[str, SizeLike]) -> list[str]:
    """The study's planning warnings (module docstring); ``sizes``: exact ones judge voting.M_grid."""
    v = cfg["voting"]
    out = unavailable_warning("voting.datasets", v["datasets"], available, "H-1…H-4 and B5 have no binary table")
    for ds in [d for d in dict.fromkeys([*v["datasets"], *v["multiclass_datasets"]]) if d in available]:
        size = sizes.get(ds)
        if size is None:
            continue
        n_private = size.n_train - math.ceil(round(v["aux_frac"] * size.n_total, 9))
        feasible = feasible_M(v["M_grid"], n_private, v["min_party_size"])
        dropped = [M for M in v["M_grid"] if M not in feasible]
        if not dropped:
            continue
        bound = "" if size.exact else "at most "  # too few at the bound: too few at any size
        line = (f"voting.M_grid: M = {', '.join(map(str, dropped))} dropped for {ds}: its private pool of "
                f"{bound}{n_private} records leaves fewer than voting.min_party_size = {v['min_party_size']} per party")
        h1_M = v["h1_M"]
        if h1_M in dropped and feasible:
            shown = max([m for m in feasible if m <= h1_M] or feasible[:1])
            line += f"; the figures at voting.h1_M = {h1_M} show M = {shown} instead"
        out.append(line)
    return out
