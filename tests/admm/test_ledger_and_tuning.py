"""The ADMM study's privacy ledger (spec I-20, I-11), tuning-noise keys and edge warnings."""

import logging
import math

import numpy as np
import pandas as pd
import pytest

from mpdp import config, seeding
from mpdp.mechanisms import admm as zz
from mpdp.studies.admm import report, train
from mpdp.studies.admm.cases import Case, StudyData


def _cfg(**admm):
    cfg = config.load("config/smoke.yaml")
    cfg["admm"] = {**cfg["admm"], **admm}
    return cfg


def _data(P=5, B=12, d=3, seed=0):
    rng = np.random.default_rng(seed)
    nodes = []
    for _ in range(P):
        X = rng.normal(size=(B, d))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        nodes.append((X, np.where(rng.random(B) < 0.5, 1.0, -1.0)))
    X_test = rng.normal(size=(10, d))
    return StudyData(nodes, X_test / np.linalg.norm(X_test, axis=1, keepdims=True),
                           np.where(rng.random(10) < 0.5, 1.0, -1.0), P * B)


def _fake_result(runs, iterations, d=3):
    """A BatchResult with the calibrations run_batch would give (metrics arbitrary)."""
    K = len(runs)
    ap = np.array([0.7 * r.alpha if r.mechanism != "admm" else np.nan for r in runs])
    return zz.BatchResult(
        iterations=list(iterations), metrics={"train_loss": np.ones((len(iterations), K)),
                                              "mer": np.full((len(iterations), K), 0.3)},
        noise_norm=np.ones((len(iterations), K)), alpha_prime=ap, phi=np.zeros(K), zeta=np.ones(K),
        phi_zero=np.ones(K, dtype=bool), sensitivity=np.ones(K))


def _rows(runs, iterations, T, **admm):
    cfg = _cfg(T=T, **admm)
    data = _data()
    choices = {m: {"loss": 1.0} for m in zz.MECHANISMS}
    return train.result_rows(cfg, data, "ring", runs, _fake_result(runs, iterations), {0.1: 1.0}, choices, 0.0)


def test_pvp_rows_state_the_real_epsilon_of_the_hidden_state_bound():
    T = 8
    runs = [zz.ADMMRun("pvp", 0.1, 0.5, 0.3, 0), zz.ADMMRun("dvp", 0.1, 0.5, 0.3, 0),
            zz.ADMMRun("admm", 0.1, 0.5, math.nan, 0)]
    rows = _rows(runs, range(1, T + 1), T).set_index(["mechanism", "iteration"])
    r = 0.5 * 2 / (0.1 / 5 + 2 * 0.5 * 2)  # ηV/(ρ/P + 2ηV), ring V = 2
    pvp = rows.loc["pvp"]
    assert pvp["pvp_gain"].iloc[0] == pytest.approx(r)
    assert pvp.loc[1, "eps_real"] == pytest.approx(0.3)  # t = 1: both start from f(0) = 0
    for t in range(2, T):
        assert pvp.loc[t, "eps_real"] == pytest.approx(0.3 * (1 - r**t) / (1 - r))
        assert pvp.loc[t, "eps_real"] > pvp.loc[t, "eps_claimed"]
    ap = 0.7 * 0.3
    assert pvp.loc[T, "eps_real"] == pytest.approx(0.3 - ap + ap * (1 - r**T) / (1 - r))
    np.testing.assert_allclose(pvp["eps_real_cumulative_basic"], np.cumsum(pvp["eps_real"]))
    dvp = rows.loc["dvp"]
    np.testing.assert_allclose(dvp["eps_real"], 0.3)
    np.testing.assert_allclose(dvp["eps_real_cumulative_basic"], dvp["eps_cumulative_basic"])
    assert rows.loc["admm", "eps_real"].isna().all()
    # the hidden dual variant has no bound: no real ε is claimed for it
    hidden = _rows([zz.ADMMRun("pvp", 0.1, 0.5, 0.3, 0, True)], range(1, T + 1), T)
    assert hidden["eps_real"].isna().all()

    led = report.ledger(_rows(runs, range(1, T + 1), T)).set_index("mechanism")
    assert led.loc["pvp", "real ε, release 1"] == pytest.approx(0.3)
    assert led.loc["pvp", "real ε, release T−1"] == pytest.approx(0.3 * (1 - r ** (T - 1)) / (1 - r))
    assert led.loc["pvp", "sup d/Δ_p = 1/(1−r)"] == pytest.approx(1 / (1 - r))
    assert led.loc["pvp", "real: PLD at δ"] > led.loc["pvp", "claimed: PLD at δ"]
    assert led.loc["pvp", "real: PLD at δ"] <= led.loc["pvp", "real: Σ ε after T"]
    assert led.loc["dvp", "real: PLD at δ"] == pytest.approx(led.loc["dvp", "claimed: PLD at δ"])
    # per repetition (issue 60) PVP may run at another η in another repetition: a ledger row of its own
    other = report.ledger(_rows([*runs, zz.ADMMRun("pvp", 0.1, 0.05, 0.3, 1)], range(1, T + 1), T))
    pvps = other[other["mechanism"] == "pvp"].set_index("η (ADMM penalty)")
    r2 = 0.05 * 2 / (0.1 / 5 + 2 * 0.05 * 2)
    assert pvps["PVP gain r (I-20)"].to_dict() == {0.05: pytest.approx(r2), 0.5: pytest.approx(r)}
    reg = report.register_rows(_rows(runs, range(1, T + 1), T))
    assert list(reg.columns) == report.REGISTER_COLUMNS and reg.loc[0, "id"] == "I-20"
    assert f"r = {r:.3g}" in reg.loc[0, "what this run does"]


def test_claimed_pld_falls_back_to_basic_where_dp_accounting_overflows():
    runs = [zz.ADMMRun("dvp", 0.1, 0.5, 10.0, 0)]
    rows = _rows(runs, [70, 71, 100], 100).set_index("iteration")
    assert np.isfinite(rows["eps_cumulative_pld"]).all()
    assert not rows.loc[70, "eps_pld_fallback"] and rows.loc[70, "eps_cumulative_pld"] < 700
    assert rows.loc[71, "eps_pld_fallback"] and rows.loc[71, "eps_cumulative_pld"] == pytest.approx(710.0)
    assert rows.loc[100, "eps_cumulative_pld"] <= rows.loc[100, "eps_cumulative_basic"]


@pytest.mark.parametrize("per_repetition", [False, True])
def test_tuning_noise_is_disjoint_from_every_evaluated_repetition(monkeypatch, per_repetition):
    """Tuning streams never meet an evaluated run's; per repetition (one case each, issue 60) each
    repetition's tuning has its own streams too."""
    cfg = _cfg(T=2, reps=2, tune_reps=2, tune_draws=2, alpha_grid=[0.5, 1.0], tune_alpha=1.0, rho=0.1,
               penalty_grid=[0.5, 1.0])
    groups = ([Case(_data(seed=r), (r,), r) for r in range(2)] if per_repetition
              else [Case(_data(), (0, 1), None)])
    keys: dict[str, list] = {"tune": [], "final": []}
    phase = {"now": "tune"}
    real_rng = seeding.rng

    def recording(root_seed, *key):
        keys[phase["now"]].append(tuple(key))
        return real_rng(root_seed, *key)

    monkeypatch.setattr(seeding, "rng", recording)
    log = logging.getLogger("test")
    choices = train.tune(cfg, groups, "ring", log)
    phase["now"] = "final"
    monkeypatch.setattr(train, "centralised_optimum", lambda data, rho, C_R: (None, 1.0))
    train.final_runs(cfg, groups, "ring", choices, log)
    assert keys["tune"] and keys["final"]
    seeding.assert_disjoint(keys["tune"], keys["final"])
    assert len(set(keys["final"])) == len(keys["final"])  # every evaluated run its own stream
    if per_repetition:  # repetition 0's tuning and repetition 1's draw from different streams
        per = [{k for k in keys["tune"] if k[-2:] == ("split_rep", r)} for r in range(2)]
        assert per[0] and per[1] and not per[0] & per[1] and per[0] | per[1] == set(keys["tune"])
    # η: one per mechanism, tuned at the one α of the config; ρ the fixed config value
    for ch in choices:
        assert {c["tuning_alpha"] for m, c in ch.items() if m != "admm"} == {1.0}
        assert {c["rho"] for c in ch.values()} == {0.1}
    # tuning at α = 1 with rep 0's evaluated stream would be caught
    rep0 = [k for k in keys["final"] if k[-1] == 0 and k[3] == 1.0]
    assert rep0
    with pytest.raises(ValueError):
        seeding.assert_disjoint(rep0, keys["final"])


def test_edge_warning_for_every_tuned_value():
    cfg = _cfg(rho=1e-3, penalty_grid=[0.1, 1.0, 10.0])
    table = pd.DataFrame({"topology": ["ring"] * 4, "mechanism": ["admm", "dvp", "pvp", "admm_ref"],
                          "alpha": [np.nan, 1.0, 1.0, np.nan], "rho": [1e-3] * 4,
                          "admm_penalty": [0.1, 10.0, 10.0, 10.0], "tuning_loss": [1.0, 2.0, 2.5, np.nan],
                          "rep": [0] * 4, "footing": ["own", "shared", "shared", "shared"],
                          "reference_for": ["", "", "", "dvp+pvp"]})
    warn = report.edges(table, cfg)
    # ρ is fixed (no edge); the reference copies η (not tuned: no warning of its own)
    assert set(zip(warn["setting"], warn["parameter"], warn["edge"], strict=True)) == {
        ("ring, admm", "η", "low"), ("ring, dvp", "η", "high"), ("ring, pvp", "η", "high")}
    sentence = report.edge_sentence(table, cfg)
    assert "Warning" in sentence and "one shared η for DVP and PVP" in sentence
    # per-method footing: two references, one row each in the settings table
    per = pd.concat([table.assign(footing="per_method_stable"), table.iloc[[3]].assign(
        admm_penalty=0.1, reference_for="pvp", footing="per_method_stable")], ignore_index=True)
    per.loc[3, "reference_for"] = "dvp"
    refs = report.settings(per).query("mechanism == 'admm_ref'")
    assert sorted(zip(refs["reference for"], refs["η (ADMM penalty)"], strict=True)) == [("dvp", 10.0), ("pvp", 0.1)]
    interior = table.assign(admm_penalty=1.0)
    assert report.edge_sentence(interior, cfg).startswith("No tuned value lies on an edge of its grid.")


def test_f4_twin_axis_puts_both_noises_on_the_scale_of_f():
    from mpdp.studies.admm.figures import f_perturbation

    d, B, C_R, rho, eta, alpha, P, T = 105, 6000, 1.0, 1e-3, 0.1, 1.0, 5, 100
    kap = float(zz.kappa(rho, P, eta, 2))
    cal = zz.dvp_calibration(alpha, B, kap, C_R)
    rows = pd.DataFrame({
        "topology": ["ring"] * 3, "mechanism": ["dvp", "pvp", "pvp"], "iteration": [50, 50, T],
        "alpha": [alpha] * 3, "rho": [rho] * 3, "admm_penalty": [eta] * 3, "C_R": [C_R] * 3, "n_min": [B] * 3,
        "phi": [float(cal.phi)] * 3,
        "noise_norm_expected": [float(zz.expected_noise_norm(d, cal.zeta)),
                                float(zz.expected_noise_norm(d, zz.pvp_zeta(alpha, B, kap, C_R))),
                                float(zz.expected_noise_norm(d, cal.zeta))]})
    rows["noise_norm"] = rows["noise_norm_expected"]
    out = f_perturbation(rows, P, T)
    common = 2 * d * C_R / (B * kap * alpha)  # ≈ 2d/(B κ α) for both (B7)
    assert out.loc[1, "expected"] == pytest.approx(common)  # PVP: ‖ε‖ itself
    assert out.loc[0, "expected"] == pytest.approx(common * alpha / float(cal.alpha_prime))  # DVP: through κ
    assert out.loc[2, "expected"] == pytest.approx(out.loc[0, "expected"])  # PVP's release T is a DVP step
    assert rows.loc[0, "noise_norm_expected"] / rows.loc[1, "noise_norm_expected"] > 100  # raw norms are not comparable
