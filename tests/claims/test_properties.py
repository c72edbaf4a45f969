"""Property-based tests of the claims engine (issue 42, item 7; hypothesis):

* shifting a method's values by less than the data's resolution never changes a verdict;
* an effect planted larger than the minimum detectable effect (and beyond the practical margin) is found;
* Holm never reports more significant cells than the uncorrected test;
* swapping the two compared methods of a difference claim swaps ``for`` and ``against``.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mpdp.claims import engine, resolution, summaries
from mpdp.claims.declare import Claim
from tests.claims.test_engine import ACC, _baseline, _obs

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
N_TEST = 2000

#: accuracies on a test set of N_TEST records: integer counts of hits
counts = st.lists(st.integers(1500, 1990), min_size=4, max_size=12)


def _verdict(claim: Claim, obs, base):
    cells = engine.evaluate([claim], engine.Inputs(obs, base))
    return cells, engine.verdicts([claim], cells).iloc[0]


@SETTINGS
@given(a=counts, b=counts, cells=st.integers(1, 3), shift=st.floats(0.05, 0.499), seed=st.integers(0, 2**16),
       case=st.sampled_from(["free", "a is b", "a at the baseline"]))
def test_a_shift_below_the_resolution_never_changes_a_verdict(a, b, cells, shift, seed, case):
    # shift: the largest move of a value, in test records (each value moves by its own amount up to it);
    # the edge cases (a identical to b, a at the majority rate) are where round-off used to decide verdicts
    n = min(len(a), len(b))
    rng = np.random.default_rng(seed)
    data = {f"c{i}": {"a": np.array(rng.permutation(a)[:n]) / N_TEST, "b": np.array(rng.permutation(b)[:n]) / N_TEST}
            for i in range(cells)}
    for methods in data.values():
        if case == "a is b":
            methods["a"] = methods["b"].copy()
        elif case == "a at the baseline":
            methods["a"] = np.full(n, 0.7)
    base = _baseline("accuracy", 0.7)
    obs = _obs(data).assign(n_test=N_TEST)
    moved = obs.copy()
    is_a = moved["method"] == "a"
    moved.loc[is_a, "value"] += rng.uniform(0.5, 1.0, int(is_a.sum())) * shift / N_TEST  # < half a record
    c0, v0 = _verdict(ACC, obs, base)
    c1, v1 = _verdict(ACC, moved, base)
    assert v0["verdict"] == v1["verdict"] and list(c0["cell_verdict"]) == list(c1["cell_verdict"])


@SETTINGS
@given(n=st.integers(4, 30), sd=st.floats(0.001, 0.05), seed=st.integers(0, 2**16))
def test_a_planted_effect_larger_than_the_mde_is_found(n, sd, seed):
    rng = np.random.default_rng(seed)
    noise = rng.standard_normal(n)
    noise = (noise - noise.mean()) / noise.std(ddof=1) * sd  # exactly this spread: the planted effect's mde
    mde = ACC.delta + summaries.mde(sd / np.sqrt(n), n - 1)  # the cell's mde: beyond the practical margin
    effect = ACC.delta + 1.5 * (mde - ACC.delta)  # beyond the mde
    obs = _obs({"c": {"a": 0.8 + effect + noise, "b": np.full(n, 0.8)}})
    cells, verdict = _verdict(ACC, obs, _baseline("accuracy", 0.5))
    assert cells["mde"].iloc[0] == np.float64(mde) or abs(cells["mde"].iloc[0] - mde) < 1e-12
    assert verdict["verdict"] == "HOLDS"


@SETTINGS
@given(p=st.lists(st.one_of(st.floats(0.0, 1.0), st.just(float("nan"))), min_size=1, max_size=30))
def test_holm_never_reports_more_cells_than_the_uncorrected_test(p):
    raw = np.array(p)
    adjusted = summaries.holm(raw)
    with np.errstate(invalid="ignore"):
        assert np.sum(adjusted < summaries.ALPHA) <= np.sum(raw < summaries.ALPHA)
        assert np.all((adjusted >= raw) | np.isnan(raw))


@SETTINGS
@given(effects=st.lists(st.floats(-0.08, 0.08), min_size=1, max_size=5), n=st.integers(3, 15),
       seed=st.integers(0, 2**16))
def test_swapping_the_compared_methods_swaps_for_and_against(effects, n, seed):
    rng = np.random.default_rng(seed)
    data = {f"c{i}": {"a": 0.85 + e + 0.01 * rng.standard_normal(n), "b": 0.85 + 0.01 * rng.standard_normal(n)}
            for i, e in enumerate(effects)}
    obs = _obs(data)
    swapped = obs.assign(method=obs["method"].map({"a": "b", "b": "a"}))
    both = Claim("t", "S", "a beats b", "test", "accuracy", ("a", "b"), "compare", "greater",
                 guard_methods=("a", "b"), guard_reason="both above chance, so that swapping changes nothing else")
    base = _baseline("accuracy", 0.5)
    c0, v0 = _verdict(both, obs, base)
    c1, v1 = _verdict(both, swapped, base)
    flip = {"for": "against", "against": "for"}
    assert [flip.get(v, v) for v in c0["cell_verdict"]] == list(c1["cell_verdict"])
    assert (v0["n_for"], v0["n_against"]) == (v1["n_against"], v1["n_for"])


def test_the_resolution_is_half_a_record():
    assert resolution.zero_below("accuracy", 0.9, N_TEST) == 0.5 / N_TEST
