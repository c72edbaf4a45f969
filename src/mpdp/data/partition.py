"""Partitions of the training rows across m parties (spec experiments.md E2, mechanisms.md §0.1).

Two designs:

* ``random`` (spec E2.1, ε-sweeps): sizes are ``tau`` plus a multinomial split of the
  remainder with Dirichlet(1) shares, so every party holds at least ``tau`` records;
* ``two_group`` (spec E2.2, u-sweeps): m/2 parties of size ``a`` and m/2 of size ``u a``
  with ``a = floor(n / ((m/2)(1+u)))`` (another small-group fraction with
  ``wddp.small_group_frac``, spec E7 #12); the leftover records are dropped for all methods
  (``leftover="drop"``, the default) or dealt round-robin to the large group
  (``leftover="large_group"``, spec E7 #13's alternative).

Records are assigned by a random permutation of the training indices, cut into contiguous
blocks in party order. Each repetition draws from ``mpdp.seeding.rng(root_seed,
"partition", dataset, design, m, u, rep)``, so a partition depends only on its identity
(spec E0). Files hold index arrays only, never data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mpdp.errors import ConfigError, InputDataError
from mpdp.io import load_npz, rebuild_hint, save_npz
from mpdp.seeding import rng

DESIGNS = ("random", "two_group")
#: what the two-group design does with its leftover records (spec E2.2, E7 #13)
LEFTOVERS = ("drop", "large_group")


def default_tau(n: int, m: int, tau_frac: float) -> int:
    """The minimum party size ``max(2, floor(tau_frac * n / m))`` (spec E2.1, E7 #10)."""
    return max(2, math.floor(tau_frac * n / m))


def random_sizes(n: int, m: int, tau: int, gen: np.random.Generator) -> np.ndarray:
    """Party sizes ``tau + Multinomial(n - m tau, Dirichlet(1_m))``: each >= tau, sum n (spec E2.1)."""
    if m < 1:
        raise ConfigError(f"the number of parties m must be at least 1, got {m}")
    if m * tau > n:
        raise ConfigError(
            f"cannot give each of m = {m} parties at least tau = {tau} records out of n = {n} "
            f"training records (m * tau = {m * tau}); lower m (config key wddp.m_grid) or "
            f"wddp.tau_frac, or raise max_records"
        )
    share = gen.dirichlet(np.ones(m))
    extra = gen.multinomial(n - m * tau, share)
    return (tau + extra).astype(np.int64)


def small_group_count(m: int, small_frac: float = 0.5) -> int:
    """Parties in the small group of the two-group design: ``small_frac * m`` (spec E2.2, E7 #12).

    The default 1/2 is the paper's reading (m/2 and m/2, so m must be even); another fraction
    must give a whole number of parties and leave both groups non-empty.
    """
    if m < 2:
        raise ConfigError(f"the two-group design needs m >= 2 parties, got m = {m}")
    s = small_frac * m
    if abs(s - round(s)) > 1e-9 or not 1 <= round(s) <= m - 1:
        need = "an even number of parties m >= 2" if small_frac == 0.5 else (
            f"m with small_group_frac * m a whole number in [1, m - 1] (small_group_frac = {small_frac:g})")
        raise ConfigError(f"the two-group design needs {need}, got m = {m} "
                          f"(config keys wddp.u_settings, wddp.small_group_frac)")
    return int(round(s))


def two_group_sizes(n: int, m: int, u: int, leftover: str = "drop", small_frac: float = 0.5) -> np.ndarray:
    """s parties of size a, then m - s of size u a, ``a = floor(n / (s + (m - s) u))`` (spec E2.2).

    ``s = small_frac * m`` (:func:`small_group_count`; spec E7 #12, default m/2 and m/2, so
    ``a = floor(n / ((m/2)(1+u)))``). ``leftover="large_group"`` (spec E7 #13's alternative)
    deals the ``n - (s + (m - s) u) a`` leftover records round-robin to the large group (one
    more to its first parties), so the sizes sum to n and the smallest party keeps ``a``;
    ``"drop"`` leaves them out.
    """
    if leftover not in LEFTOVERS:
        raise ConfigError(f"config key 'wddp.leftover' must be one of {LEFTOVERS}, got {leftover!r}")
    small = small_group_count(m, small_frac)
    if u < 1:
        raise ConfigError(f"the two-group design needs u = n_max/n_min >= 1, got u = {u}")
    large = m - small
    a = n // (small + large * u)
    if a < 1:
        raise ConfigError(
            f"two-group design: n = {n} training records are too few for m = {m} parties with "
            f"u = {u} (the small parties would be empty); lower m or u (config keys "
            f"wddp.u_settings, wddp.u_grid) or raise max_records"
        )
    sizes = np.array([a] * small + [u * a] * large, dtype=np.int64)
    if leftover == "large_group":
        extra, first = divmod(n - int(sizes.sum()), large)
        sizes[small:] += extra
        sizes[small:small + first] += 1
    return sizes


def two_group_records(m: int, u: int, small_frac: float = 0.5) -> int:
    """Training records the two-group design needs for non-empty parties: ``s + (m - s) u``."""
    s = small_frac * m
    return int(math.ceil(s + (m - s) * u))


@dataclass(frozen=True)
class PartitionSet:
    """Partitions of R repetitions: ``order`` (R x n_eff) and ``sizes`` (R x m), both int32.

    Row ``order[r]`` lists the retained training-row indices in party order: party j holds
    the block of ``sizes[r, j]`` entries after those of parties 0..j-1.
    """

    order: np.ndarray
    sizes: np.ndarray

    def __post_init__(self) -> None:
        order = np.asarray(self.order)
        sizes = np.asarray(self.sizes)
        if order.ndim != 2 or sizes.ndim != 2 or order.shape[0] != sizes.shape[0]:
            raise ValueError(
                f"order {order.shape} and sizes {sizes.shape} must be R x n_eff and R x m"
            )
        if not (np.issubdtype(order.dtype, np.integer) and np.issubdtype(sizes.dtype, np.integer)):
            raise ValueError(
                f"order and sizes must be integer arrays, got {order.dtype}, {sizes.dtype}"
            )
        if np.any(sizes < 0) or np.any(sizes.sum(axis=1) != order.shape[1]):
            raise ValueError(
                f"every row of sizes must be non-negative and sum to n_eff = {order.shape[1]}"
            )
        if order.size and (order.min() < 0 or order.max() > np.iinfo(np.int32).max):
            raise ValueError("order must hold non-negative row indices that fit in int32")
        object.__setattr__(self, "order", order.astype(np.int32, copy=False))
        object.__setattr__(self, "sizes", sizes.astype(np.int32, copy=False))

    @property
    def reps(self) -> int:
        return int(self.order.shape[0])

    @property
    def m(self) -> int:
        return int(self.sizes.shape[1])

    @property
    def n_eff(self) -> int:
        """Number of retained training records (n, or (m/2)(1+u)a for the two-group design)."""
        return int(self.order.shape[1])

    @property
    def n_min(self) -> np.ndarray:
        """n_(1), the smallest party's size, per repetition."""
        return self.sizes.min(axis=1)

    @property
    def n_max(self) -> np.ndarray:
        """The largest party's size, per repetition."""
        return self.sizes.max(axis=1)

    def party_indices(self, rep: int) -> list[np.ndarray]:
        """The training-row indices of each party in repetition ``rep``."""
        return np.split(self.order[rep], np.cumsum(self.sizes[rep])[:-1])


def _canonical_u(design: str, u: float | None) -> int | None:
    """u as the seeding key uses it: None for random sizes, a Python int for two groups."""
    if design == "random":
        if u is not None:
            raise ValueError(f"the random design takes u = None, got u = {u}")
        return None
    if u is None or not float(u).is_integer():
        raise ConfigError(f"the two-group design needs an integer u (spec E2.2), got u = {u}")
    return int(u)


def make_partitions(
    n: int,
    design: str,
    m: int,
    u: float | None,
    reps: int,
    root_seed: int,
    dataset: str,
    tau_frac: float = 0.2,
    leftover: str = "drop",
    small_frac: float = 0.5,
    rows: Sequence[np.ndarray] | None = None,
) -> PartitionSet:
    """The partitions of ``n`` training rows for repetitions 0..reps-1 (spec E2).

    ``design`` is ``"random"`` (u must be None; tau from :func:`default_tau`) or
    ``"two_group"`` (``leftover``, ``small_frac``: see :func:`two_group_sizes`). Repetition r uses
    ``rng(root_seed, "partition", dataset, design, m, u, r)``.

    ``rows`` (issue 60): per repetition, the ``n`` row indices it partitions (its own training
    records in a pool, :mod:`mpdp.data.splits`); ``order[r]`` then holds entries of ``rows[r]``.
    ``None`` partitions ``0..n-1`` in every repetition; ``rows[r] = arange(n)`` gives the same
    partitions bit for bit (the draws do not depend on ``rows``).
    """
    if rows is not None and (len(rows) != int(reps) or any(len(r) != int(n) for r in rows)):
        raise ValueError(f"rows must give {reps} index arrays of {n} rows each")
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {DESIGNS}, got {design!r}")
    n, m, reps = int(n), int(m), int(reps)
    u_key = _canonical_u(design, u)
    orders, all_sizes = [], []
    for rep in range(reps):
        gen = rng(root_seed, "partition", dataset, design, m, u_key, rep)
        if design == "random":
            sizes = random_sizes(n, m, default_tau(n, m, tau_frac), gen)
            order = gen.permutation(n)
        else:
            sizes = two_group_sizes(n, m, u_key, leftover, small_frac)
            order = gen.permutation(n)[: int(sizes.sum())]
        orders.append(order if rows is None else np.asarray(rows[rep])[order])
        all_sizes.append(sizes)
    return PartitionSet(
        order=np.array(orders, dtype=np.int32), sizes=np.array(all_sizes, dtype=np.int32)
    )


def _setting_key(m: int, u: float | None) -> str:
    """The npz key prefix of setting (m, u), e.g. ``m16_u3`` or ``m8_unone``."""
    if u is not None and not float(u).is_integer():
        raise ValueError(f"u must be an integer or None, got {u}")
    return f"m{int(m)}_u{'none' if u is None else int(u)}"


def save_partitions(path: str | Path, sets: dict[tuple[int, float | None], PartitionSet]) -> None:
    """Write the partitions of every (m, u) setting of one data set and experiment to one npz."""
    arrays: dict[str, np.ndarray] = {}
    for (m, u), part in sets.items():
        key = _setting_key(m, u)
        arrays[f"{key}.order"] = part.order
        arrays[f"{key}.sizes"] = part.sizes
    save_npz(path, **arrays)


def load_partition(path: str | Path, m: int, u: float | None) -> PartitionSet:
    """The partitions of setting (m, u) from a file written by :func:`save_partitions`."""
    path = Path(path)
    if not path.is_file():
        raise InputDataError(f"partition file {path} does not exist; run the partition step first")
    key = _setting_key(m, u)
    stored = load_npz(path, "partition file")
    if f"{key}.order" not in stored:
        held = sorted({name.rsplit(".", 1)[0] for name in stored})
        raise InputDataError(
            f"partition file {path} has no setting m = {m}, u = {u} (it holds {held}); "
            f"the config changed since it was written: {rebuild_hint(path)}"
        )
    return PartitionSet(order=stored[f"{key}.order"], sizes=stored[f"{key}.sizes"])
