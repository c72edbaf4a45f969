"""Issue 42: verdicts a statistician would sign. Each test breaks one rule and fails without it.

* a difference below the data's resolution is zero: repetitions all at the baseline (up to float
  round-off) are never informative, whatever the round-off says;
* the guard has a practical margin: a method a few test records above the majority rate is at chance;
* methods bitwise identical in a reading make the claim IDENTICAL, never HOLDS;
* a reference is unusable only when its gap could move the statistic by a material share of ±δ;
* "cannot tell" is split: no effect beyond the margin (decides a directional claim against it) or
  UNDERPOWERED with the repetitions needed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mpdp.claims import engine, resolution, summaries
from mpdp.claims.declare import Claim
from tests.claims.test_engine import ACC, _baseline, _obs, _run

RNG = np.random.default_rng(42)


def test_round_off_around_the_baseline_is_not_significance():
    # Adult's voting cells: every repetition *is* the majority classifier (error 0.3), a few of them one ulp
    # below it from summation order: mean ~3e-17 below with a standard error ~2e-17
    values = np.where(np.arange(10) % 3 == 0, np.nextafter(0.3, 0.0), 0.3)
    se = values.std(ddof=1) / np.sqrt(values.size)
    assert 0 < se < 1e-16 and (0.3 - values.mean()) / se > 2.3  # today's rule: one-sided p < 0.025
    err = Claim("t", "V", "a has a lower error than b", "test", "test_error", ("a", "b"), "compare", "less")
    obs = _obs({"c": {"a": values, "b": 0.2 + 0.01 * RNG.standard_normal(10)}}, metric="test_error")
    cells, verdict = _run(err, obs, _baseline("test_error", 0.3))
    assert not cells["informative"].iloc[0] and verdict["verdict"] == "UNINFORMATIVE"
    assert verdict["reason"] == "at chance (a)"


def test_a_cell_whose_repetitions_all_equal_the_baseline_is_never_informative():
    # the method is the majority classifier in every repetition: bitwise at 0.7 or some repetitions one ulp off
    up, down = np.nextafter(0.7, 1.0), np.nextafter(0.7, 0.0)
    for values in (np.full(10, 0.7), np.where(np.arange(10) % 2 == 0, up, 0.7), np.r_[np.full(9, up), down]):
        obs = _obs({"c": {"a": values, "b": 0.8 + 0.01 * RNG.standard_normal(10)}})
        cells, verdict = _run(ACC, obs, _baseline("accuracy", 0.7))
        assert not cells["informative"].iloc[0], values
        assert verdict["verdict"] == "UNINFORMATIVE"


def test_the_resolution_of_a_rate_is_one_test_record():
    assert resolution.zero_below("accuracy", 0.9, n_test=1000) == 0.5e-3
    assert resolution.zero_below("final_loss", 2.0) == 2.0 * resolution.RELATIVE_RESOLUTION
    assert resolution.zero_below("accuracy", 0.9) == 0.9 * resolution.RELATIVE_RESOLUTION  # size unknown
    # a paired accuracy difference of a third of a record (impossible on one test set: round-off) is zero
    obs = _obs({"c": {"a": np.full(10, 0.9) + 1e-4 / 3, "b": np.full(10, 0.9)}}).assign(n_test=1000)
    cells, _ = _run(ACC, obs, _baseline("accuracy", 0.5))
    assert cells["estimate"].iloc[0] == 0.0 and cells["p_value"].iloc[0] >= 0.5


def test_a_method_a_few_test_records_above_the_majority_rate_is_at_chance():
    # Bank's C5 cells: 1–9 of 8 238 test records above the majority rate 0.8874, θ* at 0.8900
    n = 8238
    majority, star = 3656 / 4119, 0.8900
    base = _baseline("accuracy", majority).assign(reference=star)
    margin, how = resolution.guard_margin("accuracy", majority, star, n)
    assert margin == 10 / n and "test records" in how  # a quarter of the gap to θ* is only ~5 records here
    for records in (1, 5, 9):
        acc = majority + records / n + RNG.integers(-1, 2, 10) * 0.25 / n
        obs = _obs({"c": {"a": acc, "b": np.full(10, majority)}}).assign(n_test=n)
        cells, verdict = _run(ACC, obs, base)
        assert verdict["verdict"] == "UNINFORMATIVE", records
        assert cells["guard_margin"].iloc[0] == margin
        assert verdict["guard_rule"] == "a beyond the trivial accuracy by 0.0012 (10 test records)"
    # far above the margin the same cell is scored (and beyond the claim's practical margin of 1 point)
    obs = _obs({"c": {"a": np.full(10, majority + 200 / n) + RNG.integers(0, 3, 10) / n,
                      "b": np.full(10, majority)}}).assign(n_test=n)
    assert _run(ACC, obs, base)[1]["verdict"] == "HOLDS"


def test_identical_methods_make_the_claim_identical_never_holds():
    c3 = Claim("t", "C3", "a is similar to b", "test", "accuracy", ("a", "b"), "compare", "equivalence", margin=0.01)
    cells = {f"c{i}": {"a": (v := 0.9 + 0.01 * RNG.standard_normal(10)), "b": v.copy()} for i in range(4)}
    out, verdict = _run(c3, _obs(cells), _baseline("accuracy", 0.5))
    assert verdict["verdict"] == "IDENTICAL" and verdict["reason"] == "identical by construction"
    assert (out["cell_verdict"] == "identical").all() and verdict["n_for"] == 0
    # one repetition differing by one bit is no identity: the same data is then scored (HOLDS)
    cells["c0"]["b"][3] = np.nextafter(cells["c0"]["b"][3], 1.0)
    out2, v2 = _run(c3, _obs(cells), _baseline("accuracy", 0.5))
    assert out2.loc[out2["cell"] == "c0", "cell_verdict"].iloc[0] != "identical"
    assert v2["verdict"] != "IDENTICAL"


def _drift(effect: float) -> tuple[str, str]:
    z5 = Claim("t", "Z5", "drift within ±0.1", "test", "g_drift", ("a",), "one_sample", "equivalence", margin=0.1,
               uses=("ref",))
    obs = _obs({"c": {"a": 0.01 * RNG.standard_normal(10)}}, metric="g_drift")
    bad = pd.DataFrame([{"dataset": "d", "cell": "*", "method": "ref", "note": "reference not converged",
                         "effect": effect}])
    cells = engine.evaluate([z5], engine.Inputs(obs, _baseline("g_drift", np.nan).iloc[:0], bad))
    v = engine.verdicts([z5], cells).iloc[0]
    return str(v["verdict"]), str(v["reason"])


def test_a_reference_is_judged_against_the_claims_own_margin():
    # Z5: the ring's reference 0.138 % above L* moves the log-ratio by ≤ 0.0014 against the margin 0.1
    assert _drift(np.log1p(0.00138))[0] == "HOLDS"
    assert _drift(0.05) == ("UNINFORMATIVE", "reference unconverged")  # half the margin: material
    assert _drift(np.nan) == ("UNINFORMATIVE", "reference unconverged")  # unknown effect: unusable


def test_cannot_tell_is_split_into_no_effect_and_underpowered():
    # no effect: a − b within ±0.2 points, tightly — decides "a beats b" against it (FAILS, no effect)
    flat = _obs({"c": {"a": 0.9 + 0.0005 * RNG.standard_normal(20), "b": 0.9 + 0.0005 * RNG.standard_normal(20)}})
    cells, verdict = _run(ACC, flat, _baseline("accuracy", 0.5))
    assert cells["cell_verdict"].iloc[0] == "no_effect"
    assert verdict["verdict"] == "FAILS" and verdict["reason"] == "no effect beyond margin"
    assert "within ±0.01 in 1 of 1" in verdict["equivalence"]
    # too few, too noisy repetitions: UNDERPOWERED, with the mde and the repetitions needed
    noisy = _obs({"c": {"a": 0.9 + 0.05 * RNG.standard_normal(3), "b": 0.9 + 0.05 * RNG.standard_normal(3)}})
    cells, verdict = _run(ACC, noisy, _baseline("accuracy", 0.5))
    assert verdict["verdict"] == "UNDERPOWERED" and cells["mde"].iloc[0] > 0.01
    assert verdict["reps_needed"] > 3 and "needed" in verdict["reason"]
    assert f"{int(verdict['reps_needed'])} in every cell" in verdict["reason"]  # the matrix's count, named
    # the repetitions the statement asks for do power the decision: at that count (same spread) a true 0 is
    # shown within ±δ with 80 % power by the TOST, and one fewer does not (the calibration by simulation is
    # tests/claims/test_decision_calibration.py)
    piv = noisy.pivot_table(index="rep", columns="method", values="value")
    sd = float((piv["a"] - piv["b"]).std(ddof=1))
    n = int(verdict["reps_needed"])
    power = [summaries.tost_power(sd / np.sqrt(k), k - 1, 0.01) for k in (n, n - 1)]
    assert power[0] >= summaries.POWER > power[1]


def test_every_directional_claim_has_a_practical_margin():
    import pytest

    with pytest.raises(ValueError, match="practical_margin"):
        Claim("t", "G", "a drifts less than b", "test", "g_drift", ("a", "b"), "compare", "less")
    assert Claim("t", "G", "a drifts less", "test", "g_drift", ("a", "b"), "compare", "less",
                 practical_margin=0.02).delta == 0.02
    assert ACC.delta == 0.01  # a difference of accuracies: one point


def test_an_underpowered_bound_says_how_many_draws_would_decide_it():
    """A bound claim whose draws never exceed the bound but are too few: the reason names the
    interval's reach and the draws needed, which do put the Clopper–Pearson interval below the
    allowed share (and one fewer does not)."""
    from mpdp.claims.intervals import binomial_interval

    claim = Claim(study="s", claim_id="B", text="t", source="seed", kind="bound", metric="accuracy",
                  methods=("a",), direction="less", margin=0.05)
    hi = binomial_interval(0, 10)[2]
    cells = pd.DataFrame({"cell_verdict": ["underpowered"] * 2, "n_reps": [10, 10], "reps_needed": [np.nan] * 2,
                          "mde": [np.nan] * 2, "hi": [hi, hi], "slack": [0.0, 0.0]})
    verdict, reason = engine.claim_outcome(claim, cells)
    n = engine.bound_draws_needed(0.05, family=2)  # the two cells are one Holm family
    assert verdict == "UNDERPOWERED" and f"up to {hi:.2g}" in reason and f"about {n} are needed" in reason
    assert 0.95 ** n <= summaries.ALPHA / 2 < 0.95 ** (n - 1)  # the exact test at Holm's first step
    one = engine.bound_draws_needed(0.05)  # a lone cell: where the Clopper–Pearson interval ends below 0.05
    assert binomial_interval(0, one)[2] < 0.05 <= binomial_interval(0, one - 1)[2]
    assert engine.bound_draws_needed(0.05, family=84) == 159  # V4's 84 cells (issue 55's count)
