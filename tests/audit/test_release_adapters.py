"""Audit adapters of the one-release mechanisms (spec audit.md A1, A3, A5 rows 13–15; M5, M6,
M10, M11, M12)."""

from __future__ import annotations

import numpy as np
import pytest

from mpdp.audit import registry
from mpdp.audit.adapters import AuditContext
from mpdp.audit.release_adapters import record_average_pair, vote_pair


def _ctx(draws: int = 100_000) -> AuditContext:
    return AuditContext(root_seed=0, beta=0.05, delta=1e-5,
                        bug_noise_factor={"many_draws": 0.5, "one_run": 0.25}, n_train={},
                        one_run={}, many_draws={"draws": draws, "f_sel": 0.2})


def test_pairs_match_the_spec_oracles():
    # A5 row 13: record pair n = 100, λ = 1: c = 0.00498753 (averaged over M parties: c/M)
    a, a_prime = record_average_pair(100, 4, 1.0)
    assert a[0] * 4 == pytest.approx(0.00498753, rel=1e-5) and a_prime[0] == pytest.approx(-a[0])
    # A5 row 14: M11, λ = 1 / 0.1: c = 0.40105814 / 1.63350617
    for lam, c in ((1.0, 0.40105814), (0.1, 1.63350617)):
        a, a_prime = vote_pair("hamm_vote", 50, 5, lam)
        assert (a[0], a_prime[0]) == pytest.approx((c, -c), rel=1e-6)
    # A5 row 15: M12, M = 5, λ = 1: w = ±0.08000853
    a, a_prime = vote_pair("hamm_soft", 50, 5, 1.0)
    assert (a[0], a_prime[0]) == pytest.approx((0.08000853, -0.08000853), rel=1e-6)


@pytest.mark.parametrize(("mechanism", "parties", "ratio"), [
    ("jayaraman_output", 4, 0.498753),  # d/Δ = n λ c (row 13)
    ("hamm_vote", 5, 0.401058),  # row 14
    ("hamm_soft", 5, 0.400043),  # row 15
])
def test_honest_release_is_below_its_ceiling(mechanism, parties, ratio):
    setting = {"mechanism": mechanism, "epsilon": 1.0, "n": 100, "parties": parties, "lambda": 1.0}
    row = registry.get(mechanism).run(setting, _ctx())
    assert row["eps_up"] == pytest.approx(ratio, rel=1e-4)  # ε_up = b d = ε d/Δ
    assert 0.0 <= row["eps_lower"] <= row["eps_up"] <= row["eps_accounted"] == 1.0
    assert row["privacy_unit"] == ("record" if mechanism == "jayaraman_output" else "party")


def test_pathak_and_party_averaging_use_their_own_sensitivity():
    setting = {"epsilon": 1.0, "n": 100, "parties": 4, "lambda": 1.0}
    pathak = registry.get("pathak").run({"mechanism": "pathak", **setting}, _ctx(2_000))
    avg = registry.get("param_avg").run({"mechanism": "param_avg", **setting}, _ctx(2_000))
    # same pair d = 2c/M; Δ = 2/(n λ) (M6a) and 2/(M λ) (M6b)
    assert pathak["eps_up"] == pytest.approx(100 * 0.00498753 / 4, rel=1e-5)
    assert avg["eps_up"] == pytest.approx(0.00498753, rel=1e-5)


def test_pvp_one_iteration_audit_is_honest_and_catches_the_planted_bug():
    honest = {"mechanism": "pvp", "epsilon": 1.0, "T": 1, "n": 1000, "kappa": 0.1}
    row = registry.get("pvp").run(honest, _ctx(1_000_000))
    assert row["eps_up"] == pytest.approx(1.0, rel=1e-3)  # T = 1: α = ε
    assert row["eps_lower"] <= row["eps_accounted"] + 1e-9
    assert row["eps_lower"] > 0.8  # p = 1 N-L2 is nearly tight (spec A4: ≈ 0.97)
    bug = registry.get("pvp").run({**honest, "planted_bug": True}, _ctx(1_000_000))
    assert bug["eps_lower"] > bug["eps_claimed"]
    many = registry.get("pvp").run({**honest, "T": 100}, _ctx(100_000))
    assert many["eps_up"] < 0.1 and many["eps_accounted"] == pytest.approx(1.0, rel=1e-3)


def test_dvp_release_is_the_exact_perturbed_minimiser():
    """f solves (1/B) ∇l(y f) + (κ + Φ) f + (1/B) ε = 0 for every draw (spec M9, first iteration)."""
    from scipy.special import expit

    from mpdp.audit.release_adapters import DVPFirstIterationAdapter
    from mpdp.mechanisms.admm import dvp_calibration

    alpha, n, kappa = 0.5, 4, 0.3
    unit = np.array([[-2.0, -0.3, 0.0, 0.7, 3.1]])
    f = DVPFirstIterationAdapter().releases(1.0, alpha, n, kappa, unit)
    cal = dvp_calibration(alpha, float(n), kappa)
    eps = unit[0] / float(cal.zeta)
    grad = -expit(-f) / n + (kappa + float(cal.phi)) * f + eps / n
    assert np.abs(grad).max() < 1e-9
    assert np.all(np.diff(f) < 0)  # a larger noise draw pushes the release down


def test_dvp_first_iteration_audit_is_honest():
    row = registry.get("dvp").run({"mechanism": "dvp", "epsilon": 1.0, "T": 1, "n": 2, "kappa": 1.0},
                                  _ctx(200_000))
    assert 0.0 < row["eps_lower"] <= row["eps_accounted"] <= 1.0 + 1e-9
    assert row["method"] == "many_draws" and row["privacy_unit"] == "record"
