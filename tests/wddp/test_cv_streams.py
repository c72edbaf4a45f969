"""The η cross-validation draws only from tuning streams, disjoint from the evaluated
repetitions (mpdp.seeding.assert_disjoint over every key the study's code uses)."""

from pathlib import Path

import pytest

from mpdp import config, seeding
from mpdp.data import partition
from mpdp.mechanisms.gradient_batch import initial_point
from mpdp.studies.wddp import plan
from mpdp.studies.wddp.cv import cross_validate, eta_lookup, fixed_etas

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def recorded(monkeypatch):
    """Every stream key the code asks mpdp.seeding for while the fixture is active."""
    keys: list[tuple] = []
    words = seeding._key_words

    def record(key):
        keys.append(tuple(key))
        return words(key)

    monkeypatch.setattr(seeding, "_key_words", record)
    return keys


def _cfg() -> dict:
    cfg = config.load(ROOT / "config" / "smoke.yaml")
    cfg["wddp"].update(T=5, eta=None, eta_grid=[0.1, 1.0], m_grid=[2, 4],
                       u_settings=[{"m": 4, "eps": 0.1}], u_grid={"toy": [1, 3]})
    cfg["wddp"]["cv"].update(folds=2, seeds=2, ref_m=2)
    return cfg


def test_cv_streams_are_disjoint_from_the_evaluated_repetitions(recorded, problem):
    cfg, (X, y) = _cfg(), problem
    w = cfg["wddp"]
    cross_validate(cfg, "toy", X, y)
    tuning = set(recorded)
    recorded.clear()
    # the evaluated repetitions: θ₀, partitions and the noise of every run of every job
    for rep in range(w["reps"]):
        initial_point(cfg["root_seed"], "toy", rep, X.shape[1], w["init_std"])
    for experiment, design in (("eps_sweep", "random"), ("u_sweep", "two_group")):
        for m, u in plan.partition_settings(cfg, "toy", experiment):
            partition.make_partitions(len(y), design, m, u, w["reps"], cfg["root_seed"], "toy", w["tau_frac"])
    evaluated = set(recorded)
    etas = eta_lookup(fixed_etas({**cfg, "wddp": {**w, "eta": 0.1}}))
    for job in plan.jobs(cfg, "toy"):
        for run in plan.runs_for_job(cfg, job, etas):
            evaluated.update(run.noise_key(party) for party in [None, *range(run.m or 0)])
    assert len(tuning) > 10 and len(evaluated) > 10
    seeding.assert_disjoint(tuning, evaluated)
    assert {k[1] for k in tuning} == {"cv-folds", "cv-partition", "init", "noise"}
