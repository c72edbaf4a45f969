"""Zhang & Zhu ADMM family: non-private ADMM (spec M8), DVP (M9) and PVP (M10), batched.

Setting (spec M8): P nodes on a connected undirected graph (neighbour sets N_p, degrees V_p);
node p holds (X_p, y_p) with B_p records, ‖x‖ ≤ 1, y ∈ {−1, +1}; logistic loss l with
|l′| ≤ 1 and l″ ≤ c₁ = 1/4; regulariser N(f) = ½‖f‖². Node p's primal step minimises

    (C^R/B_p) Σ_i l(y_i fᵀx_i) + (ρ/P + Φ) ½‖f‖² + 2μᵀf + η Σ_{j∈N_p} ‖f − ½(f_p(t) + f̃_j(t))‖²,

i.e. (up to a constant) a logistic problem with quadratic coefficient q = ρ/P + Φ + 2ηV_p and
linear term b = 2μ − η(V_p f_p(t) + Σ_j f̃_j(t)), solved exactly (‖∇‖ ≤ 1e−9, spec M9
"Exactness") by Newton-CG. Runs (mechanism, ρ, η, α, repetition) are the columns of one
parameter matrix per node; independent graphs (e.g. the benchmark's repetitions, each its own
partition) are :class:`Group` s of one :func:`run_groups` call. Per iteration, the nodes with
fewer than :data:`STACK_MAX_ROWS` records, of all graphs, are one stacked solve
(:mod:`mpdp.models.stacked_newton`, the iteration of :mod:`mpdp.models.newton` for many design
matrices at once); larger nodes are solved one at a time by :func:`mpdp.models.newton.solve`
with the operands in the order they had before batching (issue 45: same bits).

- ``admm`` (M8): μ = λ, Φ = 0, f̃ = f; dual update (11) λ_p += (η/2) Σ_j (f_p − f_j).
- ``dvp`` (M9): per node and iteration, the two-case calibration :func:`dvp_calibration`
  gives (α′, Φ, ζ); ε ~ N-L2(ζ) (:func:`mpdp.privacy.samplers.l2_laplace`); μ = λ + C^R/(2B_p) ε;
  the exact minimiser is released and the dual is updated with the unperturbed λ (16).
- ``pvp`` (M10): steps t = 0..T−2 minimise with the own unperturbed f_p(t) and the
  neighbours' perturbed f̃_j(t), then release f̃_p = f_p + ε with ζ of :func:`pvp_zeta`
  (sensitivity 2C^R/(B_p(ρ/P + 2ηV_p))); duals (20) use the released values (or the own
  unperturbed value with ``own_unperturbed_in_dual``). The last iteration t = T−1 is a DVP
  step whose unperturbed minimiser is the output [REC: T_ad iterations in total, E4 "PVP's
  final DVP step at T = 100"].

Privacy (Theorems 1–2, "dynamic α-DP"): every DVP release is pure α-DP per node and
iteration given the history; the seed gives no composition over iterations (I-11), see
:mod:`mpdp.privacy.pure_dp`. PVP's releases are not α-DP given the history (I-20): its t-th
release is α(1 − r^t)/(1 − r)-DP, r = ηV_p/κ_p (:func:`pvp_transcript_epsilons`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from mpdp.models import newton, stacked_newton
from mpdp.privacy.samplers import l2_laplace

#: bound c₁ on l″ of the logistic loss (spec §0.2, Assumption 1)
C1_LOGISTIC = 0.25

#: nodes with at least this many records are solved one at a time (:func:`mpdp.models.newton.solve`,
#: the arithmetic of before issue 45), smaller ones together (:mod:`mpdp.models.stacked_newton`):
#: measured, stacking pays where per-call overhead is a large share of a node's work (perf/README.md)
STACK_MAX_ROWS = 512

#: mechanism ids of this family
MECHANISMS = ("admm", "dvp", "pvp")
TOPOLOGIES = ("ring", "complete")


# ------------------------------------------------------------------------------------------
# graph
# ------------------------------------------------------------------------------------------


def neighbours(topology: str, P: int) -> list[list[int]]:
    """Neighbour lists N_p of the ``ring`` (V_p = 2; V_p = 1 for P = 2) or ``complete`` graph."""
    if P < 2:
        raise ValueError(f"ADMM needs at least 2 nodes, got P = {P}")
    if topology == "ring":
        return [sorted({(p - 1) % P, (p + 1) % P}) for p in range(P)]
    if topology == "complete":
        return [[j for j in range(P) if j != p] for p in range(P)]
    raise ValueError(f"unknown topology {topology!r}; known: {TOPOLOGIES}")


# ------------------------------------------------------------------------------------------
# calibrations (spec M9 step 2–3, M10 eq. (19), bounds.md B7)
# ------------------------------------------------------------------------------------------


def kappa(rho: float | np.ndarray, P: int, penalty: float | np.ndarray, degree: int) -> np.ndarray:
    """κ_p = ρ/P + 2ηV_p, the curvature of the data-independent part (spec M9 step 1)."""
    return np.asarray(rho, dtype=float) / P + 2.0 * np.asarray(penalty, dtype=float) * degree


@dataclass(frozen=True)
class DVPCalibration:
    """Spec M9 steps 2–3 for one or many (α, B_p, κ_p): α′, Φ, ζ and the case taken."""

    alpha_prime: np.ndarray
    phi: np.ndarray
    zeta: np.ndarray
    phi_zero: np.ndarray  # True where α′ > 0 (Φ = 0), False in the second case


def dvp_calibration(
    alpha: float | np.ndarray,
    B: float | np.ndarray,
    kappa_p: float | np.ndarray,
    C_R: float = 1.0,
    c1: float = C1_LOGISTIC,
) -> DVPCalibration:
    """Two-case objective-perturbation calibration of DVP (spec M9 step 2–3).

    α′ = α − 2 ln(1 + c₁C^R/(B_p κ_p)); if α′ > 0 then Φ = 0, else
    Φ = c₁C^R/(B_p(e^{α/4} − 1)) − κ_p and α′ = α/2; finally ζ = α′/2.
    """
    alpha = np.asarray(alpha, dtype=float)
    ratio = c1 * C_R / (np.asarray(B, dtype=float) * np.asarray(kappa_p, dtype=float))
    first = alpha - 2.0 * np.log1p(ratio)
    phi_zero = first > 0
    with np.errstate(divide="ignore", over="ignore"):
        phi_second = c1 * C_R / (np.asarray(B, dtype=float) * np.expm1(alpha / 4.0)) - kappa_p
    alpha_prime = np.where(phi_zero, first, alpha / 2.0)
    phi = np.where(phi_zero, 0.0, phi_second)
    return DVPCalibration(alpha_prime, phi, alpha_prime / 2.0, phi_zero)


def pvp_sensitivity(B: float | np.ndarray, kappa_p: float | np.ndarray, C_R: float = 1.0) -> np.ndarray:
    """Δ_p = 2C^R/(B_p(ρ/P + 2ηV_p)), sensitivity of PVP's primal minimiser (spec M10 (19))."""
    return 2.0 * C_R / (np.asarray(B, dtype=float) * np.asarray(kappa_p, dtype=float))


def pvp_zeta(
    alpha: float | np.ndarray, B: float | np.ndarray, kappa_p: float | np.ndarray, C_R: float = 1.0
) -> np.ndarray:
    """ζ_p = B_p(ρ/P + 2ηV_p)α/(2C^R) = α/Δ_p, PVP's N-L2 parameter (spec M10 (19))."""
    return np.asarray(alpha, dtype=float) / pvp_sensitivity(B, kappa_p, C_R)


def pvp_hidden_gain(rho: float | np.ndarray, P: int, penalty: float | np.ndarray, degree: int) -> np.ndarray:
    """r = ηV_p/κ_p, the gain of PVP's next minimiser in the node's own hidden f_p(t) (spec I-20).

    In (18) the node's unreleased f_p(t) enters only through the penalty
    η Σ_{j∈N_p} ‖f − ½(f_p(t) + f̃_j(t))‖², whose gradient in f is linear in f_p(t) with
    coefficient −ηV_p. The objective is κ_p-strongly convex in f (κ_p = ρ/P + 2ηV_p) and its
    loss part has the same curvature in both data sets, so moving f_p(t) by d moves the
    minimiser by at most r·d, r = ηV_p/κ_p < 1/2.
    """
    return np.asarray(penalty, dtype=float) * degree / kappa(rho, P, penalty, degree)


def pvp_conditional_sensitivity(
    delta_p: float | np.ndarray, r: float | np.ndarray, t: int | np.ndarray | None = None
) -> np.ndarray:
    """Sensitivity of PVP's t-th release given the released history (spec I-20, [DER]).

    Proof. Fix the released transcript up to t. For neighbouring data sets D, D′ let d(t) be
    the distance of the two hidden primals f_p(t), f′_p(t). At t = 1 both start from
    f_p(0) = 0, so d(1) ≤ Δ_p (Shalev-Shwartz Lemma 14, the paper's own argument). At t + 1
    the minimiser moves by at most Δ_p from the changed record (same hidden state) plus r·d(t)
    from the changed hidden state (:func:`pvp_hidden_gain`), so d(t+1) ≤ Δ_p + r·d(t), hence

        d(t) ≤ Δ_p (1 − r^t)/(1 − r)  <  Δ_p/(1 − r)   (≈ 2Δ_p at r ≈ ½).

    A release calibrated to Δ_p is therefore (α·d(t)/Δ_p)-DP given the history, not α-DP.
    ``t=None`` gives the supremum Δ_p/(1 − r).
    """
    delta_p = np.asarray(delta_p, dtype=float)
    r = np.asarray(r, dtype=float)
    if np.any((r < 0) | (r >= 1)):
        raise ValueError(f"the hidden-state gain r must lie in [0, 1), got {r!r}")
    if t is None:
        return delta_p / (1.0 - r)
    t = np.asarray(t)
    if np.any(t < 1):
        raise ValueError(f"releases are numbered from t = 1, got {t!r}")
    return delta_p * (1.0 - r**t) / (1.0 - r)


def pvp_real_epsilon(alpha: float | np.ndarray, r: float | np.ndarray,
                     t: int | np.ndarray | None = None) -> np.ndarray:
    """ε that PVP's t-th release (calibrated to Δ_p with parameter α) really gives (spec I-20).

    N-L2 noise of parameter ζ = α/Δ_p shifted by a vector of norm d changes the density by at
    most e^{ζd}, and the bound is reached in the shift's direction, so the release is
    α·d(t)/Δ_p-DP with d(t) from :func:`pvp_conditional_sensitivity`.
    """
    return np.asarray(alpha, dtype=float) * pvp_conditional_sensitivity(1.0, r, t)


def pvp_final_real_epsilon(alpha: float | np.ndarray, alpha_prime: float | np.ndarray,
                           r: float | np.ndarray, T: int) -> np.ndarray:
    """ε that PVP's final DVP step (release T, after T − 1 PVP releases) really gives (spec I-20, [DER]).

    Proof. The final step (M9 step 5 with the neighbours' f̃_j(T−1)) also uses the node's own
    hidden f_p(T−1) in its penalty, whose two values for neighbouring data sets lie d(T−1)
    apart (:func:`pvp_conditional_sensitivity`). By the KKT condition the noise that maps to a
    given output is ε = −Σ_i l′(·)y_ix_i − (B_p/C^R)[(κ_p + Φ)f + 2λ − ηV_p f_p(T−1) − ηΣ_j f̃_j],
    so ‖ε − ε′‖ ≤ 2 + (B_p/C^R)ηV_p d(T−1) = 2 + 2r(1 − r^{T−1})/(1 − r) = 2(1 − r^T)/(1 − r)
    (Δ_p = 2C^R/(B_pκ_p)). The Jacobian part does not depend on f_p(T−1): it stays ≤ α − α′ in
    both cases of :func:`dvp_calibration`. With ζ = α′/2 the step is therefore

        (α − α′) + α′(1 − r^T)/(1 − r)-DP given the history   (= α when T = 1 or r = 0).
    """
    alpha = np.asarray(alpha, dtype=float)
    alpha_prime = np.asarray(alpha_prime, dtype=float)
    return alpha - alpha_prime + alpha_prime * pvp_conditional_sensitivity(1.0, r, T)


def pvp_transcript_epsilons(alpha: float, alpha_prime: float, r: float, T: int) -> np.ndarray:
    """The real ε of each of PVP's T releases given the history (spec I-20), shape (T,).

    Releases 1..T−1 are output perturbations (:func:`pvp_real_epsilon`), release T the final
    DVP step (:func:`pvp_final_real_epsilon`).
    """
    if T < 1:
        raise ValueError(f"PVP needs T >= 1 releases, got {T}")
    steps = pvp_real_epsilon(alpha, r, np.arange(1, T)) if T > 1 else np.empty(0)
    return np.append(steps, pvp_final_real_epsilon(alpha, alpha_prime, r, T))


def expected_noise_norm(d: int, zeta: float | np.ndarray) -> np.ndarray:
    """E‖ε‖ = d/ζ of the N-L2 noise (spec §0.4; the B7 diagnostic: DVP 2d/α′, PVP dΔ_p/α)."""
    return d / np.asarray(zeta, dtype=float)


# ------------------------------------------------------------------------------------------
# batched algorithm
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ADMMRun:
    """One run: a column of the batch."""

    mechanism: str  # admm | dvp | pvp
    rho: float
    penalty: float  # η, the ADMM penalty
    alpha: float  # per-node per-iteration budget (NaN for admm)
    rep: int
    own_unperturbed_in_dual: bool = False


@dataclass
class BatchResult:
    """What :func:`run_batch` records, for ``iterations`` (1-based, t + 1) × runs."""

    iterations: list[int]
    metrics: dict[str, np.ndarray]  # name -> (len(iterations), K)
    noise_norm: np.ndarray  # (len(iterations), K) mean over nodes of ‖ε‖ at that iteration
    alpha_prime: np.ndarray  # (K,) mean over nodes (DVP step; PVP: its final DVP step)
    phi: np.ndarray  # (K,)
    zeta: np.ndarray  # (K,) ζ of the run's regular releases (DVP: α′/2; PVP: eq. (19))
    phi_zero: np.ndarray  # (K,) bool: every node took the Φ = 0 case
    sensitivity: np.ndarray  # (K,) Δ of the regular releases (DVP 2, PVP Δ_p)
    released: list[np.ndarray] = field(default_factory=list)  # final released f_p, (d × K) per node
    newton_iterations: int = 0
    hessian_products: int = 0
    solver_flops: float = 0.0  # flops of the stacked solves' products (all groups of the call together)


Metrics = Callable[[list[np.ndarray]], dict[str, np.ndarray]]


@dataclass(frozen=True)
class Group:
    """One graph of a :func:`run_groups` call: its nodes, its runs and what to record of them."""

    nodes: Sequence[tuple[np.ndarray, np.ndarray]]  # (X_p, y_p) per node, float64, labels ±1
    topology: str  # ring | complete
    runs: Sequence[ADMMRun]  # column k is runs[k]
    rng_for: Callable[[ADMMRun], np.random.Generator]  # a run's noise generator (its identity only)
    metrics: Metrics  # released iterates (d × K per node) -> named (K,) arrays
    record: Sequence[int]  # iterations (1..T) at which ``metrics`` is evaluated (T always)


def run_batch(
    nodes: Sequence[tuple[np.ndarray, np.ndarray]],
    topology: str,
    runs: Sequence[ADMMRun],
    T: int,
    rng_for: Callable[[ADMMRun], np.random.Generator],
    metrics: Metrics,
    record: Sequence[int],
    C_R: float = 1.0,
    c1: float = C1_LOGISTIC,
    noise: bool = True,
    gtol: float = newton.GTOL,
) -> BatchResult:
    """Run every run of ``runs`` for T iterations on one graph: :func:`run_groups` with one group."""
    return run_groups([Group(nodes, topology, runs, rng_for, metrics, record)], T, C_R, c1, noise, gtol)[0]


def run_groups(
    groups: Sequence[Group],
    T: int,
    C_R: float = 1.0,
    c1: float = C1_LOGISTIC,
    noise: bool = True,
    gtol: float = newton.GTOL,
) -> list[BatchResult]:
    """Run every run of every group for T iterations (module docstring), all in lock-step.

    The groups are independent graphs (e.g. one partition per repetition); their runs only
    share the solver: at each iteration the primal steps of every node of every group are one
    stacked Newton-CG solve (:func:`mpdp.models.stacked_newton.solve`, nodes padded into buckets
    of similar size, the groups' columns padded to the widest group with trivial columns that
    are solved at once). A run's noise comes from its own generator, in node order, once per
    iteration, so its result does not depend on the other runs or groups of the call (up to
    the solver's tolerance ``gtol``).

    Args:
        groups: the graphs and their runs (:class:`Group`); all nodes have the same d.
        T: iterations T_ad (PVP's last one is its DVP step).
        noise: False switches the perturbation off (ε = 0, Φ = 0): DVP and PVP reduce to ADMM.
    """
    states = [_GroupState.start(g, T, C_R, c1) for g in groups]
    nodes = [(gi, p, node) for gi, g in enumerate(groups) for p, node in enumerate(g.nodes)]
    small = [(gi, p) for gi, p, (_, y) in nodes if len(y) < STACK_MAX_ROWS]
    large = [(gi, p) for gi, p, (_, y) in nodes if len(y) >= STACK_MAX_ROWS]
    stack = stacked_newton.Stack.of([groups[gi].nodes[p] for gi, p in small]) if small else None
    width = max(len(g.runs) for g in groups)
    d = groups[0].nodes[0][0].shape[1]
    # padding columns: s = 0, q = 1, b = 0 at θ = 0 is already their minimum (gradient 0)
    scale, quad = np.zeros((len(small), width)), np.ones((len(small), width))
    lin, init = np.zeros((len(small), d, width)), np.zeros((len(small), d, width))
    for t in range(T):
        problems = [st.primal_problem(t, T, noise, C_R) for st in states]
        theta = [np.empty_like(st.F) for st in states]
        for i, (gi, p) in enumerate(small):
            K = len(groups[gi].runs)
            scale[i, :K] = C_R / states[gi].B[p]
            quad[i, :K], lin[i, :, :K], init[i, :, :K] = problems[gi][0][p], problems[gi][1][p], states[gi].F[p]
        if stack is not None:
            res = stacked_newton.solve(stack, scale, quad, lin, init, gtol=gtol)
            for i, (gi, p) in enumerate(small):
                K = len(groups[gi].runs)
                theta[gi][p] = res.theta[i, :, :K]
                states[gi].count(res.iterations[i, :K], res.hessian_products, res.flops)
        for gi, p in large:
            X, y = groups[gi].nodes[p]
            one = newton.solve(X, y, C_R / states[gi].B[p], problems[gi][0][p], problems[gi][1][p],
                               init=states[gi].F[p], gtol=gtol)
            theta[gi][p] = one.theta
            states[gi].count(one.iterations, one.hessian_products, 0.0)
        for st, th in zip(states, theta, strict=True):
            st.update(t, T, noise, th)
    return [st.result(T, C_R) for st in states]


@dataclass
class _GroupState:
    """The iterates, duals and calibrations of one group's runs (arrays (P, d, K) per node)."""

    group: Group
    nbrs: list[list[int]]  # N_p, ascending
    deg: np.ndarray  # (P,)
    B: np.ndarray  # (P,) node sizes
    pen: np.ndarray  # (K,) η
    own_unpert: np.ndarray  # (K,)
    is_dvp: np.ndarray
    is_pvp: np.ndarray
    kap: np.ndarray  # (P, K)
    dvp_cal: list[DVPCalibration]
    pvp_z: np.ndarray  # (P, K)
    gens: list[np.random.Generator | None]
    F: np.ndarray  # own unperturbed primal f_p(t)
    R: np.ndarray  # released primal f̃_p(t)
    lam: np.ndarray
    rec_iters: list[int]
    out: dict[str, list[np.ndarray]]
    noise_rec: np.ndarray
    eps: np.ndarray | None = None
    newton_its: int = 0
    products: int = 0
    flops: float = 0.0

    @classmethod
    def start(cls, g: Group, T: int, C_R: float, c1: float) -> _GroupState:
        P = len(g.nodes)
        nbrs = neighbours(g.topology, P)
        d = g.nodes[0][0].shape[1]
        K = len(g.runs)
        mech = np.array([r.mechanism for r in g.runs])
        unknown = sorted(set(mech) - set(MECHANISMS))
        if unknown:
            raise ValueError(f"unknown ADMM mechanisms {unknown}; known: {MECHANISMS}")
        rho = np.array([r.rho for r in g.runs], dtype=float)
        pen = np.array([r.penalty for r in g.runs], dtype=float)
        alpha = np.array([r.alpha if r.mechanism != "admm" else np.nan for r in g.runs], dtype=float)
        is_dvp, is_pvp = mech == "dvp", mech == "pvp"
        private = is_dvp | is_pvp
        if np.any(private & ~(alpha > 0)):
            raise ValueError("DVP/PVP runs need alpha > 0")
        B = np.array([len(y) for _, y in g.nodes], dtype=float)
        deg = np.array([len(n) for n in nbrs])
        kap = np.stack([kappa(rho, P, pen, deg[p]) for p in range(P)])  # (P, K)
        a_safe = np.where(private, alpha, 1.0)
        record_set = set(int(t) for t in g.record if 1 <= t <= T) | {T}
        rec_iters = sorted(record_set)
        return cls(
            group=g, nbrs=nbrs, deg=deg, B=B, pen=pen,
            own_unpert=np.array([r.own_unperturbed_in_dual for r in g.runs]), is_dvp=is_dvp, is_pvp=is_pvp,
            kap=kap, dvp_cal=[dvp_calibration(a_safe, B[p], kap[p], C_R, c1) for p in range(P)],
            pvp_z=np.stack([pvp_zeta(a_safe, B[p], kap[p], C_R) for p in range(P)]),
            gens=[g.rng_for(r) if r.mechanism != "admm" else None for r in g.runs],
            F=np.zeros((P, d, K)), R=np.zeros((P, d, K)), lam=np.zeros((P, d, K)), rec_iters=rec_iters,
            out={}, noise_rec=np.full((len(rec_iters), K), np.nan),
        )

    def _now(self, t: int, T: int) -> tuple[np.ndarray, np.ndarray]:
        final = t == T - 1
        return self.is_dvp | (self.is_pvp & final), self.is_pvp & ~final

    def primal_problem(self, t: int, T: int, noise: bool, C_R: float) -> tuple[np.ndarray, np.ndarray]:
        """Iteration t's node subproblems (M8–M10 primal steps): q (P, K) and b (P, d, K).

        Node by node in the order of the sums of spec M8 (neighbours in ascending order), so a
        node solved alone gets the very operands it got before issue 45.
        """
        P, d, K = self.F.shape
        dvp_now, pvp_now = self._now(t, T)
        if noise:
            self.eps = _draw(self.gens, dvp_now | pvp_now, self.dvp_cal, self.pvp_z, dvp_now, d, P)
        q = np.empty((P, K))
        b = np.empty((P, d, K))
        for p in range(P):
            q[p] = self.kap[p]
            b[p] = 2.0 * self.lam[p] - self.pen * (self.deg[p] * self.F[p] + sum(self.R[j] for j in self.nbrs[p]))
            if noise:
                q[p] = q[p] + np.where(dvp_now, self.dvp_cal[p].phi, 0.0)
                b[p] = b[p] + np.where(dvp_now, C_R / self.B[p], 0.0) * self.eps[p]  # 2μ = 2λ + (C^R/B_p) ε
        return q, b

    def count(self, iterations: np.ndarray, products: int, flops: float) -> None:
        """Add one node solve's Newton iterations (its slowest column) and products."""
        self.newton_its += int(iterations.max()) if iterations.size else 0
        self.products += products
        self.flops += flops

    def update(self, t: int, T: int, noise: bool, theta: np.ndarray) -> None:
        """Take the minimisers (P, d, K); release, dual update (11)/(16)/(20), record."""
        P = len(theta)
        dvp_now, pvp_now = self._now(t, T)
        self.F = theta
        self.R = self.F + (np.where(pvp_now, 1.0, 0.0) * self.eps if noise else 0.0)
        own = np.where(self.own_unpert, self.F, self.R)
        self.lam = np.stack([self.lam[p] + 0.5 * self.pen * sum(own[p] - self.R[j] for j in self.nbrs[p])
                             for p in range(P)])
        if t + 1 in self.rec_iters:
            i = self.rec_iters.index(t + 1)
            for name, value in self.group.metrics(list(self.R)).items():
                self.out.setdefault(name, []).append(np.asarray(value, dtype=float))
            if noise:
                norms = np.stack([np.linalg.norm(self.eps[p], axis=0) for p in range(P)]).mean(axis=0)
                self.noise_rec[i] = np.where(dvp_now | pvp_now, norms, np.nan)

    def result(self, T: int, C_R: float) -> BatchResult:
        P, _, K = self.F.shape
        is_pvp, dvp_cal = self.is_pvp, self.dvp_cal
        final_dvp = self.is_dvp | is_pvp
        mean_over = lambda arrs: np.mean(np.stack(arrs), axis=0)  # noqa: E731
        ap = mean_over([c.alpha_prime for c in dvp_cal])
        phi = mean_over([c.phi for c in dvp_cal])
        zeta = np.where(is_pvp, self.pvp_z.mean(axis=0), mean_over([c.zeta for c in dvp_cal]))
        phi_zero = np.all(np.stack([c.phi_zero for c in dvp_cal]), axis=0)
        sens = np.where(is_pvp, mean_over([pvp_sensitivity(self.B[p], self.kap[p], C_R) for p in range(P)]), 2.0)
        nan = np.full(K, np.nan)
        return BatchResult(
            iterations=self.rec_iters,
            metrics={k: np.stack(v) for k, v in self.out.items()},
            noise_norm=self.noise_rec,
            alpha_prime=np.where(final_dvp, ap, nan),
            phi=np.where(final_dvp, phi, nan),
            zeta=np.where(final_dvp, zeta, nan),
            phi_zero=np.where(final_dvp, phi_zero, False),
            sensitivity=np.where(final_dvp, sens, nan),
            released=list(self.R),
            newton_iterations=self.newton_its,
            hessian_products=self.products,
            solver_flops=self.flops,
        )


def _draw(
    gens: list[np.random.Generator | None],
    needs: np.ndarray,
    dvp_cal: list[DVPCalibration],
    pvp_z: np.ndarray,
    dvp_now: np.ndarray,
    d: int,
    P: int,
) -> np.ndarray:
    """ε_p(t+1) for every node, (P, d, K): N-L2 with ζ of DVP or PVP, zero where not needed.

    Each run draws its P nodes' noise from its own generator, in node order, once per
    iteration, so its noise does not depend on the other runs of the batch.
    """
    K = len(gens)
    eps = np.zeros((P, d, K))
    for k in np.flatnonzero(needs):
        zeta = np.array([dvp_cal[p].zeta[k] if dvp_now[k] else pvp_z[p, k] for p in range(P)])
        eps[:, :, k] = l2_laplace(gens[k], zeta, d, size=P)
    return eps

