"""The project's objective perturbation against IBM diffprivlib, the peer implementation (issue 56).

The reference (``scripts/reference/diffprivlib_reference.json``) was computed by
``scripts/reference/diffprivlib_reference.py`` in diffprivlib's own venv (versions in the file) on
the prepared Breast Cancer arrays committed beside it. Three checks:

- at zero noise the project's solver returns scikit-learn's optimum;
- with a given noise vector, the project's perturbed objective (value and gradient) and extra
  regularisation Δ equal diffprivlib's — this catches a wrong sign or scale of the bᵀθ/n term;
- in law: over 100 seeds, the mean test accuracy and log-loss of the benchmark's ``objpert``
  (its own ledger, noise and solver) agree with diffprivlib's 500 fits per (λ, ε): the difference
  of means lies within its two-sample 99.9 % interval (z = 3.29). A scale error of the noise
  (×2) moves the means far outside. A sign flip of b is invisible in law (b is symmetric), which is
  why the fixed-noise check exists.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from mpdp.mechanisms import objective_perturbation as op
from mpdp.models import logistic
from mpdp.studies.benchmark import objective
from mpdp.studies.benchmark.interface import Run

REF_DIR = Path(__file__).resolve().parents[2] / "scripts" / "reference"
REF = json.loads((REF_DIR / "diffprivlib_reference.json").read_text(encoding="utf-8"))
SEEDS = 100
Z = 3.29  # two-sided 99.9 %


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    path = REF_DIR / REF["data"]["file"]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == REF["data"]["sha256"], "reference data changed"
    table = np.loadtxt(path, delimiter=",", skiprows=1)
    train, test = table[table[:, 0] == 0], table[table[:, 0] == 1]
    return train[:, 2:], train[:, 1], test[:, 2:], test[:, 1]


def test_the_reference_records_its_versions():
    v = REF["versions"]
    assert v["diffprivlib"] == "0.6.6" and v["scikit-learn"].startswith("1.6.")
    assert REF["fit"]["data_norm"] == 1.0 and REF["fit"]["fit_intercept"] is False


def test_zero_noise_optimum_is_scikit_learns(data):
    X, y, _, _ = data
    for rec in REF["zero_noise"]:
        theta = op.solve(X, y, np.array([rec["lambda"]]), np.zeros((X.shape[1], 1)))[:, 0]
        np.testing.assert_allclose(theta, rec["theta"], atol=1e-7)


def test_perturbed_objective_equals_diffprivlibs_on_fixed_noise(data):
    X, y, _, _ = data
    n = len(y)
    assert {r["delta_extra"] > 0 for r in REF["fixed_noise"]} == {True, False}  # both branches of step 2
    for rec in REF["fixed_noise"]:
        cal = op.calibrate(rec["epsilon"], n, rec["lambda"])
        assert cal.extra_reg == pytest.approx(rec["delta_extra"], rel=1e-12, abs=1e-15)
        points = np.array(rec["points"]).T
        noise = np.repeat(np.array(rec["noise"])[:, None], points.shape[1], axis=1)
        value, grad = op.objective(points, X, y, cal.quad, noise)
        np.testing.assert_allclose(value, rec["values"], rtol=1e-12)
        np.testing.assert_allclose(grad.T, rec["gradients"], rtol=1e-10, atol=1e-13)


def test_central_objective_perturbation_agrees_with_diffprivlib_in_law(data):
    X, y, X_test, y_test = data
    mech = objective.MECHANISM
    for rec in REF["distribution"]:
        lam, eps = rec["lambda"], rec["epsilon"]
        ledger = mech.ledger({}, eps, np.array([len(y)]), lam, X.shape[1])
        assert ledger.eps_total == pytest.approx(eps, rel=1e-12)
        runs = [Run(eps, lam, s, ledger, np.random.default_rng([56, s])) for s in range(SEEDS)]
        thetas = mech.train_batch({}, X, y, [np.arange(len(y))], runs)
        ours = {"accuracy": np.asarray(logistic.accuracy(thetas, X_test, y_test)),
                "test_logloss": np.asarray(logistic.loss(thetas, X_test, y_test, 0.0))}
        for metric, values in ours.items():
            ref = rec[metric]
            se = np.sqrt(values.var(ddof=1) / SEEDS + ref["std"] ** 2 / rec["seeds"])
            assert abs(values.mean() - ref["mean"]) <= Z * se, (
                f"λ={lam:g} ε={eps:g} {metric}: ours {values.mean():.4f}, diffprivlib {ref['mean']:.4f} "
                f"(interval ±{Z * se:.4f})")
