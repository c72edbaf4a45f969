"""Metrics and theory of finished runs: one results row per run (spec E0, bounds.md B1′, B1‴, B3).

Losses are evaluated in float64 on the pooled training data of the run's setting (all of its
repetition's training rows for ε-sweeps, the retained union of the two-group design for
u-sweeps) against θ* of that same data (spec M1a, E2.2), so optimal_gap ≥ 0 up to solver
tolerance. Under a split per repetition (spec E1.2 as amended by issue 60,
:mod:`mpdp.data.splits`) ``X``/``y`` are the data set's pool, a partition's ``order`` holds pool
indices of its repetition's training records, the accuracies are on each repetition's own
test records and θ*, L(θ*) and the Hessian of each repetition are those of its own training
records (``optimum`` per repetition).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from mpdp import bounds, mechanisms
from mpdp.data.partition import PartitionSet
from mpdp.engine.gd import deduplicate
from mpdp.mechanisms import Calibration, RunSpec
from mpdp.models import logistic


@dataclass(frozen=True)
class Optimum:
    """θ* of a repetition's training records (spec M1a) and the Hessian eigen-decomposition there."""

    theta: np.ndarray
    loss: float
    hessian_eigenvalues: np.ndarray
    hessian_eigenvectors: np.ndarray


def compute_optimum(X: np.ndarray, y: np.ndarray, lam: float) -> Optimum:
    """Spec M1a: θ* by L-BFGS, plus eig(∇²L_D(θ*)) for the B1‴ prediction."""
    theta = logistic.solve_optimum(X, y, lam)
    eigval, eigvec = np.linalg.eigh(logistic.hessian(theta, X, y, lam))
    return Optimum(theta, float(logistic.loss(theta, X, y, lam)), eigval, eigvec)


#: λ values of the sensitivity note (issue 11; λ is a reconstructed choice, spec E7 #4)
LAMBDA_SENSITIVITY = (1e-3, 1e-4, 1e-5, 0.0)


def lambda_sensitivity(
    X: np.ndarray, y: np.ndarray, X_test: np.ndarray, y_test: np.ndarray,
    lambdas: Sequence[float] = LAMBDA_SENSITIVITY,
) -> list[dict[str, float | bool]]:
    """Test accuracy of the non-private ERM optimum for each λ (scikit-learn, independent).

    ``min_θ (1/n) Σ log(1 + exp(−y θᵀx)) + (λ/2)‖θ‖²`` is scikit-learn's logistic regression
    without intercept (the intercept is a feature, spec E1.3) with ``C = 1/(λ n)``, or ``C = ∞`` (no
    penalty) for λ = 0 (where the optimum may not exist: separable data; ``converged`` says
    whether L-BFGS stopped before its iteration limit). Also returns ‖θ‖. Identical rows are
    merged first, each fitted once with its count as sample weight: the same objective, and
    KDDCup99's separable λ = 0 fit (5000 iterations) runs on 21 287 rows instead of 56 000.
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    X_u, y_u, counts = deduplicate(np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64),
                                   np.ones(len(y)))
    out = []
    for lam in lambdas:
        # C = ∞ is no penalty (scikit-learn ≥ 1.8 deprecates penalty=None for it)
        C = 1.0 / (lam * len(y)) if lam > 0 else np.inf
        model = LogisticRegression(fit_intercept=False, max_iter=5000, tol=1e-8, C=C)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X_u, y_u, sample_weight=counts)
        theta = model.coef_.ravel()
        out.append({"lambda": float(lam), "test_accuracy": float(logistic.accuracy(theta, X_test, y_test)),
                    "theta_norm": float(np.linalg.norm(theta)),
                    "converged": bool(model.n_iter_[0] < model.max_iter)})
    return out


#: θ* of every repetition (one for all under the fixed split), or the one θ* of the fixed split
Optima = Optimum | Mapping[int, Optimum]


def optimum_of(optima: Optima, rep: int) -> Optimum:
    """Repetition ``rep``'s θ* (the fixed split's single θ* serves every repetition)."""
    return optima if isinstance(optima, Optimum) else optima[rep]


def _per_rep(value: np.ndarray | Mapping[int, np.ndarray], rep: int) -> np.ndarray:
    """A repetition's array of a per-repetition mapping, or the array every repetition shares."""
    return value[rep] if isinstance(value, Mapping) else value


@dataclass(frozen=True)
class SimpleAverageReference:
    """Spec B3 inputs of one repetition for the simple average F = (1/m) Σ_j L_{D_j} (M4.2)."""

    bias_floor: float  # b_F = L_D(θ*_F) − L*, the aggregation-bias floor
    F_delta0: float  # F(θ₀) − F(θ*_F)
    sqnorm: float  # ‖θ*_F − θ*‖²


@dataclass(frozen=True)
class RepReference:
    """Non-private references of one repetition's retained data."""

    rows: np.ndarray
    theta_star: np.ndarray
    loss_star: float
    simple_average: SimpleAverageReference | None


def rep_references(
    X: np.ndarray, y: np.ndarray, partition: PartitionSet, theta0_by_rep: dict[int, np.ndarray],
    lam: float, optimum: Optima, need_simple_average: bool,
    train_rows: Mapping[int, np.ndarray] | None = None,
) -> dict[int, RepReference]:
    """θ* (and the B3 quantities of the simple average) of each repetition's retained rows.

    ``train_rows``: each repetition's training rows of ``X`` (its split of the pool, issue 60);
    None: every row of ``X`` is every repetition's training row (the fixed split's arrays). A
    repetition whose partition retains all its training rows takes its θ* from ``optimum``
    (per repetition, or one for all); the others (dropped leftovers) are solved here.

    All these L-BFGS solves run together (:func:`logistic.solve_optima`) on the union of the
    repetitions' training rows with identical rows merged, each problem weighting its
    repetition's retained rows (``1/n`` for θ*, ``1/(m n_j)`` for the simple average's θ_F*;
    others 0) and warm-started at its repetition's full-training θ*: the same objectives as
    solving each repetition on its own rows.
    """
    reps = sorted(theta0_by_rep)
    rows = {rep: partition.order[rep] for rep in reps}
    if train_rows is None:
        universe = np.arange(X.shape[0])
        all_rows = partition.order.shape[1] == X.shape[0]
    else:
        universe = np.unique(np.concatenate([np.asarray(train_rows[rep]) for rep in reps]))
        all_rows = all(partition.order.shape[1] == len(train_rows[rep]) for rep in reps)
    problems: list[tuple[str, int, np.ndarray]] = []  # (kind, repetition, weights of its rows)
    if not all_rows:  # leftover records dropped: each repetition's own optimum
        problems += [("star", rep, np.full(len(rows[rep]), 1.0 / len(rows[rep]))) for rep in reps]
    weights_F = {}
    if need_simple_average:
        weights_F = {rep: mechanisms.JAYARAMAN.record_weights(partition.sizes[rep]) for rep in reps}
        problems += [("F", rep, weights_F[rep]) for rep in reps]
    solved: dict[tuple[str, int], np.ndarray] = {}
    if problems:
        W = np.zeros((len(universe), len(problems)))
        for i, (_, rep, weights) in enumerate(problems):
            np.add.at(W[:, i], np.searchsorted(universe, rows[rep]), weights)
        Xu, yu, Wu = deduplicate(X[universe], y[universe], W)
        start = np.stack([optimum_of(optimum, rep).theta for _, rep, _ in problems], axis=1)
        Theta = logistic.solve_optima(Xu, yu, lam, Wu, start)
        solved = {(kind, rep): Theta[:, i] for i, (kind, rep, _) in enumerate(problems)}
    theta_star = {rep: solved.get(("star", rep), optimum_of(optimum, rep).theta) for rep in reps}
    theta_F = {rep: solved[("F", rep)] for rep in reps if ("F", rep) in solved}
    out = {}
    for rep in reps:
        Xr, yr = X[rows[rep]], y[rows[rep]]
        loss_star = (optimum_of(optimum, rep).loss if all_rows
                     else float(logistic.loss(theta_star[rep], Xr, yr, lam)))
        simple = None
        if need_simple_average:
            w = weights_F[rep]
            F_star = float(logistic.loss(theta_F[rep], Xr, yr, lam, weights=w))
            simple = SimpleAverageReference(
                bias_floor=float(logistic.loss(theta_F[rep], Xr, yr, lam)) - loss_star,
                F_delta0=float(logistic.loss(theta0_by_rep[rep], Xr, yr, lam, weights=w)) - F_star,
                sqnorm=float(np.sum((theta_F[rep] - theta_star[rep]) ** 2)),
            )
        out[rep] = RepReference(rows[rep], theta_star[rep], loss_star, simple)
    return out


def _test_groups(by_rep: dict[int, list[int]], per_rep_tests: bool) -> list[tuple[int, list[int]]]:
    """(a repetition, the runs scored on its test records): one group of every run when the
    repetitions share their test records (fixed split: one product, as before issue 60)."""
    if not per_rep_tests:
        return [(next(iter(by_rep)), sorted(k for ks in by_rep.values() for k in ks))]
    return list(by_rep.items())


def result_rows(
    runs: Sequence[RunSpec], calibrations: Sequence[Calibration], thetas: np.ndarray,
    theta0: np.ndarray, X: np.ndarray, y: np.ndarray,
    X_test: np.ndarray | Mapping[int, np.ndarray], y_test: np.ndarray | Mapping[int, np.ndarray],
    partition: PartitionSet, refs: dict[int, RepReference], optimum: Optima, dtype: str,
    seconds_per_run: float, flops: np.ndarray,
) -> list[dict]:
    """One results row per run (columns of :mod:`mpdp.results`); ``flops[k]`` is run ``k``'s
    engine arithmetic (:attr:`mpdp.mechanisms.gradient_batch.BatchResult.flops`).

    ``X_test``/``y_test``: the test arrays every repetition shares (fixed split) or each
    repetition's own (a mapping rep -> array, issue 60); ``optimum``: the θ* (and Hessian) of
    every repetition, or the one of the fixed split."""
    by_rep: dict[int, list[int]] = {}
    for k, run in enumerate(runs):
        by_rep.setdefault(run.rep, []).append(k)
    acc = np.empty(len(runs))
    for rep, ks in _test_groups(by_rep, isinstance(X_test, Mapping)):
        Xt, yt = _per_rep(X_test, rep), _per_rep(y_test, rep)
        acc[ks] = np.atleast_1d(logistic.accuracy(thetas if len(ks) == len(runs) else thetas[:, ks], Xt, yt))
    majority = {rep: float(max(np.mean(_per_rep(y_test, rep) > 0), np.mean(_per_rep(y_test, rep) <= 0)))
                for rep in by_rep}
    ref_acc = {rep: float(logistic.accuracy(ref.theta_star, _per_rep(X_test, rep), _per_rep(y_test, rep)))
               for rep, ref in refs.items()}
    rows = []
    train_loss = np.empty(len(runs))
    init_loss = np.empty(len(runs))
    for rep, ks in by_rep.items():
        ref = refs[rep]
        Xr, yr = X[ref.rows], y[ref.rows]
        train_loss[ks] = logistic.loss(thetas[:, ks], Xr, yr, runs[ks[0]].lam)
        init_loss[ks] = logistic.loss(theta0[:, ks], Xr, yr, runs[ks[0]].lam)
    p = X.shape[1]
    for k, (run, cal) in enumerate(zip(runs, calibrations, strict=True)):
        ref = refs[run.rep]
        sizes = partition.sizes[run.rep]
        m = len(sizes)
        theory = _theory(run, cal, ref, optimum_of(optimum, run.rep), sizes, theta0[:, k], init_loss[k], p)
        rows.append({
            "dataset": run.dataset, "experiment": run.experiment, "mechanism": run.mechanism,
            "mode": run.mode, "accountant": cal.accountant, "noise_sharing": run.noise_sharing,
            "m": run.m, "u": run.u, "epsilon": run.epsilon, "delta": run.delta, "rep": run.rep,
            "eta": run.eta, "eta_source": run.eta_source, "T": run.T, "lambda": run.lam, "G": run.G,
            "dtype": dtype, "n": int(sizes.sum()), "p": p,
            "n_min": int(sizes.min()) if run.m else None, "n_max": int(sizes.max()) if run.m else None,
            "size_ratio": float(sizes.sum() / (m * sizes.min())) if run.m else None,
            "sensitivity": cal.sensitivity, "sigma": cal.sigma, "eps_claimed": run.epsilon,
            "eps_accounted": cal.eps_accounted, "eps_accounted_scope": cal.eps_accounted_scope,
            "accuracy": float(acc[k]), "train_loss": float(train_loss[k]),
            "optimal_loss": ref.loss_star, "optimal_gap": float(train_loss[k] - ref.loss_star),
            "init_loss": float(init_loss[k]), "seconds": seconds_per_run, "synthetic": False,
            "flops": float(flops[k]),
            "majority_rate": majority[run.rep], "optimal_accuracy": ref_acc[run.rep],
            **theory,
        })
    return rows


def _theory(
    run: RunSpec, cal: Calibration, ref: RepReference, optimum: Optimum, sizes: np.ndarray,
    theta0: np.ndarray, init_loss: float, p: int,
) -> dict[str, float]:
    """B1′/B3 upper bound, B1‴ prediction and the B3 bias floor of one run."""
    L = bounds.smoothness(run.lam)
    delta0 = init_loss - ref.loss_star
    mech = mechanisms.get(run.mechanism)
    sigma_eff = cal.sigma
    if run.mode == "local_then_aggregate" and run.noise_sharing != "shared":
        weights = mech.aggregation_weights(sizes)
        if cal.party_sigmas is not None:  # std of Σ_j a_j σ_j z_j, independent z_j (B9)
            sigma_eff = float(np.sqrt(np.sum((weights * np.asarray(cal.party_sigmas)) ** 2)))
        else:
            sigma_eff = bounds.effective_aggregate_std(cal.sigma, weights)
    coords = optimum.hessian_eigenvectors.T @ (theta0 - ref.theta_star)
    predicted = float(bounds.b1_triple_prime(
        run.eta, sigma_eff, optimum.hessian_eigenvalues, T=run.T, theta0_minus_opt_coords=coords
    ))
    bias = np.nan
    if run.mechanism == "jayaraman" and ref.simple_average is not None:
        simple = ref.simple_average
        bias = simple.bias_floor
        bound = float(bounds.b3_jayaraman(
            run.T, run.eta, run.lam, L, simple.F_delta0, p, cal.sigma, simple.sqnorm
        ))
        if run.mode == "per_round":
            predicted += max(bias, 0.0)
    else:
        bound = float(bounds.b1_prime(run.T, run.eta, run.lam, L, delta0, p, cal.sigma))
    return {"bound_gap": bound, "predicted_gap": predicted, "aggregation_bias": bias}
