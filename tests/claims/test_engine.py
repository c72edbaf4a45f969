"""The claims engine's guards (issue 33): each test breaks one guard and must fail when it is removed.

* a degenerate comparison (both methods at the majority rate) is UNINFORMATIVE, never scored;
* a cell significantly against the claim is never hidden by a majority of cells for it (MIXED / FAILS);
* a bound whose observed slack is above an order of magnitude everywhere is VACUOUS, not HOLDS;
* losses are compared per cell on a log scale (raw losses of settings an order apart never averaged);
* Holm across the cells of a claim.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mpdp.claims import engine, summaries, tables
from mpdp.claims.declare import Claim
from mpdp.errors import InputDataError

RNG = np.random.default_rng(0)


def _obs(cells: dict[str, dict[str, np.ndarray]], metric: str = "accuracy", dataset: str = "d",
         bound: dict[str, np.ndarray] | None = None) -> pd.DataFrame:
    rows = []
    for cell, methods in cells.items():
        for method, values in methods.items():
            for rep, v in enumerate(values):
                rows.append({"dataset": dataset, "reading": "-", "cell": cell, "rep": rep, "method": method,
                             "metric": metric, "value": float(v), "x": np.nan,
                             "bound": float(bound[cell][rep]) if bound else np.nan})
    return pd.DataFrame(rows)


def _baseline(metric: str, value: float, dataset: str = "d") -> pd.DataFrame:
    return pd.DataFrame([{"dataset": dataset, "cell": "*", "metric": metric, "value": value, "baseline": "trivial"}])


def _run(claim: Claim, obs: pd.DataFrame, base: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    cells = engine.evaluate([claim], engine.Inputs(obs, base))
    return cells, engine.verdicts([claim], cells).iloc[0]


ACC = Claim("t", "A", "a beats b", "test", "accuracy", ("a", "b"), "compare", "greater")


def test_a_degenerate_comparison_is_uninformative_not_scored():
    # a is clearly ahead of b, but both are below the majority rate 0.9: the comparison says nothing
    obs = _obs({f"c{i}": {"a": 0.60 + 0.001 * RNG.standard_normal(10), "b": 0.50 + 0.001 * RNG.standard_normal(10)}
                for i in range(3)})
    cells, verdict = _run(ACC, obs, _baseline("accuracy", 0.9))
    assert verdict["verdict"] == "UNINFORMATIVE"
    assert (cells["cell_verdict"] == "uninformative").all() and verdict["n_informative"] == 0
    # the same data with a trivial baseline both beat is scored (the guard, not the data, made it UNINFORMATIVE)
    _, scored = _run(ACC, obs, _baseline("accuracy", 0.3))
    assert scored["verdict"] == "HOLDS" and scored["n_for"] == 3


def test_the_claimed_better_method_must_beat_its_baseline_and_the_other_may_be_at_chance():
    # "a beats b": b at chance is what a beats (issue 42, item 6) — scored; a at chance — uninformative, named
    obs = _obs({"c": {"a": 0.95 + 0.001 * RNG.standard_normal(10), "b": 0.50 + 0.001 * RNG.standard_normal(10)}})
    _, verdict = _run(ACC, obs, _baseline("accuracy", 0.9))
    assert verdict["verdict"] == "HOLDS" and verdict["guarded"].startswith("a:")
    swapped = obs.assign(method=obs["method"].map({"a": "b", "b": "a"}))
    cells, v2 = _run(ACC, swapped, _baseline("accuracy", 0.9))
    assert v2["verdict"] == "UNINFORMATIVE" and v2["reason"] == "at chance (a)"
    assert "a at chance: not significantly above" in cells["note"].iloc[0]
    # an equivalence claim needs both above chance: two methods at chance are equivalent trivially
    eq = Claim("t", "E", "a is like b", "test", "accuracy", ("a", "b"), "compare", "equivalence", margin=0.01)
    _, v3 = _run(eq, obs, _baseline("accuracy", 0.9))
    assert v3["verdict"] == "UNINFORMATIVE" and v3["reason"] == "at chance (b)"


def test_a_fail_is_not_hidden_by_a_majority_of_cells():
    cells = {f"for{i}": {"a": 0.95 + 0.001 * RNG.standard_normal(10), "b": 0.92 + 0.001 * RNG.standard_normal(10)}
             for i in range(5)}
    cells["against"] = {"a": 0.92 + 0.001 * RNG.standard_normal(10), "b": 0.95 + 0.001 * RNG.standard_normal(10)}
    out, verdict = _run(ACC, _obs(cells), _baseline("accuracy", 0.5))
    assert verdict["verdict"] == "MIXED"
    assert (verdict["n_for"], verdict["n_against"]) == (5, 1)
    assert "against: d (against)" in verdict["where"]
    only_against = {k: v for k, v in cells.items() if k == "against"}
    only_against["flat"] = {"a": 0.95 + 0.01 * RNG.standard_normal(10), "b": 0.95 + 0.01 * RNG.standard_normal(10)}
    _, v2 = _run(ACC, _obs(only_against), _baseline("accuracy", 0.5))
    assert v2["verdict"] == "FAILS"


def test_the_summary_lists_fails_and_mixed_before_any_holds():
    v = pd.DataFrame({"claim_id": ["A", "B", "C", "D", "E"],
                      "verdict": ["HOLDS", "MIXED", "UNINFORMATIVE", "FAILS", "HOLDS"]})
    order = list(tables.paper_order(v)["claim_id"])
    assert order == ["D", "B", "C", "A", "E"]


BOUND = Claim("t", "B", "P[gap > bound] ≤ 0.05", "test", "risk_gap", ("m",), "bound", "less", margin=0.05)


def test_a_bound_with_an_order_of_magnitude_of_slack_everywhere_is_vacuous():
    gaps = {f"c{i}": RNG.uniform(0.5, 1.0, 200) for i in range(3)}
    vacuous = {c: np.full(200, 100.0) for c in gaps}  # 100× above every observation
    obs = _obs({c: {"m": g} for c, g in gaps.items()}, metric="risk_gap", bound=vacuous)
    _, verdict = _run(BOUND, obs, _baseline("risk_gap", np.nan).iloc[:0])
    assert verdict["verdict"] == "VACUOUS"
    tight = {c: np.full(200, 1.05) for c in gaps}  # never exceeded, but could have been
    _, v2 = _run(BOUND, _obs({c: {"m": g} for c, g in gaps.items()}, metric="risk_gap", bound=tight),
                 _baseline("risk_gap", np.nan).iloc[:0])
    assert v2["verdict"] == "HOLDS"
    broken = {c: np.full(200, 0.6) for c in gaps}  # most draws above the bound
    _, v3 = _run(BOUND, _obs({c: {"m": g} for c, g in gaps.items()}, metric="risk_gap", bound=broken),
                 _baseline("risk_gap", np.nan).iloc[:0])
    assert v3["verdict"] == "FAILS"


def test_losses_must_be_declared_on_the_log_scale():
    with pytest.raises(ValueError, match="log_ratio"):
        Claim("t", "L", "a has a lower loss", "test", "final_loss", ("a", "b"), "compare", "less")


def test_losses_of_settings_orders_apart_are_never_averaged_raw():
    # three small-loss cells where a halves the loss, one large-loss cell where a is 50 % worse: the raw
    # average of differences (dominated by the large cell) says "a worse"; per cell on the log scale the
    # claim holds in three cells and fails in one
    loss = Claim("t", "L", "a has a lower loss", "test", "final_loss", ("a", "b"), "compare", "less",
                 effect_scale="log_ratio")
    cells = {f"small{i}": {"a": 0.5e-3 * (1 + 0.01 * RNG.standard_normal(10)),
                           "b": 1e-3 * (1 + 0.01 * RNG.standard_normal(10))} for i in range(3)}
    cells["large"] = {"a": 1500 * (1 + 0.001 * RNG.standard_normal(10)), "b": 1000 * (1 + 0.001 * RNG.standard_normal(10))}
    obs = _obs(cells, metric="final_loss")
    raw = obs.pivot_table(index=["cell", "rep"], columns="method", values="value")
    assert (raw["a"] - raw["b"]).mean() > 0  # the artefact the engine must not reproduce
    out, verdict = _run(loss, obs, _baseline("final_loss", 1e6))
    assert verdict["verdict"] == "MIXED" and (verdict["n_for"], verdict["n_against"]) == (3, 1)
    small = out[out["cell"] == "small0"].iloc[0]
    assert small["estimate"] == pytest.approx(np.log10(0.5), abs=0.01)


def test_holm_adjusts_across_the_cells_of_a_claim():
    p = np.array([0.01, 0.04, 0.03, np.nan, 0.005])
    assert np.allclose(summaries.holm(p), [0.03, 0.06, 0.06, np.nan, 0.02], equal_nan=True)
    # each cell alone is significantly beyond the margin δ = 0.01 (one-sided p ≈ 0.015 < 0.025) but five of
    # them together are not after Holm
    x = np.array([0.2, 1.6, 0.9, 1.3, 0.5, 1.1, 0.7, 1.4])
    assert summaries.p_value(x, "mean", 0.0, "above") < summaries.ALPHA
    one = _obs({f"c{i}": {"a": 0.51 + x / 100, "b": np.full(8, 0.5)} for i in range(1)})
    five = _obs({f"c{i}": {"a": 0.51 + (x - 0.5) / 100, "b": np.full(8, 0.5)} for i in range(5)})
    c1, v1 = _run(ACC, one, _baseline("accuracy", 0.1))
    c5, v5 = _run(ACC, five, _baseline("accuracy", 0.1))
    assert v1["verdict"] == "HOLDS"
    assert (c5["p_value"] < summaries.ALPHA).all() and (c5["p_holm"] >= summaries.ALPHA).all()
    assert v5["verdict"] == "UNDERPOWERED" and v5["reason"].startswith("underpowered")


def test_robust_summaries_resist_heavy_tails():
    x = np.r_[RNG.normal(1.0, 0.1, 40), [1e6]]
    mean, lo, _ = summaries.interval(x, "mean")
    med, mlo, mhi = summaries.interval(x, "median")
    tm, tlo, thi = summaries.interval(x, "trimmed")
    assert lo < 0 < mean  # one draw makes the mean's interval useless
    assert 0.9 < mlo <= med <= mhi < 1.1 and 0.9 < tlo <= tm <= thi < 1.1
    assert summaries.p_value(x, "median", 0.5, "above") < 1e-6
    assert summaries.p_value(x, "trimmed", 0.5, "above") < 1e-6


def test_a_trend_is_scored_per_cell_along_its_axis():
    trend = Claim("t", "T", "accuracy rises with ε", "test", "accuracy", ("a",), "trend", "greater")
    rows = []
    for cell, slope in (("up", 0.05), ("down", -0.05)):
        for rep in range(8):
            for x in (0.1, 1.0, 10.0):
                rows.append({"dataset": "d", "reading": "-", "cell": cell, "rep": rep, "method": "a",
                             "metric": "accuracy", "value": 0.8 + slope * np.log10(x) + 0.001 * RNG.standard_normal(),
                             "x": np.log10(x), "bound": np.nan})
    out, verdict = _run(trend, pd.DataFrame(rows), _baseline("accuracy", 0.5))
    assert dict(zip(out["cell"], out["cell_verdict"], strict=True)) == {"up": "for", "down": "against"}
    assert verdict["verdict"] == "MIXED"


def test_an_unusable_reference_makes_the_claim_uninformative():
    drift = Claim("t", "Z", "drift within ±0.1", "test", "g_drift", ("a",), "one_sample", "equivalence",
                  margin=0.1, uses=("ref",))
    obs = _obs({"c": {"a": 0.01 * RNG.standard_normal(10)}}, metric="g_drift")
    bad = pd.DataFrame([{"dataset": "d", "cell": "*", "method": "ref", "note": "reference not converged"}])
    cells = engine.evaluate([drift], engine.Inputs(obs, _baseline("g_drift", np.nan).iloc[:0], bad))
    assert engine.verdicts([drift], cells).iloc[0]["verdict"] == "UNINFORMATIVE"
    cells = engine.evaluate([drift], engine.Inputs(obs, _baseline("g_drift", np.nan).iloc[:0]))
    assert engine.verdicts([drift], cells).iloc[0]["verdict"] == "HOLDS"


def test_tables_readers_name_the_rebuild_command(tmp_path):
    with pytest.raises(InputDataError, match="snakemake .*missing.parquet"):
        tables.read_verdicts(tmp_path / "missing.parquet")
    pd.DataFrame({"study": ["x"]}).to_parquet(tmp_path / "bad.parquet")
    with pytest.raises(InputDataError, match="missing columns"):
        tables.read_cells(tmp_path / "bad.parquet")
    (tmp_path / "damaged.parquet").write_bytes(b"not parquet")
    with pytest.raises(InputDataError, match="damaged"):
        tables.read_cells(tmp_path / "damaged.parquet")


def test_written_tables_have_the_contract_columns(tmp_path):
    obs = _obs({"c": {"a": 0.95 + 0.001 * RNG.standard_normal(5), "b": 0.9 + 0.001 * RNG.standard_normal(5)}})
    cells = engine.evaluate([ACC], engine.Inputs(obs, _baseline("accuracy", 0.5)))
    tables.write(tables.cells_frame(cells), tmp_path / "cells.parquet")
    tables.write(tables.verdicts_frame(engine.verdicts([ACC], cells)), tmp_path / "verdicts.parquet")
    c, v = tables.read_cells(tmp_path / "cells.parquet"), tables.read_verdicts(tmp_path / "verdicts.parquet")
    assert list(c.columns[: len(tables.CELL_COLUMNS)]) == list(tables.CELL_COLUMNS)
    assert list(v.columns[: len(tables.VERDICT_COLUMNS)]) == list(tables.VERDICT_COLUMNS)
    assert set(c["cell_verdict"]) <= set(tables.CELL_VERDICTS) and set(v["verdict"]) <= set(tables.VERDICT_ORDER)
