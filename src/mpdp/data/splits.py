"""The train/test split of each repetition (spec E1.2 as amended by issue 60, E0 seeding).

``prepare`` writes one stratified split of the prepared rows (``split.seed``; the arrays
``X_train``/``X_test``). With ``split.per_repetition: true`` (the default, [REC]) a
repetition does not use that split: it draws its own stratified split of the **pool** — the
prepared rows, the fixed split's training rows first and its test rows after them, in file
order — from the stream ``rng(split.seed, "split", dataset, "repetition", rep)``. Every
repetition then trains (partition, θ*(λ), references, selections) on its own training records
and is scored on its own test records, so a cell's interval covers the sampling of the
records as well as the noise and the partition (Bouthillier et al. 2021). Methods compared
within a repetition share its split (pairing unchanged).

With ``split.per_repetition: false`` every repetition uses the fixed split, which is the pool's
first ``n_train`` rows, so the training indices are ``0..n_train-1`` and a study indexing the
pool gets exactly the arrays (and results) it got from ``X_train``/``X_test``.

A split draws only on the labels, with ``n_test = ceil(test_frac · n)`` as in the fixed split,
so every repetition has the same number of training and test records.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from mpdp.data.prepare import Processed, stratified_split
from mpdp.seeding import rng

#: the seeding role of a repetition's split (keyed under ``split.seed``, never ``root_seed``)
ROLE = "split"


def per_repetition(cfg: Mapping[str, Any]) -> bool:
    """Whether each repetition draws its own split (config ``split.per_repetition``)."""
    return bool(cfg["split"].get("per_repetition", True))


def describe(cfg: Mapping[str, Any]) -> str:
    """One sentence on the split design, for logs, cards and the report."""
    s = cfg["split"]
    share = f"{s['test_frac']:.0%}"
    if per_repetition(cfg):
        return (f"every repetition draws its own stratified split ({share} test records) from split seed "
                f"{s['seed']} (split.per_repetition, [REC], issue 60)")
    return f"one stratified split ({share} test records, split seed {s['seed']}) shared by every repetition"


def short(cfg: Mapping[str, Any]) -> str:
    """A few words on the split design for the report's first screen."""
    if per_repetition(cfg):
        return "each repetition draws its own train/test split, so the intervals cover the data's sampling too"
    return "every repetition shares one train/test split, so the intervals do not cover the data's sampling"


def repetition_split(y_pool: np.ndarray, n_train: int, dataset: str, rep: int,
                     cfg: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Sorted pool indices (train, test) of repetition ``rep``.

    ``y_pool`` holds the pool's binary labels (fixed training rows first); ``n_train`` is the fixed
    split's training size. The fixed design returns ``(0..n_train-1, n_train..n-1)``.
    """
    n = len(y_pool)
    if not per_repetition(cfg):
        return np.arange(n_train, dtype=np.int64), np.arange(n_train, n, dtype=np.int64)
    train, test = stratified_split(
        np.asarray(y_pool), cfg["split"]["test_frac"],
        rng(cfg["split"]["seed"], ROLE, dataset, "repetition", int(rep)),
    )
    if len(train) != n_train:  # the same count formula as prepare's split, on the same rows
        raise ValueError(f"{dataset}: repetition {rep}'s split has {len(train)} training records, the "
                         f"prepared split {n_train}; the data were prepared under another split.test_frac")
    return train.astype(np.int64), test.astype(np.int64)


@dataclass(frozen=True)
class Pool:
    """Every prepared row of a data set, the fixed split's training rows first (spec E1.2).

    ``classes`` holds the multiclass codes in the same row order (KDDCup99, spec E5), else None.
    """

    X: np.ndarray
    y: np.ndarray
    n_train: int
    dataset: str
    classes: np.ndarray | None = None

    @classmethod
    def of(cls, data: Processed, classes: tuple[np.ndarray, np.ndarray] | None = None) -> Pool:
        """The pool of a prepared data set (``classes``: its train and test class codes)."""
        X = np.concatenate([np.asarray(data.X_train, dtype=np.float64), np.asarray(data.X_test, dtype=np.float64)])
        y = np.concatenate([np.asarray(data.y_train), np.asarray(data.y_test)])
        codes = None if classes is None else np.concatenate([np.asarray(classes[0]), np.asarray(classes[1])])
        return cls(X, y, int(data.X_train.shape[0]), str(data.card["dataset"]), codes)

    @property
    def n(self) -> int:
        return int(len(self.y))

    @property
    def n_test(self) -> int:
        return self.n - self.n_train

    def indices(self, rep: int, cfg: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        """Pool indices (train, test) of repetition ``rep`` (:func:`repetition_split`)."""
        return repetition_split(self.y, self.n_train, self.dataset, rep, cfg)

    def repetition(self, rep: int, cfg: Mapping[str, Any]) -> Split:
        """Repetition ``rep``'s split as arrays."""
        train, test = self.indices(rep, cfg)
        return Split(self, train, test)


@dataclass(frozen=True)
class Split:
    """One repetition's split of a :class:`Pool`: index arrays into the pool and the arrays."""

    pool: Pool
    train: np.ndarray
    test: np.ndarray

    @cached_property
    def X_train(self) -> np.ndarray:
        return self.pool.X[self.train]

    @cached_property
    def y_train(self) -> np.ndarray:
        return self.pool.y[self.train]

    @cached_property
    def X_test(self) -> np.ndarray:
        return self.pool.X[self.test]

    @cached_property
    def y_test(self) -> np.ndarray:
        return self.pool.y[self.test]

    @property
    def classes_train(self) -> np.ndarray:
        if self.pool.classes is None:
            raise ValueError(f"{self.pool.dataset} has no multiclass label")
        return self.pool.classes[self.train]

    @property
    def classes_test(self) -> np.ndarray:
        if self.pool.classes is None:
            raise ValueError(f"{self.pool.dataset} has no multiclass label")
        return self.pool.classes[self.test]
