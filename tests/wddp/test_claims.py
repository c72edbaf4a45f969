"""WD-DP claims through the claims engine on synthetic results tables (spec E3.4, issue 33)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mpdp.claims import engine
from mpdp.claims.intervals import t_interval
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
    majority: float = 0.5,
    jay_shift: float = 0.0,
    gap_noise: float = 0.05,
    gap_eps_slope: float = 4.0,
    wyx_log_gap: float = 0.0,
    wd_u_gap_slope: float = 0.0,
    jay_u_gap_slope: float = 0.0,
    jay_u_gap_zigzag: float = 0.0,
    seed: int = 0,
) -> pd.DataFrame:
    """A synthetic results table with controlled effects (WD-DP relative to Jayaraman).

    Accuracy = 0.8 + eps_slope * eps + repetition effect (shared by all mechanisms, paired
    design) + method effect + independent noise of std ``noise``. Gaps are 10^(-1 - gap_eps_slope eps
    + method effect + noise of std ``gap_noise``) (WYX's effect ``wyx_log_gap``). In the u-sweep,
    Jayaraman's accuracy moves by ``jay_u_slope`` per unit u and zig-zags by ``± jay_u_zigzag``; WD-DP's by
    ``wd_u_slope``; the log10 gaps likewise (``jay_u_gap_slope``, ``jay_u_gap_zigzag``, ``wd_u_gap_slope``,
    around −1). ``majority`` is the majority rate (the trivial baseline of accuracy); ``jay_shift`` moves
    Jayaraman's ε-sweep accuracy; θ₀'s gap is 1.
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
                "optimal_gap": 10 ** (log_gap + rng.normal(0, gap_noise)),
                "init_loss": 1.5,
                "optimal_loss": 0.5,
                "majority_rate": majority,
                "synthetic": True,
            }
        )
        # every column given (None = missing), so each one is typed from values
        rows[-1] = {name: rows[-1].get(name) for name in COLUMNS}

    for rep in range(reps):
        rep_effect = rng.normal(0, 0.01)
        for eps in EPS:
            base = 0.8 + eps_slope * eps + rep_effect
            base_gap = -1 - gap_eps_slope * eps
            row("wyx", "eps_sweep", None, None, eps, rep, base + wyx_acc, base_gap + wyx_log_gap)
            for m in M_GRID:
                row("wddp", "eps_sweep", m, None, eps, rep, base + wd_acc, base_gap + wd_log_gap)
                row("jayaraman", "eps_sweep", m, None, eps, rep, base + jay_shift, base_gap)
        for m, eps in U_SETTINGS:
            base = 0.8 + rep_effect
            for u in U_GRID:
                sign = 1 if u % 2 else -1
                row("wddp", "u_sweep", m, u, eps, rep, base + wd_u_slope * (u - 1), -1.0 + wd_u_gap_slope * (u - 1))
                jay = base + jay_u_slope * (u - 1) + jay_u_zigzag * sign
                jay_gap = -1.0 + jay_u_gap_slope * (u - 1) + jay_u_gap_zigzag * sign
                row("jayaraman", "u_sweep", m, u, eps, rep, jay, jay_gap)
                row("wyx", "u_sweep", m, u, eps, rep, base, -1.0)
    return to_frame(rows)


def run(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    cells = engine.evaluate(claims.CLAIMS, engine.Inputs(claims.observations(table), claims.baselines(table)))
    return cells, engine.verdicts(claims.CLAIMS, cells)


def result(table: pd.DataFrame, claim_id: str, reading: str = "paper") -> pd.Series:
    """The verdict row of one claim and reading."""
    _, verdicts = run(table)
    return verdicts.set_index(["claim_id", "reading"]).loc[(claim_id, reading)]


def cells_of(table: pd.DataFrame, claim_id: str, reading: str = "paper") -> pd.DataFrame:
    cells, _ = run(table)
    return cells[(cells["claim_id"] == claim_id) & (cells["reading"] == reading)]


def test_t_interval_matches_formula() -> None:
    mean, low, high = t_interval(np.array([1.0, 2.0, 3.0]))
    half = stats.t.ppf(0.975, 2) * 1.0 / math.sqrt(3)  # sd = 1
    assert mean == 2.0
    assert (low, high) == pytest.approx((2 - half, 2 + half))
    mean, low, high = t_interval(np.array([0.5]))
    assert mean == 0.5 and math.isnan(low) and math.isnan(high)


def test_claims_catalogue() -> None:
    ids = [c.claim_id for c in claims.CLAIMS]
    assert ids == ["C1", "C2", "C3", "C4", "C5", "C6a", "C6b", "C7", "C3-gap", "C4-gap", "C5-gap", "C6a-gap",
                   "C6b-gap"]
    for claim in claims.CLAIMS:
        assert claim.text and claim.source.startswith("seed 000") and claim.study == "wddp"
        assert (claim.direction == "equivalence") == (claim.margin > 0)
        assert claims.FIGURES[claim.claim_id]
    assert claims.FIGURES["C2"] == "3, 5, 7, 9, 11"
    assert next(c for c in claims.CLAIMS if c.claim_id == "C2").effect_scale == "log_ratio"


# ---------------------------------------------------------------------------- C1, C2


def test_clear_win_holds_in_every_cell() -> None:
    table = make_table(wd_acc=0.03, wd_log_gap=-1.0)
    c1, c2 = result(table, "C1"), result(table, "C2")
    assert c1["verdict"] == "HOLDS" and c2["verdict"] == "HOLDS"
    assert c1["n_cells"] == len(EPS) * len(M_GRID) and c1["n_for"] == c1["n_cells"]  # every (m, ε), no average
    cells = cells_of(table, "C1")
    assert cells["estimate"].to_numpy() == pytest.approx(0.03, abs=0.005)
    assert (cells["lo"] < cells["estimate"]).all() and (cells["estimate"] < cells["hi"]).all()
    assert (cells["n_reps"] == 6).all()
    assert cells_of(table, "C2")["estimate"].to_numpy() == pytest.approx(-1.0, abs=0.1)


def test_clear_loss_fails() -> None:
    table = make_table(wd_acc=-0.03, wd_log_gap=1.0)
    assert result(table, "C1")["verdict"] == "FAILS"
    assert result(table, "C2")["verdict"] == "FAILS"


def test_a_loss_in_one_cell_is_not_outvoted() -> None:
    table = make_table(wd_acc=0.03)
    bad = (table["mechanism"] == "wddp") & (table["experiment"] == "eps_sweep") & (table["m"] == 8) & (
        table["epsilon"] == 0.25)
    table.loc[bad.fillna(False), "accuracy"] -= 0.06
    r = result(table, "C1")
    assert r["verdict"] == "MIXED" and r["n_against"] == 1 and "m=8, ε=0.25" in r["where"]


def test_pure_noise_is_underpowered() -> None:
    table = make_table(noise=0.02, gap_noise=0.3, reps=8, seed=3)
    for claim_id in ("C1", "C2"):
        r = result(table, claim_id)
        assert r["verdict"] == "UNDERPOWERED" and "needed" in r["reason"] and r["mde"] > 0


def test_pairing_removes_shared_repetition_effect() -> None:
    table = make_table(wd_acc=0.03, noise=0.001)  # beyond the practical margin of one point
    table.loc[table["rep"] == 0, "accuracy"] -= 0.2
    assert result(table, "C1")["verdict"] == "HOLDS"
    cells = cells_of(table, "C1")
    assert (cells["hi"] - cells["lo"] < 0.01).all()  # unpaired, the shared −0.2 would widen it to ~0.2


def test_negative_gap_is_floored() -> None:
    table = make_table(wd_log_gap=-1.0)
    first = table.index[(table["mechanism"] == "wddp") & (table["experiment"] == "eps_sweep")][0]
    table.loc[first, "optimal_gap"] = -1e-9
    assert np.isfinite(cells_of(table, "C2")["estimate"]).all()


# ---------------------------------------------------------------------------- guards (issue 33)


def test_c1_needs_wddp_above_chance_not_jayaraman() -> None:
    # "WD-DP beats Jayaraman" (issue 42, item 6): Jayaraman at chance is what WD-DP beats — scored
    table = make_table(wd_acc=0.0, jay_shift=-0.35, majority=0.6)
    assert result(table, "C1")["verdict"] == "HOLDS"
    # WD-DP at chance: nothing to compare, and the verdict names it
    table = make_table(wd_acc=-0.35, jay_shift=0.0, majority=0.6)
    r = result(table, "C1")
    assert r["verdict"] == "UNINFORMATIVE" and r["n_informative"] == 0 and r["reason"] == "at chance (wddp)"
    assert "wddp at chance: not significantly above the trivial baseline" in cells_of(table, "C1")["note"].iloc[0]


def test_u_claims_at_the_majority_rate_are_uninformative() -> None:
    # every method at or below the majority rate (Bank): "steady in u" says nothing
    table = make_table(majority=0.95)
    for claim_id in ("C5", "C7", "C6b"):
        assert result(table, claim_id)["verdict"] == "UNINFORMATIVE", claim_id


def test_gap_claim_needs_gaps_below_the_initial_point() -> None:
    table = make_table(wd_log_gap=-1.0)
    table["init_loss"] = table["optimal_loss"] + 1e-6  # θ₀ already better than every run
    assert result(table, "C2")["verdict"] == "UNINFORMATIVE"


# ---------------------------------------------------------------------------- C3, C4


def test_c3_equivalence_with_wyx() -> None:
    assert result(make_table(), "C3")["verdict"] == "HOLDS"
    assert result(make_table(wyx_acc=0.05), "C3")["verdict"] == "FAILS"
    assert result(make_table(wyx_acc=-0.01, noise=0.02, reps=4, seed=1), "C3")["verdict"] == "UNDERPOWERED"


def test_c4_improves_with_eps_per_m() -> None:
    table = make_table(eps_slope=0.2)
    r = result(table, "C4")
    assert r["verdict"] == "HOLDS" and r["n_cells"] == len(M_GRID)
    # fitted change over the grid = 0.2 * (0.25 - 0.01), per m
    assert cells_of(table, "C4")["estimate"].to_numpy() == pytest.approx(0.048, abs=0.003)
    assert result(make_table(eps_slope=-0.2), "C4")["verdict"] == "FAILS"


# ---------------------------------------------------------------------------- C5–C7


def test_u_claims_steady_vs_degrading() -> None:
    table = make_table(jay_u_slope=-0.01)
    assert result(table, "C5")["verdict"] == "HOLDS"
    assert result(table, "C6a")["verdict"] == "HOLDS"
    assert cells_of(table, "C6a")["estimate"].to_numpy() == pytest.approx(-0.04, abs=0.003)
    assert result(table, "C6b")["verdict"] == "HOLDS"  # a trend is also spread across u
    assert result(table, "C5")["n_cells"] == len(U_SETTINGS)


def test_u_claims_fluctuating_baseline() -> None:
    table = make_table(jay_u_zigzag=0.03)
    assert result(table, "C6a")["verdict"] != "HOLDS"
    assert result(table, "C6b")["verdict"] == "HOLDS"
    assert result(table, "C5")["verdict"] == "HOLDS"


def test_u_claims_fail_when_wddp_drifts() -> None:
    table = make_table(wd_u_slope=-0.01, jay_u_slope=0.005)
    assert result(table, "C5")["verdict"] == "FAILS"
    assert result(table, "C6a")["verdict"] == "FAILS"


def test_c7_equal_sizes() -> None:
    table = make_table(jay_u_slope=-0.02)
    r = result(table, "C7")
    assert r["verdict"] == "HOLDS" and "u-sweep: m=8, ε=0.01, u=1" in set(cells_of(table, "C7")["cell"])
    shifted = table.copy()
    at_one = (shifted["u"] == 1).fillna(False) & (shifted["mechanism"] == "jayaraman")
    shifted.loc[at_one, "accuracy"] -= 0.05
    assert result(shifted, "C7")["verdict"] == "FAILS"


# ---------------------------------------------------------------------------- the optimal-gap statements (App. B)


def test_every_claim_declares_its_margin_and_why() -> None:
    for claim in claims.CLAIMS:
        assert claim.delta > 0 and claim.delta_reason and claim.delta_reason != "declared with the claim", claim
    gap = [c for c in claims.CLAIMS if c.metric == "optimal_gap"]
    assert {c.claim_id for c in gap} == {"C2", "C3-gap", "C4-gap", "C5-gap", "C6a-gap"}
    assert all(c.delta == pytest.approx(math.log10(1.25)) for c in gap)  # one margin for "≈" and "<" alike


def test_gap_similar_to_wang_ye_xu() -> None:
    assert result(make_table(), "C3-gap")["verdict"] == "HOLDS"
    far = make_table(wyx_log_gap=0.5)  # WYX's gap 10^0.5 ≈ 3.2 times WD-DP's
    assert result(far, "C3-gap")["verdict"] == "FAILS"
    assert cells_of(far, "C3-gap")["estimate"].mean() == pytest.approx(-0.5, abs=0.03)
    # the per-round reading of WD-DP is Wang–Ye–Xu itself: bitwise-identical gaps are no evidence
    table = make_table()
    wyx = table[(table["mechanism"] == "wyx") & (table["experiment"] == "eps_sweep")]
    same = pd.concat([wyx.assign(mechanism="wddp", mode="per_round", m=m) for m in M_GRID], ignore_index=True)
    assert result(pd.concat([table, same], ignore_index=True), "C3-gap", "per_round")["verdict"] == "IDENTICAL"


def test_gap_falls_with_eps_per_m() -> None:
    table = make_table(gap_eps_slope=4.0)
    r = result(table, "C4-gap")
    assert r["verdict"] == "HOLDS" and r["n_cells"] == len(M_GRID)
    x = np.log10(EPS)  # the fitted change of log10 gap along log10 ε over its range, computed independently
    expected = np.polyfit(x, -4.0 * np.asarray(EPS), 1)[0] * (x.max() - x.min())
    assert cells_of(table, "C4-gap")["estimate"].to_numpy() == pytest.approx(expected, abs=0.05)
    assert result(make_table(gap_eps_slope=0.0), "C4-gap")["verdict"] != "HOLDS"
    assert result(make_table(gap_eps_slope=-4.0), "C4-gap")["verdict"] == "FAILS"


def test_gap_steady_in_u_for_wddp_not_for_jayaraman() -> None:
    rising = make_table(jay_u_gap_slope=0.1)  # Jayaraman's gap up 0.4 decade over u = 1..5
    assert result(rising, "C5-gap")["verdict"] == "HOLDS"
    assert result(rising, "C6a-gap")["verdict"] == "HOLDS"
    assert cells_of(rising, "C6a-gap")["estimate"].to_numpy() == pytest.approx(0.4, abs=0.05)
    assert result(rising, "C6b-gap")["verdict"] == "HOLDS"  # a trend is also spread across u
    zigzag = make_table(jay_u_gap_zigzag=0.3)
    assert result(zigzag, "C6a-gap")["verdict"] != "HOLDS"
    assert result(zigzag, "C6b-gap")["verdict"] == "HOLDS"
    spread = np.std([0.3 * (1 if u % 2 else -1) for u in U_GRID], ddof=1)  # Jayaraman's; WD-DP's ≈ the noise
    assert cells_of(zigzag, "C6b-gap")["estimate"].to_numpy() == pytest.approx(spread - 0.05, abs=0.04)
    drifting = make_table(wd_u_gap_slope=0.1)
    assert result(drifting, "C5-gap")["verdict"] == "FAILS"
    assert result(make_table(), "C6a-gap")["verdict"] == "FAILS"  # flat: no rise beyond the margin


# ---------------------------------------------------------------------------- selection, missing data


def test_missing_baseline_has_no_cell() -> None:
    table = make_table()
    table = table.loc[table["mechanism"] != "jayaraman"].reset_index(drop=True)
    for claim_id in ("C1", "C2", "C6a", "C6b", "C7", "C6a-gap", "C6b-gap"):
        r = result(table, claim_id)
        assert r["verdict"] == "UNINFORMATIVE" and r["reason"] == "no data" and r["n_cells"] == 0
    assert result(table, "C3")["verdict"] == "HOLDS"  # WYX is still there
    assert result(table, "C3-gap")["verdict"] == "HOLDS"


def test_single_repetition_is_inconclusive() -> None:
    r = result(make_table(reps=1, wd_acc=0.05), "C1")
    assert r["verdict"] == "UNDERPOWERED" and "too few" in r["reason"]
    assert "fewer than 2 repetitions" in cells_of(make_table(reps=1, wd_acc=0.05), "C1")["note"].iloc[0]


def test_readings_select_runs() -> None:
    local = make_table(wd_acc=0.03)
    per_round = make_table(wd_acc=-0.03, mode="per_round", seed=1)
    per_round = per_round.loc[per_round["mechanism"] != "wyx"]  # WYX runs are shared
    table = pd.concat([local, per_round], ignore_index=True)
    assert result(table, "C1")["verdict"] == "HOLDS"
    assert result(table, "C1", "per_round")["verdict"] == "FAILS"


def test_zcdp_code_jayaraman_runs_are_used_for_ma16() -> None:
    table = make_table(wd_acc=0.03, jay_accountant="zcdp_code")
    assert result(table, "C1")["verdict"] == "HOLDS"


def test_cells_span_all_data_sets() -> None:
    table = pd.concat([make_table(), make_table(dataset="bank", wd_acc=0.03, seed=5)], ignore_index=True)
    cells = cells_of(table, "C1")
    assert set(cells["dataset"]) == {"adult", "bank"}
    assert not cells.duplicated(["dataset", "cell"]).any()
    r = result(table, "C1")  # bank's cells for; adult's within ±1 point (no effect beyond the margin)
    assert r["verdict"] == "MIXED" and "no effect beyond the margin: adult" in r["where"]
    assert claims.observations(table.iloc[:0]).empty


def test_duplicate_runs_are_an_error() -> None:
    table = make_table()
    doubled = pd.concat([table, table.iloc[:1]], ignore_index=True)
    with pytest.raises(InputDataError, match="duplicated"):
        claims.observations(doubled)
