"""The gradient audit goes through the shipped trainer and calibrations (spec audit.md A2, E10)."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest

from mpdp import mechanisms
from mpdp.audit import registry
from mpdp.audit.adapters import AuditContext
from mpdp.data.partition import PartitionSet
from mpdp.errors import ConfigError
from mpdp.mechanisms import RunSpec
from mpdp.mechanisms.gradient_batch import Canaries, train_batch
from mpdp.studies.benchmark import calibration as bench

N_TRAIN = {"breast_cancer": 559, "adult": 36_000}


def _ctx(canaries=1000, T=50) -> AuditContext:
    return AuditContext(
        root_seed=0, beta=0.05, delta=1e-5,
        bug_noise_factor={"many_draws": 0.5, "one_run": 0.25, "canary_draws": 0.5},
        n_train=N_TRAIN, one_run={"canaries": canaries, "T": T, "eta": 0.1, "lambda": 1e-3, "G": 1.0},
        many_draws={"draws": 100_000, "f_sel": 0.2},
    )


def _run(mode: str, accountant: str, **kw) -> RunSpec:
    return RunSpec(dataset="d", experiment="t", mechanism="wddp", mode=mode, accountant=accountant,
                   epsilon=1.0, delta=1e-5, rep=0, eta=0.2, T=7, lam=0.5, G=1.5, m=2, u=3, **kw)


@pytest.mark.parametrize("mode", ["per_round", "local_then_aggregate"])
def test_canary_hook_closed_form_and_real_coordinates_unchanged(mode):
    """σ = 0: canary coordinate = η G S w Σ_t (1 − ηλ)^t with the trainer's record weight w
    (1/n per round, 1/n_j in the party's local column); the real coordinates do not change."""
    gen = np.random.default_rng(1)
    sizes = np.array([10, 30])
    X = gen.normal(size=(40, 3)) / 3
    X[:4] = 0.0  # the canaries: feature-less records of party 0
    y = gen.choice([-1.0, 1.0], size=40)
    part = PartitionSet(order=np.arange(40)[None, :], sizes=sizes[None, :])
    run = _run(mode, "exact")
    signs = np.array([1, -1, 1, 1])
    kw = dict(dtype="float64", noise_scale=0.0)
    plain = train_batch([run], X, y, part, {0: np.zeros(3)}, 0, **kw)
    hooked = train_batch([run], X, y, part, {0: np.zeros(3)}, 0, canaries=Canaries(np.arange(4), signs, 1.5), **kw)
    assert plain.canary is None
    assert np.array_equal(plain.thetas, hooked.thetas)
    w = 1 / 40 if mode == "per_round" else 1 / 10
    decay = 1 - 0.2 * 0.5
    expected = 0.2 * 1.5 * signs * w * (1 - decay**7) / (1 - decay)
    assert np.allclose(hooked.canary.theta[0][:, 0], expected, rtol=1e-12)
    assert np.allclose(hooked.canary.weight[0][:, 0], w)
    if mode == "local_then_aggregate":  # party 1 holds no canary: no signal in its column
        assert np.all(hooked.canary.weight[0][:, 1] == 0)
        assert np.all(np.isnan(hooked.canary.theta[0][:, 1]))


def _sigma_exact(epsilon, delta, T, sensitivity):
    """Independent: √T · σ_AGM(ε, δ) · Δ (analytic Gaussian, dp-accounting)."""
    return math.sqrt(T) * dp_accounting.get_sigma_gaussian(epsilon, delta) * sensitivity


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        # the paper's literal mapping (ma16): every party σ from the total n (C1, c = 16)
        ({"mechanism": "wddp_literal", "accountant": "ma16"},
         lambda n, nj, T: 2 * math.sqrt(T * math.log(1e5)) / 1.0 * 2 / n),
        # the equal-privacy reading: the canary party's own n_j
        ({"mechanism": "wddp_literal", "accountant": "exact_per_party"},
         lambda n, nj, T: _sigma_exact(1.0, 1e-5, T, 2 / nj)),
        ({"mechanism": "xp_wddp_literal"}, lambda n, nj, T: _sigma_exact(1.0, 1e-5, T, 2 / nj)),
        ({"mechanism": "xp_wddp_per_round"}, lambda n, nj, T: _sigma_exact(1.0, 1e-5, T, 2 / n)),
        ({"mechanism": "xp_jayaraman_per_round"}, lambda n, nj, T: _sigma_exact(1.0, 1e-5, T, 2 / (8 * nj))),
    ],
)
def test_audited_sigma_is_the_tables_sigma(setting, expected):
    """The σ the audited column used equals the tables' σ (recomputed independently) and the
    ledger ε is the one the study/benchmark writes."""
    s = {"dataset": "adult", "epsilon": 1.0, "m": 8, "u": 9, "placement": "replace", **setting}
    adapter = registry.get(s["mechanism"])
    cr = adapter.train(s, _ctx())
    n, nj = int(cr.sizes.sum()), int(cr.sizes.min())
    assert cr.sigma == pytest.approx(expected(n, nj, 50), rel=1e-8)
    if adapter.source == "benchmark":
        ledger = bench.gradient_ledger(cr.run, cr.sizes)
        assert cr.eps_ledger == ledger.eps_total
        if cr.run.mode == "local_then_aggregate":  # the ledger's σ is the smallest party's
            assert cr.sigma == pytest.approx(ledger.sigma, rel=1e-12)
    else:
        cal = mechanisms.get(cr.run.mechanism).calibrate(cr.run, cr.sizes)
        assert cr.eps_ledger == cal.eps_accounted


def test_wrong_mapping_in_the_benchmark_calibration_is_caught(monkeypatch):
    """A deliberately wrong mapping in the shipped calibration — the benchmark's literal WD-DP
    calibrated to the total n instead of each party's n_j — is refuted by the audit."""
    s = {"mechanism": "xp_wddp_literal", "dataset": "adult", "epsilon": 1.0, "m": 8, "u": 9,
         "placement": "replace"}
    honest = registry.get(s["mechanism"]).run(s, _ctx(T=100))
    assert honest["eps_lower"] <= 1.0
    monkeypatch.setitem(bench.GRADIENT, "wddp_literal", ("wddp", "local_then_aggregate", "exact"))
    wrong = registry.get(s["mechanism"]).run(s, _ctx(T=100))
    assert wrong["eps_lower"] > 2.0 * s["epsilon"]


def test_wrong_per_party_mapping_in_the_privacy_calibration_is_caught(monkeypatch):
    """A wrong equal-privacy mapping in mpdp.privacy.calibration — every σ_j from the total n
    instead of n_j — is refuted through the WD-DP study's run."""
    from mpdp.mechanisms import gradient_perturbation
    from mpdp.privacy import calibration

    def total_n(accountant, epsilon, delta, T, G, party_sizes):
        sizes = np.asarray(party_sizes, dtype=float)
        return calibration.per_party_noise_std(accountant, epsilon, delta, T, G, np.full_like(sizes, sizes.sum()))

    s = {"mechanism": "wddp_literal", "dataset": "adult", "epsilon": 1.0, "accountant": "exact_per_party",
         "m": 8, "u": 9, "placement": "replace"}
    monkeypatch.setattr(gradient_perturbation, "per_party_noise_std", total_n)
    row = registry.get("wddp_literal").run(s, _ctx(T=100))
    assert row["eps_lower"] > 2.0 * s["epsilon"]


def test_planted_mapping_bug_largest_party_sigma_is_caught():
    """Planted bug: the largest party's σ for every party (literal, equal privacy). The ledger
    still says ε = 1; the audit's ε̂ exceeds it; the honest twin is not refuted."""
    s = {"mechanism": "wddp_literal", "dataset": "adult", "epsilon": 1.0, "accountant": "exact_per_party",
         "m": 8, "u": 9, "placement": "replace"}
    honest = registry.get("wddp_literal").run(s, _ctx(T=100))
    bug = registry.get("wddp_literal").run({**s, "planted_bug": "largest_party_sigma"}, _ctx(T=100))
    assert honest["eps_lower"] <= 1.0 and honest["noise_factor"] == 1.0
    assert bug["bug"] == "largest_party_sigma" and bug["noise_factor"] == pytest.approx(1 / 9)
    assert bug["eps_accounted"] == pytest.approx(1.0, rel=1e-6)
    assert 1.0 < bug["eps_lower"] <= bug["eps_up"]


def test_mapping_bug_cannot_be_planted_in_a_single_release():
    with pytest.raises(ConfigError, match="largest_party_sigma"):
        registry.get("nl2_output").run(
            {"mechanism": "nl2_output", "pair": "noise_stage", "epsilon": 1.0,
             "planted_bug": "largest_party_sigma"}, _ctx())


def test_canary_draws_catch_a_halved_sigma_and_stay_below_the_ceiling_when_honest():
    """Many draws of the canary coordinate (spec A1 on the shipped trainer): σ/2 at claimed
    ε = 1 (true 2.155, A5 row 1) gives ε̂ > 1; the honest twin ε̂ ≤ ε_up = 1."""
    ctx = _ctx(canaries=10_000)
    s = {"mechanism": "wyx", "dataset": "breast_cancer", "epsilon": 1.0, "accountant": "exact",
         "method": "canary_draws", "T": 10, "draws": 1_000_000}
    honest = registry.get("wyx").run(s, ctx)
    bug = registry.get("wyx").run({**s, "planted_bug": True}, ctx)
    assert honest["method"] == "canary_draws" and honest["trials"] == 1_000_000
    assert honest["eps_up"] == pytest.approx(1.0, rel=1e-4)
    assert honest["eps_lower"] <= honest["eps_up"]
    assert bug["noise_factor"] == 0.5 and bug["eps_up"] == pytest.approx(2.15468, abs=2e-3)
    assert 1.0 < bug["eps_lower"] <= bug["eps_up"]


def test_detection_rate_counts_trials_and_interval():
    from mpdp.audit.detection import clopper_pearson, detection_rate

    s = {"mechanism": "wyx", "dataset": "breast_cancer", "epsilon": 1.0, "accountant": "exact",
         "method": "canary_draws", "T": 5, "draws": 1_000_000, "planted_bug": True}
    rate = detection_rate(s, _ctx(canaries=10_000), 3)
    assert rate.trials == 3 and rate.caught == 3 and rate.high == 1.0
    assert rate.low == pytest.approx(clopper_pearson(3, 3)[0]) and rate.low == pytest.approx(0.025 ** (1 / 3))
    low, high = clopper_pearson(5, 10)
    assert low == pytest.approx(0.187086, abs=1e-5) and high == pytest.approx(0.812914, abs=1e-5)
