"""Tests of the claims evaluator on synthetic results tables (spec experiments.md E3.4)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mpdp import claims as engine
from mpdp.errors import InputDataError
from mpdp.results import COLUMNS, to_frame
from mpdp.studies.wddp import claims

EPS = (0.01, 0.05, 0.1, 0.25)
M_GRID = (2, 8)
U_GRID = (1, 2, 3, 4, 5)
U_SETTINGS = ((8, 0.01), (16, 0.05))


def make_table(
    *,
    reps: int = 6,
    dataset: str = "adult",
    noise: float = 0.002,
    wd_acc: float = 0.0,
    wd_log_gap: float = 0.0,
    wyx_acc: float = 0.0,
    eps_slope: float = 0.2,
    wd_u_slope: float = 0.0,
    jay_u_slope: float = 0.0,
    jay_u_zigzag: float = 0.0,
    mode: str = "local_then_aggregate",
    accountant: str = "ma16",
    jay_accountant: str | None = None,
    seed: int = 0,
) -> pd.DataFrame:
    """A synthetic results table with controlled effects (WD-DP relative to Jayaraman).

    Accuracy = 0.8 + eps_slope * eps + repetition effect (shared by all mechanisms, paired
    design) + method effect + independent noise of std ``noise``. Gaps are 10^(-1 - 4 eps ...).
    In the u-sweep, Jayaraman's accuracy moves by ``jay_u_slope`` per unit u and zig-zags by
    ``± jay_u_zigzag``; WD-DP's by ``wd_u_slope``.
    """
    rng = np.random.default_rng(seed)
    jay_accountant = jay_accountant or accountant
    rows: list[dict[str, object]] = []

    def row(
        mech: str,
        experiment: str,
        m: int | None,
        u: float | None,
        eps: float,
        rep: int,
        acc: float,
        log_gap: float,
    ) -> None:
        rows.append(
            {
                "dataset": dataset,
                "experiment": experiment,
                "mechanism": mech,
                "mode": "central" if mech == "wyx" else mode,
                "accountant": jay_accountant if mech == "jayaraman" else accountant,
                "m": m,
                "u": u,
                "epsilon": eps,
                "delta": 1e-3,
                "rep": rep,
                "T": 1000,
                "n": 1000,
                "p": 10,
                "accuracy": acc + rng.normal(0, noise),
                "optimal_gap": 10 ** (log_gap + rng.normal(0, 0.05)),
                "synthetic": True,
            }
        )
        # every column given (None = missing), so each one is typed from values
        rows[-1] = {name: rows[-1].get(name) for name in COLUMNS}

    for rep in range(reps):
        rep_effect = rng.normal(0, 0.01)
        for eps in EPS:
            base = 0.8 + eps_slope * eps + rep_effect
            base_gap = -1 - 4 * eps
            row("wyx", "eps_sweep", None, None, eps, rep, base + wyx_acc, base_gap)
            for m in M_GRID:
                row("wddp", "eps_sweep", m, None, eps, rep, base + wd_acc, base_gap + wd_log_gap)
                row("jayaraman", "eps_sweep", m, None, eps, rep, base, base_gap)
        for m, eps in U_SETTINGS:
            base = 0.8 + rep_effect
            for u in U_GRID:
                zig = jay_u_zigzag * (1 if u % 2 else -1)
                row("wddp", "u_sweep", m, u, eps, rep, base + wd_u_slope * (u - 1), -1.0)
                jay = base + jay_u_slope * (u - 1) + zig
                row("jayaraman", "u_sweep", m, u, eps, rep, jay, -1.0)
                row("wyx", "u_sweep", m, u, eps, rep, base, -1.0)
    return to_frame(rows)


def result(table: pd.DataFrame, claim_id: str, **kwargs: object) -> pd.Series:
    out = claims.evaluate_claims(table, **kwargs)
    return out.set_index(["claim_id", "dataset"]).loc[(claim_id, "adult")]


# ---------------------------------------------------------------------------- helpers


def test_t_interval_matches_formula() -> None:
    mean, low, high = engine.t_interval(np.array([1.0, 2.0, 3.0]))
    half = stats.t.ppf(0.975, 2) * 1.0 / math.sqrt(3)  # sd = 1
    assert mean == 2.0
    assert (low, high) == pytest.approx((2 - half, 2 + half))
    assert half == pytest.approx(4.302653 / math.sqrt(3), rel=1e-6)
    mean, low, high = engine.t_interval(np.array([0.5]))
    assert mean == 0.5 and math.isnan(low) and math.isnan(high)


def test_verdict_rules() -> None:
    assert engine.verdict(0.01, 0.02, "greater") == "PASS"
    assert engine.verdict(-0.02, -0.01, "greater") == "FAIL"
    assert engine.verdict(-0.01, 0.02, "greater") == "INCONCLUSIVE"
    assert engine.verdict(-0.02, -0.01, "less") == "PASS"
    assert engine.verdict(0.01, 0.02, "less") == "FAIL"
    assert engine.verdict(-0.005, 0.005, "equivalence", 0.01) == "PASS"
    assert engine.verdict(0.02, 0.03, "equivalence", 0.01) == "FAIL"
    assert engine.verdict(-0.03, -0.02, "equivalence", 0.01) == "FAIL"
    assert engine.verdict(0.005, 0.02, "equivalence", 0.01) == "INCONCLUSIVE"
    assert engine.verdict(-0.02, 0.02, "equivalence", 0.01) == "INCONCLUSIVE"
    assert engine.verdict(float("nan"), float("nan"), "greater") == "INCONCLUSIVE"
    with pytest.raises(ValueError, match="margin"):
        engine.verdict(0.0, 0.1, "equivalence")


def test_claims_catalogue() -> None:
    assert set(claims.CLAIMS) == {"C1", "C2", "C3", "C4", "C5", "C6a", "C6b", "C7"}
    for claim in claims.CLAIMS.values():
        assert claim.text and claim.figures
        assert (claim.kind == "equivalence") == (claim.margin > 0)
    assert claims.CLAIMS["C2"].figures == "3, 5, 7, 9, 11"


# ---------------------------------------------------------------------------- C1, C2


def test_clear_win_passes_c1_c2() -> None:
    table = make_table(wd_acc=0.03, wd_log_gap=-1.0)
    out = claims.evaluate_claims(table)
    assert list(out.columns) == engine.COLUMNS
    c1, c2 = (out.set_index("claim_id").loc[c] for c in ("C1", "C2"))
    assert c1["verdict"] == "PASS" and c2["verdict"] == "PASS"
    assert c1["estimate"] == pytest.approx(0.03, abs=0.003)
    assert c2["estimate"] == pytest.approx(-1.0, abs=0.05)
    assert c1["ci_low"] < c1["estimate"] < c1["ci_high"]
    assert c1["n_reps"] == 6
    assert c1["note"].startswith("SYNTHETIC")
    assert "t-interval" in c1["statistic"]


def test_clear_loss_fails_c1_c2() -> None:
    table = make_table(wd_acc=-0.03, wd_log_gap=1.0)
    assert result(table, "C1")["verdict"] == "FAIL"
    assert result(table, "C2")["verdict"] == "FAIL"


def test_pure_noise_is_inconclusive() -> None:
    table = make_table(noise=0.02, reps=8, seed=3)
    for claim_id in ("C1", "C2"):
        r = result(table, claim_id)
        assert r["ci_low"] < 0 < r["ci_high"]
        assert r["verdict"] == "INCONCLUSIVE"


def test_pairing_removes_shared_repetition_effect() -> None:
    # a large repetition effect shared by both methods must not blur the paired difference
    table = make_table(wd_acc=0.01, noise=0.001)
    table.loc[table["rep"] == 0, "accuracy"] -= 0.2
    r = result(table, "C1")
    assert r["verdict"] == "PASS"
    assert r["ci_high"] - r["ci_low"] < 0.005


def test_negative_gap_is_floored_and_reported() -> None:
    table = make_table(wd_log_gap=-1.0)
    first = table.index[(table["mechanism"] == "wddp") & (table["experiment"] == "eps_sweep")][0]
    table.loc[first, "optimal_gap"] = -1e-9
    r = result(table, "C2")
    assert np.isfinite(r["estimate"])
    assert "1 gaps below" in r["note"]


# ---------------------------------------------------------------------------- C3, C4


def test_c3_equivalence_with_wyx() -> None:
    assert result(make_table(), "C3")["verdict"] == "PASS"
    assert result(make_table(wyx_acc=0.05), "C3")["verdict"] == "FAIL"
    # ~1 pp difference with noisy repetitions: the CI straddles the margin
    r = result(make_table(wyx_acc=-0.01, noise=0.02, reps=4, seed=1), "C3")
    assert r["verdict"] == "INCONCLUSIVE"
    assert r["margin"] == claims.ACCURACY_MARGIN


def test_c4_improves_with_eps() -> None:
    r = result(make_table(eps_slope=0.2), "C4")
    # fitted change over the grid = 0.2 * (0.25 - 0.01)
    assert r["verdict"] == "PASS" and r["estimate"] == pytest.approx(0.048, abs=0.003)
    assert result(make_table(eps_slope=-0.2), "C4")["verdict"] == "FAIL"
    assert math.isnan(r["margin"])


# ---------------------------------------------------------------------------- C5–C7


def test_u_claims_steady_vs_degrading() -> None:
    table = make_table(jay_u_slope=-0.01)
    c5, c6a, c6b = (result(table, c) for c in ("C5", "C6a", "C6b"))
    assert c5["verdict"] == "PASS"
    assert c6a["verdict"] == "PASS"
    assert c6a["estimate"] == pytest.approx(-0.04, abs=0.003)  # -0.01 per u over u = 1..5
    assert c6b["verdict"] == "PASS"  # a trend is also spread across u


def test_u_claims_fluctuating_baseline() -> None:
    table = make_table(jay_u_zigzag=0.03)
    assert result(table, "C6a")["verdict"] != "PASS"
    assert result(table, "C6b")["verdict"] == "PASS"
    assert result(table, "C5")["verdict"] == "PASS"


def test_u_claims_fail_when_wddp_drifts() -> None:
    table = make_table(wd_u_slope=-0.01, jay_u_slope=0.005)
    assert result(table, "C5")["verdict"] == "FAIL"
    assert result(table, "C6a")["verdict"] == "FAIL"


def test_c7_equal_sizes() -> None:
    table = make_table(jay_u_slope=-0.02)
    r = result(table, "C7")
    assert r["verdict"] == "PASS" and "(m=8, ε=0.01)" in r["note"]
    shifted = table.copy()
    at_one = (shifted["u"] == 1).fillna(False) & (shifted["mechanism"] == "jayaraman")
    shifted.loc[at_one, "accuracy"] -= 0.05
    assert result(shifted, "C7")["verdict"] == "FAIL"


# ---------------------------------------------------------------------------- selection, missing data


def test_missing_baseline_is_inconclusive() -> None:
    table = make_table()
    table = table.loc[table["mechanism"] != "jayaraman"].reset_index(drop=True)
    out = claims.evaluate_claims(table).set_index("claim_id")
    for claim_id in ("C1", "C2", "C6a", "C6b", "C7"):
        assert out.loc[claim_id, "verdict"] == "INCONCLUSIVE"
        assert "no data" in out.loc[claim_id, "note"]
        assert out.loc[claim_id, "n_reps"] == 0
    assert out.loc["C3", "verdict"] == "PASS"  # WYX is still there


def test_single_repetition_is_inconclusive() -> None:
    r = result(make_table(reps=1, wd_acc=0.05), "C1")
    assert r["verdict"] == "INCONCLUSIVE" and r["n_reps"] == 1
    assert "only 1 repetition" in r["note"]
    assert r["estimate"] == pytest.approx(0.05, abs=0.01)


def test_mode_and_accountant_select_runs() -> None:
    local = make_table(wd_acc=0.03)
    per_round = make_table(wd_acc=-0.03, mode="per_round", seed=1)
    per_round = per_round.loc[per_round["mechanism"] != "wyx"]  # WYX runs are shared
    exact = make_table(wd_acc=0.0, noise=0.02, accountant="exact", seed=2)
    table = pd.concat([local, per_round, exact], ignore_index=True)
    assert result(table, "C1")["verdict"] == "PASS"
    assert result(table, "C1", mode="per_round")["verdict"] == "FAIL"
    r = result(table, "C1", accountant="exact")
    assert "accountant=exact" in r["note"]
    with pytest.raises(ValueError, match="mode"):
        claims.evaluate_claims(table, mode="central")


def test_zcdp_code_jayaraman_runs_are_used_for_ma16() -> None:
    table = make_table(wd_acc=0.03, jay_accountant="zcdp_code")
    r = result(table, "C1")
    assert r["verdict"] == "PASS" and "Jayaraman: zcdp_code" in r["note"]
    r = result(table, "C1", jayaraman_accountant="ma16")
    assert r["verdict"] == "INCONCLUSIVE" and "no data" in r["note"]


def test_one_row_per_claim_and_dataset() -> None:
    table = pd.concat(
        [make_table(), make_table(dataset="bank", wd_acc=0.03, seed=5)], ignore_index=True
    )
    out = claims.evaluate_claims(table)
    assert len(out) == 2 * len(claims.CLAIMS)
    assert not out.duplicated(["claim_id", "dataset"]).any()
    bank = out.set_index(["claim_id", "dataset"]).loc[("C1", "bank")]
    assert bank["verdict"] == "PASS"
    assert claims.evaluate_claims(table.iloc[:0]).empty


def test_duplicate_runs_are_an_error() -> None:
    table = make_table()
    doubled = pd.concat([table, table.iloc[:1]], ignore_index=True)
    with pytest.raises(InputDataError, match="duplicated"):
        claims.evaluate_claims(doubled)
