"""Reference table of IBM diffprivlib's objective perturbation on the project's prepared data (issue 56).

diffprivlib's ``LogisticRegression`` is Chaudhuri–Monteleoni–Sarwate 2011 Algorithm 2 (its
``mechanisms.Vector``). This script runs it in an environment of its own — diffprivlib needs
scikit-learn < 1.7, the project's venv has a newer one — and never imports the project::

    python3 -m venv /tmp/dpl
    /tmp/dpl/bin/pip install diffprivlib==0.6.6 scikit-learn==1.6.1 numpy==2.2.6 scipy==1.15.3
    /tmp/dpl/bin/python scripts/reference/diffprivlib_reference.py

0.6.6 is the first release with the corrected regularisation scaling of ε′ and Δ (diffprivlib
issue #71, March 2025); earlier releases compute another mechanism. The versions used are
recorded in the output. Input: ``breast_cancer_prepared.csv`` beside this file (the project's
prepared Breast Cancer arrays, :mod:`export_subset`); output: ``diffprivlib_reference.json``
beside it, read by ``tests/benchmark/test_objective_diffprivlib.py``:

- ``zero_noise``: scikit-learn's L2 logistic optimum (``newton-cholesky``, ``C = 1/(nλ)``, no intercept: the
  project's intercept is a constant feature) per λ — the project's solver must match it;
- ``fixed_noise``: diffprivlib's perturbed objective (the function its ``Vector.randomise``
  returns, wrapping scikit-learn's ``LinearModelLoss.loss_gradient`` exactly as its
  ``_logistic_regression_path`` does, ``alpha = 1/C``, ``n`` = records) with its noise vector
  replaced by a given one, evaluated at given points: values, gradients and its Δ;
- ``distribution``: per (λ, ε), ``seeds`` fits of ``diffprivlib.models.LogisticRegression``
  (``data_norm = 1``, ``fit_intercept = False``, ``C = 1/(nλ)``, tight ``tol``) on the train
  rows, ``random_state`` = seed: mean, standard deviation and 95 % interval of the mean of test
  accuracy and test log-loss (mean logistic loss).
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from pathlib import Path

import diffprivlib
import numpy as np
import scipy
import sklearn
from diffprivlib.mechanisms import Vector
from diffprivlib.models import LogisticRegression as DPLogisticRegression
from sklearn._loss import HalfBinomialLoss
from sklearn.linear_model import LogisticRegression
from sklearn.linear_model._linear_loss import LinearModelLoss

HERE = Path(__file__).resolve().parent
DATA = HERE / "breast_cancer_prepared.csv"
OUT = HERE / "diffprivlib_reference.json"
#: (λ, ε) of the distribution table: two with Δ = 0 (ε′ > 0), one in the extra-regularisation branch
SETTINGS = [(1e-2, 1.0), (1e-2, 0.3), (1e-3, 0.3)]
SEEDS = 500
TOL, MAX_ITER = 1e-10, 10_000


def load() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    table = np.loadtxt(DATA, delimiter=",", skiprows=1)
    train, test = table[table[:, 0] == 0], table[table[:, 0] == 1]
    return train[:, 2:], train[:, 1], test[:, 2:], test[:, 1]


def test_metrics(coef: np.ndarray, X: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    margins = X @ coef
    accuracy = float(np.mean(np.where(margins >= 0, 1.0, -1.0) == y))
    return accuracy, float(np.mean(np.logaddexp(0.0, -y * margins)))


def perturbed_objective(X: np.ndarray, lam: float, epsilon: float, noise: np.ndarray):
    """diffprivlib's perturbed objective with its noise vector replaced by ``noise``; (function, Δ)."""
    n, d = X.shape
    C = 1.0 / (n * lam)
    mech = Vector(epsilon=epsilon, dimension=d, alpha=1.0 / C, function_sensitivity=0.25, data_sensitivity=1.0,
                  n=n, random_state=0)
    func = mech.randomise(LinearModelLoss(base_loss=HalfBinomialLoss(), fit_intercept=False).loss_gradient)
    cells = dict(zip(func.__code__.co_freevars, func.__closure__, strict=True))
    cells["normed_noisy_vector"].cell_contents = np.array(noise, dtype=np.float64)
    return func, float(cells["delta"].cell_contents)


def main() -> int:
    X, y, X_test, y_test = load()
    n, d = X.shape
    y01 = (y > 0).astype(np.float64)
    out: dict = {
        "what": "diffprivlib LogisticRegression (CMS11 Alg. 2 objective perturbation) on the project's prepared "
                "Breast Cancer arrays; produced by scripts/reference/diffprivlib_reference.py in its own venv",
        "versions": {"diffprivlib": diffprivlib.__version__, "scikit-learn": sklearn.__version__,
                     "numpy": np.__version__, "scipy": scipy.__version__, "python": platform.python_version()},
        "data": {"file": DATA.name, "sha256": hashlib.sha256(DATA.read_bytes()).hexdigest(), "n_train": n,
                 "n_test": len(y_test), "d": d},
        "fit": {"data_norm": 1.0, "fit_intercept": False, "C": "1/(n*lambda)", "tol": TOL, "max_iter": MAX_ITER},
    }
    out["zero_noise"] = []
    for lam in sorted({s[0] for s in SETTINGS}):
        sk = LogisticRegression(C=1.0 / (n * lam), fit_intercept=False, solver="newton-cholesky", tol=1e-14,
                                max_iter=MAX_ITER).fit(X, y)
        out["zero_noise"].append({"lambda": lam, "theta": sk.coef_[0].tolist()})
    gen = np.random.default_rng(20261202)
    out["fixed_noise"] = []
    for lam, eps in SETTINGS:
        noise = gen.normal(size=d) * 20.0
        points = gen.normal(size=(3, d)) * 0.5
        func, delta = perturbed_objective(X, lam, eps, noise)
        evals = [func(p.copy(), X, y01, np.ones(n), lam) for p in points]
        out["fixed_noise"].append({"lambda": lam, "epsilon": eps, "noise": noise.tolist(), "delta_extra": delta,
                                   "points": points.tolist(), "values": [float(v) for v, _ in evals],
                                   "gradients": [g.tolist() for _, g in evals]})
    out["distribution"] = []
    for lam, eps in SETTINGS:
        acc, ll = np.empty(SEEDS), np.empty(SEEDS)
        for seed in range(SEEDS):
            model = DPLogisticRegression(epsilon=eps, data_norm=1.0, C=1.0 / (n * lam), fit_intercept=False,
                                         tol=TOL, max_iter=MAX_ITER, random_state=seed).fit(X, y)
            acc[seed], ll[seed] = test_metrics(model.coef_[0], X_test, y_test)
        row = {"lambda": lam, "epsilon": eps, "seeds": SEEDS}
        for name, v in (("accuracy", acc), ("test_logloss", ll)):
            se = float(v.std(ddof=1) / np.sqrt(SEEDS))
            row[name] = {"mean": float(v.mean()), "std": float(v.std(ddof=1)), "ci95": [float(v.mean()) - 1.96 * se,
                                                                                         float(v.mean()) + 1.96 * se]}
        out["distribution"].append(row)
        print(f"lambda={lam:g} eps={eps:g}: accuracy {row['accuracy']['mean']:.4f}, "
              f"log-loss {row['test_logloss']['mean']:.4f}", file=sys.stderr)
    tmp = OUT.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    tmp.replace(OUT)
    print(f"wrote {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
