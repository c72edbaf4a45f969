"""The data the ADMM study trains on: each repetition's node split and test records (spec E4 "local data";
E1.2 as amended by issue 60).

A **case** is one graph's data (P nodes of B = ⌊n/P⌋ training records each, leftover dropped, and the test
records of the MER) together with the evaluated repetitions that train on it. Every batch of the study
(:mod:`mpdp.studies.admm.train`) runs one group of columns per case, all cases in one call of
:func:`mpdp.mechanisms.admm.run_groups`:

* ``split.per_repetition: false`` (the fixed split): **one case** serving every repetition, the prepared
  training records split over the nodes once from the stream ``(admm_split, dataset, P)``; repetitions
  redraw the noise only. This is the study as it was before issue 60, bit for bit.
* ``split.per_repetition: true`` [REC, the default]: **one case per repetition r**: r's own training
  records (:meth:`mpdp.data.splits.Pool.indices`, stream keyed by ``split.seed``) split over the nodes from
  the stream ``(admm_split, dataset, P, "repetition", r)`` under the root seed, and r's own test records.
  Each repetition's node split is its own draw, so repetitions are independent replications of the whole
  experiment (split, nodes, noise), as the claims engine's intervals and Z6's bootstrap over repetitions
  assume. Every record a case's nodes hold is one of r's training records; its test records are r's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mpdp import seeding
from mpdp.data import splits
from mpdp.data.prepare import Processed
from mpdp.data.prepare import load as load_processed
from mpdp.errors import ConfigError


@dataclass(frozen=True)
class StudyData:
    """The node split and the test set of one case.

    ``node_rows`` and ``test_rows`` (per-repetition cases) are the pool indices
    (:class:`mpdp.data.splits.Pool`) of each node's records and of the test records; None for the fixed
    split, whose nodes are drawn from the prepared training arrays directly.
    """

    nodes: list[tuple[np.ndarray, np.ndarray]]
    X_test: np.ndarray
    y_test: np.ndarray
    n_total: int  # training records before the split (leftover dropped)
    node_rows: tuple[np.ndarray, ...] | None = None
    test_rows: np.ndarray | None = None

    @property
    def d(self) -> int:
        return self.nodes[0][0].shape[1]


@dataclass(frozen=True)
class Case:
    """One group of every batch: its data and the evaluated repetitions that train on it."""

    data: StudyData
    reps: tuple[int, ...]  # the evaluated repetitions (fixed split: all of them)
    split_rep: int | None  # the repetition whose split the data are; None: the fixed split


def node_positions(n: int, P: int, root_seed: int, dataset: str, rep: int | None = None) -> list[np.ndarray]:
    """Positions (into the n training records) of each node's B_p = ⌊n/P⌋ records, leftover dropped.

    ``rep`` None: the fixed split's stream ``(admm_split, dataset, P)``; else repetition ``rep``'s own
    stream (module docstring)."""
    if P < 2 or n < 2 * P:
        raise ConfigError(f"config key 'admm.P': cannot split {n} training records over P = {P} nodes "
                          "(at least two each); lower admm.P or raise max_records")
    key = ("admm_split", dataset, P) if rep is None else ("admm_split", dataset, P, "repetition", int(rep))
    perm = seeding.rng(root_seed, *key).permutation(n)
    B = n // P
    return [perm[p * B:(p + 1) * B] for p in range(P)]


def split_nodes(X: np.ndarray, y: np.ndarray, P: int, root_seed: int, dataset: str,
                rep: int | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """Equal random split, B_p = ⌊n/P⌋ (spec E4 "local data"); leftover records are dropped."""
    return [(np.ascontiguousarray(X[pos]), y[pos].astype(np.float64))
            for pos in node_positions(len(y), P, root_seed, dataset, rep)]


def load_data(cfg: dict[str, Any], processed_dir: Path) -> StudyData:
    """The fixed split's data (the prepared training arrays over the nodes, the prepared test set)."""
    return fixed_data(cfg, load_processed(processed_dir))


def fixed_data(cfg: dict[str, Any], data: Processed) -> StudyData:
    """The fixed split's one case data (module docstring)."""
    a = cfg["admm"]
    X = np.asarray(data.X_train, dtype=np.float64)
    y = np.asarray(data.y_train, dtype=np.float64)
    nodes = split_nodes(X, y, a["P"], cfg["root_seed"], a["dataset"])
    return StudyData(nodes, np.asarray(data.X_test, dtype=np.float64), np.asarray(data.y_test, dtype=np.float64), len(y))


def repetition_data(cfg: dict[str, Any], pool: splits.Pool, rep: int) -> StudyData:
    """Repetition ``rep``'s data: its own training records over the nodes, its own test records."""
    a = cfg["admm"]
    train, test = pool.indices(rep, cfg)
    rows = tuple(train[pos] for pos in node_positions(len(train), a["P"], cfg["root_seed"], a["dataset"], rep))
    nodes = [(np.ascontiguousarray(pool.X[r]), pool.y[r].astype(np.float64)) for r in rows]
    return StudyData(nodes, np.ascontiguousarray(pool.X[test]), pool.y[test].astype(np.float64), len(train),
                     node_rows=rows, test_rows=test)


def cases(cfg: dict[str, Any], data: Processed) -> list[Case]:
    """The cases of a job under the config's split design (module docstring)."""
    reps = tuple(range(int(cfg["admm"]["reps"])))
    if not splits.per_repetition(cfg):
        return [Case(fixed_data(cfg, data), reps, None)]
    pool = splits.Pool.of(data)
    return [Case(repetition_data(cfg, pool, r), (r,), r) for r in reps]
