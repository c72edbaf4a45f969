"""Stacked Newton-CG (mpdp.models.stacked_newton) and the grouped ADMM built on it (issue 45).

References: the column-by-column solver mpdp.models.newton.solve, an independent gradient, the
former node-by-node ADMM loop (written out below with newton.solve per node and per run) and
scikit-learn's optimum.
"""

import math

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from mpdp.mechanisms import admm as zz
from mpdp.models import newton, stacked_newton
from mpdp.privacy.samplers import l2_laplace


def _rows(rng, n, d, w):
    X = rng.normal(size=(n, d))
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)
    y = np.where(X @ w + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _problems(seed=0, sizes=(40, 45, 300, 310, 90), d=6, K=5):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    problems = [_rows(rng, n, d, w) for n in sizes]
    S = len(problems)
    scale = rng.uniform(0.5, 2.0, (S, K)) / np.array(sizes)[:, None]
    quad = rng.uniform(1e-3, 3.0, (S, K))
    lin = rng.normal(size=(S, d, K))
    return problems, scale, quad, lin


def test_stack_buckets_pad_similar_sizes_only():
    problems, *_ = _problems()
    stack = stacked_newton.Stack.of(problems)
    sizes = [sorted(len(problems[s][1]) for s in b.index) for b in stack.buckets]
    assert sizes == [[40, 45], [90], [300, 310]]
    for b in stack.buckets:
        for i, s in enumerate(b.index):
            n = len(problems[s][1])
            np.testing.assert_array_equal(b.X[i, :n], problems[s][0])
            assert np.all(b.X[i, n:] == 0) and np.all(b.w[i, n:] == 0) and np.all(b.w[i, :n] == 1)


@pytest.mark.parametrize("repack", [0.75, 0.0])
def test_matches_the_column_solver_and_an_independent_gradient(monkeypatch, repack):
    monkeypatch.setattr(stacked_newton, "REPACK_BELOW", repack)  # 0: never pack finished columns out
    problems, scale, quad, lin = _problems()
    res = stacked_newton.solve(stacked_newton.Stack.of(problems), scale, quad, lin)
    assert res.theta.shape == lin.shape and res.grad_norm.max() <= 1e-9
    for s, (X, y) in enumerate(problems):
        alone = newton.solve(X, y, scale[s], quad[s], lin[s])
        # both are within gtol/q of the exact minimiser (strong convexity)
        np.testing.assert_allclose(res.theta[s], alone.theta, rtol=0, atol=2e-9 / quad[s].min())
        np.testing.assert_array_equal(res.iterations[s], alone.iterations)
        g = newton.gradient(X, y, res.theta[s], scale[s], quad[s], lin[s])
        assert np.linalg.norm(g, axis=0).max() <= 1e-9


def test_warm_start_frozen_columns_and_budget():
    problems, scale, quad, lin = _problems(seed=1)
    stack = stacked_newton.Stack.of(problems)
    cold = stacked_newton.solve(stack, scale, quad, lin)
    # a column started at its minimiser takes no step and keeps its value bit for bit
    init = cold.theta.copy()
    init[:, :, 1:] = 0.0
    warm = stacked_newton.solve(stack, scale, quad, lin, init=init)
    assert np.all(warm.iterations[:, 0] == 0)
    np.testing.assert_array_equal(warm.theta[:, :, 0], cold.theta[:, :, 0])
    with pytest.raises(newton.NewtonNotConvergedError, match="subproblems still have gradient norm"):
        stacked_newton.solve(stack, scale, quad, lin, max_newton=1)
    with pytest.raises(ValueError, match="quad > 0"):
        stacked_newton.solve(stack, scale, np.zeros_like(quad), lin)
    with pytest.raises(ValueError, match="lin must have shape"):
        stacked_newton.solve(stack, scale, quad, lin[:, :-1])


# ------------------------------------------------------------------------------------------
# grouped ADMM against the node-by-node, run-by-run loop
# ------------------------------------------------------------------------------------------


def _graph(seed, P, B, d=5):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=d)
    return [_rows(rng, B + 7 * p, d, w) for p in range(P)]


def _rng_for(tag):
    def rng_for(run):
        return np.random.default_rng([tag, run.rep, 0 if math.isnan(run.alpha) else int(run.alpha * 1000),
                                      zz.MECHANISMS.index(run.mechanism)])
    return rng_for


def _per_run_reference(nodes, topology, run, T, rng, C_R=1.0):
    """One run, one node at a time with newton.solve (the spec M8–M10 steps as run_batch wrote
    them before issue 45): the released iterates after T iterations."""
    P = len(nodes)
    nbrs = zz.neighbours(topology, P)
    d = nodes[0][0].shape[1]
    B = [len(y) for _, y in nodes]
    kap = [float(zz.kappa(run.rho, P, run.penalty, len(nbrs[p]))) for p in range(P)]
    F = [np.zeros((d, 1)) for _ in range(P)]
    R = [np.zeros((d, 1)) for _ in range(P)]
    lam = [np.zeros((d, 1)) for _ in range(P)]
    for t in range(T):
        dvp = run.mechanism == "dvp" or (run.mechanism == "pvp" and t == T - 1)
        cal = [zz.dvp_calibration(run.alpha, B[p], kap[p], C_R) for p in range(P)]
        if run.mechanism != "admm":
            zeta = [float(cal[p].zeta) if dvp else float(zz.pvp_zeta(run.alpha, B[p], kap[p], C_R)) for p in range(P)]
            eps = l2_laplace(rng, np.array(zeta), d, size=P)[:, :, None]
        new_F = []
        for p in range(P):
            q = kap[p] + (float(cal[p].phi) if dvp and run.mechanism != "admm" else 0.0)
            b = 2 * lam[p] - run.penalty * (len(nbrs[p]) * F[p] + sum(R[j] for j in nbrs[p]))
            if dvp and run.mechanism != "admm":
                b = b + C_R / B[p] * eps[p]
            new_F.append(newton.solve(*nodes[p], C_R / B[p], q, b, init=F[p]).theta)
        F = new_F
        pvp_now = run.mechanism == "pvp" and t < T - 1
        R = [F[p] + (eps[p] if pvp_now else 0.0) for p in range(P)]
        for p in range(P):
            lam[p] = lam[p] + 0.5 * run.penalty * sum(R[p] - R[j] for j in nbrs[p])
    return R


@pytest.mark.parametrize("topology", ["ring", "complete"])
@pytest.mark.parametrize("stack_max_rows", [zz.STACK_MAX_ROWS, 0])  # 0: every node solved alone
def test_grouped_admm_matches_the_per_run_path(monkeypatch, topology, stack_max_rows):
    monkeypatch.setattr(zz, "STACK_MAX_ROWS", stack_max_rows)
    T = 12
    graphs = [_graph(seed, P, 40 + 30 * seed) for seed, P in enumerate([4, 3, 5])]
    runs_of = [[zz.ADMMRun(m, 0.05, pen, al, rep) for m in ("dvp", "pvp") for pen in (0.1, 1.0)
                for al in (0.3, 3.0)][: 8 - 2 * g] + [zz.ADMMRun("admm", 0.05, 0.3, math.nan, 0)]
              for g, rep in enumerate([0, 1, 2])]
    groups = [zz.Group(nodes, topology, runs, _rng_for(g), lambda rel: {}, [T])
              for g, (nodes, runs) in enumerate(zip(graphs, runs_of, strict=True))]
    results = zz.run_groups(groups, T)
    for g, (nodes, runs) in enumerate(zip(graphs, runs_of, strict=True)):
        for k, run in enumerate(runs):
            ref = _per_run_reference(nodes, topology, run, T, _rng_for(g)(run))
            for p in range(len(nodes)):
                np.testing.assert_allclose(results[g].released[p][:, k], ref[p][:, 0], rtol=0, atol=1e-8)
        alone = zz.run_batch(nodes, topology, runs, T, _rng_for(g), lambda rel: {}, [T])
        np.testing.assert_array_equal(alone.noise_norm, results[g].noise_norm)  # same noise draws
        for p in range(len(nodes)):
            np.testing.assert_allclose(alone.released[p], results[g].released[p], rtol=0, atol=1e-8)


def test_grouped_nonprivate_admm_reaches_sklearns_optimum():
    rho, C_R, B = 0.5, 1.0, 60
    graphs = [[(X, y) for X, y in _graph(seed, 4, B)] for seed in (3, 4)]
    for nodes in graphs:  # equal node sizes, so CR-ERM is sklearn's problem with C = C^R/(Bρ)
        nodes[:] = [(X[:B], y[:B]) for X, y in nodes]
    groups = [zz.Group(nodes, "ring", [zz.ADMMRun("admm", rho, pen, math.nan, 0) for pen in (0.3, 0.5)],
                       _rng_for(0), lambda rel: {}, [400]) for nodes in graphs]
    for nodes, res in zip(graphs, zz.run_groups(groups, 400), strict=True):
        X = np.concatenate([x for x, _ in nodes])
        y = np.concatenate([yy for _, yy in nodes])
        ref = LogisticRegression(C=C_R / (B * rho), fit_intercept=False, tol=1e-12, max_iter=10_000).fit(X, y)
        for f in res.released:
            np.testing.assert_allclose(f, np.repeat(ref.coef_[0][:, None], 2, axis=1), atol=1e-6)
