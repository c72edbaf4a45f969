"""Attack on consecutive PVP releases given a worst-case history (spec I-20, audit A1)."""

from __future__ import annotations

import numpy as np
import pytest

from mpdp.audit.adapters import AuditContext
from mpdp.audit.pvp_history import PVPHistoryAdapter, hidden_states
from mpdp.audit.report import pvp_headline
from mpdp.audit.table import run_settings
from mpdp.mechanisms.admm import ADMMRun, neighbours, pvp_conditional_sensitivity, run_batch

CTX = AuditContext(root_seed=0, beta=0.05, delta=1e-5, bug_noise_factor={"many_draws": 0.5},
                   n_train={}, one_run={}, many_draws={"draws": 200_000, "f_sel": 0.2})


def test_replayed_hidden_states_are_the_study_algorithm():
    """Replaying node 0 along run_batch's own released history (noise off, so released =
    hidden) reproduces run_batch's iterates step by step: the attack uses the study's step."""
    gen = np.random.default_rng(3)
    P, T, rho, penalty = 5, 6, 0.1, 0.5
    nodes = []
    for _ in range(P):
        X = gen.normal(size=(7, 2))
        X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
        nodes.append((X, np.where(gen.random(7) < 0.5, -1.0, 1.0)))

    def metrics(R):
        return {f"{p}:{i}": R[p][i] for p in range(P) for i in range(2)}

    res = run_batch(nodes, "ring", [ADMMRun("pvp", rho, penalty, 1.0, 0)], T,
                    lambda run: np.random.default_rng(0), metrics, range(1, T + 1), noise=False)
    released = {p: np.stack([res.metrics[f"{p}:{i}"][:, 0] for i in range(2)], axis=1) for p in range(P)}
    own = np.vstack([np.zeros(2), released[0]])
    nbrs = np.vstack([np.zeros(2), sum(released[j] for j in neighbours("ring", P)[0])])
    replay = hidden_states(*nodes[0], rho, penalty, P, 2, own[:T], nbrs[:T])
    assert np.allclose(replay, released[0], atol=1e-8)


def test_hidden_state_gap_approaches_the_i20_bound():
    """2-D worst case: d(t)/Δ_p grows with t, stays ≤ (1 − r^t)/(1 − r) and reaches > 1.9 at t = 10."""
    adapter = PVPHistoryAdapter()
    ratios = []
    for t in (2, 5, 10):
        a, a_prime, sensitivity, _, r = adapter.pair({"epsilon": 1.0, "T": t, "n": 1, "rho": 0.01, "penalty": 1.0})
        ratio = np.linalg.norm(a - a_prime) / sensitivity
        assert ratio <= float(pvp_conditional_sensitivity(1.0, r, t)) + 1e-9
        ratios.append(ratio)
    assert ratios[0] > 1.0 and np.all(np.diff(ratios) > 0) and ratios[-1] > 1.9


def test_attack_refutes_the_per_release_claim_and_the_report_says_so():
    """Paper-calibrated PVP (ζ = α/Δ_p), release 5 given the history: ε̂ > α, ε̂ ≤ ε_up ≤ bound;
    the headline sentence is computed from the row."""
    setting = {"mechanism": "pvp_history", "epsilon": 1.0, "T": 5, "n": 1, "rho": 0.01, "penalty": 1.0}
    table = run_settings([setting], CTX)
    row = table.iloc[0]
    assert row["delta"] == 0.0 and row["eps_claimed"] == 1.0
    assert 1.0 < row["eps_lower"] <= row["eps_up"] <= row["eps_accounted"]
    line = pvp_headline(table)
    assert "false" in line and f"{row['eps_lower']:.3g}" in line and f"{row['eps_accounted']:.3g}" in line


def test_headline_when_the_attack_stays_below_alpha():
    """t = 2 at α small with few draws: a bound below α is reported as what the attack reached."""
    setting = {"mechanism": "pvp_history", "epsilon": 0.05, "T": 2, "n": 1, "rho": 0.01, "penalty": 1.0}
    table = run_settings([setting], CTX)
    assert table.iloc[0]["eps_lower"] <= 0.05
    line = pvp_headline(table)
    assert "not refuted" in line and f"{table.iloc[0]['eps_lower']:.3g}" in line


@pytest.mark.parametrize("key", ["T", "rho"])
def test_missing_keys_are_one_line_errors(key):
    from mpdp.errors import ConfigError

    setting = {"epsilon": 1.0, "T": 5, "n": 1, "rho": 0.01, "penalty": 1.0}
    del setting[key]
    with pytest.raises(ConfigError, match=key):
        PVPHistoryAdapter().pair(setting)
