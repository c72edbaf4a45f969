"""Planning checks of the ADMM study (spec E4, E8; issue 37): Z-F3's α must be trained and listed,
Z-F4's iterations trained and recorded (``admm.record_every``), the per-method footing needs two
tuning draws, and ``admm.P`` nodes need two training records each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mpdp.errors import ConfigError
from mpdp.studies.interface import SizeLike


def check(cfg: Mapping[str, Any], available: Sequence[str], sizes: Mapping[str, SizeLike]) -> None:
    """Raise :class:`ConfigError` for the first setting the study cannot run."""
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
    if not a["f3_alphas"]:
        raise ConfigError("config key 'admm.f3_alphas': empty, so Z-F3 would have no panel; "
                          f"list α from admm.alpha_grid = {a['alpha_grid']}")
    every = int(a["record_every"])
    unrecorded = [t for t in a["f4_iterations"] if t % every]
    if unrecorded:
        raise ConfigError(
            f"config key 'admm.record_every': {every} records only multiples of {every}, not Z-F4's "
            f"admm.f4_iterations {unrecorded}; use a record_every that divides them (e.g. 1)"
        )
