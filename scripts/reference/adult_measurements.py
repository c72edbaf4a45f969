"""Issue 56 items 3–4 measured on Adult with the benchmark's own code (not a benchmark build).

Run in the project's venv once Adult is prepared (``snakemake data/processed/adult/card.json --cores 1``)::

    .venv/bin/python scripts/reference/adult_measurements.py

It loads the benchmark's Adult pools exactly as a ``benchmark_job`` does (:func:`mpdp.studies.benchmark.plan.
load_data` under ``config/config.yaml``: 4 000 private records, the test set) and writes
``adult_measurements.json`` beside this file:

- ``tuning_rule``: the constant predictor's test log-loss; per λ of ``benchmark.output.lambda_candidates``
  the noise-free θ*(λ)'s test accuracy and log-loss, and objective perturbation (``objpert``) and central
  output perturbation (θ*(λ) + N-L2, β = nλε/2) at ε ∈ {1, 10}, 20 seeds each;
- ``dvp``: at the reference cell (m = 8, u = 1, ring, T = ``benchmark.admm.T``) DVP's test log-loss
  without noise per penalty, with noise at ε ∈ {1, 10} (3 repetitions), the per-release α of the
  PLD composition over T and the expected perturbation of a node's minimiser, (C^R/B_p)·E‖ε‖/κ_p.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np

from mpdp import config
from mpdp.mechanisms import admm as zz
from mpdp.models import logistic
from mpdp.privacy.samplers import l2_laplace
from mpdp.studies.benchmark import admm_runner, calibration, objective, plan
from mpdp.studies.benchmark.interface import Run

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).with_name("adult_measurements.json")
SEEDS, REPS = 20, 3
LOG = logging.getLogger("adult_measurements")


def metrics(thetas: np.ndarray, data: plan.BenchmarkData) -> dict[str, float]:
    acc = np.asarray(logistic.accuracy(thetas, data.X_test, data.y_test))
    ll = np.asarray(logistic.loss(thetas, data.X_test, data.y_test, 0.0))
    return {"accuracy": float(acc.mean()), "test_logloss": float(ll.mean()), "test_logloss_median": float(np.median(ll))}


def tuning_rule(cfg: dict, data: plan.BenchmarkData) -> dict:
    n, p = data.X.shape
    rate = float(np.mean(data.y_test == 1.0))
    out: dict = {"n_private": n, "p": p, "constant_logloss": float(-(rate * np.log(rate) + (1 - rate) * np.log(1 - rate))),
                 "majority_rate": max(rate, 1 - rate), "by_lambda": []}
    mech = objective.MECHANISM
    for lam in cfg["benchmark"]["output"]["lambda_candidates"]:
        lam = float(lam)
        theta = logistic.solve_optimum(data.X, data.y, lam)
        row: dict = {"lambda": lam, "nonprivate": metrics(theta[:, None], data)}
        for eps in (1.0, 10.0):
            led = mech.ledger({}, eps, np.array([n]), lam, p)
            runs = [Run(eps, lam, s, led, np.random.default_rng([56, s])) for s in range(SEEDS)]
            row[f"objpert_eps{eps:g}"] = metrics(mech.train_batch({}, data.X, data.y, [np.arange(n)], runs), data)
            gen = np.random.default_rng([57, int(eps)])
            noisy = theta[:, None] + l2_laplace(gen, n * lam * eps / 2.0, p, size=SEEDS).T
            row[f"output_eps{eps:g}"] = metrics(noisy, data)
        out["by_lambda"].append(row)
        print(json.dumps(row))
    return out


def dvp(cfg: dict, data: plan.BenchmarkData) -> dict:
    b = cfg["benchmark"]
    m, u, _ = plan.reference_cell(cfg)
    a = b["admm"]
    part = plan.partitions(cfg, "adult", data.n, m, u, REPS, "grid")
    penalties = [float(v) for v in a["penalty_candidates"]]
    out: dict = {"m": m, "u": u, "T": a["T"], "penalties": penalties, "noise_free": {}, "noisy": {},
                 "alpha_step": {}, "node_shift": {}}
    graphs = [(part.party_indices(0), 0, [("dvp", 1.0, pen) for pen in penalties])]
    (avg, _, _), = admm_runner._admm_batch(cfg, "adult", data.X, data.y, m, u, graphs, "grid", noise=False)
    for k, pen in enumerate(penalties):
        out["noise_free"][str(pen)] = metrics(avg[:, [k]], data)
    settings = [("dvp", eps, pen) for eps in (1.0, 10.0) for pen in (penalties[-1], penalties[1])]
    graphs = [(part.party_indices(r), r, settings) for r in range(REPS)]
    res = admm_runner._admm_batch(cfg, "adult", data.X, data.y, m, u, graphs, "grid")
    for k, (_, eps, pen) in enumerate(settings):
        out["noisy"][f"eps{eps:g}_penalty{pen:g}"] = metrics(np.stack([r[0][:, k] for r in res], axis=1), data)
    B = float(np.min(part.sizes[0]))
    rho = float(b["lambda"]) * a["C_R"] * m
    for eps in (1.0, 10.0):
        alpha = calibration.admm_alpha(eps, a["T"], b["delta"], a["accountant"])
        out["alpha_step"][f"{eps:g}"] = alpha
        for pen in penalties:
            kap = float(zz.kappa(rho, m, pen, 2))
            zeta = alpha / 2.0  # Φ = 0 branch: ζ ≈ α′/2, α′ ≈ α when c C^R/(B κ) is small (spec M9 step 3)
            out["node_shift"][f"eps{eps:g}_penalty{pen:g}"] = float(a["C_R"] / B * data.p / zeta / kap)
    print(json.dumps(out))
    return out


def main() -> int:
    cfg = config.load(ROOT / "config" / "config.yaml")
    data = plan.load_data(cfg, "adult", ROOT / "data" / "processed" / "adult")
    result = {"what": __doc__.splitlines()[0], "tuning_rule": tuning_rule(cfg, data), "dvp": dvp(cfg, data)}
    OUT.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
