"""Planning checks of the WD-DP study (spec E2.1, E2.2, E3.4, E8; issue 37): every party count of
``wddp.m_grid`` and every two-group layout of ``wddp.u_settings`` × ``wddp.u_grid`` must fit the
training records (the size bound of :func:`mpdp.pipeline.planning.data_size`); a too large
``split.test_frac`` is named itself; the figures' fixed m and (m, ε) of
:data:`~mpdp.studies.wddp.figure_spec.FIGURES` must be trained, else their curves are missing
(warning) or, for an empty ``wddp.u_settings``, every u-sweep figure is empty (error).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from mpdp.data.partition import small_group_count, two_group_records
from mpdp.errors import ConfigError
from mpdp.studies.interface import SizeLike
from mpdp.studies.wddp import plan as wddp_plan
from mpdp.studies.wddp.figure_spec import FIGURES

#: the schema's default split.test_frac (a larger one is named when it alone makes a setting fail)
DEFAULT_TEST_FRAC = 0.2


def wddp_needs(cfg: Mapping[str, Any], dataset: str) -> list[tuple[str, int, str]]:
    """(key, training records needed, what needs them) of every WD-DP layout of ``dataset``.

    Random sizes (spec E2.1): m parties of at least τ = max(2, ⌊tau_frac·n/m⌋) records need
    m·τ ≤ n, i.e. n ≥ 2m. Two groups (spec E2.2, E7 #12): the small parties get
    ⌊n/(s + (m − s)u)⌋ ≥ 1 with s = small_group_frac·m (:func:`mpdp.data.partition.two_group_records`).
    """
    w = cfg["wddp"]
    frac = float(w["small_group_frac"])
    out = [("wddp.m_grid", 2 * int(m), f"m = {m} parties (random sizes of at least 2 records each)")
           for m in w["m_grid"]]
    grid = [int(u) for u in w["u_grid"].get(dataset, [])]
    for i, s in enumerate(w["u_settings"]):
        m = int(s["m"])
        if grid:
            out.append((f"wddp.u_settings.{i}.m", two_group_records(m, min(grid), frac),
                        f"m = {m} parties of the u-sweep at ε = {s['eps']:g} (u = {min(grid)})"))
        for u in grid:
            out.append((f"wddp.u_grid.{dataset}", two_group_records(m, u, frac),
                        f"u = {u} with m = {m} parties (two groups, the small parties non-empty)"))
    return out


def check_wddp(cfg: Mapping[str, Any], available: Sequence[str], sizes: Mapping[str, SizeLike]) -> None:
    """Every WD-DP layout fits every available data set (else the partition job fails)."""
    w = cfg["wddp"]
    if not w["u_settings"]:
        figs = [f for f, s in FIGURES.items() if s.x == "u"]
        wanted = sorted({(s.m, s.epsilon) for s in FIGURES.values() if s.x == "u"})
        raise ConfigError(
            f"config key 'wddp.u_settings': empty, so the u-sweep figures {', '.join(figs)} would have "
            "empty panels; list their settings, e.g. [" + ", ".join(f"{{m: {m}, eps: {e:g}}}" for m, e in wanted)
            + "]"
        )
    frac = float(w["small_group_frac"])
    for i, setting in enumerate(w["u_settings"]):
        m = int(setting["m"])
        try:
            small_group_count(m, frac)
        except ConfigError:  # the schema keeps m even, so only another fraction gets here
            raise ConfigError(f"config key 'wddp.small_group_frac': {frac:g} × m = {frac * m:g} small parties "
                              f"for m = {m} (wddp.u_settings.{i}) is not a whole number in [1, {m - 1}]; "
                              "use a multiple of 1/m for every u-setting's m, e.g. 0.25 for m = 8, 16, 32") from None
    split = cfg["split"]["test_frac"]
    for ds in available:
        size = sizes.get(ds)
        if size is None:
            continue
        n_default = size.n_total - math.ceil(round(DEFAULT_TEST_FRAC * size.n_total, 9))
        for key, need, what in wddp_needs(cfg, ds):
            if size.n_train >= need:
                continue
            if split > DEFAULT_TEST_FRAC and n_default >= need:
                raise ConfigError(
                    f"config key 'split.test_frac': {split:g} leaves {ds} {size.describe()}, too few for "
                    f"{what} ({need} needed; config key '{key}'); lower split.test_frac "
                    f"(default {DEFAULT_TEST_FRAC:g})"
                )
            raise ConfigError(
                f"config key '{key}': {what} need at least {need} training records, {ds} has "
                f"{size.describe()}; lower that value, or raise max_records"
            )


def wddp_figure_warnings(cfg: Mapping[str, Any]) -> list[str]:
    """Figures whose fixed m (ε-sweeps) or (m, ε) (u-sweeps) the config does not train: they
    would be drawn with the centralised curve only, or with empty panels."""
    w = cfg["wddp"]
    out = []
    missing_m: dict[int, list[str]] = {}
    missing_u: dict[tuple[int, float], list[str]] = {}
    trained_u = [(int(s["m"]), float(s["eps"])) for s in w["u_settings"]]
    for fig, spec in FIGURES.items():
        if spec.x == "epsilon" and spec.m not in w["m_grid"]:
            missing_m.setdefault(spec.m, []).append(fig)
        if spec.x == "u" and spec.epsilon is not None and not any(
                m == spec.m and math.isclose(e, spec.epsilon) for m, e in trained_u):
            missing_u.setdefault((spec.m, spec.epsilon), []).append(fig)
    for m, figs in sorted(missing_m.items()):
        out.append(f"wddp.m_grid: m = {m} is not in wddp.m_grid = {list(w['m_grid'])}, so {', '.join(figs)} "
                   "show only the centralised Wang–Ye–Xu curve; add it to draw WD-DP and Jayaraman")
    for (m, eps), figs in sorted(missing_u.items()):
        out.append(f"wddp.u_settings: no setting {{m: {m}, eps: {eps:g}}}, so {', '.join(figs)} have empty "
                   "panels; add it to wddp.u_settings")
    if w.get("equal_privacy", False) and wddp_plan.equal_privacy_undefined(cfg):
        out.append("wddp.equal_privacy: the literal mode's equal-privacy runs calibrate each party to its own "
                   "noise, which wddp.noise_sharing: shared does not have; the -eq figures show the centralised "
                   "runs only and the equal-privacy claims are uninformative")
    return out


def warnings(cfg: Mapping[str, Any], available: Sequence[str], sizes: Mapping[str, SizeLike]) -> list[str]:
    """The study's planning warnings (:func:`wddp_figure_warnings`)."""
    return wddp_figure_warnings(cfg)
