"""Learning-rate selection by cross-validation (spec E3.3, `cv_scope: per_method_dataset`).

5-fold stratified CV on the training split at the reference setting (m = 8, ε = 0.1, random
sizes, the first configured accountant); inside each fold the fold's training part is
partitioned with spec E2.1; the score is the mean validation accuracy over folds × noise seeds;
ties go to the smaller η. The chosen η is then fixed per (mechanism, mode, data set). As in
the paper, CV on private data is not privacy-accounted (spec E7 #16).
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold

from mpdp.mechanisms import RunSpec
from mpdp.models import logistic
from mpdp.partition import PartitionSet, random_sizes
from mpdp.seeding import rng
from mpdp.studies.wddp.batch import initial_point, train_batch
from mpdp.studies.wddp.plan import JAYARAMAN_ONLY, method_keys


def fixed_etas(cfg: dict[str, Any]) -> dict[str, Any]:
    """The η table when the config fixes η (no CV, e.g. the smoke profile)."""
    eta = cfg["wddp"]["eta"]
    return {
        "source": "config",
        "chosen": [{"mechanism": k[0], "mode": k[1], "eta": eta} for k in method_keys(cfg)],
        "scores": [],
    }


def cross_validate(
    cfg: dict[str, Any], dataset: str, X: np.ndarray, y: np.ndarray,
    log: logging.Logger | None = None,
) -> dict[str, Any]:
    """Run the CV grid for every (mechanism, mode) of the config; return the η table."""
    log = log or logging.getLogger(__name__)
    w = cfg["wddp"]
    cv = w["cv"]
    root = cfg["root_seed"]
    accountant = next(a for a in w["accountants"] if a not in JAYARAMAN_ONLY)
    split_seed = int(rng(root, "cv-folds", dataset).integers(2**31 - 1))
    folds = StratifiedKFold(n_splits=cv["folds"], shuffle=True, random_state=split_seed)
    records = []
    for fold, (train_idx, val_idx) in enumerate(folds.split(X, y)):
        n_f, m = len(train_idx), cv["ref_m"]
        part_rng = rng(root, "cv-partition", dataset, fold)
        tau = max(2, int(np.floor(w["tau_frac"] * n_f / m)))
        sizes = random_sizes(n_f, m, tau, part_rng)
        order = part_rng.permutation(train_idx).astype(np.int64)
        partition = PartitionSet(order=order[None, :], sizes=np.asarray(sizes, dtype=np.int64)[None, :])
        runs = [
            RunSpec(
                dataset=dataset, experiment="cv", mechanism=mech, mode=mode, accountant=accountant,
                epsilon=float(cv["ref_eps"]), delta=float(w["delta"]), rep=0, eta=float(eta),
                T=int(w["T"]), lam=float(w["lambda"]), G=float(w["G"]),
                m=None if mech == "wyx" else m, noise_sharing=w["noise_sharing"],
                seed=fold * cv["seeds"] + s, eta_source="cv",
            )
            for mech, mode in method_keys(cfg)
            for eta in w["eta_grid"]
            for s in range(cv["seeds"])
        ]
        theta0 = {0: initial_point(root, dataset, fold, X.shape[1], w["init_std"])}
        result = train_batch(runs, X, y, partition, theta0, root, w["dtype"], w["dedup"])
        acc = np.atleast_1d(logistic.accuracy(result.thetas, X[val_idx], y[val_idx]))
        records += [
            {"mechanism": r.mechanism, "mode": r.mode, "eta": r.eta, "fold": fold, "seed": r.seed,
             "accuracy": float(a)}
            for r, a in zip(runs, acc, strict=True)
        ]
        log.info("cv %s: fold %d/%d done (%d runs)", dataset, fold + 1, cv["folds"], len(runs))
    scores = (
        pd.DataFrame(records).groupby(["mechanism", "mode", "eta"], as_index=False)["accuracy"]
        .agg(mean_accuracy="mean", std_accuracy="std", n="count")
    )
    chosen = []
    for (mech, mode), group in scores.groupby(["mechanism", "mode"], sort=False):
        best = group["mean_accuracy"].round(12).max()
        eta = float(group.loc[group["mean_accuracy"].round(12) == best, "eta"].min())
        chosen.append({"mechanism": mech, "mode": mode, "eta": eta, "mean_accuracy": float(best)})
        log.info("cv %s: %s/%s -> eta = %g (accuracy %.4f)", dataset, mech, mode, eta, best)
    return {
        "source": "cv",
        "reference": {"m": cv["ref_m"], "eps": cv["ref_eps"], "accountant": accountant,
                      "folds": cv["folds"], "seeds": cv["seeds"]},
        "chosen": chosen,
        "scores": scores.to_dict(orient="records"),
    }


def eta_lookup(table: dict[str, Any]) -> dict[tuple[str, str], tuple[float, str]]:
    """(mechanism, mode) → (η, source) from a table written by this module."""
    return {(c["mechanism"], c["mode"]): (float(c["eta"]), table["source"]) for c in table["chosen"]}
