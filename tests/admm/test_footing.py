"""Equal footing of DVP and PVP, the fixed ρ and the Z5 reference (issue 33 §4; spec E4)."""

import logging
import math

import numpy as np
import pandas as pd
import pytest

from mpdp import config
from mpdp.errors import ConfigError
from mpdp.mechanisms import admm as zz
from mpdp.studies.admm import footing, train
from mpdp.studies.admm.cases import Case, StudyData


def _cfg(**admm):
    cfg = config.load("config/smoke.yaml")
    cfg["admm"] = {**cfg["admm"], **admm}
    return cfg


def _data(P=5, B=40, d=4, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d) * 3
    nodes = []
    for _ in range(P):
        X = rng.normal(size=(B, d))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        nodes.append((X, np.where(rng.random(B) < 1 / (1 + np.exp(-X @ w)), 1.0, -1.0)))
    X_test = rng.normal(size=(20, d))
    return StudyData(nodes, X_test / np.linalg.norm(X_test, axis=1, keepdims=True),
                           np.where(rng.random(20) < 0.5, 1.0, -1.0), P * B)


def _losses(table):
    """Tuning losses from {(mechanism, draw): {η: loss}}."""
    return pd.DataFrame([{"mechanism": m, "draw": d, "penalty": e, "loss": v}
                         for (m, d), by in table.items() for e, v in by.items()])


STABLE = {("dvp", 0): {0.1: 1.0, 1.0: 2.0}, ("dvp", 1): {0.1: 1.1, 1.0: 2.1},
          ("pvp", 0): {0.1: 3.0, 1.0: 2.0}, ("pvp", 1): {0.1: 3.1, 1.0: 2.1}}


def test_stable_per_method_winners_are_used_only_when_every_draw_agrees():
    sel = footing.select(_losses(STABLE), "per_method_if_stable")
    assert sel.footing == "per_method_stable" and sel.penalty == {"dvp": 0.1, "pvp": 1.0}
    assert sel.stable == {"dvp": True, "pvp": True}
    # PVP's winner flips in draw 1: a coin flip, so both share the η of the shared criterion
    flip = {**STABLE, ("pvp", 1): {0.1: 2.0, 1.0: 2.1}}
    sel = footing.select(_losses(flip), "per_method_if_stable")
    assert sel.footing == "shared" and not sel.stable["pvp"] and sel.stable["dvp"]
    # shared criterion: mean over mechanisms of log(mean loss): η = 0.1: (log 1.05 + log 2.5)/2 < η = 1
    assert sel.penalty == {"dvp": 0.1, "pvp": 0.1} and sel.shared_penalty == 0.1
    assert sel.shared_criterion[0.1] == pytest.approx((math.log(1.05) + math.log(2.5)) / 2)
    # logs: PVP's 100× larger loss scale does not decide alone (raw sum would pick η = 1)
    scale = {("dvp", 0): {0.1: 1.0, 1.0: 4.0}, ("pvp", 0): {0.1: 300.0, 1.0: 200.0}}
    assert footing.select(_losses(scale), "shared").shared_penalty == 0.1
    # one draw shows no stability; rule shared ignores stability
    one = {k: v for k, v in STABLE.items() if k[1] == 0}
    assert footing.select(_losses(one), "per_method_if_stable").footing == "shared"
    assert footing.select(_losses(STABLE), "shared").footing == "shared"


def test_shared_penalty_is_the_one_both_private_mechanisms_run_at(monkeypatch):
    cfg = _cfg(T=3, reps=1, alpha_grid=[1.0], penalty_grid=[0.1, 1.0], tune_draws=2, tune_reps=1)
    losses = _losses({**STABLE, ("pvp", 1): {0.1: 2.0, 1.0: 2.1}})  # PVP unstable: shared η = 0.1
    admm = pd.DataFrame({"mechanism": "admm", "draw": 0, "penalty": [0.1, 1.0], "loss": [0.5, 0.4]})
    monkeypatch.setattr(train, "_final_losses", lambda *a, **k: [pd.concat([losses, admm])])
    [choices] = train.tune(cfg, [Case(_data(), (0,), None)], "ring", logging.getLogger("test"))
    assert choices["dvp"]["penalty"] == choices["pvp"]["penalty"] == 0.1
    assert choices["dvp"]["footing"] == choices["pvp"]["footing"] == "shared"
    assert choices["admm"]["penalty"] == 1.0 and choices["admm"]["footing"] == "own"
    assert choices["pvp"]["loss"] == pytest.approx(2.5)  # PVP's own mean loss at the shared η
    runs = train.evaluated_runs(cfg, choices)
    private = [e.run for e in runs if e.label in ("dvp", "pvp")]
    assert private and {r.penalty for r in private} == {0.1}
    assert {e.footing for e in runs if e.label in ("dvp", "pvp")} == {"shared"}
    # one reference for both (same (ρ, η)), at their η, not at non-private ADMM's own η = 1
    refs = [e for e in runs if e.label == train.REFERENCE]
    assert [(e.run.mechanism, e.run.penalty, e.reference_for) for e in refs] == [("admm", 0.1, "dvp+pvp")]


def test_rho_is_the_fixed_config_value_everywhere():
    cfg = _cfg(rho=0.02, penalty_grid=[0.1, 1.0], tune_draws=3, tune_reps=2)
    runs = train.tuning_runs(cfg)
    assert {r.rho for r in runs} == {0.02}
    # non-private: one run per η; private: draws × reps per η, distinct tuning repetitions
    assert sum(r.mechanism == "admm" for r in runs) == 2
    assert sorted({r.rep for r in runs if r.mechanism == "dvp"}) == list(range(6))
    with pytest.raises(ConfigError, match="rho_grid"):
        config.validate({**config.load("config/smoke.yaml"), "admm": {**cfg["admm"], "rho_grid": [0.1, 1.0]}})


def test_at_negligible_noise_dvp_ends_at_its_reference_not_at_admm_own_penalty():
    """Z5's reference runs at DVP's (ρ, η): at an α where the noise is negligible DVP's loss
    equals the reference's; non-private ADMM at its own η is elsewhere after T steps."""
    cfg = _cfg(T=8, reps=1, alpha_grid=[500.0], rho=1e-2, f4_iterations=[2, 8], record_every=1)
    base = {"mechanism": "", "topology": "ring", "rho": 1e-2, "tuning_alpha": 1.0, "loss": 1.0}
    choices = {"admm": {**base, "mechanism": "admm", "penalty": 1.0, "footing": "own"},
               "dvp": {**base, "mechanism": "dvp", "penalty": 0.01, "footing": "shared"},
               "pvp": {**base, "mechanism": "pvp", "penalty": 0.01, "footing": "shared"}}
    frame = train.final_runs(cfg, [Case(_data(), (0,), None)], "ring", [choices], logging.getLogger("test"))
    last = frame[frame["iteration"] == 8].set_index("mechanism")
    assert last.loc["admm_ref", "admm_penalty"] == 0.01 and last.loc["admm_ref", "reference_for"] == "dvp+pvp"
    # α = 500: noise negligible, DVP's loss is its reference's (measured: 5e-5 apart) …
    assert last.loc["dvp", "train_loss"] == pytest.approx(last.loc["admm_ref", "train_loss"], rel=1e-3)
    # … and 14 % below non-private ADMM at its own η after these T steps (convergence, not noise)
    assert abs(last.loc["dvp", "train_loss"] / last.loc["admm", "train_loss"] - 1) > 0.1
    ref = frame[frame["mechanism"] == "admm_ref"]
    assert ref["tuning_loss"].isna().all() and (ref["eta_source"] == "reference").all()
    assert set(frame["footing"]) == {"own", "shared"}
    # the reference is deterministic and noise-free: no privacy columns
    assert ref["alpha"].isna().all() and ref["eps_real"].isna().all()


def test_dvp_and_pvp_share_one_reference_per_distinct_setting():
    cfg = _cfg()
    base = {"topology": "ring", "rho": 1e-2, "footing": "per_method_stable"}
    choices = {"admm": {**base, "penalty": 1.0, "footing": "own"}, "dvp": {**base, "penalty": 0.1},
               "pvp": {**base, "penalty": 0.3}}
    refs = train.reference_runs(cfg, choices)
    assert sorted((e.run.penalty, e.reference_for) for e in refs) == [(0.1, "dvp"), (0.3, "pvp")]
    assert all(e.run.mechanism == "admm" and math.isnan(e.run.alpha) for e in refs)
    assert zz.MECHANISMS == ("admm", "dvp", "pvp")
