"""Plan of the cross-paper benchmark (spec experiments.md E10): data, cells, partitions.

Every mechanism of a data set sees the same data:

- the **auxiliary pool** (``aux_frac`` of the training rows, [REC]) is public and unlabeled; only
  Hamm's methods use it (spec M11, M12, ``public_data = true``); it is removed from every
  mechanism's private data so that all mechanisms train on the same private pool;
- the **private pool** is the rest, capped at ``max_train_records`` by a seeded uniform
  subsample [REC knob, the same for every mechanism];
- the **partition** of a cell (m, u) and repetition ``rep`` is the two-group design of spec
  E2.2 (u = 1: equal sizes), drawn from ``rng(root_seed, "partition", "benchmark:<dataset>",
  "two_group", m, u, rep)``: every mechanism (every family job) gets the same partition for a
  repetition, so repetitions pair across mechanisms;
- the **validation split** (``val_frac`` of the private pool, [REC]) is used only by the
  hyper-parameter selection at the reference cell (spec E10 "Hyper-parameters").

Every random draw of the selection (validation split, its partitions, its noise) comes from a
tuning stream (:func:`stream` with tag ``"tune"``, :func:`mpdp.seeding.tuning_key`), disjoint
from the streams of the evaluated repetitions (tag ``"grid"``).

**Split per repetition** (issue 60, ``split.per_repetition: true``, :mod:`mpdp.data.splits`).
Repetition r draws its own stratified split of the pool (every prepared row); its auxiliary
pool, its private pool (and cap) are drawn within **its** training records (streams
``("benchmark", "aux"|"cap", dataset, "repetition", r)``), its partitions within its private pool
(:func:`partitions` with ``rows``: the draws of the fixed design, mapped onto its records), its
selection within its private pool (:func:`tuning_label`), its references on its private pool
and its metrics on its test records. :class:`Repetitions` holds the matrix every repetition's runs
index (the pool) and each repetition's view (:class:`BenchmarkData`), so the runs of different
repetitions stay columns of one batch. With ``split.per_repetition: false`` every repetition
shares the fixed split's one view and the matrix is its private pool, exactly as before issue 60.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mpdp.config import validate
from mpdp.data import splits
from mpdp.data.partition import PartitionSet, make_partitions, two_group_sizes
from mpdp.data.prepare import Processed, load
from mpdp.errors import ConfigError
from mpdp.seeding import rng, tuning_key, tuning_rng


@dataclass(frozen=True)
class BenchmarkData:
    """The arrays of one data set, split as in the module docstring (labels ±1, ‖x‖ ≤ 1)."""

    X: np.ndarray  # private pool (float64)
    y: np.ndarray
    X_aux: np.ndarray  # public unlabeled pool (Hamm)
    X_test: np.ndarray
    y_test: np.ndarray
    n_available: int  # private records before the cap

    @property
    def n(self) -> int:
        return len(self.y)

    @property
    def p(self) -> int:
        return self.X.shape[1]


def table_path(dataset: str) -> str:
    """The benchmark table of ``dataset`` (workflow output)."""
    return f"data/results/benchmark/{dataset}.parquet"


def hparams_path(dataset: str) -> str:
    """The hyper-parameter selection record next to the table."""
    return f"data/results/benchmark/{dataset}.hparams.json"


def table_paths_function(default_cfg: Mapping[str, Any], available: Sequence[str]
                         ) -> Callable[[Mapping[str, Any] | None], list[str]]:
    """``benchmark_table_paths(config=None)`` of the workflow: the table paths of a config.

    The returned function maps a (raw or validated) config, by default ``default_cfg``, to the
    ``data/results/benchmark/<ds>.parquet`` paths of its configured, available data sets (none
    without a ``benchmark:`` section).
    """
    def benchmark_table_paths(config: Mapping[str, Any] | None = None) -> list[str]:
        cfg = default_cfg if config is None else validate(dict(config))
        if not cfg.get("benchmark"):
            return []
        return [table_path(ds) for ds in datasets(cfg, available)]

    return benchmark_table_paths


def datasets(cfg: Mapping[str, Any], available: Sequence[str]) -> list[str]:
    """The configured benchmark data sets that are available, in config order."""
    return [ds for ds in cfg["benchmark"]["datasets"] if ds in available]


@dataclass(frozen=True)
class Repetitions:
    """Every repetition's data (module docstring, issue 60).

    ``X``/``y`` are the rows the grid's runs index; repetition r's private pool is
    ``X[rows[r]]`` = ``data[r].X``. ``rows`` is None when every repetition shares one view whose
    private pool *is* ``X`` (the fixed split: its indices are ``0..n-1``, the arrays of before
    issue 60).
    """

    X: np.ndarray
    y: np.ndarray
    data: tuple[BenchmarkData, ...]
    rows: tuple[np.ndarray, ...] | None = None

    @property
    def shared(self) -> bool:
        """Whether every repetition uses the same view (the fixed split)."""
        return self.rows is None

    @property
    def reps(self) -> int:
        return len(self.data)

    @property
    def n(self) -> int:
        return self.data[0].n

    @property
    def p(self) -> int:
        return self.data[0].p

    def rep(self, r: int) -> BenchmarkData:
        return self.data[r]

    def partition_rows(self) -> list[np.ndarray] | None:
        """Per repetition, the row of ``X`` of each private record (``None``: ``0..n-1``)."""
        return None if self.rows is None else list(self.rows)


def shared(data: BenchmarkData, reps: int) -> Repetitions:
    """One view shared by ``reps`` repetitions (the fixed split; tests and the audit)."""
    return Repetitions(data.X, data.y, (data,) * int(reps), None)


def split_pools(n_train: int, cfg: Mapping[str, Any], dataset: str, rep: int | None = None
                ) -> tuple[np.ndarray, np.ndarray, int]:
    """Sorted (auxiliary, private) row indices into the training rows, and the uncapped size.

    The pool is ``ceil(aux_frac · n_train)`` rows of one seeded permutation; the private pool
    is the rest, capped at ``max_train_records`` by a seeded uniform subsample [REC]. ``rep``
    (split per repetition): repetition ``rep``'s own draws, within its own training rows.
    """
    b = cfg["benchmark"]
    n_aux = int(np.ceil(round(b["aux_frac"] * n_train, 9)))
    if not 0 < n_aux < n_train - 1:
        raise ConfigError(f"benchmark.aux_frac = {b['aux_frac']} leaves no private data in {dataset}")
    suffix = () if rep is None else ("repetition", int(rep))
    perm = rng(cfg["root_seed"], "benchmark", "aux", dataset, *suffix).permutation(n_train)
    aux, priv = np.sort(perm[:n_aux]), perm[n_aux:]
    n_available = len(priv)
    cap = b["max_train_records"]
    if cap is not None and n_available > cap:
        priv = rng(cfg["root_seed"], "benchmark", "cap", dataset, *suffix).permutation(priv)[:cap]
    return aux, np.sort(priv), n_available


def load_data(cfg: Mapping[str, Any], dataset: str, processed_dir: Path) -> Repetitions:
    """Load a prepared data set and split it for every repetition (module docstring)."""
    return from_processed(cfg, dataset, load(Path(processed_dir)))


def from_processed(cfg: Mapping[str, Any], dataset: str, data: Processed) -> Repetitions:
    """:func:`load_data` on prepared arrays."""
    reps = int(cfg["benchmark"]["reps"])
    if not splits.per_repetition(cfg):
        X_train = np.asarray(data.X_train, dtype=np.float64)
        y_train = np.asarray(data.y_train, dtype=np.float64)
        aux, priv, n_available = split_pools(len(y_train), cfg, dataset)
        view = BenchmarkData(
            X_train[priv], y_train[priv], X_train[aux],
            np.asarray(data.X_test, dtype=np.float64), np.asarray(data.y_test, dtype=np.float64),
            n_available,
        )
        return shared(view, reps)
    pool = splits.Pool.of(data)
    y_pool = np.asarray(pool.y, dtype=np.float64)
    views, rows = [], []
    for r in range(reps):
        train, test = pool.indices(r, cfg)
        aux, priv, n_available = split_pools(len(train), cfg, dataset, r)
        private = train[priv]
        views.append(BenchmarkData(pool.X[private], y_pool[private], pool.X[train[aux]], pool.X[test],
                                   y_pool[test], n_available))
        rows.append(private)
    return Repetitions(pool.X, y_pool, tuple(views), tuple(rows))


def tuning_label(dataset: str, rep: int | None) -> str:
    """The data-set label of a selection's streams: ``dataset`` for the fixed split's one selection
    (``rep`` None), ``<dataset>:repetition<rep>`` for repetition ``rep``'s own (issue 60)."""
    return dataset if rep is None else f"{dataset}:repetition{int(rep)}"


def validation_split(n: int, cfg: Mapping[str, Any], dataset: str) -> tuple[np.ndarray, np.ndarray]:
    """Sorted (fit, validation) indices into the private pool for the hyper-parameter selection."""
    n_val = int(np.ceil(round(cfg["benchmark"]["val_frac"] * n, 9)))
    perm = tuning_rng(cfg["root_seed"], "benchmark", "validation", dataset).permutation(n)
    return np.sort(perm[n_val:]), np.sort(perm[:n_val])


def cells(cfg: Mapping[str, Any], n: int) -> tuple[list[tuple[int, int]], list[str]]:
    """Feasible (m, u) cells for ``n`` private records, and one reason per skipped cell.

    A cell is skipped when its smallest party would hold fewer than ``min_party_size`` records
    (spec E10 "skip a (data set, m) where a party would be too small").
    """
    b = cfg["benchmark"]
    keep, skipped = [], []
    for m in b["m_grid"]:
        for u in b["u_grid"]:
            if m % 2 or m < 2:
                skipped.append(f"m = {m}: the two-group design needs an even m >= 2")
                continue
            a = n // ((m // 2) * (1 + u))
            if a < b["min_party_size"]:
                skipped.append(f"(m = {m}, u = {u}): smallest party {a} < min_party_size "
                               f"{b['min_party_size']} of {n} private records")
                continue
            keep.append((int(m), int(u)))
    return keep, skipped


def partitions(cfg: Mapping[str, Any], dataset: str, n: int, m: int, u: int, reps: int,
               tag: str = "grid", rows: Sequence[np.ndarray] | None = None) -> PartitionSet:
    """The two-group partitions of a cell for repetitions 0..reps-1 (same for every mechanism).

    Tag ``"tune"`` (the selection's seeds) draws them from tuning streams, the same design.
    ``rows`` (split per repetition): per repetition, the row index of each of its ``n`` records
    in the matrix the runs index (:class:`Repetitions`); the draws are those of ``0..n-1``.
    """
    sizes = two_group_sizes(n, m, u)  # readable error when infeasible
    if tag != "tune":
        return make_partitions(n, "two_group", m, u, reps, cfg["root_seed"], f"benchmark:{tag}:{dataset}",
                               rows=rows)
    if rows is not None:
        raise ValueError("the selection's partitions index its own fit records")
    orders = [stream(cfg, tag, "partition", dataset, int(m), int(u), rep).permutation(n)[: int(sizes.sum())]
              for rep in range(reps)]
    return PartitionSet(order=np.array(orders, dtype=np.int32), sizes=np.tile(sizes.astype(np.int32), (reps, 1)))


def stream_key(tag: str, *key: Any) -> tuple[Any, ...]:
    """The full key of a benchmark draw (see :func:`stream`)."""
    return tuning_key("benchmark", *key) if tag == "tune" else ("benchmark", tag, *key)


def stream(cfg: Mapping[str, Any], tag: str, *key: Any) -> np.random.Generator:
    """The generator of a benchmark draw: a tuning stream for tag ``"tune"``, else ``tag``'s own.

    Tuning keys are ``("tuning", "benchmark", *key)``, evaluated ones ``("benchmark", tag, *key)``
    (:func:`mpdp.seeding.assert_disjoint` holds by construction).
    """
    return rng(cfg["root_seed"], *stream_key(tag, *key))


def reference_cell(cfg: Mapping[str, Any]) -> tuple[int, int, float]:
    """(m, u, ε) of the hyper-parameter selection (spec E10: m = 8, u = 1, ε = 1)."""
    ref = cfg["benchmark"]["reference"]
    return int(ref["m"]), int(ref["u"]), float(ref["epsilon"])


def fingerprint(part: PartitionSet, rep: int) -> str:
    """A short hash of repetition ``rep``'s party index arrays (the ``partition`` column).

    Rows of different mechanisms with equal fingerprints trained on the same parties, which is
    what the paired comparison over repetitions needs.
    """
    digest = hashlib.sha256(np.ascontiguousarray(part.sizes[rep], dtype=np.int64).tobytes())
    digest.update(np.ascontiguousarray(part.order[rep], dtype=np.int64).tobytes())
    return digest.hexdigest()[:16]
