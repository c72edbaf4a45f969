"""Learning-rate selection by cross-validation (spec E3.3, `cv_scope: per_method_dataset` or `per_setting`).

5-fold stratified CV on the training split at the reference setting (m = 8, ε = 0.1, random
sizes); inside each fold the fold's training part is partitioned with spec E2.1. As in the
paper, CV on private data is not privacy-accounted (spec E7 #16). Every random draw of the CV
(folds, partitions, θ₀, noise) comes from a tuning stream (:func:`mpdp.seeding.tuning_key`), so
the selection shares no randomness with the evaluated repetitions.

**A selection per repetition** (issue 60, ``split.per_repetition``): each repetition r has its
own training records, so η is selected for each repetition by the same CV inside r's training
records only (folds, fold partitions and validation rows all drawn from them; a record outside
r's training part is never read by r's selection) and the runs of r use η_r. The repetitions'
CV runs are more columns of the same ``train_batch`` call per fold (indices into the pool, the
other records weighted 0), so the number of calls (and of matrix passes) stays that of one
selection and the columns grow R-fold. Repetition r's folds, partitions and θ₀ come from the
tuning streams of the fixed design's keys extended by ``("repetition", r)``, its noise from
``RunSpec.rep = r``. The η table's selections (``chosen``, ``scores``) then carry ``rep``. The
fixed split keeps its one selection, bit for bit as before issue 60.

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

from mpdp.data import splits
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


def _key(rep: int | None, *key: Any) -> tuple[Any, ...]:
    """A tuning stream's key: the fixed split's, or repetition ``rep``'s (issue 60)."""
    return key if rep is None else (*key, "repetition", rep)


def _fold_partition(
    cfg: dict[str, Any], dataset: str, rep: int | None, fold: int, train_idx: np.ndarray,
    experiment: str, m: int, u: int | None, setting: Setting | None,
) -> tuple[np.ndarray, np.ndarray]:
    """(order, sizes) of one fold's training part (spec E2.1 or E2.2), indices of ``train_idx``."""
    w = cfg["wddp"]
    root = cfg["root_seed"]
    n_f = len(train_idx)
    if setting is None:
        part_rng = tuning_rng(root, *_key(rep, "cv-partition", dataset, fold))
    else:
        part_rng = tuning_rng(root, *_key(rep, "cv-partition", dataset, fold, experiment, m, u))
    if experiment == "u_sweep":
        sizes = two_group_sizes(n_f, m, int(u), w["leftover"], w["small_group_frac"])
    else:
        tau = max(2, int(np.floor(w["tau_frac"] * n_f / m)))
        sizes = random_sizes(n_f, m, tau, part_rng)
    order = part_rng.permutation(train_idx).astype(np.int64)[: int(np.sum(sizes))]
    return order, np.asarray(sizes, dtype=np.int64)


def _theta0(cfg: dict[str, Any], dataset: str, rep: int | None, fold: int, p: int) -> np.ndarray:
    """θ₀ of a fold's selection runs (a tuning stream; repetition ``rep``'s own under issue 60)."""
    if rep is None:
        return initial_point(cfg["root_seed"], dataset, fold, p, cfg["wddp"]["init_std"], tuning=True)
    return tuning_rng(cfg["root_seed"], *_key(rep, "init", dataset, fold)).normal(0.0, cfg["wddp"]["init_std"], size=p)


def _fold_runs(
    cfg: dict[str, Any], dataset: str, X: np.ndarray, y: np.ndarray, log: logging.Logger,
    groups: dict[tuple[str, str], list[tuple[str, str]]], setting: Setting | None,
    train_rows: dict[int | None, np.ndarray] | None = None,
) -> tuple[list[dict[str, Any]], float]:
    """Validation accuracy of every (group, accountant, η, fold, seed) at the reference setting
    (``setting`` None: m = cv.ref_m, ε = cv.ref_eps, random sizes) or at ``setting``.

    ``train_rows``: the rows of ``X`` each selection may read (None: the one selection of the
    fixed split, every row; keys: None for that selection, a repetition for its own). Fold k of
    every selection trains in one ``train_batch`` call (the selections' runs are its columns,
    selection i's as ``rep = i``)."""
    w = cfg["wddp"]
    cv = w["cv"]
    root = cfg["root_seed"]
    selections = {None: np.arange(len(y))} if train_rows is None else train_rows
    # imported here: every training job imports this module, and only CV needs scikit-learn
    from sklearn.model_selection import StratifiedKFold

    fold_lists = {}
    for rep, rows in selections.items():
        split_seed = int(tuning_rng(root, *_key(rep, "cv-folds", dataset)).integers(2**31 - 1))
        folds = StratifiedKFold(n_splits=cv["folds"], shuffle=True, random_state=split_seed)
        fold_lists[rep] = [(rows[tr], rows[va]) for tr, va in folds.split(np.zeros((len(rows), 1)), y[rows])]
    experiment, m_set, eps, u = setting if setting is not None else ("eps_sweep", cv["ref_m"], cv["ref_eps"], None)
    m = cv["ref_m"] if m_set is None else m_set  # centralised runs ignore the partition
    records = []
    flops = 0.0
    for fold in range(cv["folds"]):
        parts = {rep: _fold_partition(cfg, dataset, rep, fold, fold_lists[rep][fold][0], experiment, m, u, setting)
                 for rep in selections}
        # selections with equal fold sizes share one call (all of them: the repetitions' splits are
        # stratified with the same class counts, so their folds have the same sizes)
        batches: dict[tuple[int, int], list[int | None]] = {}
        for rep, (order, sizes) in parts.items():
            batches.setdefault((len(order), len(sizes)), []).append(rep)
        for members_of_batch in batches.values():
            partition = PartitionSet(order=np.stack([parts[r][0] for r in members_of_batch]),
                                     sizes=np.stack([parts[r][1] for r in members_of_batch]))
            runs = [
                RunSpec(
                    dataset=dataset, experiment="cv", mechanism=mech, mode=mode, accountant=accountant,
                    epsilon=float(eps), delta=float(w["delta"]), rep=i, eta=float(eta),
                    T=int(w["T"]), lam=float(w["lambda"]), G=float(w["G"]),
                    m=None if mode == "central" else m,
                    noise_sharing=w["noise_sharing"] if mode == "local_then_aggregate" else "n/a",
                    seed=fold * SEED_STRIDE + s, eta_source="cv",
                )
                for i in range(len(members_of_batch))
                for (mech, mode), members in groups.items()
                for accountant in selection_accountants(cfg, members)
                for eta in w["eta_grid"]
                for s in range(cv["seeds"] * len(members))
            ]
            theta0 = {i: _theta0(cfg, dataset, rep, fold, X.shape[1]) for i, rep in enumerate(members_of_batch)}
            # a split per repetition: each selection's pooled columns in a block of its own records only
            result = train_batch(runs, X, y, partition, theta0, root, w["dtype"], w["dedup"], tuning=True,
                                 pooled_by_rep=splits.per_repetition(cfg))
            flops += float(result.flops.sum())
            acc = np.empty(len(runs))
            for i, rep in enumerate(members_of_batch):
                val_idx = fold_lists[rep][fold][1]
                ks = [k for k, r in enumerate(runs) if r.rep == i]
                thetas = result.thetas if len(ks) == len(runs) else result.thetas[:, ks]
                acc[ks] = np.atleast_1d(logistic.accuracy(thetas, X[val_idx], y[val_idx]))
            records += [
                {"mechanism": r.mechanism, "mode": r.mode, "accountant": r.accountant, "eta": r.eta,
                 **({} if members_of_batch[r.rep] is None else {"rep": members_of_batch[r.rep]}),
                 "fold": fold, "seed": r.seed, "accuracy": float(a)}
                for r, a in zip(runs, acc, strict=True)
            ]
        log.info("cv %s%s: fold %d/%d done (%d selections)", dataset, "" if setting is None else f" {setting}",
                 fold + 1, cv["folds"], len(selections))
    return records, flops


def _choose(
    records: list[dict[str, Any]], groups: dict[tuple[str, str], list[tuple[str, str]]],
    dataset: str, log: logging.Logger, setting: Setting | None,
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Scores per (group, accountant, η[, repetition]) and the one-SE choice of every group
    member (per repetition when the records carry ``rep``: a selection per repetition)."""
    frame = pd.DataFrame(records)
    by_rep = ["rep"] if "rep" in frame else []
    scores = (
        frame.groupby(["mechanism", "mode", "accountant", *by_rep, "eta"], as_index=False)
        ["accuracy"].agg(mean="mean", std="std", n="count")
    )
    scores["se"] = scores["std"] / np.sqrt(scores["n"])
    chosen = []
    for key, group in scores.groupby(["mechanism", "mode", "accountant", *by_rep], sort=False):
        mech, mode, accountant = key[:3]
        rep = {"rep": int(key[3])} if by_rep else {}
        pick = one_se_choice(group)
        best = group.loc[group["mean"].idxmax()]
        for member in groups[(mech, mode)]:
            chosen.append({
                "mechanism": member[0], "mode": member[1], "accountant": accountant, **rep,
                "eta": float(pick["eta"]), "mean_accuracy": float(pick["mean"]),
                "se": float(pick["se"]), "best_eta": float(best["eta"]),
                "best_mean_accuracy": float(best["mean"]), "best_se": float(best["se"]),
                "selected_as": f"{mech}/{mode}",
                **({} if setting is None else {"setting": list(setting)}),
            })
        log.info("cv %s%s: %s/%s (%s)%s -> eta = %g (accuracy %.4f ± %.4f; best eta %g at %.4f ± %.4f)",
                 dataset, "" if setting is None else f" {setting}", mech, mode, accountant,
                 f" repetition {rep['rep']}" if rep else "", pick["eta"],
                 pick["mean"], pick["se"], best["eta"], best["mean"], best["se"])
    return scores, chosen


def cross_validate(
    cfg: dict[str, Any], dataset: str, X: np.ndarray, y: np.ndarray,
    log: logging.Logger | None = None, train_rows: dict[int | None, np.ndarray] | None = None,
) -> dict[str, Any]:
    """Run the CV grid for every selection group of the config; return the η table.

    ``cv.scope: per_method_dataset`` (default): one selection per (method, data set) at the
    reference setting. ``per_setting`` (spec E3.3's alternative, E7 #15): that selection too (the
    fallback and the report's η table), plus one per setting of :func:`cv_settings` under
    ``chosen_per_setting`` (each row with its ``setting``), which the training jobs use; the
    centralised settings select the Wang–Ye–Xu group only. It costs about |settings| times the
    reference selection (every setting is a full CV grid).

    ``train_rows`` (issue 60): the rows of ``X`` (the pool) each selection reads, keyed by
    repetition (a selection per repetition, every row of the table with its ``rep``) or by None
    (the fixed split's one selection); None: one selection on every row of ``X``.
    """
    log = log or logging.getLogger(__name__)
    cv = cfg["wddp"]["cv"]
    groups = selection_groups(cfg)
    records, flops = _fold_runs(cfg, dataset, X, y, log, groups, None, train_rows)
    scores, chosen = _choose(records, groups, dataset, log, None)
    per_rep = train_rows is not None and any(rep is not None for rep in train_rows)
    table: dict[str, Any] = {
        "source": "cv",
        "reference": {"m": cv["ref_m"], "eps": cv["ref_eps"], "folds": cv["folds"],
                      "seeds": cv["seeds"], "rule": RULE, "criterion": "validation accuracy",
                      "per_accountant": bool(cv.get("per_accountant", False)),
                      "accountant": reference_accountant(cfg),
                      # a selection per repetition, within its training records (issue 60)
                      **({"per_repetition": True, "repetitions": len(train_rows or {})} if per_rep else {})},
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
            recs, fl = _fold_runs(cfg, dataset, X, y, log, wanted, setting, train_rows)
            per_setting += _choose(recs, wanted, dataset, log, setting)[1]
            table["arithmetic_flops"] += fl
        table["chosen_per_setting"] = per_setting
    return table


def eta_lookup(table: dict[str, Any]) -> dict[tuple[Any, ...], tuple[float, str]]:
    """η and its source from a table written by this module.

    Keys are (mechanism, mode, accountant) for per-accountant selections and (mechanism,
    mode) for the selection every accountant falls back to (the reference accountant's, or
    the config's η); a per-setting selection (``cv.scope: per_setting``) adds the same keys
    followed by its :data:`Setting`. A repetition's own selection (issue 60, rows with ``rep``)
    has the same keys preceded by ``("rep", r)``. Use :func:`mpdp.studies.wddp.plan.eta_for`
    to look one up.
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
        rep: tuple[Any, ...] = () if c.get("rep") is None else ("rep", int(c["rep"]))
        acc = c.get("accountant")
        if acc is not None:
            out[(*rep, c["mechanism"], c["mode"], acc, *where)] = value
        if acc is None or acc == ref:
            out[(*rep, c["mechanism"], c["mode"], *where)] = value
    return out
