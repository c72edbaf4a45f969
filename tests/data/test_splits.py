"""A train/test split per repetition (issue 60; spec E1.2, E0): stratified, disjoint, keyed by
its own stream, identical to the prepared split when ``split.per_repetition`` is off."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mpdp.data import splits
from mpdp.data.prepare import Processed, stratified_split
from mpdp.seeding import rng


def _cfg(per_rep: bool = True, seed: int = 0, test_frac: float = 0.2, root_seed: int = 0) -> dict[str, Any]:
    return {"root_seed": root_seed, "split": {"test_frac": test_frac, "seed": seed, "per_repetition": per_rep}}


def _processed(n: int = 503, positive: float = 0.3) -> Processed:
    gen = np.random.default_rng(7)
    y = np.where(gen.random(n) < positive, 1, -1).astype(np.int8)
    X = gen.normal(size=(n, 4))
    train, test = stratified_split(y, 0.2, rng(0, "split", "toy"))
    card = {"dataset": "toy", "n_train": len(train), "n_test": len(test)}
    return Processed(X[train], y[train], X[test], y[test], card)


def test_fixed_design_is_the_prepared_split() -> None:
    data = _processed()
    pool = splits.Pool.of(data)
    for rep in (0, 3):
        s = pool.repetition(rep, _cfg(per_rep=False))
        np.testing.assert_array_equal(s.X_train, data.X_train)
        np.testing.assert_array_equal(s.y_test, data.y_test)


def test_each_repetition_draws_a_stratified_partition_of_the_pool() -> None:
    pool = splits.Pool.of(_processed())
    cfg = _cfg()
    seen = []
    for rep in range(4):
        train, test = pool.indices(rep, cfg)
        assert len(train) == pool.n_train and len(test) == pool.n_test
        assert np.intersect1d(train, test).size == 0
        np.testing.assert_array_equal(np.union1d(train, test), np.arange(pool.n))
        # the class mix of the test part matches the pool's within one record per class
        for c in (-1, 1):
            assert abs(np.sum(pool.y[test] == c) - pool.n_test * np.mean(pool.y == c)) < 1.0 + 1e-9
        seen.append(tuple(test))
    assert len(set(seen)) == 4, "repetitions must draw different splits"
    # reproducible, and every test record of rep 0 is not a test record of rep 1 in general
    np.testing.assert_array_equal(pool.indices(2, cfg)[1], np.array(seen[2]))


def test_split_stream_is_keyed_by_split_seed_not_root_seed() -> None:
    pool = splits.Pool.of(_processed())
    base = pool.indices(1, _cfg())[1]
    np.testing.assert_array_equal(base, pool.indices(1, _cfg(root_seed=5))[1])
    assert not np.array_equal(base, pool.indices(1, _cfg(seed=1))[1])


def test_a_prepared_split_of_another_test_share_is_refused() -> None:
    pool = splits.Pool.of(_processed())
    with pytest.raises(ValueError, match="split.test_frac"):
        pool.indices(0, _cfg(test_frac=0.3))


def test_describe_names_the_design() -> None:
    assert "every repetition" in splits.describe(_cfg())
    assert "shared by every repetition" in splits.describe(_cfg(per_rep=False))


def test_partitions_of_each_repetitions_rows_draw_as_on_0_to_n() -> None:
    from mpdp.data.partition import make_partitions

    pool = splits.Pool.of(_processed())
    cfg = _cfg()
    rows = [pool.indices(rep, cfg)[0] for rep in range(3)]
    plain = make_partitions(pool.n_train, "random", 4, None, 3, 0, "toy")
    mapped = make_partitions(pool.n_train, "random", 4, None, 3, 0, "toy", rows=rows)
    np.testing.assert_array_equal(mapped.sizes, plain.sizes)
    for rep in range(3):
        np.testing.assert_array_equal(mapped.order[rep], rows[rep][plain.order[rep]])
        assert np.isin(mapped.order[rep], pool.indices(rep, cfg)[1]).sum() == 0
    same = make_partitions(pool.n_train, "random", 4, None, 3, 0, "toy", rows=[np.arange(pool.n_train)] * 3)
    np.testing.assert_array_equal(same.order, plain.order)
