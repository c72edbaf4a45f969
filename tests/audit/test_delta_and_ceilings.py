"""δ of each row is the δ of its bound; DVP's ceiling ε_up (spec audit.md A0, A1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import expit

from mpdp.audit.adapters import AuditContext
from mpdp.audit.many_draws import epsilon_from_counts
from mpdp.audit.release_adapters import DVPFirstIterationAdapter
from mpdp.audit.table import run_settings
from mpdp.mechanisms.admm import dvp_calibration

CTX = AuditContext(root_seed=0, beta=0.05, delta=1e-5,
                   bug_noise_factor={"many_draws": 0.5, "one_run": 0.25, "canary_draws": 0.5},
                   n_train={}, one_run={}, many_draws={"draws": 100_000, "f_sel": 0.2})

ROWS = [
    {"mechanism": "pvp", "epsilon": 1.0, "T": 1, "n": 1000, "kappa": 0.1},
    {"mechanism": "dvp", "epsilon": 1.0, "T": 1, "n": 2, "kappa": 1.0},
    {"mechanism": "dvp", "epsilon": 1.0, "T": 1, "n": 2, "kappa": 1.0, "planted_bug": True},
    {"mechanism": "hamm_vote", "epsilon": 1.0, "n": 100, "parties": 5, "lambda": 1.0},
    {"mechanism": "nl2_output", "pair": "noise_stage", "epsilon": 1.0},
]


@pytest.fixture(scope="module")
def table():
    return run_settings(ROWS, CTX)


def test_the_recorded_delta_is_the_delta_of_the_bound(table):
    """ε̂ recomputed from the row's own counts and δ equals the row's ε̂: the bound and the
    δ column agree. Transcripts of composed pure releases (DVP, PVP) carry the benchmark's δ,
    single pure-DP releases δ = 0."""
    for row in table.itertuples():
        n_eval = int(row.trials) - math.floor(0.2 * int(row.trials))
        eps, _, _ = epsilon_from_counts(int(row.tp), int(row.fp), n_eval, n_eval, row.beta, row.delta)
        assert float(eps) == pytest.approx(row.eps_lower, abs=1e-12), row.mechanism
    by_mech = table.set_index(["mechanism", "planted_bug"])["delta"]
    assert by_mech[("pvp", False)] == by_mech[("dvp", False)] == 1e-5
    assert by_mech[("hamm_vote", False)] == by_mech[("nl2_output", False)] == 0.0


def test_dvp_has_a_ceiling_that_bounds_its_lower_bound(table):
    dvp = table[table["mechanism"] == "dvp"].set_index("planted_bug")
    assert np.isfinite(dvp["eps_up"]).all()
    assert (dvp["eps_lower"] <= dvp["eps_up"]).all()
    assert dvp.loc[True, "eps_up"] == pytest.approx(2 * dvp.loc[False, "eps_up"])


@pytest.mark.parametrize(("alpha", "n", "kappa"), [(0.01, 1000, 0.1), (1.0, 2, 1.0), (0.5, 50, 0.3)])
def test_dvp_ceiling_is_the_brute_force_density_ratio(alpha, n, kappa):
    """Independent: the log-density ratio of the release f on a grid (noise from the first-order
    condition, numerical Jacobian) has supremum ζ = DVP's ceiling."""
    cal = dvp_calibration(alpha, n, kappa)
    zeta, q = float(cal.zeta), kappa + float(cal.phi)
    f = np.linspace(-50, 50, 200_001)
    noise = {y: y * expit(-y * f) - n * q * f for y in (1, -1)}
    log_density = {y: -zeta * np.abs(e) + np.log(np.abs(np.gradient(e, f))) for y, e in noise.items()}
    brute = float(np.max(np.abs(log_density[1] - log_density[-1])))
    assert DVPFirstIterationAdapter.ceiling(alpha, n, kappa) == pytest.approx(brute, rel=1e-6)
