"""Partition generators (spec experiments.md E2), property-based."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpdp.data.partition import (
    PartitionSet,
    default_tau,
    load_partition,
    make_partitions,
    random_sizes,
    save_partitions,
    two_group_sizes,
)
from mpdp.errors import ConfigError, InputDataError
from mpdp.seeding import rng


def _check_disjoint_cover(part: PartitionSet, n: int) -> None:
    for rep in range(part.reps):
        blocks = part.party_indices(rep)
        assert [len(b) for b in blocks] == part.sizes[rep].tolist()
        joined = np.concatenate(blocks)
        assert len(np.unique(joined)) == len(joined) == part.n_eff  # disjoint, all retained
        assert joined.min() >= 0 and joined.max() < n
        assert np.array_equal(joined, part.order[rep])


@st.composite
def random_settings(draw: st.DrawFn) -> tuple[int, int, float]:
    m = draw(st.integers(1, 40))
    tau_frac = draw(st.sampled_from([0.0, 0.1, 0.2, 0.5, 1.0]))
    n = draw(st.integers(2 * m, 3000))
    return n, m, tau_frac


@settings(max_examples=60, deadline=None)
@given(random_settings(), st.integers(0, 2**32 - 1))
def test_random_sizes_respect_threshold_and_sum(setting: tuple[int, int, float], seed: int) -> None:
    n, m, tau_frac = setting
    tau = default_tau(n, m, tau_frac)
    sizes = random_sizes(n, m, tau, np.random.default_rng(seed))
    assert sizes.sum() == n and len(sizes) == m
    assert sizes.min() >= tau >= 2


@settings(max_examples=40, deadline=None)
@given(random_settings(), st.integers(1, 3))
def test_random_design_partitions_every_training_row(
    setting: tuple[int, int, float], reps: int
) -> None:
    n, m, tau_frac = setting
    part = make_partitions(n, "random", m, None, reps, 0, "adult", tau_frac)
    assert part.order.dtype == np.int32 and part.sizes.dtype == np.int32
    assert part.order.shape == (reps, n) and part.sizes.shape == (reps, m)
    assert part.n_eff == n
    assert np.all(part.n_min >= default_tau(n, m, tau_frac))
    _check_disjoint_cover(part, n)


@st.composite
def two_group_settings(draw: st.DrawFn) -> tuple[int, int, int]:
    m = 2 * draw(st.integers(1, 16))
    u = draw(st.integers(1, 9))
    n = draw(st.integers((m // 2) * (1 + u), 5000))
    return n, m, u


@settings(max_examples=60, deadline=None)
@given(two_group_settings())
def test_two_group_design_hits_u_exactly(setting: tuple[int, int, int]) -> None:
    n, m, u = setting
    part = make_partitions(n, "two_group", m, u, 2, 0, "bank")
    a = n // ((m // 2) * (1 + u))
    assert part.n_eff == (m // 2) * (1 + u) * a <= n
    assert np.all(part.n_max == u * part.n_min)
    assert np.all(part.n_min == a)
    assert np.all(part.sizes[:, : m // 2] == a) and np.all(part.sizes[:, m // 2 :] == u * a)
    _check_disjoint_cover(part, n)


@settings(max_examples=60, deadline=None)
@given(two_group_settings())
def test_two_group_leftover_to_large_group_uses_every_record(setting: tuple[int, int, int]) -> None:
    # spec E7 #13's alternative: the leftover records go round-robin to the large group
    n, m, u = setting
    half = m // 2
    a = n // (half * (1 + u))
    part = make_partitions(n, "two_group", m, u, 2, 0, "bank", leftover="large_group")
    assert part.n_eff == n
    assert np.all(part.sizes[:, :half] == a)  # the small group and n_(1) are unchanged
    large = part.sizes[:, half:]
    assert np.all(large >= u * a) and np.all(large.max(axis=1) - large.min(axis=1) <= 1)
    _check_disjoint_cover(part, n)
    # the same permutation as the default: its retained rows are the first n_eff entries
    dropped = make_partitions(n, "two_group", m, u, 2, 0, "bank")
    assert np.array_equal(part.order[:, : dropped.n_eff], dropped.order)


def test_two_group_leftover_example() -> None:
    # 559 = 16·5 + 16·25 + 79: the 79 leftover records give the 16 large parties 4 each, 15 of them 5
    sizes = two_group_sizes(559, 32, 5, "large_group")
    assert sizes.tolist() == [5] * 16 + [30] * 15 + [29]
    with pytest.raises(ConfigError, match="wddp.leftover"):
        two_group_sizes(559, 32, 5, "give_away")


def test_feasibility_example_of_the_spec() -> None:
    # E2.2: Breast Cancer, m = 32, u = 5 gives a = 5 on the 559 training records
    assert two_group_sizes(559, 32, 5).tolist() == [5] * 16 + [25] * 16


@pytest.mark.parametrize(("design", "u"), [("random", None), ("two_group", 3)])
def test_same_seed_same_partition_new_rep_new_partition(design: str, u: int | None) -> None:
    first = make_partitions(1000, design, 8, u, 3, 7, "adult")
    again = make_partitions(1000, design, 8, u, 3, 7, "adult")
    assert np.array_equal(first.order, again.order) and np.array_equal(first.sizes, again.sizes)
    assert not np.array_equal(first.order[0], first.order[1])
    # repetition r does not depend on how many repetitions are drawn
    assert np.array_equal(
        make_partitions(1000, design, 8, u, 1, 7, "adult").order[0], first.order[0]
    )
    other_data = make_partitions(1000, design, 8, u, 1, 7, "bank")
    assert not np.array_equal(other_data.order[0], first.order[0])


def test_stream_is_the_documented_key() -> None:
    part = make_partitions(500, "two_group", 4, 2, 2, 3, "bank")
    assert np.array_equal(
        part.order[1],
        rng(3, "partition", "bank", "two_group", 4, 2, 1).permutation(500)[: part.n_eff],
    )
    # numpy integers give the same stream as Python ints
    same = make_partitions(np.int64(500), "two_group", np.int64(4), np.int64(2), 2, 3, "bank")
    assert np.array_equal(part.order, same.order)


def test_infeasible_settings_are_clear_errors() -> None:
    with pytest.raises(
        ConfigError, match=r"m = 10 parties at least tau = 11 records out of n = 100"
    ):
        random_sizes(100, 10, 11, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="too few"):
        two_group_sizes(10, 8, 3)
    with pytest.raises(ConfigError, match="even number"):
        two_group_sizes(100, 3, 1)
    with pytest.raises(ConfigError, match="integer u"):
        make_partitions(100, "two_group", 2, 1.5, 1, 0, "adult")
    with pytest.raises(ValueError, match="u = None"):
        make_partitions(100, "random", 2, 3, 1, 0, "adult")


def test_partition_set_validates_and_accepts_int64() -> None:
    part = PartitionSet(
        order=np.arange(6, dtype=np.int64)[None, :], sizes=np.array([[2, 4]], dtype=np.int64)
    )
    assert part.order.dtype == np.int32 and part.m == 2 and part.reps == 1
    assert [b.tolist() for b in part.party_indices(0)] == [[0, 1], [2, 3, 4, 5]]
    with pytest.raises(ValueError, match="sum to n_eff"):
        PartitionSet(order=np.arange(6)[None, :], sizes=np.array([[2, 3]]))


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    sets = {
        (8, None): make_partitions(300, "random", 8, None, 2, 0, "adult"),
        (4, 1): make_partitions(300, "two_group", 4, 1, 2, 0, "adult"),
        (4, 3): make_partitions(300, "two_group", 4, 3, 2, 0, "adult"),
    }
    path = tmp_path / "partitions.npz"
    save_partitions(path, sets)
    with np.load(path) as stored:
        assert all(stored[k].dtype == np.int32 for k in stored.files)  # index arrays only
    for (m, u), part in sets.items():
        loaded = load_partition(path, m, u)
        assert np.array_equal(loaded.order, part.order) and np.array_equal(loaded.sizes, part.sizes)
    with pytest.raises(
        InputDataError,
        match=r"no setting m = 4, u = 2 \(it holds \['m4_u1', 'm4_u3', 'm8_unone'\]\)",
    ):
        load_partition(path, 4, 2)
    with pytest.raises(InputDataError, match="does not exist"):
        load_partition(tmp_path / "absent.npz", 4, 1)
    path.write_bytes(b"not an npz")
    with pytest.raises(InputDataError, match="unreadable"):
        load_partition(path, 4, 1)


def test_small_group_fraction_sets_the_group_counts():
    """E7 #12: small_group_frac * m parties of size a, the rest of size u a, a = n // (s + (m - s) u)."""
    sizes = two_group_sizes(1000, 8, 3, small_frac=0.25)
    a = 1000 // (2 + 6 * 3)
    assert sizes.tolist() == [a] * 2 + [3 * a] * 6
    assert 1000 / (8 * sizes.min()) > (1 + 3) / 2  # fewer small parties: a larger n/(m n_(1))
    # the default is the paper's m/2 and m/2, a = n // ((m/2)(1+u)), bit for bit
    assert np.array_equal(two_group_sizes(1000, 8, 3), two_group_sizes(1000, 8, 3, small_frac=0.5))
    assert two_group_sizes(1000, 8, 3).tolist() == [1000 // (4 * 4)] * 4 + [3 * (1000 // (4 * 4))] * 4
    full = two_group_sizes(1000, 8, 3, "large_group", small_frac=0.75)
    assert full.sum() == 1000 and full[:6].tolist() == [1000 // (6 + 2 * 3)] * 6
    part = make_partitions(1000, "two_group", 8, 3, 2, 0, "toy", small_frac=0.25)
    assert part.sizes[0].tolist() == sizes.tolist()
    _check_disjoint_cover(part, 1000)


@pytest.mark.parametrize("frac", [0.3, 1 / 16])
def test_small_group_fraction_must_give_whole_nonempty_groups(frac):
    with pytest.raises(ConfigError, match="small_group_frac"):
        two_group_sizes(1000, 8, 3, small_frac=frac)
