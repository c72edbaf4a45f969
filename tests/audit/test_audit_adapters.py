"""Audit adapters on the mechanisms of main: validity, power (planted bug), spec I-1, engine hook."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from mpdp.audit import registry
from mpdp.audit import report as audit_report
from mpdp.audit.adapters import AuditContext, L2OutputPerturbationAdapter
from mpdp.audit.table import conform, run_settings
from mpdp.engine.gd import Block, noisy_gd
from mpdp.privacy.ledger import composed_gaussian_epsilon

# the real data sets only give party sizes here (n_train of breast_cancer in the smoke profile
# and of a large data set); the canary coordinates do not depend on the real records
N_TRAIN = {"breast_cancer": 559, "adult": 36_000}


def _ctx(canaries=1000, T=50, draws=100_000, bug=0.5) -> AuditContext:
    return AuditContext(
        root_seed=0, beta=0.05, delta=1e-5, bug_noise_factor={"many_draws": bug, "one_run": bug},
        n_train=N_TRAIN,
        one_run={"canaries": canaries, "T": T, "eta": 0.1, "lambda": 1e-3, "G": 1.0},
        many_draws={"draws": draws, "f_sel": 0.2},
    )


HONEST = [
    {"mechanism": "wyx", "dataset": "breast_cancer", "epsilon": 1.0, "accountant": "exact"},
    {"mechanism": "wyx", "dataset": "breast_cancer", "epsilon": 3.0, "accountant": "ma16"},
    {"mechanism": "wddp_per_round", "dataset": "breast_cancer", "epsilon": 1.0,
     "accountant": "exact", "m": 2, "u": 3},
    {"mechanism": "jayaraman_per_round", "dataset": "breast_cancer", "epsilon": 2.0,
     "accountant": "exact", "m": 2, "u": 3, "placement": "replace"},
    {"mechanism": "wddp_literal", "dataset": "breast_cancer", "epsilon": 1.0,
     "accountant": "ma16", "m": 2, "u": 9, "placement": "replace"},
    {"mechanism": "jayaraman_literal", "dataset": "breast_cancer", "epsilon": 1.0,
     "accountant": "ma16", "m": 2, "u": 3, "placement": "replace"},
    {"mechanism": "nl2_output", "pair": "noise_stage", "epsilon": 1.0},
    {"mechanism": "nl2_output", "pair": "record", "epsilon": 1.0, "n": 100, "lambda": 1.0},
]


@pytest.fixture(scope="module")
def honest_table() -> pd.DataFrame:
    return run_settings(HONEST, _ctx())


def test_every_calibrated_mechanism_has_lower_bound_below_accounted(honest_table):
    """Issue 10: on a tiny setting, ε̂ ≤ accounted ε for every correctly calibrated mechanism."""
    assert len(honest_table) == len(HONEST)
    assert (honest_table["eps_lower"] <= honest_table["eps_accounted"]).all()
    assert (honest_table["eps_lower"] <= honest_table["eps_up"] + 1e-9).all()
    assert audit_report.exceptions(honest_table) == []


def test_ceiling_equals_ledger_and_independent_pld(honest_table):
    """ε_up of the canary pair equals the mechanism's ledger and dp-accounting's PLD."""
    one_run = honest_table[honest_table["method"] == "one_run"]
    # the final-model factor at ηλ = 1e-4, T = 50 is 1 − O(1e-6): ε_up ≈ accounted ε
    assert np.allclose(one_run["eps_up"], one_run["eps_accounted"], rtol=1e-4)
    row = one_run.iloc[0]  # wyx exact ε = 1: multiplier = √T / μ
    pld = composed_gaussian_epsilon(math.sqrt(50) / row["mu"], 50, 1e-5, "pld")
    assert row["eps_up"] == pytest.approx(pld, rel=2e-3)
    assert row["eps_up"] == pytest.approx(1.0, rel=1e-4)


def test_gradient_planted_bug_halved_noise_is_caught():
    """Issue 10: WYX with its noise std halved (true ε 2.15 at claimed 1) gives ε̂ > 1."""
    setting = {"mechanism": "wyx", "dataset": "breast_cancer", "epsilon": 1.0,
               "accountant": "exact", "planted_bug": True}
    row = registry.get("wyx").run(setting, _ctx(canaries=10_000, T=100, bug=0.5))
    assert row["noise_factor"] == 0.5 and row["eps_accounted"] == pytest.approx(1.0, rel=1e-6)
    assert row["eps_up"] == pytest.approx(2.15468, abs=1e-3)  # A5 row 1
    assert 1.0 < row["eps_lower"] <= row["eps_up"]


def test_many_draws_planted_bug_doubled_rate_is_caught():
    """A4: N-L2 noise stage, b doubled (noise halved): ε̂ ≈ 1.97 > 1."""
    setting = {"mechanism": "nl2_output", "pair": "noise_stage", "epsilon": 1.0, "planted_bug": True}
    row = registry.get("nl2_output").run(setting, _ctx(draws=1_000_000, bug=0.5))
    assert row["eps_up"] == pytest.approx(2.0)
    assert 1.9 < row["eps_lower"] <= 2.0


def test_literal_wddp_claim_is_refuted_on_uneven_partition():
    """Spec I-1: literal Algorithm 1 at its claimed ε = 1 (ma16) on m = 8, u = 9 is not 1-DP."""
    setting = {"mechanism": "wddp_literal", "dataset": "adult", "epsilon": 1.0,
               "accountant": "ma16", "m": 8, "u": 9, "placement": "replace"}
    row = registry.get("wddp_literal").run(setting, _ctx(T=100))
    assert row["eps_accounted_scope"] == "worst_party"
    assert row["eps_lower"] > 2.0 * row["eps_claimed"]
    assert row["eps_lower"] <= row["eps_accounted"]


def test_record_pair_matches_oracle_row13():
    a, a_prime, sensitivity, _ = L2OutputPerturbationAdapter().pair(
        {"pair": "record", "n": 100, "lambda": 1.0}
    )
    assert float(a[0]) == pytest.approx(0.00498753, abs=1e-8)
    assert float(a_prime[0]) == pytest.approx(-0.00498753, abs=1e-8)
    assert np.linalg.norm(a - a_prime) / sensitivity == pytest.approx(0.498753, abs=1e-6)


def test_results_are_reproducible(honest_table):
    again = run_settings(HONEST[:2], _ctx())
    pd.testing.assert_series_equal(
        again["eps_lower"], honest_table["eps_lower"].iloc[:2], check_names=False
    )


def test_unknown_mechanism_is_a_one_line_config_error():
    from mpdp.errors import ConfigError

    with pytest.raises(ConfigError, match="no audit adapter for mechanism 'no_such_mechanism'"):
        registry.get("no_such_mechanism")


def test_engine_linear_term_closed_form_and_default_unchanged():
    """The engine hook: θ_T = −η Σ_t (1 − ηλ)^t c with σ = 0 on an empty block; None = no-op."""
    c = np.array([[1.0, -2.0], [0.5, 0.0], [0.0, 3.0]])
    block = Block(X=np.zeros((0, 3)), y=np.zeros(0), weights=np.zeros(0), columns=np.arange(2))
    eta, lam, T = np.array([0.1, 0.2]), 0.5, 7
    seeds = [np.random.SeedSequence(i) for i in range(2)]
    theta = noisy_gd([block], np.zeros((3, 2)), eta, lam, np.zeros(2), seeds, T,
                     dtype=np.float64, linear_term=c)
    decay = 1 - eta * lam
    expected = -eta * c * ((1 - decay**T) / (1 - decay))
    assert np.allclose(theta, expected, rtol=1e-12)
    gen = np.random.default_rng(0)
    X, y = gen.normal(size=(20, 3)) / 3, gen.choice([-1.0, 1.0], size=20)
    data = [Block(X=X, y=y, weights=np.full(20, 0.05), columns=np.arange(2))]
    base = noisy_gd(data, np.zeros((3, 2)), eta, lam, np.ones(2), seeds, T, dtype=np.float64)
    zero = noisy_gd(data, np.zeros((3, 2)), eta, lam, np.ones(2), seeds, T, dtype=np.float64,
                    linear_term=np.zeros((3, 2)))
    assert np.array_equal(base, zero)


def test_report_helpers_flag_exceptions_and_findings(honest_table):
    broken = honest_table.copy()
    broken.loc[0, "eps_lower"] = broken.loc[0, "eps_accounted"] + 1
    assert len(audit_report.exceptions(broken)) == 1
    summary = audit_report.summary(conform(broken))
    assert summary["verdict"].str.startswith("EXCEPTION").sum() == 1
    lines = audit_report.findings(honest_table)
    assert lines[0] == f"{len(HONEST)} of {len(HONEST)} correctly calibrated rows have ε̂ ≤ accounted ε."
    assert any("WD-DP Alg. 1" in line for line in lines)


def test_real_record_pair_on_prepared_data(tmp_path):
    """Real-data N-L2 pair: a label flip moves the minimiser by ≤ Δ/2 (C4), and ε̂ ≤ ε_up ≤ ε."""
    import json

    gen = np.random.default_rng(5)
    n, p = 300, 4
    X = gen.normal(size=(n, p))
    X /= np.linalg.norm(X, axis=1, keepdims=True).clip(min=1.0)
    y = np.where(X @ np.array([1.0, -1.0, 0.5, 0.0]) + 0.3 * gen.normal(size=n) > 0, 1, -1)
    for name, array in {"X_train": X, "y_train": y.astype(np.int8),
                        "X_test": X[:10], "y_test": y[:10].astype(np.int8)}.items():
        np.save(tmp_path / f"{name}.npy", array)
    (tmp_path / "card.json").write_text(json.dumps({"n_train": n, "n_test": 10, "n_features": p}))
    ctx = AuditContext(
        root_seed=0, beta=0.05, delta=1e-5, bug_noise_factor={"many_draws": 0.5, "one_run": 0.25},
        n_train={"adult": n},
        one_run={}, many_draws={"draws": 200_000, "f_sel": 0.2}, processed={"adult": str(tmp_path)},
    )
    setting = {"mechanism": "nl2_output", "pair": "real_record", "dataset": "adult",
               "epsilon": 1.0, "lambda": 0.5}
    a, a_prime, sensitivity, _ = L2OutputPerturbationAdapter().pair(setting, ctx)
    assert sensitivity == pytest.approx(2.0 / (n * 0.5))
    assert 0 < np.linalg.norm(a - a_prime) <= sensitivity / 2 + 1e-12
    row = registry.get("nl2_output").run(setting, ctx)
    assert row["eps_lower"] <= row["eps_up"] <= 1.0
