"""The common protocol of the benchmark's family runners (spec E10): the reference-cell optimum and
the row fields every runner writes, each selection protocol's tuning data, and the selection of a
family's knob (:func:`select`) under the protocols of :mod:`mpdp.studies.benchmark.selection`.

A family runner (:mod:`.gradient_runner`, :mod:`.output_runner`, :mod:`.admm_runner`,
:mod:`.batch_runner`) runs :func:`each_protocol`, and per protocol the one skeleton
:func:`select_then_grid`: its candidates' thetas on the tuning data (a :data:`ThetaFn`) feed
:func:`select`, then its cell function (a :data:`CellFn`) trains every (m, u) cell of the grid.
Only what differs between families — how a batch of candidates is trained and how a cell's rows
are made — lives in the family's module.

Split per repetition (issue 60, :class:`.plan.Repetitions`): each repetition's knob is selected on
its own private pool (:func:`tuning_data` with ``rep``, its own tuning streams,
:func:`.plan.tuning_label`), the grid of repetition r runs with repetition r's knob, and every
reference (:class:`Optimum`) and metric is that of repetition r's private pool and test records
(:func:`outcome_by_rep`). The fixed split selects once for every repetition, as before.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mpdp.errors import ConfigError
from mpdp.models import logistic
from mpdp.studies.benchmark import calibration as calib
from mpdp.studies.benchmark import plan, registry, selection

PROTOCOL = (
    "one knob per mechanism (gradient: step size eta; output/voting: lambda; ADMM: penalty), "
    "the same candidates for every mechanism; selection protocols in mpdp.studies.benchmark.selection: "
    "private (random stopping, end-to-end accounted), public (a split removed from the private pool), "
    "oracle (non-private selection, the papers' convention)"
)


#: what the private protocol's trial record is (Papernot & Steinke 2022: the guarantee holds for the
#: chosen knob with K hidden; publishing K, or which candidates were tried, voids it)
DIAGNOSTIC = ("K (trials_drawn), candidates_tried and best_trial are recorded for the cost accounting of this "
              "replication only; they are not part of the private release: publishing them voids the "
              "random-stopping guarantee, which holds for the chosen knob with K hidden")


class Optimum:
    """θ*(λ) of the pooled private data (spec M1a), cached per λ, with L_D and test accuracy."""

    def __init__(self, data: plan.BenchmarkData) -> None:
        self.data = data

    @functools.cache  # noqa: B019 (one instance per job)
    def theta(self, lam: float) -> np.ndarray:
        return logistic.solve_optimum(self.data.X, self.data.y, lam)

    def loss(self, theta: np.ndarray, lam: float) -> np.ndarray:
        """L_D(θ) = mean logistic loss + (λ/2)‖θ‖² on the private pool, θ (p,) or (p, K)."""
        return np.asarray(logistic.loss(theta, self.data.X, self.data.y, lam))

    def optimal_loss(self, lam: float) -> float:
        return float(self.loss(self.theta(lam), lam))


def base_row(cfg: Mapping[str, Any], dataset: str, data: plan.BenchmarkData) -> dict[str, Any]:
    b = cfg["benchmark"]
    y = data.y_test
    majority = max(np.mean(y == 1.0), np.mean(y == -1.0))
    return {"dataset": dataset, "experiment": "benchmark", "noise_sharing": "independent",
            "delta": float(b["delta"]), "G": float(b["G"]), "p": data.p, "synthetic": False,
            "majority_rate": float(majority)}


def mech_row(mechanism: str, ledger: calib.Ledger, epsilon: float) -> dict[str, Any]:
    """What the mechanism declares (:mod:`.interface`) and its ledger, for one row."""
    spec = registry.get(mechanism)
    return {"mechanism": mechanism, "label": spec.label, "spec": spec.spec, "family": spec.family,
            "privacy_unit": spec.privacy_unit, "public_data": spec.public_data,
            "calibration": spec.calibration, "accountant": ledger.accountant,
            "epsilon": float(epsilon), "eps_claimed": float(epsilon),
            "eps_accounted": ledger.eps_total, "eps_accounted_scope": ledger.scope,
            "eps_total": ledger.eps_total, "delta_total": ledger.delta_total,
            "sensitivity": ledger.sensitivity, "sigma": ledger.sigma, "beta": ledger.beta,
            "alpha_step": ledger.alpha_step}


def outcome(opt: Optimum, thetas: np.ndarray, lam: float) -> dict[str, np.ndarray]:
    """Accuracy, test log-loss, L_D, L_D(θ*), gap and θ*(λ)'s test accuracy and test log-loss (issue 56)
    for the columns of ``thetas`` (p, K)."""
    data = opt.data
    train = opt.loss(thetas, lam)
    best = opt.optimal_loss(lam)
    k = thetas.shape[1]
    return {"accuracy": np.asarray(logistic.accuracy(thetas, data.X_test, data.y_test)),
            "test_logloss": np.asarray(logistic.loss(thetas, data.X_test, data.y_test, 0.0)),
            "train_loss": train, "optimal_loss": np.full(k, best),
            "optimal_gap": train - best,
            "optimal_accuracy": np.full(k, logistic.accuracy(opt.theta(lam), data.X_test, data.y_test)),
            "optimal_logloss": np.full(k, float(logistic.loss(opt.theta(lam), data.X_test, data.y_test, 0.0)))}


def outcome_by_rep(grid: Grid, thetas: np.ndarray, reps: Sequence[int], lam: float) -> dict[str, np.ndarray]:
    """:func:`outcome` of each column of ``thetas`` on its own repetition (``reps[k]``): its private
    pool's L_D and θ*(λ), its test records. One call when every repetition shares the split."""
    if grid.data.shared:
        return outcome(grid.opt[0], thetas, lam)
    reps = np.asarray(reps)
    out: dict[str, np.ndarray] = {}
    for r in np.unique(reps):
        cols = np.flatnonzero(reps == r)
        for key, value in outcome(grid.opt[int(r)], thetas[:, cols], lam).items():
            out.setdefault(key, np.empty(thetas.shape[1]))[cols] = value
    return out


def _choose(candidates: Sequence[float], scores: np.ndarray) -> float:
    """The candidate of best mean validation accuracy (ties: the first in config order)."""
    return float(candidates[int(np.argmax(scores))])


def _val_accuracy(thetas: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.asarray(logistic.accuracy(thetas, X, y))


@dataclass(frozen=True)
class Tuning:
    """The records a protocol tunes on and the data its grid trains on (:mod:`.selection`)."""

    protocol: str
    X_fit: np.ndarray
    y_fit: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray
    grid: plan.BenchmarkData
    n_public: int  # records removed from the private pool and declared public (``public`` only)
    label: str = ""  # the data-set label of its tuning streams (:func:`.plan.tuning_label`)
    #: positions in the private pool of the grid's records (``public``: the pool less the public
    #: split); None: the whole pool
    grid_rows: np.ndarray | None = None


def tuning_data(cfg: Mapping[str, Any], dataset: str, data: plan.BenchmarkData, protocol: str,
                rep: int | None = None) -> Tuning:
    """Split the private pool for ``protocol`` (:mod:`mpdp.studies.benchmark.selection`); ``data``
    is repetition ``rep``'s (a split per repetition: its own pool and tuning streams), or the fixed
    split's (``rep`` None)."""
    label = plan.tuning_label(dataset, rep)
    fit, val = plan.validation_split(data.n, cfg, label)
    if protocol != "public":
        return Tuning(protocol, data.X[fit], data.y[fit], data.X[val], data.y[val], data, 0, label)
    pub_fit, pub_val = plan.validation_split(len(val), cfg, f"{label}:public")
    grid = plan.BenchmarkData(data.X[fit], data.y[fit], data.X_aux, data.X_test, data.y_test, data.n_available)
    return Tuning(protocol, data.X[val][pub_fit], data.y[val][pub_fit], data.X[val][pub_val],
                  data.y[val][pub_val], grid, len(val), label, fit)


def grid_data(data: plan.Repetitions, tuns: Sequence[Tuning]) -> plan.Repetitions:
    """The data the grid of a protocol trains on: each repetition's tuning grid (the pool, or the
    pool less its public split), indexed in ``data``'s matrix; one shared view for the fixed split."""
    if data.shared:
        return plan.shared(tuns[0].grid, data.reps)
    assert data.rows is not None
    rows = tuple(data.rows[r] if t.grid_rows is None else data.rows[r][t.grid_rows] for r, t in enumerate(tuns))
    return plan.Repetitions(data.X, data.y, tuple(t.grid for t in tuns), rows)


#: thetas(mechs, ε, seeds, needed) -> {mechanism: array (n_candidates, seeds, p)} on the tuning fit
#: records; ``needed`` (a set of (candidate index, seed), or None for all) lets a family skip the rest
ThetaFn = Callable[[Sequence[str], float, int, "set[tuple[int, int]] | None"], dict[str, np.ndarray]]


def select(cfg: Mapping[str, Any], dataset: str, tun: Tuning, mechs: Sequence[str], hparam: str,
           cands: Sequence[float], thetas: ThetaFn, noise: bool = True
           ) -> tuple[dict[str, dict[float, float]], dict[str, dict[float, float]], dict[str, Any]]:
    """Choose every mechanism's knob under ``tun.protocol``.

    Returns ``chosen[mech][ε]`` (the knob for target ε), ``eps_run[mech][ε]`` (the ε the final
    run is calibrated to) and the hparams record per mechanism (protocol, trials, budget split).
    """
    b = cfg["benchmark"]
    grid_eps = [float(e) for e in b["eps_grid"]]
    chosen: dict[str, dict[float, float]] = {}
    eps_run: dict[str, dict[float, float]] = {}
    hp: dict[str, Any] = {}
    if tun.protocol in ("oracle", "public"):
        _, _, eps_ref = plan.reference_cell(cfg)
        th = thetas(mechs, eps_ref, b["tune_seeds"], None)
        for mech in mechs:
            flat = th[mech].reshape(-1, th[mech].shape[-1]).T  # (p, n_cands·seeds)
            if tun.protocol == "oracle":
                score = _val_accuracy(flat, tun.X_val, tun.y_val).reshape(len(cands), -1).mean(axis=1)
                pick = _choose(cands, score)
            else:
                score = selection.validation_logloss(flat, tun.X_val, tun.y_val).reshape(len(cands), -1).mean(axis=1)
                pick = selection.choose_lowest(cands, score)
            chosen[mech] = {e: pick for e in grid_eps}
            eps_run[mech] = {e: e for e in grid_eps}
            key = "val_accuracy" if tun.protocol == "oracle" else "val_logloss"
            hp[mech] = {"hparam": hparam, "candidates": list(cands), "seeds": b["tune_seeds"], key: score.tolist(),
                        "chosen": pick, "selection": tun.protocol, "label": selection.LABELS[tun.protocol],
                        "n_public": tun.n_public, "trials_drawn": len(cands) * b["tune_seeds"]}
        return chosen, eps_run, hp
    s = b["selection"]
    if party := [m for m in mechs if selection.releases_selected_trial(m)]:
        raise ConfigError(f"config key 'benchmark.selection.protocol' = 'private': party-level mechanism(s) {party} "
                          f"need trials on the released partition, which only the output family's runner "
                          f"implements; choose protocol 'public' or 'oracle' for them")
    for mech in mechs:
        chosen[mech], eps_run[mech], per_eps = {}, {}, {}
        for eps in grid_eps:
            bud = selection.budget(cfg, mech, eps)
            trials = selection.draw_trials(plan.stream(cfg, "tune", "selection", tun.label or dataset, mech, eps), cfg,
                                           len(cands))
            th = thetas([mech], bud.eps_trial, len(trials), {(c, k) for k, c in enumerate(trials)})[mech]
            picked = np.stack([th[c, k] for k, c in enumerate(trials)], axis=1)
            scores = selection.noisy_scores(picked, tun.X_val, tun.y_val, float(s["score_clip"]), bud.eps_trial,
                                            bud.delta, plan.stream(cfg, "tune", "score_noise", tun.label or dataset,
                                                                   mech, eps),
                                            noise)
            best = int(np.argmin(scores))
            chosen[mech][eps] = float(cands[trials[best]])
            eps_run[mech][eps] = bud.eps_final
            per_eps[str(eps)] = {**selection.budget_record(bud), "slack": selection.slack(cfg, mech, eps),
                                 "trials_drawn": len(trials),
                                 "candidates_tried": [float(cands[c]) for c in trials], "best_trial": best,
                                 "chosen": chosen[mech][eps]}
        hp[mech] = {"hparam": hparam, "candidates": list(cands), "selection": "private",
                    "diagnostic": DIAGNOSTIC,
                    "label": selection.LABELS["private"], "score": "clipped validation log-loss + Gaussian noise",
                    "score_clip": float(s["score_clip"]), "final_share": float(s["final_share"]),
                    "trials": dict(s["trials"]), "by_epsilon": per_eps,
                    "trials_drawn": int(sum(v["trials_drawn"] for v in per_eps.values()))}
    return chosen, eps_run, hp


def selection_fields(cfg: Mapping[str, Any], protocol: str, mech: str, eps: float,
                      ledger: calib.Ledger) -> dict[str, Any]:
    bud = selection.budget(cfg, mech, eps) if protocol == "private" else None
    out = selection.budget_fields(bud, protocol, eps, selection.releases_selected_trial(mech))
    if protocol == "public":
        out.update(eps_end_to_end=ledger.eps_total, delta_end_to_end=ledger.delta_total)
    return out



@dataclass(frozen=True)
class Grid:
    """What a family's grid trains with once its knob is chosen (:func:`select_then_grid`)."""

    protocol: str
    chosen: tuple[dict[str, dict[float, float]], ...]  # per repetition: mechanism -> target ε -> knob
    eps_run: dict[str, dict[float, float]]  # mechanism -> target ε -> the ε its run is calibrated to
    data: plan.Repetitions  # the protocol's grid data (the pool, or the pool less a public split)
    opt: tuple[Optimum, ...]  # per repetition (one object for every repetition of the fixed split)
    base: tuple[dict[str, Any], ...]  # per repetition: the data set's row fields (:func:`base_row`)
    noise_tag: str  # the evaluated streams' tag: ``grid`` (oracle) or ``grid_<protocol>``


#: cell(grid, m, u) -> the rows of one (m, u) cell, every repetition, mechanism and ε
CellFn = Callable[[Grid, int, int], list[dict[str, Any]]]


def held_out(cfg: Mapping[str, Any], data: plan.Repetitions, tuns: Sequence[Tuning]) -> plan.Repetitions:
    """Each repetition's private pool less its validation records (the party-level private path,
    :mod:`.selection`): the fit part of its tuning data, indexed in ``data``'s matrix."""
    views = tuple(plan.BenchmarkData(t.X_fit, t.y_fit, t.grid.X_aux, t.grid.X_test, t.grid.y_test,
                                     t.grid.n_available) for t in tuns)
    if data.shared:
        return plan.shared(views[0], data.reps)
    assert data.rows is not None
    fits = [plan.validation_split(data.n, cfg, t.label)[0] for t in tuns]
    return plan.Repetitions(data.X, data.y, views, tuple(data.rows[r][f] for r, f in enumerate(fits)))


def make_grid(cfg: Mapping[str, Any], dataset: str, data: plan.Repetitions, tuns: Sequence[Tuning],
              chosen: Sequence[dict[str, dict[float, float]]], eps_run: dict[str, dict[float, float]]) -> Grid:
    """The :class:`Grid` of a protocol: every repetition's knob (one for all with the fixed split),
    its grid data, references and row fields."""
    gdata = grid_data(data, tuns)
    protocol = tuns[0].protocol
    if gdata.shared:
        views, picks = (gdata.rep(0),), (chosen[0],)
    else:
        views, picks = gdata.data, tuple(chosen)
    opts = tuple(Optimum(v) for v in views)
    bases = tuple(base_row(cfg, dataset, v) for v in views)
    reps = gdata.reps
    if gdata.shared:  # one object per repetition, the same for all
        opts, bases, picks = opts * reps, bases * reps, picks * reps
    return Grid(protocol, picks, eps_run, gdata, opts, bases,
                "grid" if protocol == "oracle" else f"grid_{protocol}")


def merge_records(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One selection record per mechanism from each repetition's (split per repetition): the first
    repetition's fields, ``trials_drawn`` summed, and every repetition's record in ``by_repetition``."""
    if len(records) == 1:
        return records[0]
    out: dict[str, Any] = {}
    for mech, first in records[0].items():
        reps = [r[mech] for r in records]
        out[mech] = {**first, "by_repetition": reps}
        if "trials_drawn" in first:
            out[mech]["trials_drawn"] = int(sum(r.get("trials_drawn", 0) for r in reps))
    return out


def select_then_grid(cfg: Mapping[str, Any], dataset: str, tuns: Sequence[Tuning], data: plan.Repetitions,
                     log: logging.Logger, family: str, mechs: Sequence[str], hparam: str, cands: Sequence[float],
                     thetas_for: Callable[[Tuning], ThetaFn], cell: CellFn
                     ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The skeleton of every family runner (spec E10): choose the knob of ``mechs`` under the
    protocol of ``tuns`` (:func:`select` on each repetition's tuning data, from the family's
    ``thetas_for(tun)``; one tuning for the fixed split), then train every feasible (m, u) cell of
    the grid data with ``cell``; each row gets its share of its cell's time (``seconds``). Returns
    the rows and the selection record."""
    start = time.perf_counter()
    picks = [select(cfg, dataset, tun, mechs, hparam, cands, thetas_for(tun)) for tun in tuns]
    log.info("%s %s (%s): selected %s (%d selection(s)) in %.1f s", dataset, family, tuns[0].protocol, hparam,
             len(tuns), time.perf_counter() - start)
    grid = make_grid(cfg, dataset, data, tuns, [p[0] for p in picks], picks[0][1])
    hp = merge_records([p[2] for p in picks])
    data = grid.data
    rows: list[dict[str, Any]] = []
    for m, u in plan.cells(cfg, data.n)[0]:
        start = time.perf_counter()
        cell_rows = cell(grid, m, u)
        seconds = (time.perf_counter() - start) / max(len(cell_rows), 1)
        rows += [{**r, "seconds": seconds} for r in cell_rows]
        log.info("%s %s (m=%d, u=%d): %d runs in %.1f s", dataset, family, m, u, len(cell_rows),
                 seconds * len(cell_rows))
    return rows, hp


def repetitions(cfg: Mapping[str, Any], data: plan.BenchmarkData | plan.Repetitions) -> plan.Repetitions:
    """``data`` as :class:`.plan.Repetitions` (one view: shared by ``benchmark.reps`` repetitions)."""
    return data if isinstance(data, plan.Repetitions) else plan.shared(data, cfg["benchmark"]["reps"])


def tunings(cfg: Mapping[str, Any], dataset: str, data: plan.Repetitions, protocol: str) -> list[Tuning]:
    """The tuning data of ``protocol``: one for the fixed split, one per repetition otherwise."""
    if data.shared:
        return [tuning_data(cfg, dataset, data.rep(0), protocol)]
    return [tuning_data(cfg, dataset, data.rep(r), protocol, r) for r in range(data.reps)]


def each_protocol(cfg: Mapping[str, Any], dataset: str, data: plan.Repetitions,
                  run: Callable[[list[Tuning]], tuple[list[dict[str, Any]], dict[str, Any]]]
                  ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``run`` once per configured selection protocol (:func:`.selection.protocols`) on that
    protocol's tuning data (:func:`tunings`): every protocol's rows, and the selection records by
    protocol."""
    rows: list[dict[str, Any]] = []
    hps: dict[str, Any] = {}
    for protocol in selection.protocols(cfg):
        r, hps[protocol] = run(tunings(cfg, dataset, data, protocol))
        rows += r
    return rows, hps
