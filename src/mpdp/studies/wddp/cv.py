"""Learning-rate selection by cross-validation (spec E3.3, `cv_scope: per_method_dataset` or `per_setting`).

5-fold stratified CV on the training split at the reference setting (m = 8, ε = 0.1, random
sizes); inside each fold the fold's training part is partitioned with spec E2.1. As in the
paper, CV on private data is not privacy-accounted (spec E7 #16). Every random draw of the CV
(folds, partitions, θ₀, noise) comes from a tuning stream (:func:`mpdp.seeding.tuning_key`), so
the selection shares no randomness with the evaluated repetitions.

**Groups.** Mechanisms identical in distribution (per-round WD-DP ≡ Wang–Ye–Xu, spec M3.2;
:data:`mpdp.studies.wddp.plan.IDENTICAL_TO`) form one group with one selection: the group is
trained once, as its representative, with ``cv.seeds`` noise seeds per member (the pooled
evaluations), and every member gets the chosen η. So the identity the report states holds
(together with the shared noise stream of :func:`mpdp.studies.wddp.plan.noise_twin`).

**Accountants.** With ``cv.per_accountant`` η is selected separately for every accountant a
(mechanism, mode) is trained with (the accountant sets the noise level, so the best η can
move: ``-exact`` and ``-eq`` get their own); otherwise once, under the first accountant, for all.

**Criterion and rule.** The score of an η is the mean validation accuracy over folds × seeds,
with its standard error ``s/sqrt(n)`` (evaluations treated as independent; folds share
records, so it is a slight underestimate). **One-standard-error rule**: among the η whose
mean is at least ``best mean − SE(best)``, the *smallest* η is chosen (the most conservative
step: it amplifies the injected noise least, ησ per step). Accuracy is the criterion for every
figure, the gap figures included: the paper fixes one η per mechanism and data set for all its
figures (E3.3), and the optimality gap is a training-data quantity, not a validation score.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd

from mpdp.data.partition import PartitionSet, random_sizes, two_group_sizes
from mpdp.mechanisms import RunSpec
from mpdp.mechanisms.gradient_batch import initial_point, train_batch
from mpdp.models import logistic
from mpdp.seeding import tuning_rng
from mpdp.studies.wddp.plan import (
    Setting,
    method_keys,
    reference_accountant,
    selection_accountants,
    selection_groups,
)

#: name of the selection rule, recorded in the η table and the report
RULE = "one_se_smallest"
#: noise seeds of one fold are ``fold * SEED_STRIDE + s``
SEED_STRIDE = 1000


def fixed_etas(cfg: dict[str, Any]) -> dict[str, Any]:
    """The η table when the config fixes η (no CV, e.g. the smoke profile)."""
    eta = cfg["wddp"]["eta"]
    return {
        "source": "config",
        "chosen": [{"mechanism": k[0], "mode": k[1], "eta": eta} for k in method_keys(cfg)],
        "scores": [],
    }


def one_se_choice(scores: pd.DataFrame) -> pd.Series:
    """The row of ``scores`` (one η each: eta, mean, se) chosen by the one-SE rule."""
    best = scores.loc[scores["mean"].idxmax()]
    threshold = float(best["mean"]) - (float(best["se"]) if np.isfinite(best["se"]) else 0.0)
    eligible = scores.loc[scores["mean"] >= threshold - 1e-12]
    return eligible.loc[eligible["eta"].idxmin()]


def cv_settings(cfg: dict[str, Any], dataset: str) -> list[Setting]:
    """The settings of ``cv.scope: per_setting`` (spec E3.3, E7 #15): every (m, ε) of the
    ε-sweep (and ε alone for its centralised runs), every (m, ε, u) of the u-sweep."""
    w = cfg["wddp"]
    eps = [float(e) for e in w["eps_grid"]]
    out: list[Setting] = [("eps_sweep", None, e, None) for e in eps]
    out += [("eps_sweep", int(m), e, None) for m in w["m_grid"] for e in eps]
    out += [("u_sweep", int(s["m"]), float(s["eps"]), int(u))
            for s in w["u_settings"] for u in w["u_grid"].get(dataset, [])]
    return out


def _fold_runs(
    cfg: dict[str, Any], dataset: str, X: np.ndarray, y: np.ndarray, log: logging.Logger,
    groups: dict[tuple[str, str], list[tuple[str, str]]], setting: Setting | None,
) -> tuple[list[dict[str, Any]], float]:
    """Validation accuracy of every (group, accountant, η, fold, seed) at the reference setting
    (``setting`` None: m = cv.ref_m, ε = cv.ref_eps, random sizes) or at ``setting``."""
    w = cfg["wddp"]
    cv = w["cv"]
    root = cfg["root_seed"]
    split_seed = int(tuning_rng(root, "cv-folds", dataset).integers(2**31 - 1))
    # imported here: every training job imports this module, and only CV needs scikit-learn
    from sklearn.model_selection import StratifiedKFold

    folds = StratifiedKFold(n_splits=cv["folds"], shuffle=True, random_state=split_seed)
    experiment, m_set, eps, u = setting if setting is not None else ("eps_sweep", cv["ref_m"], cv["ref_eps"], None)
    m = cv["ref_m"] if m_set is None else m_set  # centralised runs ignore the partition
    records = []
    flops = 0.0
    for fold, (train_idx, val_idx) in enumerate(folds.split(X, y)):
        n_f = len(train_idx)
        if setting is None:
            part_rng = tuning_rng(root, "cv-partition", dataset, fold)
        else:
            part_rng = tuning_rng(root, "cv-partition", dataset, fold, experiment, m, u)
        if experiment == "u_sweep":
            sizes = two_group_sizes(n_f, m, int(u), w["leftover"], w["small_group_frac"])
        else:
            tau = max(2, int(np.floor(w["tau_frac"] * n_f / m)))
            sizes = random_sizes(n_f, m, tau, part_rng)
        order = part_rng.permutation(train_idx).astype(np.int64)[: int(np.sum(sizes))]
        partition = PartitionSet(order=order[None, :], sizes=np.asarray(sizes, dtype=np.int64)[None, :])
        runs = [
            RunSpec(
                dataset=dataset, experiment="cv", mechanism=mech, mode=mode, accountant=accountant,
                epsilon=float(eps), delta=float(w["delta"]), rep=0, eta=float(eta),
                T=int(w["T"]), lam=float(w["lambda"]), G=float(w["G"]),
                m=None if mode == "central" else m,
                noise_sharing=w["noise_sharing"] if mode == "local_then_aggregate" else "n/a",
                seed=fold * SEED_STRIDE + s, eta_source="cv",
            )
            for (mech, mode), members in groups.items()
            for accountant in selection_accountants(cfg, members)
            for eta in w["eta_grid"]
            for s in range(cv["seeds"] * len(members))
        ]
        theta0 = {0: initial_point(root, dataset, fold, X.shape[1], w["init_std"], tuning=True)}
        result = train_batch(runs, X, y, partition, theta0, root, w["dtype"], w["dedup"], tuning=True)
        flops += float(result.flops.sum())
        acc = np.atleast_1d(logistic.accuracy(result.thetas, X[val_idx], y[val_idx]))
        records += [
            {"mechanism": r.mechanism, "mode": r.mode, "accountant": r.accountant, "eta": r.eta,
             "fold": fold, "seed": r.seed, "accuracy": float(a)}
            for r, a in zip(runs, acc, strict=True)
        ]
        log.info("cv %s%s: fold %d/%d done (%d runs)", dataset, "" if setting is None else f" {setting}",
                 fold + 1, cv["folds"], len(runs))
    return records, flops


def _choose(
    records: list[dict[str, Any]], groups: dict[tuple[str, str], list[tuple[str, str]]],
    dataset: str, log: logging.Logger, setting: Setting | None,
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Scores per (group, accountant, η) and the one-SE choice of every group member."""
    scores = (
        pd.DataFrame(records).groupby(["mechanism", "mode", "accountant", "eta"], as_index=False)
        ["accuracy"].agg(mean="mean", std="std", n="count")
    )
    scores["se"] = scores["std"] / np.sqrt(scores["n"])
    chosen = []
    for (mech, mode, accountant), group in scores.groupby(["mechanism", "mode", "accountant"], sort=False):
        pick = one_se_choice(group)
        best = group.loc[group["mean"].idxmax()]
        for member in groups[(mech, mode)]:
            chosen.append({
                "mechanism": member[0], "mode": member[1], "accountant": accountant,
                "eta": float(pick["eta"]), "mean_accuracy": float(pick["mean"]),
                "se": float(pick["se"]), "best_eta": float(best["eta"]),
                "best_mean_accuracy": float(best["mean"]), "best_se": float(best["se"]),
                "selected_as": f"{mech}/{mode}",
                **({} if setting is None else {"setting": list(setting)}),
            })
        log.info("cv %s%s: %s/%s (%s) -> eta = %g (accuracy %.4f ± %.4f; best eta %g at %.4f ± %.4f)",
                 dataset, "" if setting is None else f" {setting}", mech, mode, accountant, pick["eta"],
                 pick["mean"], pick["se"], best["eta"], best["mean"], best["se"])
    return scores, chosen


def cross_validate(
    cfg: dict[str, Any], dataset: str, X: np.ndarray, y: np.ndarray,
    log: logging.Logger | None = None,
) -> dict[str, Any]:
    """Run the CV grid for every selection group of the config; return the η table.

    ``cv.scope: per_method_dataset`` (default): one selection per (method, data set) at the
    reference setting. ``per_setting`` (spec E3.3's alternative, E7 #15): that selection too (the
    fallback and the report's η table), plus one per setting of :func:`cv_settings` under
    ``chosen_per_setting`` (each row with its ``setting``), which the training jobs use; the
    centralised settings select the Wang–Ye–Xu group only. It costs about |settings| times the
    reference selection (every setting is a full CV grid).
    """
    log = log or logging.getLogger(__name__)
    cv = cfg["wddp"]["cv"]
    groups = selection_groups(cfg)
    records, flops = _fold_runs(cfg, dataset, X, y, log, groups, None)
    scores, chosen = _choose(records, groups, dataset, log, None)
    table: dict[str, Any] = {
        "source": "cv",
        "reference": {"m": cv["ref_m"], "eps": cv["ref_eps"], "folds": cv["folds"],
                      "seeds": cv["seeds"], "rule": RULE, "criterion": "validation accuracy",
                      "per_accountant": bool(cv.get("per_accountant", False)),
                      "accountant": reference_accountant(cfg)},
        "chosen": chosen,
        # flops of the engine's products in the selection (perf/bench_engine.py --full)
        "arithmetic_flops": flops,
        "scores": scores.rename(columns={"mean": "mean_accuracy", "std": "std_accuracy"})
        .to_dict(orient="records"),
    }
    if cv["scope"] == "per_setting":
        per_setting: list[dict[str, Any]] = []
        for setting in cv_settings(cfg, dataset):
            wanted = groups if setting[1] is not None else {
                rep: members for rep, members in groups.items() if ("wyx", "central") in members}
            recs, fl = _fold_runs(cfg, dataset, X, y, log, wanted, setting)
            per_setting += _choose(recs, wanted, dataset, log, setting)[1]
            table["arithmetic_flops"] += fl
        table["chosen_per_setting"] = per_setting
    return table


def eta_lookup(table: dict[str, Any]) -> dict[tuple[Any, ...], tuple[float, str]]:
    """η and its source from a table written by this module.

    Keys are (mechanism, mode, accountant) for per-accountant selections and (mechanism,
    mode) for the selection every accountant falls back to (the reference accountant's, or
    the config's η); a per-setting selection (``cv.scope: per_setting``) adds the same keys
    followed by its :data:`Setting`. Use :func:`eta_for` to look one up.
    """
    out: dict[tuple[Any, ...], tuple[float, str]] = {}
    ref = table.get("reference", {}).get("accountant")
    for c in [*table["chosen"], *table.get("chosen_per_setting", [])]:
        value = (float(c["eta"]), table["source"])
        where: tuple[Any, ...] = ()
        if c.get("setting") is not None:  # recorded in the runs' eta_source as the setting's own selection
            experiment, m, eps, u = c["setting"]
            where = (experiment, None if m is None else int(m), float(eps), None if u is None else int(u))
            value = (float(c["eta"]), f"{table['source']}_per_setting")
        acc = c.get("accountant")
        if acc is not None:
            out[(c["mechanism"], c["mode"], acc, *where)] = value
        if acc is None or acc == ref:
            out[(c["mechanism"], c["mode"], *where)] = value
    return out
