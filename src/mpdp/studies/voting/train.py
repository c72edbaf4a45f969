"""One voting-study table: local classifiers, votes, global ERMs, then noise over the ε grid (spec E5).

Per (M, repetition) the M local classifiers are fitted as one batched exact problem
(:mod:`mpdp.models.voting_erm`), the votes on the auxiliary pool are computed once, and the
released minimisers (Alg. 1 on voted labels, Alg. 2 on soft labels, the parameter average,
B.1's pooled ERM) are solved once per λ they need; the ε grid only draws noise (spec E5
"performance"). Every row records the privacy unit, the sensitivity, the β and the λ actually
used (spec I-12).

**λ with the noise in the loop [REC].** The output noise scales with 1/λ, so λ is chosen per
(M, ε, mechanism) on a validation split outside the private pool (its records protected by noised
scores under ``private``) — on a partition of its
own for the record-level mechanisms, on the released repetition's partition for the party-level
ones (issue 43: a party guarantee composes only over the same parties) — under the protocol ``voting.selection.protocol`` (:mod:`mpdp.studies.voting.selection`):
``private`` (random stopping, the selection accounted in the row's ε, :func:`select_private`) or
``oracle`` (every λ scored by the test error of the private release averaged over ``tune_draws``
noise draws, :func:`select_lambdas`; its privacy cost is not accounted, like E7 #16). Every draw
of the selection comes from a tuning stream (:meth:`Streams.tuning_rng`), disjoint from the
reported repetitions.
The votes do not depend on the global λ, so a λ grid only adds curator ERM solves; the
averaging baselines need their local classifiers refitted at each λ they use.

**A split per repetition (issue 60, ``split.per_repetition``, [REC]).** Repetition r takes its
own train/test split of the data set's pool (:mod:`mpdp.data.splits`), draws its auxiliary pool,
validation split and private pool within its training records (:func:`repetition_task`,
:func:`~mpdp.studies.voting.plan.aux_split` keyed by r), its parties' parts from its private
pool, its non-private references (pooled minimisers, controls, ensemble, majority class, the
held-out pool of Theorem 4) on its own records, and is scored on its own test records. The λ
selection runs per (M, repetition) on repetition r's validation records (tuning streams keyed
``("repetition", r)``, :func:`~mpdp.studies.voting.plan.selection_key`), so no selection reads a
record outside r's training part. A table is built one repetition at a time (only one
repetition's arrays and models are held), its rows written in the order (protocol, M,
repetition) as before. With ``split.per_repetition: false`` every repetition gets the same
task, its pools drawn once per data set and its λ selected once per M, and the table is the
one of the fixed design to the last bit (tests/voting/test_voting_split_per_repetition.py).
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mpdp import bounds, results
from mpdp.data import splits
from mpdp.data.prepare import load, load_classes
from mpdp.data.splits import Pool
from mpdp.errors import InputDataError
from mpdp.mechanisms import output_perturbation as op
from mpdp.models.voting_erm import (
    error,
    global_models,
    local_models,
    objective,
    predict,
    targets,
    vote_targets,
)
from mpdp.privacy import private_selection
from mpdp.studies.voting import selection
from mpdp.studies.voting.plan import (
    CONTROLS,
    CURATOR,
    EXTRA_COLUMNS,
    MAIN,
    PRIVATE_BINARY,
    PRIVATE_MULTICLASS,
    SWEEP,
    SWEEP_MECHANISMS,
    Streams,
    aux_split,
    dataset_of,
    feasible_M,
    partition_key,
    selection_key,
    split_parts,
)


@dataclass(frozen=True)
class Task:
    """Data of one table: auxiliary pool, private pool, test set, labels as class codes or ±1."""

    X_aux: np.ndarray
    y_aux: np.ndarray  # true labels of the pool: never used (labels dropped, spec E5)
    X_priv: np.ndarray
    y_priv: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    n_classes: int  # 2: labels ±1; K > 2: class codes 0..K-1
    X_val: np.ndarray | None = None  # validation split: only the λ selection reads it
    y_val: np.ndarray | None = None
    #: pool indices (mpdp.data.splits.Pool) of the rows above: "aux", "val", "priv", "test"
    rows: Mapping[str, np.ndarray] | None = None

    @property
    def multiclass(self) -> bool:
        return self.n_classes > 2


# ---------------------------------------------------------------------------------------------
# the job
# ---------------------------------------------------------------------------------------------


def load_pool(processed_dir: Path, table: str) -> tuple[Pool, int, dict[str, Any]]:
    """The prepared data set of ``table`` as a pool (:class:`mpdp.data.splits.Pool`; the
    5-class codes of a multiclass table as its ``classes``), its number of classes and its card."""
    _, multi = dataset_of(table)
    data = load(Path(processed_dir))
    if not multi:
        return Pool.of(data), 2, data.card
    c_train, c_test, names = load_classes(Path(processed_dir))
    return Pool.of(data, (c_train, c_test)), len(names), data.card


def repetition_task(pool: Pool, n_classes: int, cfg: Mapping[str, Any], rep: int) -> Task:
    """Repetition ``rep``'s auxiliary pool, validation split and private pool, all within its
    training records, and its test set (spec E5; issue 60, module docstring).

    Under the fixed split (``split.per_repetition: false``) the training records are the pool's
    first ``n_train`` rows and the pools one draw per data set: the arrays of every repetition
    are those of the prepared ``X_train``/``X_test`` split, whatever ``rep``.
    """
    split = pool.repetition(rep, cfg)
    labels = pool.classes if n_classes > 2 else pool.y
    v = cfg["voting"]
    own = splits.per_repetition(cfg)
    aux, val, priv = (split.train[i] for i in aux_split(len(split.train), pool.n, v["aux_frac"], cfg["root_seed"],
                                                          pool.dataset, v["val_frac"], rep if own else None))
    X, test = pool.X, split.test
    return Task(X[aux], labels[aux], X[priv], labels[priv], X[test], labels[test], n_classes, X[val], labels[val],
                {"aux": aux, "val": val, "priv": priv, "test": test})


def load_task(processed_dir: Path, table: str, cfg: Mapping[str, Any], rep: int = 0) -> tuple[Task, dict[str, Any]]:
    """Repetition ``rep``'s task of ``table`` (:func:`repetition_task`) and the data card."""
    pool, n_classes, card = load_pool(processed_dir, table)
    return repetition_task(pool, n_classes, cfg, rep), card






def mechanisms(n_classes: int) -> tuple[str, ...]:
    """Private mechanisms of a binary or multiclass table."""
    return PRIVATE_MULTICLASS if n_classes > 2 else PRIVATE_BINARY


def majority_error(task: Task) -> float:
    """Test error of always predicting the private pool's most frequent class."""
    values, counts = np.unique(task.y_priv, return_counts=True)
    return float(np.mean(task.y_test != values[np.argmax(counts)]))


class Pooled:
    """Exact minimisers of the ERM on the pooled private data, per λ (control, J* of B5, B.1, warm starts).

    ``work`` counts the table's exact solves and validation evaluations (shared by every
    :class:`Partition` built on this pool; keys of :data:`WORK`).
    """

    def __init__(self, task: Task, work: Counter[str] | None = None) -> None:
        self.task = task
        self.t = targets(task.y_priv, task.n_classes)
        self._w: dict[float, np.ndarray] = {}
        self.work: Counter[str] = work if work is not None else Counter()

    def model(self, lam: float) -> np.ndarray:
        """The pooled minimiser at λ (warm-started from the nearest λ solved so far)."""
        if lam not in self._w:
            init = self._w[min(self._w, key=lambda x: abs(math.log(x / lam)))] if self._w else None
            self._w[lam] = global_models(self.task.X_priv, [self.t], lam, self.task.n_classes, init)[0]
            self.work["pooled_solves"] += 1
        return self._w[lam]

    def objective(self, W: np.ndarray, lam: float) -> np.ndarray:
        """J(W) on the pooled private data with regulariser λ (B5)."""
        return objective(W, self.task.X_priv, self.t, lam, self.task.n_classes)


class Partition:
    """The released minimisers of one partition of the private pool, solved once per λ they need."""

    def __init__(self, task: Task, parts: list[np.ndarray], lam_loc: float, pooled: Pooled,
                 tie_rng: np.random.Generator | None = None) -> None:
        self.task, self.parts, self.pooled = task, parts, pooled
        self.n_min = int(min(len(p) for p in parts))
        self.W_loc = local_models(task.X_priv, task.y_priv, parts, lam_loc, task.n_classes,
                                  pooled.model(lam_loc))  # votes: λ_loc
        pooled.work.update({"local_problems": 1, "local_fits": len(parts)})
        # the auxiliary pool's vote labels; ties as voting.tie_break says (tie_rng: random, E7 #23)
        self.vote_t, self.soft_t = vote_targets(predict(self.W_loc, task.X_aux, task.n_classes), task.n_classes,
                                                tie_rng)
        self._avg = {lam_loc: self.W_loc.mean(axis=0)}
        self._curator: dict[float, np.ndarray] = {}

    def curator(self, lam: float) -> np.ndarray:
        """(w_vote, w_soft) at global λ: Alg. 1 and Alg. 2's minimisers on the auxiliary pool."""
        if lam not in self._curator:
            self._curator[lam] = global_models(self.task.X_aux, [self.vote_t, self.soft_t], lam,
                                               self.task.n_classes, self.pooled.model(lam))
            self.pooled.work["curator_solves"] += 2
        return self._curator[lam]

    def average(self, lam: float) -> np.ndarray:
        """Mean of the M local minimisers fitted with λ (M5, M6a, M6b, B.4)."""
        if lam not in self._avg:
            self._avg[lam] = local_models(self.task.X_priv, self.task.y_priv, self.parts, lam, self.task.n_classes,
                                          self.pooled.model(lam)).mean(axis=0)
            self.pooled.work.update({"local_problems": 1, "local_fits": len(self.parts)})
        return self._avg[lam]

    def released(self, mechanism: str, lam: float) -> np.ndarray:
        """The noise-free model that ``mechanism`` perturbs, at λ."""
        if mechanism == "hamm_vote":
            return self.curator(lam)[0]
        if mechanism == "hamm_soft":
            return self.curator(lam)[1]
        if mechanism == "pooled_output":
            return self.pooled.model(lam)
        return self.average(lam)

    def calibrate(self, cfg: Mapping[str, Any], mechanism: str, eps: float, w: np.ndarray, lam: float,
                  M: int) -> op.OutputCalibration:
        """Sensitivity and β of ``mechanism`` at (ε, λ) for this partition (spec M5–M13)."""
        v = cfg["voting"]
        return op.calibrate(mechanism, eps, w.size, lam, M, self.n_min, self.task.n_classes,
                            v["tight_logistic_sensitivity"], v["code_faithful_laplace"], N=len(self.task.X_priv))


Choice = dict[tuple[str, float], tuple[float, str]]


def select_lambdas(cfg: Mapping[str, Any], table: str, task: Task, M: int, pooled: Pooled, streams: Streams,
                   log: logging.Logger, record: list[dict[str, Any]] | None = None,
                   protocol: str = "oracle", solved: dict[Any, Partition] | None = None,
                   rep: int | None = None) -> Choice:
    """(mechanism, ε) -> (λ, source) at M; ε = inf is the noise-free choice (the ``*_np`` controls).

    ``voting.lambda`` set: Alg. 1/2 use it and the averaging baselines ``lambda_local`` (source
    ``config`` / ``local``). Otherwise [REC]: on a partition drawn from a tuning stream, every λ
    of ``lambda_grid`` is scored by the validation error of the private release, averaged over
    ``tune_draws`` noise draws from tuning streams; the lowest wins (ties: the larger λ).
    ``record`` (optional) receives one row per (mechanism, λ, ε) with the validation error.
    ``protocol = "private"``: the finite ε are chosen by :func:`select_private` instead.
    ``solved``: partitions already solved by another protocol (:func:`_partition`).
    ``rep``: the repetition whose task this is, under a split per repetition (issue 60): its
    tuning partition of its private pool and every tuning draw keyed by it
    (:func:`~mpdp.studies.voting.plan.selection_key`); None: the fixed split's one selection per M.
    """
    v = cfg["voting"]
    mechs = mechanisms(task.n_classes)
    eps_all = [*(float(e) for e in v["eps_grid"]), math.inf]
    lam_loc = float(v["lambda_local"])
    if v["lambda"] is not None:
        return {(m, e): (float(v["lambda"]), "config") if m in CURATOR else (lam_loc, "local")
                for m in mechs for e in eps_all}
    dataset, _ = dataset_of(table)
    own = selection_key(rep)
    models = _partition(solved, ("tuning", M) if rep is None else ("tuning", M, rep), task, lam_loc, pooled,
                        lambda: split_parts(len(task.X_priv), M, streams.tuning_rng(*partition_key(dataset, M), *own)),
                        lambda: tie_stream(cfg, streams, "tuning", table, M, *own, "aux"))
    grid = sorted(float(x) for x in v["lambda_grid"])
    choice: Choice = {}
    if protocol == "private":  # the party-level mechanisms select per repetition (_setting_rows)
        record_level = [m for m in mechs if not selection.selects_on_release_partition(m)]
        choice.update(select_private(cfg, table, task, M, models, streams, record, record_level, own))
        eps_all = [math.inf]  # the noise-free controls' λ, as before
    for mech in mechs:
        errs = np.empty((len(grid), len(eps_all)))
        for i, lam in enumerate(grid):
            w = models.released(mech, lam)
            gen = streams.tuning_rng("voting", "noise", table, mech, M, lam, *own)
            for j, eps in enumerate(eps_all):
                cal = models.calibrate(cfg, mech, eps, w, lam, M)
                draws = 1 if math.isinf(eps) else int(v["tune_draws"])
                W_p = w[None] + np.stack([op.draw_noise(gen, cal, w.shape) for _ in range(draws)])
                errs[i, j] = float(error(predict(W_p, task.X_val, task.n_classes), task.y_val).mean())
                pooled.work["validation_evaluations"] += draws
        for j, eps in enumerate(eps_all):
            if protocol == "private" and math.isfinite(eps):
                continue
            best = min(range(len(grid)), key=lambda i, j=j: (errs[i, j], -grid[i]))
            choice[(mech, eps)] = (grid[best], "tuned")
            if record is not None:
                record.extend({"M": M, "mechanism": mech, "epsilon": eps, "lambda": lam, "val_error": errs[i, j],
                               "chosen": i == best} for i, lam in enumerate(grid))
        log.info("%s: M=%d%s %s: lambda per eps %s", table, M, "" if rep is None else f" rep={rep}", mech,
                 {e: choice[(mech, e)][0] for e in eps_all})
    return choice


def tie_stream(cfg: Mapping[str, Any], streams: Streams, *key: Any) -> np.random.Generator | None:
    """The random tie-breaking stream of a vote (``voting.tie_break: random``, spec E7 #23), keyed
    ``("voting", "tie_break", *key)`` (a tuning stream for a tuning partition); None for the fixed
    rule (+1 / smallest class)."""
    if cfg["voting"]["tie_break"] != "random":
        return None
    if key and key[0] == "tuning":
        return streams.tuning_rng("voting", "tie_break", *key[1:])
    return streams.rng("voting", "tie_break", *key)


def _partition(solved: dict[Any, Partition] | None, key: Any, task: Task, lam_loc: float, pooled: Pooled,
               parts: Callable[[], list[np.ndarray]],
               tie_rng: Callable[[], np.random.Generator | None] = lambda: None) -> Partition:
    """The :class:`Partition` of ``key`` (the tuning partition of an M, or an evaluated (M, rep)),
    from ``solved`` when another protocol built it already, else built from ``parts()``.

    The protocols of a table share their partitions (issue 36: the papers' reading retrained every
    local classifier and global ERM the private protocol had solved). A partition is a function of
    its stream key, and its models of λ and of the pooled minimiser at λ, which ``pooled`` has
    cached since the first protocol asked for it, so a shared partition's models are the very
    arrays a partition built anew would compute (tested: the table is the same to the last bit).
    """
    if solved is not None and key in solved:
        return solved[key]
    models = Partition(task, parts(), lam_loc, pooled, tie_rng())
    if solved is not None:
        solved[key] = models
    return models


def select_private(cfg: Mapping[str, Any], table: str, task: Task, M: int, models: Partition, streams: Streams,
                   record: list[dict[str, Any]] | None = None, mechs: Sequence[str] | None = None,
                   suffix: tuple[Any, ...] = ()) -> Choice:
    """(mechanism, ε) -> (λ, "private") for the finite ε: random stopping (:mod:`.selection`).

    K ~ TNB trials on the partition ``models`` (the tuning partition of M, or the partition a
    repetition releases: the party-level mechanisms, :func:`.selection.
    selects_on_release_partition`); trial k draws λ uniformly from the grid and releases the
    mechanism's model at ε_t with its own noise (tuning streams keyed ``(M, ε, *suffix)``:
    ``("release_partition", rep)`` on a repetition's release partition, ``("repetition", rep)``
    on repetition rep's own tuning partition under a split per repetition, ``()`` on the fixed
    split's); its score is the error on the task's validation split (outside the private pool)
    plus Laplace noise for one validation record at ε_s (:func:`.selection.noisy_errors`, its own
    tuning stream ``("voting", "score_noise", …)`` keyed like the trials'); the lowest score wins
    (ties: the earlier trial). ``mechs``: the mechanisms to select for (default: every private one
    of the table).
    """
    v, s = cfg["voting"], cfg["voting"]["selection"]
    grid = sorted(float(x) for x in v["lambda_grid"])
    shape, mean = float(s["trials"]["shape"]), float(s["trials"]["mean"])
    choice: Choice = {}
    for mech in (mechs if mechs is not None else mechanisms(task.n_classes)):
        for eps in (float(e) for e in v["eps_grid"]):
            bud = selection.budget(cfg, eps)
            eps_t = bud["eps_trial"]
            key = (M, eps, *suffix)
            gen = streams.tuning_rng("voting", "selection", table, mech, *key)
            k = private_selection.sample_trials(gen, shape, mean)
            lams = [grid[int(i)] for i in gen.integers(0, len(grid), size=k)]
            errs = []
            for lam in lams:
                w = models.released(mech, lam)
                cal = models.calibrate(cfg, mech, eps_t, w, lam, M)
                W_p = w + op.draw_noise(gen, cal, w.shape)
                errs.append(float(error(predict(W_p, task.X_val, task.n_classes), task.y_val)))
            models.pooled.work["validation_evaluations"] += k
            scores = selection.noisy_errors(np.array(errs), len(task.y_val), bud["eps_score"],
                                            streams.tuning_rng("voting", "score_noise", table, mech, *key))
            best = int(np.argmin(scores))
            choice[(mech, eps)] = (lams[best], "private")
            if record is not None:
                record.extend({"M": M, "mechanism": mech, "epsilon": eps, "lambda": lam, "val_error": e,
                               "score": float(sc), "chosen": t == best, "trial": t, "eps_trial": eps_t,
                               "eps_score": bud["eps_score"]}
                              for t, (lam, e, sc) in enumerate(zip(lams, errs, scores, strict=True)))
    return choice


def run_table(cfg: Mapping[str, Any], table: str, processed_dir: Path, out_path: Path, log: logging.Logger) -> None:
    """Train every mechanism and control of one table and write its results (spec E5)."""
    frame = results.to_frame(table_rows(cfg, table, processed_dir, log), EXTRA_COLUMNS)
    results.write(frame, out_path, EXTRA_COLUMNS)
    log.info("%s: %d rows -> %s", table, len(frame), out_path)


#: what :class:`Pooled`'s ``work`` counts per table (issue 60 item 3: the work, not the time)
WORK = {
    "local_problems": "batched local fits (one exact problem for the M parties of a partition at one λ)",
    "local_fits": "local classifiers fitted (M per batched fit)",
    "curator_solves": "curator ERMs on the auxiliary pool (Alg. 1 and Alg. 2 at one λ: two)",
    "pooled_solves": "pooled minimisers on a private pool (one per λ and pool)",
    "validation_evaluations": "released models scored on a validation split by the λ selection",
}


def table_rows(cfg: Mapping[str, Any], table: str, processed_dir: Path, log: logging.Logger,
               streams: Streams | None = None, work: Counter[str] | None = None) -> list[dict[str, Any]]:
    """All rows of one table: the study's (``experiment = voting``) and the λ sweep's.

    One repetition at a time (module docstring): its task (:func:`repetition_task`), its pooled
    minimisers, its λ selection per (protocol, M) under a split per repetition (once per
    (protocol, M) for the fixed split), its settings; rows in the order (protocol, M, repetition).
    ``work`` (optional) receives the counts of :data:`WORK`, which the log states too.
    """
    v = cfg["voting"]
    streams = streams if streams is not None else Streams(cfg["root_seed"])
    work = work if work is not None else Counter()
    pool, n_classes, card = load_pool(processed_dir, table)
    own = splits.per_repetition(cfg)
    log.info("%s: %s", table, splits.describe(cfg))
    task = repetition_task(pool, n_classes, cfg, 0)  # every repetition's pools have the same sizes
    dataset, _ = dataset_of(table)
    Ms = feasible_M(v["M_grid"], len(task.X_priv), v["min_party_size"])
    if not Ms:
        raise InputDataError(
            f"{table}: no M of voting.M_grid = {v['M_grid']} leaves >= {v['min_party_size']} "
            f"records per party in the private pool of {len(task.X_priv)}"
        )
    if dropped := [M for M in v["M_grid"] if M not in Ms]:
        log.warning("%s: voting.M_grid: M = %s dropped: the private pool of %d records leaves fewer than "
                    "voting.min_party_size = %d per party", table, dropped, len(task.X_priv), v["min_party_size"])
    pooled = Pooled(task, work)
    sweep_M = max([m for m in Ms if m <= v["h1_M"]] or Ms[:1])  # the M of figures H-1 and hamm_lambda
    protocols = selection.protocols(cfg)
    settings: dict[tuple[int, int, int], list[dict[str, Any]]] = {}
    choices: dict[tuple[str, int], Choice] = {}
    for rep in range(v["reps"]):
        if own and rep > 0:  # this repetition's records, references and selection
            task = repetition_task(pool, n_classes, cfg, rep)
            pooled, choices = Pooled(task, work), {}
        base = {
            "dataset": dataset, "experiment": MAIN, "mode": "output_perturbation",
            "noise_sharing": "n/a", "delta": 0.0, "T": 0, "G": 1.0, "dtype": "float64",
            "n": len(task.X_priv), "p": task.X_aux.shape[1], "n_classes": task.n_classes,
            "N_aux": len(task.X_aux), "synthetic": bool(card.get("synthetic", False)),
            "majority_error": majority_error(task),
        }
        solved: dict[Any, Partition] | None = {} if len(protocols) > 1 else None  # shared by the protocols
        for i, protocol in enumerate(protocols):
            experiment = MAIN if i == 0 else selection.FINAL_RUN
            for j, M in enumerate(Ms):
                if (protocol, M) not in choices:
                    choices[(protocol, M)] = select_lambdas(cfg, table, task, M, pooled, streams, log,
                                                            protocol=protocol, solved=solved,
                                                            rep=rep if own else None)
                start = time.perf_counter()
                settings[(i, j, rep)] = _setting_rows(cfg, table, task, M, rep, choices[(protocol, M)], pooled,
                                                      streams, {**base, "experiment": experiment},
                                                      sweep_M == M and experiment == MAIN, protocol, solved)
                log.info("%s (%s): M=%d rep=%d in %.2f s", table, protocol, M, rep, time.perf_counter() - start)
    log.info("%s: work: %s", table, ", ".join(f"{k} {work[k]}" for k in WORK))
    return [row for key in sorted(settings) for row in settings[key]]


def _private_row(setting: dict[str, Any], mech: str, eps: float, cal: op.OutputCalibration, noise: np.ndarray,
                 err: float, lam: float, src: str, seconds: float) -> dict[str, Any]:
    return {**setting, "mechanism": mech, "accountant": "pure", "epsilon": eps, "eps_claimed": eps,
            "eps_accounted": cal.eps_accounted, "eps_accounted_scope": "aggregate",
            "privacy_unit": cal.privacy_unit, "sensitivity": cal.sensitivity, "beta": cal.beta,
            "noise": cal.noise, "noise_norm": float(np.linalg.norm(noise)), "test_error": err,
            "accuracy": 1.0 - err, "lambda": lam, "lambda_source": src, "seconds": seconds}


def _setting_rows(cfg, table: str, task: Task, M: int, rep: int, choice: Choice, pooled: Pooled,
                  streams: Streams, base: dict[str, Any], sweep: bool, protocol: str = "oracle",
                  solved: dict[Any, Partition] | None = None) -> list[dict[str, Any]]:
    """Rows of one (M, repetition): controls once, private mechanisms for every ε, the λ sweep.

    Under the private protocol each release is calibrated to the final share ε_f of its target ε
    (:func:`mpdp.studies.voting.selection.budget`), its own noise stream, and every noise-dependent
    bound (B6) is evaluated at ε_f; the row's ``epsilon`` stays the target.
    """
    v = cfg["voting"]
    dataset, _ = dataset_of(table)
    K = task.n_classes
    lam_loc = float(v["lambda_local"])
    start = time.perf_counter()
    models = _partition(solved, (M, rep), task, lam_loc, pooled,
                        lambda: split_parts(len(task.X_priv), M, streams.rng(*partition_key(dataset, M, rep))),
                        lambda: tie_stream(cfg, streams, table, M, rep, "aux"))
    sizes = np.array([len(p) for p in models.parts])
    H_test = predict(models.W_loc, task.X_test, K)
    ens_vote, ens_alpha = vote_targets(H_test, K, tie_stream(cfg, streams, table, M, rep, "test"))
    ens_pred = (2 * ens_vote - 1).astype(np.int8) if K == 2 else np.argmax(ens_vote, axis=1)
    setting = {**base, "m": M, "M": M, "rep": rep, "n_min": int(sizes.min()), "n_max": int(sizes.max()),
               "size_ratio": float(sizes.sum() / (M * sizes.min()))}

    def test_error(W: np.ndarray) -> np.ndarray:
        return error(predict(W, task.X_test, K), task.y_test)

    private = protocol == "private" and v["lambda"] is None
    if private:  # party-level guarantees: the trials run on this repetition's parties (.selection)
        party = [m for m in mechanisms(K) if selection.selects_on_release_partition(m)]
        choice = {**choice, **select_private(cfg, table, task, M, models, streams, mechs=party,
                                             suffix=("release_partition", rep))}
    controls = {
        "pooled_lr": (float(test_error(pooled.model(lam_loc))), lam_loc, "local"),
        "local_mean": (float(test_error(models.W_loc).mean()), lam_loc, "local"),
        "ensemble": (float(error(ens_pred, task.y_test)), lam_loc, "local"),
    }
    for ctrl, mech in (("hamm_vote_np", "hamm_vote"), ("hamm_soft_np", "hamm_soft"), ("param_avg_np", "param_avg")):
        lam, src = choice[(mech, math.inf)]
        controls[ctrl] = (float(test_error(models.released(mech, lam))), lam, src)
    shared_seconds = (time.perf_counter() - start) / len(CONTROLS)
    rows = []
    for mech in CONTROLS:
        err, lam_m, src = controls[mech]
        rows.append({**setting, "mechanism": mech, "accountant": "none", "epsilon": math.inf,
                     **selection.fields(cfg, protocol, math.inf, math.inf),
                     "eps_claimed": math.inf, "eps_accounted": math.inf, "privacy_unit": "none",
                     "beta": math.inf, "noise": "none", "noise_norm": 0.0, "test_error": err,
                     "accuracy": 1.0 - err, "lambda": lam_m, "lambda_source": src, "seconds": shared_seconds})
    t_priv = pooled.t
    w0: dict[float, np.ndarray] = {}  # Theorem 4: held-out pool = test inputs labelled by the ensemble's α [REC]
    for mech in mechanisms(K):
        for target in (float(e) for e in v["eps_grid"]):
            t0 = time.perf_counter()
            lam, src = choice[(mech, target)]
            eps = selection.budget(cfg, target)["eps_final"] if private else target  # the release's own ε
            w = models.released(mech, lam)
            cal = models.calibrate(cfg, mech, eps, w, lam, M)
            key = ("voting", "noise_private" if private else "noise", table, mech, M, target, rep)
            noise = op.draw_noise(streams.rng(*key), cal, w.shape)
            W_p = w + noise
            extra: dict[str, float] = {}
            if mech in CURATOR:  # B6: weighted empirical risk gap on the auxiliary pool
                t_aux = models.vote_t if mech == "hamm_vote" else models.soft_t
                extra["risk_gap"] = float(objective(W_p, task.X_aux, t_aux, lam, K) - objective(w, task.X_aux, t_aux, lam, K))
                if K == 2 and math.isfinite(eps):
                    M_eff = M if mech == "hamm_soft" else 1  # Alg. 1: M = 1 in the noise term (B6)
                    # the bound scales with the sensitivity actually used (tight: half of the paper's)
                    scale = 0.25 if v["tight_logistic_sensitivity"] else 1.0
                    extra["lemma6_bound"] = scale * float(bounds.b6_lemma6(w.size, lam, M_eff, eps, v["delta_p"]))
                    extra["lemma6_expected"] = scale * float(bounds.b6_lemma6_expected(w.size, lam, M_eff, eps))
                    if mech == "hamm_soft":
                        if lam not in w0:
                            w0[lam] = global_models(task.X_test, [ens_alpha], lam, K, init=w)[0]
                        risk_w0 = float(objective(w0[lam], task.X_test, ens_alpha, 0.0, K))
                        extra["heldout_risk"] = float(objective(W_p, task.X_test, ens_alpha, 0.0, K))
                        extra["thm4_bound"] = float(bounds.b6_theorem4(  # paper constants: valid, looser if tight
                            risk_w0, float(w0[lam] @ w0[lam]), w.size, lam, M, eps, len(task.X_aux),
                            v["delta_thm4"], v["delta_thm4"]))
            else:  # B5: excess pooled risk of the averaging baselines (and B.1's pooled ERM)
                J_star = float(pooled.objective(pooled.model(lam), lam))
                bias = max(float(pooled.objective(w, lam)) - J_star, 0.0)
                L_J = (0.5 if K > 2 else bounds.HAMM_C) + lam  # smoothness of the softmax / logistic objective
                extra["excess_risk"] = float(objective(W_p, task.X_priv, t_priv, lam, K)) - J_star
                extra["b5_bound"] = (float(bounds.b5_output_perturbation(w.size, cal.beta, L_J, bias))
                                     if math.isfinite(cal.beta) else bias)
            err = float(test_error(W_p))
            rows.append({**_private_row(setting, mech, target, cal, noise, err, lam, src, time.perf_counter() - t0),
                         **selection.fields(cfg, protocol, target, cal.eps_accounted), **extra})
    if sweep:
        rows.extend(_sweep_rows(cfg, table, task, M, rep, models, streams, setting))
    return rows


def _sweep_rows(cfg, table: str, task: Task, M: int, rep: int, models: Partition, streams: Streams,
                setting: dict[str, Any]) -> list[dict[str, Any]]:
    """Test error of Alg. 1, Alg. 2 and averaging at every λ of the grid (figure ``hamm_lambda``)."""
    v = cfg["voting"]
    rows = []
    for mech in SWEEP_MECHANISMS:
        for lam in sorted(float(x) for x in v["lambda_grid"]):
            w = models.released(mech, lam)
            for eps in (float(e) for e in v["lambda_sweep_eps"]):
                t0 = time.perf_counter()
                cal = models.calibrate(cfg, mech, eps, w, lam, M)
                noise = op.draw_noise(streams.rng("voting", "sweep", table, mech, M, eps, lam, rep), cal, w.shape)
                err = float(error(predict(w + noise, task.X_test, task.n_classes), task.y_test))
                rows.append({**_private_row({**setting, "experiment": SWEEP}, mech, eps, cal, noise, err, lam,
                                            "sweep", time.perf_counter() - t0)})
    return rows
