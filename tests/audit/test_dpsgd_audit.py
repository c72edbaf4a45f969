"""Many-draws canary audit of multi-party DP-SGD (mpdp.audit.dpsgd_adapter)."""

from __future__ import annotations

import pytest

from mpdp.audit import registry
from mpdp.audit.adapters import AuditContext
from mpdp.audit.dpsgd_adapter import ADAPTER
from mpdp.audit.table import COLUMNS

CTX = AuditContext(root_seed=3, beta=0.05, delta=1e-5,
                   bug_noise_factor={"many_draws": 1.0, "one_run": 1.0}, n_train={}, one_run={},
                   many_draws={"draws": 1000, "f_sel": 0.2})


def test_registered_under_its_id():
    assert registry.get("dpsgd") is ADAPTER


@pytest.mark.parametrize("setting", [
    {"epsilon": 1.0, "q": 0.01, "T": 10, "n": 20},  # amplification claimed and real
    {"epsilon": 1.0, "q": 0.01, "T": 10, "n": 20, "m": 2},  # canary's party one of two
    {"epsilon": 3.0, "q": 1.0, "T": 5, "n": 20},  # no amplification: the attack sees every round
])
def test_correct_mechanism_is_not_flagged(setting):
    row = ADAPTER.run(setting, CTX)
    assert set(row) == set(COLUMNS)
    assert row["eps_accounted"] <= setting["epsilon"]
    assert row["eps_lower"] <= row["eps_accounted"]
    assert row["eps_up"] == row["eps_accounted"]  # the rate used is the rate accounted
    assert not row["planted_bug"]


def test_full_gap_canary_gives_the_audit_power_on_a_correct_setting():
    """Clipped at G < 1/2 the label flip moves every round by 2G: ε̂ > 0 without a bug."""
    row = ADAPTER.run({"epsilon": 3.0, "q": 1.0, "T": 5, "n": 20}, CTX)
    assert 0.5 < row["eps_lower"] <= row["eps_accounted"]
    # unclipped (G = 1) the flip moves the gradient by G only (spec A2): a weaker attack
    half = ADAPTER.run({"epsilon": 3.0, "q": 1.0, "T": 5, "n": 20, "G": 1.0}, CTX)
    assert half["eps_lower"] < row["eps_lower"]


def test_planted_bug_amplification_claimed_while_sampling_everyone_is_caught():
    """σ calibrated for q = 0.01 while every record is sampled: ε̂ far above the accounted ε."""
    setting = {"epsilon": 1.0, "q": 0.01, "T": 10, "n": 20, "planted_bug": True}
    row = ADAPTER.run(setting, CTX)
    assert row["planted_bug"]
    assert row["eps_accounted"] <= 1.0
    assert row["eps_lower"] > 2 * row["eps_accounted"]
    assert row["eps_lower"] <= row["eps_up"]  # the implemented noise's real ε (q = 1)


def test_draws_per_side_capped_by_training_draws():
    """Each draw is a whole training: audit.many_draws.training_draws caps them (at most draws)."""
    capped = AuditContext(root_seed=3, beta=0.05, delta=1e-5, bug_noise_factor={}, n_train={}, one_run={},
                          many_draws={"draws": 1000, "training_draws": 300, "f_sel": 0.2})
    assert ADAPTER.run({"epsilon": 1.0, "n": 20}, capped)["trials"] == 300
    loose = AuditContext(root_seed=3, beta=0.05, delta=1e-5, bug_noise_factor={}, n_train={}, one_run={},
                         many_draws={"draws": 400, "training_draws": 10_000, "f_sel": 0.2})
    assert ADAPTER.run({"epsilon": 1.0, "n": 20}, loose)["trials"] == 400
    assert ADAPTER.run({"epsilon": 1.0, "n": 20, "draws": 250}, capped)["trials"] == 250
