"""Audit adapters: how each mechanism family is run under attack (spec audit.md A1–A3).

An adapter takes one audit *setting* (a mapping from the config section ``audit.settings``)
and returns one row of the audit table. It reuses the mechanism's own code — calibration,
samplers and the batched engine — and adds only the attack: the worst-case neighbouring
inputs, the score and the bound. Two adapters exist on main today:

- :class:`GradientCanaryAdapter` (``one_run``, spec A2): the gradient-perturbation family
  (:mod:`mpdp.mechanisms.gradient_perturbation` + :func:`mpdp.engine.gd.noisy_gd`) with white-box
  Dirac gradient canaries on extra coordinates (see the class for the data).
- :class:`L2OutputPerturbationAdapter` (``many_draws``, spec A1, A3): an N-L2 output-
  perturbation release f(D) + η (:func:`mpdp.privacy.samplers.l2_laplace`) of one exact
  minimiser (:func:`mpdp.models.logistic.solve_optimum`), the noise redrawn N times per side.

New families (ADMM DVP/PVP, voting M11/M12) plug in with one class implementing
:class:`Adapter` and one :func:`mpdp.audit.registry.register` call; see that module.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from mpdp import mechanisms
from mpdp.audit.bugs import bug_name, planted
from mpdp.audit.gdp import final_model_factor, gaussian_epsilon, gdp_epsilon_estimate
from mpdp.audit.many_draws import many_draws_audit
from mpdp.audit.one_run import DEFAULT_K_FRACTIONS, one_run_audit
from mpdp.data.partition import PartitionSet, two_group_records, two_group_sizes
from mpdp.data.prepare import load as load_processed
from mpdp.errors import ConfigError
from mpdp.mechanisms import RunSpec
from mpdp.mechanisms.gradient_batch import Canaries, train_batch
from mpdp.models.logistic import hessian, solve_optimum
from mpdp.privacy.samplers import l2_laplace, l2_laplace_beta
from mpdp.seeding import rng
from mpdp.studies.benchmark import calibration as benchmark_calibration

#: many-draws scores are rounded to this fraction of the claimed sensitivity
SCORE_GRID = 1e-9


@dataclass(frozen=True)
class AuditContext:
    """What every adapter needs besides its setting (from the config section ``audit``)."""

    root_seed: int
    beta: float  # failure probability of the lower bound
    delta: float  # δ of the Gaussian mechanisms (spec A0: benchmark.delta)
    #: noise std multiplier of planted-bug rows, per audit method (spec A4: one-run needs 1/4)
    bug_noise_factor: Mapping[str, float]
    n_train: Mapping[str, int]  # training records per data set (from the data cards)
    one_run: Mapping[str, Any]  # defaults: canaries, T, eta, lambda, G, k_fractions
    many_draws: Mapping[str, Any]  # defaults: draws, f_sel
    processed: Mapping[str, str] = field(default_factory=dict)  # data set -> data/processed/<id>


class Adapter(Protocol):
    """One mechanism family under audit."""

    id: str  # the ``mechanism`` value of the setting and of the table row
    method: str  # many_draws | one_run
    privacy_unit: str  # record | party (spec A0, A6.11)

    def run(self, setting: Mapping[str, Any], ctx: AuditContext) -> dict[str, Any]:
        """Audit one setting; return a row (see :data:`mpdp.audit.table.COLUMNS`)."""
        ...


def setting_label(setting: Mapping[str, Any]) -> str:
    """A short readable id of a setting, e.g. ``breast_cancer ε=1 ma16 m=8 u=3``."""
    parts = []
    for key in ("dataset", "pair"):
        if setting.get(key):
            parts.append(str(setting[key]))
    parts.append(f"ε={setting['epsilon']:g}")
    for key in ("accountant",):
        if setting.get(key):
            parts.append(str(setting[key]))
    names = {"lambda": "λ", "parties": "M", "kappa": "κ", "rho": "ρ", "penalty": "η"}
    for key in ("m", "u", "lambda", "n", "parties", "T", "kappa", "rho", "penalty", "canaries"):
        if setting.get(key) is not None:
            parts.append(f"{names.get(key, key)}={setting[key]:g}")
    if setting.get("placement") == "replace":
        parts.append("replace")
    if setting.get("method") == "canary_draws":
        parts.append(f"canary draws N={setting.get('draws', 'default')}")
    return " ".join(parts)


def noise_factor(setting: Mapping[str, Any], ctx: AuditContext, method: str) -> float:
    """The planted bug's noise multiplier for ``method`` (1 for an honest setting)."""
    with planted(setting, method, float(ctx.bug_noise_factor[method])) as factor:
        return factor


def _n_train(setting: Mapping[str, Any], ctx: AuditContext) -> int:
    dataset = setting.get("dataset")
    if dataset not in ctx.n_train:
        raise ConfigError(
            f"audit setting {setting_label(setting)!r}: data set {dataset!r} is not available "
            f"(available: {sorted(ctx.n_train)})"
        )
    return int(ctx.n_train[dataset])


@dataclass(frozen=True)
class GradientCanaryAdapter:
    """One-run audit of a gradient-perturbation mechanism through its shipped trainer (spec A2).

    The run goes through the entry points that produce the tables: its :class:`RunSpec` is the
    WD-DP study's (``source="wddp"``: the setting's ``accountant`` picks the reading — ``ma16``
    the paper's literal σ mapping, every party calibrated to the total n; ``exact_per_party``
    the equal-privacy reading, σ_j from n_j) or the cross-paper benchmark's
    (``source="benchmark"``: :func:`~mpdp.studies.benchmark.calibration.gradient_runspec`, ledger
    :func:`~mpdp.studies.benchmark.calibration.gradient_ledger`), and it is trained by
    :func:`mpdp.mechanisms.gradient_batch.train_batch` with its canary hook
    (:class:`~mpdp.mechanisms.gradient_batch.Canaries`). The calibration, the per-party σ mapping, the
    record and aggregation weights are therefore the shipped ones; the audit computes no σ.

    Canaries: ``c`` records of one party, each with the linear loss ``−S_i G θ_{p+i}`` on its own
    extra coordinate, ``S_i = ±1`` with probability ½ from a dedicated seed (a replace-one
    change of gradient gap 2G). They join the smallest party of the two-group partition
    (spec E2.2) of the setting's data set (``placement: append``: n_j grows by c, spec A2
    "n = n_real + m"; ``placement: replace``: the canaries *are* that party's records,
    c = n_j). The real records enter through their number: they are zero on the canary
    coordinates, which evolve independently of them, so the audit trains them as feature-less
    rows (one zero feature) and reads the canary coordinates. In the literal local mode
    (M3.1, M4.1) the released object audited is the canary party's own local model, which
    leaves the party (spec E10 transcript).

    For the simple average (Jayaraman) use ``placement: replace``: appended canaries make
    their party larger than n_(1), so their weight 1/(m n_j) falls below the calibration's
    1/(m n_(1)) — still valid, but the attack loses power.

    Score: ``Y_i = θ_T[p+i]/η`` (canary coordinates start at 0); with λ > 0 the final-model
    score loses the factor of spec A5 row 12, which the ceiling ε_up includes. With
    ``method: canary_draws`` the one-run bound is replaced by :func:`canary_draws_row` (many
    independent trainings, many draws of one canary coordinate, spec A1).
    """

    id: str
    mechanism: str  # id in mpdp.mechanisms.REGISTRY (study) or in benchmark.calibration.GRADIENT
    mode: str  # central | per_round | local_then_aggregate
    source: str = "wddp"  # wddp (the WD-DP study's runs) | benchmark (spec E10's runs)
    method: str = "one_run"
    privacy_unit: str = "record"

    def party_sizes(self, setting: Mapping[str, Any], ctx: AuditContext) -> tuple[np.ndarray, int, int]:
        """(sizes with canaries, canary party index, number of canaries)."""
        n_real = _n_train(setting, ctx)
        canaries = int(setting.get("canaries", ctx.one_run["canaries"]))
        if self.mode == "central" and self.source == "wddp":
            sizes = np.array([n_real], dtype=np.int64)
        else:
            if setting.get("m") is None or setting.get("u") is None:
                raise ConfigError(f"audit setting {setting_label(setting)!r} needs m and u")
            m, u = int(setting["m"]), int(setting["u"])
            if n_real < two_group_records(m, u):
                raise ConfigError(
                    f"audit setting {setting_label(setting)!r} (config key 'audit.settings', its m): "
                    f"m = {m} parties with u = {u} need at least {two_group_records(m, u)} training records, "
                    f"{setting['dataset']} has {n_real}; lower its m or u, or raise max_records"
                )
            sizes = two_group_sizes(n_real, m, u)
        party = int(np.argmin(sizes))
        if setting.get("placement", "append") == "replace":
            canaries = int(sizes[party])
        else:
            sizes = sizes.copy()
            sizes[party] += canaries
        return sizes, party, canaries

    def runspec(self, setting: Mapping[str, Any], ctx: AuditContext, opts: Mapping[str, Any]) -> RunSpec:
        """The run as the study or the benchmark builds it (its own noise stream per setting)."""
        tag = f"audit:{self.id}:{setting_label(setting)}:{bug_name(setting)}"
        if self.source == "benchmark":
            return benchmark_calibration.gradient_runspec(
                self.mechanism, str(setting["dataset"]), float(setting["epsilon"]), ctx.delta,
                int(opts["T"]), float(opts["eta"]), float(opts["lambda"]), float(opts["G"]),
                int(setting["m"]), int(setting["u"]), rep=0, experiment=tag)
        if setting.get("accountant") is None:
            raise ConfigError(f"audit setting {setting_label(setting)!r} needs an accountant")
        return RunSpec(
            dataset=str(setting["dataset"]), experiment=tag, mechanism=self.mechanism,
            mode=self.mode, accountant=str(setting["accountant"]), epsilon=float(setting["epsilon"]),
            delta=ctx.delta, rep=0, eta=float(opts["eta"]), T=int(opts["T"]), lam=float(opts["lambda"]),
            G=float(opts["G"]), m=setting.get("m"), u=setting.get("u"),
        )

    def train(self, setting: Mapping[str, Any], ctx: AuditContext, trainings: int = 1) -> CanaryRun:
        """Train the run with canaries through the shipped trainer (:class:`CanaryRun`).

        ``trainings`` independent trainings (the run's noise-seed index 0, 1, …, batched as
        columns of one :func:`train_batch` call, as cross-validation draws are) of the same
        canaries; their scores are concatenated. One training: signs i.i.d. ±1 (spec A2);
        several: a random balanced assignment (as many +1 as −1), for the many-draws audit.
        """
        opts = {**ctx.one_run, **{k: v for k, v in setting.items() if v is not None}}
        sizes, party, c = self.party_sizes(setting, ctx)
        base = self.runspec(setting, ctx, opts)
        runs = [replace(base, seed=i) for i in range(trainings)]
        gen = rng(ctx.root_seed, "audit", "signs", self.id, setting_label(setting), bug_name(setting))
        if trainings == 1:
            signs = gen.choice(np.array([-1, 1]), size=c)
        else:
            signs = gen.permutation(np.resize(np.array([1, -1]), c))
        n = int(sizes.sum())
        partition = PartitionSet(order=np.arange(n)[None, :], sizes=sizes[None, :])
        rows = partition.party_indices(0)[party][-c:]  # append: the party's last c records
        method = str(setting.get("method", self.method))
        with planted(setting, method, float(ctx.bug_noise_factor[method])) as noise_scale:
            batch = train_batch(runs, np.zeros((n, 1)), np.ones(n), partition, {0: np.zeros(1)},
                                ctx.root_seed, dtype="float64", noise_scale=noise_scale,
                                canaries=Canaries(rows=rows, signs=signs, G=float(opts["G"])))
        trace = batch.canary
        col = party if self.mode == "local_then_aggregate" else 0
        sigma = np.array([s[col] for s in trace.sigma])
        weights = np.concatenate([w[:, col] for w in trace.weight])
        if not (np.allclose(sigma, sigma[0], rtol=1e-12) and np.allclose(weights, weights[0], rtol=1e-12)):
            raise ValueError("the audited columns must share their σ and canary weight")
        if self.source == "benchmark":
            eps_ledger = benchmark_calibration.gradient_ledger(base, sizes).eps_total
        else:
            eps_ledger = batch.calibrations[0].eps_accounted
        honest = mechanisms.get(base.mechanism).calibrate(base, sizes)
        return CanaryRun(
            run=base, sizes=sizes, party=party, signs=np.tile(signs, trainings),
            scores=np.concatenate([theta[:, col] for theta in trace.theta]) / base.eta,
            sigma=float(sigma[0]), weight=float(weights[0]), eps_ledger=float(eps_ledger),
            scope=honest.eps_accounted_scope, accountant=honest.accountant,
            sigma_honest=honest.party_sigma(party if base.mode == "local_then_aggregate" else None),
            source=self.source, trainings=trainings,
        )

    def run(self, setting: Mapping[str, Any], ctx: AuditContext) -> dict[str, Any]:
        start = time.perf_counter()
        method = str(setting.get("method", self.method))
        if method == "canary_draws":
            return canary_draws_row(self, setting, ctx) | {"seconds": time.perf_counter() - start}
        cr = self.train(setting, ctx)
        fractions = tuple(setting.get("k_fractions") or ctx.one_run.get("k_fractions", DEFAULT_K_FRACTIONS))
        result = one_run_audit(cr.scores, cr.signs, ctx.beta, ctx.delta, fractions)
        return cr.row(self, setting, ctx, method) | {
            "eps_lower": result.eps_lower, "k": result.k, "guesses": result.guesses,
            "correct": result.correct, "seconds": time.perf_counter() - start,
        }


def canary_draws_row(adapter: GradientCanaryAdapter, setting: Mapping[str, Any], ctx: AuditContext
                     ) -> dict[str, Any]:
    """Many-draws audit (spec A1) of one canary coordinate of the whole transcript.

    Each canary coordinate of a training is an independent draw of the released model's
    coordinate under S_i = +1 (D) or −1 (D′): given the signs, coordinates are independent and,
    with one party's canaries sharing σ and weight, identically distributed per sign. So
    ``trainings = ⌈2N/c⌉`` independent trainings through the shipped trainer give N draws per
    side; the score Y = θ_T[p+i]/η is the likelihood ratio's monotone statistic (Gaussian, equal
    variances); threshold on a selection split, Clopper–Pearson on the rest, δ of the Gaussian
    mechanisms (:func:`mpdp.audit.many_draws.many_draws_audit`). Cheap because only the canary
    coordinates are simulated: N = 10⁶ per side costs 2·10⁶·T normal draws.
    """
    draws = int(setting.get("draws", ctx.many_draws["draws"]))
    _, _, c = adapter.party_sizes(setting, ctx)
    trainings = max(1, math.ceil(2 * draws / c))
    cr = adapter.train(setting, ctx, trainings)
    label, bug = setting_label(setting), bug_name(setting)
    split = rng(ctx.root_seed, "audit", "canary_draws_split", adapter.id, label, bug)
    result = many_draws_audit(cr.scores[cr.signs == 1], cr.scores[cr.signs == -1], split, ctx.beta,
                              ctx.delta, float(ctx.many_draws["f_sel"]))
    return cr.row(adapter, setting, ctx, "canary_draws") | {
        "eps_lower": result.eps_lower, "trials": result.n + result.n_selection, "tp": result.tp,
        "fp": result.fp, "threshold": result.threshold,
    }


@dataclass(frozen=True)
class CanaryRun:
    """One canary training through the shipped trainer (:meth:`GradientCanaryAdapter.train`)."""

    run: RunSpec
    sizes: np.ndarray  # party sizes with the canaries
    party: int  # the canaries' party
    signs: np.ndarray  # S_i
    scores: np.ndarray  # Y_i = θ_T[p+i]/η of the released model (the party's own in literal mode)
    sigma: float  # noise std of that model's column, as the trainer used it
    weight: float  # weight of one canary in that column's gradient, as the trainer used it
    eps_ledger: float  # ε of the ledger that produces the tables (study or benchmark)
    scope: str
    accountant: str
    sigma_honest: float  # σ of the shipped calibration for that column (without planted bug)
    source: str
    trainings: int  # independent trainings whose canary scores are concatenated

    @property
    def mu(self) -> float:
        """μ of one canary's pair under the noise used (spec A2 score law, A5 row 12)."""
        r = self.run
        return 2 * self.weight * r.G * math.sqrt(r.T) / self.sigma * final_model_factor(r.eta, r.lam, r.T)

    def row(self, adapter: GradientCanaryAdapter, setting: Mapping[str, Any], ctx: AuditContext,
            method: str) -> dict[str, Any]:
        """The audit-table columns common to the one-run and the canary many-draws audits."""
        c, sizes = self.scores.size // self.trainings, self.sizes
        times = f"{self.trainings} trainings × " if self.trainings > 1 else ""
        return {
            "mechanism": adapter.id, "setting": setting_label(setting), "method": method,
            "dataset": str(setting["dataset"]), "privacy_unit": adapter.privacy_unit,
            "planted_bug": bug_name(setting) is not None, "bug": bug_name(setting),
            "noise_factor": self.sigma / self.sigma_honest,
            "eps_claimed": float(setting["epsilon"]), "eps_accounted": self.eps_ledger,
            "eps_accounted_scope": self.scope, "accountant": self.accountant,
            "delta": ctx.delta, "beta": ctx.beta,
            "eps_up": gaussian_epsilon(self.mu, ctx.delta), "mu": self.mu,
            "eps_gdp": gdp_epsilon_estimate(self.scores, self.signs, ctx.delta),
            "noise": self.sigma, "T": self.run.T, "trials": self.scores.size,
            "n_min": int(sizes.min()), "n": int(sizes.sum()),
            "data": f"{setting['dataset']} sizes (n = {int(sizes.sum())}, {times}{c} canaries in a "
            f"party of {int(sizes[self.party])}); {self.source} run, shipped trainer",
        }


def record_pair(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Spec A3 record-level pair, p = 1: ``(X, y_D, y_D')``.

    n − 1 records with x = 0 (no gradient) and one audited record x = 1, with y = +1 in D and
    y = −1 in D' (a replace-one change).
    """
    X = np.zeros((n, 1))
    X[-1, 0] = 1.0
    y_d = np.ones(n)
    y_p = y_d.copy()
    y_p[-1] = -1.0
    return X, y_d, y_p


@dataclass(frozen=True)
class L2OutputPerturbationAdapter:
    """Many-draws audit of an N-L2 output-perturbation release (spec A1, A3; M7 output).

    ``pair: noise_stage``: the noise routine alone on a = Δe₁, a' = 0 (p = 1), so the exact ε
    of the implemented noise equals the claimed ε (the tight check, spec A3).
    ``pair: record``: the worst-case record pair of spec A3 (synthetic by construction, p = 1,
    ``n`` records, regulariser ``lambda``): the exact minimisers ±c of D and D' are computed
    once with :func:`solve_optimum`, claimed sensitivity Δ = 2G/(nλ) (C4), d = 2c < Δ/2.
    ``pair: real_record``: the real training set of ``dataset`` (all p features) and the same
    set with one label flipped (replace-one); the flipped record is the one whose flip moves
    the minimiser most to first order, argmax_i ‖H⁻¹x_i‖ with H the Hessian at θ* [REC]. Both
    exact minimisers are computed once; N-L2 is loose in p > 1 dimensions (spec A4).
    The release is a + η with η ~ N-L2 of rate b = ε/Δ (divided by the planted-bug factor),
    drawn N times per side from independent streams; score ‖o − a'‖ − ‖o − a‖ (the
    likelihood ratio, spec A1 step 1). Pure ε-DP: δ = 0 (spec A0); ε_up = b·d.
    """

    id: str = "nl2_output"
    method: str = "many_draws"
    privacy_unit: str = "record"

    def pair(
        self, setting: Mapping[str, Any], ctx: AuditContext | None = None
    ) -> tuple[np.ndarray, np.ndarray, float, str]:
        """(a, a', claimed sensitivity Δ, data note)."""
        G = 1.0
        kind = setting.get("pair", "noise_stage")
        if kind == "noise_stage":
            delta_2 = 1.0
            return np.array([delta_2]), np.zeros(1), delta_2, "noise stage alone: a = Δe₁, a' = 0"
        if kind == "record":
            n, lam = int(setting["n"]), float(setting["lambda"])
            X, y_d, y_p = record_pair(n)
            a = solve_optimum(X, y_d, lam)
            a_prime = solve_optimum(X, y_p, lam)
            return a, a_prime, 2 * G / (n * lam), f"spec A3 record pair (synthetic, p = 1, n = {n})"
        if kind == "real_record":
            return self._real_pair(setting, ctx)
        raise ConfigError(
            f"audit setting: unknown N-L2 pair {kind!r} (noise_stage | record | real_record)"
        )

    @staticmethod
    def _real_pair(
        setting: Mapping[str, Any], ctx: AuditContext | None
    ) -> tuple[np.ndarray, np.ndarray, float, str]:
        dataset = setting.get("dataset")
        if ctx is None or dataset not in ctx.processed:
            raise ConfigError(
                f"audit setting {setting_label(setting)!r}: pair real_record needs an available "
                f"data set (got {dataset!r})"
            )
        data = load_processed(Path(ctx.processed[dataset]))
        X = np.asarray(data.X_train, dtype=np.float64)
        y = np.asarray(data.y_train, dtype=np.float64)
        lam = float(setting["lambda"])
        a = solve_optimum(X, y, lam)
        moves = np.linalg.norm(np.linalg.solve(hessian(a, X, y, lam), X.T), axis=0)
        i = int(np.argmax(moves))
        y_prime = y.copy()
        y_prime[i] = -y_prime[i]
        a_prime = solve_optimum(X, y_prime, lam, theta0=a)
        n, p = X.shape
        note = f"{dataset} training set (n = {n}, p = {p}), label of record {i} flipped"
        return a, a_prime, 2.0 / (n * lam), note

    def run(self, setting: Mapping[str, Any], ctx: AuditContext) -> dict[str, Any]:
        start = time.perf_counter()
        a, a_prime, sensitivity, note = self.pair(setting, ctx)
        epsilon = float(setting["epsilon"])
        row = nl2_audit_row(self.id, self.privacy_unit, setting, ctx, a, a_prime,
                            l2_laplace_beta(epsilon, sensitivity), sensitivity)
        return row | {"eps_accounted": epsilon, "eps_accounted_scope": "aggregate", "accountant": "pure",
                      "n": setting.get("n"), "data": note, "seconds": time.perf_counter() - start}


def nl2_audit_row(mechanism: str, privacy_unit: str, setting: Mapping[str, Any], ctx: AuditContext,
                  a: np.ndarray, a_prime: np.ndarray, rate: float, sensitivity: float,
                  delta: float = 0.0) -> dict[str, Any]:
    """Many-draws audit (spec A1) of one N-L2 release ``a + η`` against ``a' + η``.

    ``delta``: the δ of the claim the row is compared with, used in the bound and recorded in
    the row's ``delta`` (0 for a single pure ε-DP release, spec A0; the benchmark's δ for
    one release of a transcript whose (ε, δ) comes from composing pure releases: DVP, PVP).

    ``rate`` is the N-L2 parameter b of the mechanism's calibration (divided here by the
    planted-bug factor); the noise is drawn N times per side from independent streams and the
    score is the likelihood ratio ‖o − a'‖ − ‖o − a‖ (spec A1 step 1). Pure ε-DP: δ = 0 (spec
    A0); the ceiling is ε_up = b·‖a − a'‖ (exact at δ = 0, an upper bound at δ > 0). Returns the audit columns common to every N-L2
    release; the caller adds the ledger (``eps_accounted`` …) and the data note.
    """
    label = setting_label(setting)
    bug = bool(setting.get("planted_bug"))
    epsilon = float(setting["epsilon"])
    factor = noise_factor(setting, ctx, "many_draws")
    b = rate / factor
    draws = int(setting.get("draws", ctx.many_draws["draws"]))
    p = a.size
    out_d = a + l2_laplace(rng(ctx.root_seed, "audit", "draws_d", mechanism, label, bug), b, p, draws)
    out_p = a_prime + l2_laplace(rng(ctx.root_seed, "audit", "draws_d'", mechanism, label, bug), b, p, draws)

    def score(o: np.ndarray) -> np.ndarray:
        # rounded to 1e-9 Δ: the likelihood-ratio score is constant (±d) outside the
        # segment [a', a], but its floating-point rounding there depends on the output's
        # magnitude, which differs between D and D' (Mironov 2012); unrounded, a threshold
        # between two rounding levels tests the float lattice, not the calibration
        raw = np.linalg.norm(o - a_prime, axis=1) - np.linalg.norm(o - a, axis=1)
        return np.round(raw / (SCORE_GRID * sensitivity)) * (SCORE_GRID * sensitivity)

    result = many_draws_audit(
        score(out_d), score(out_p), rng(ctx.root_seed, "audit", "split", mechanism, label, bug),
        ctx.beta, delta, float(ctx.many_draws["f_sel"]),
    )
    d = float(np.linalg.norm(a - a_prime))
    return {
        "mechanism": mechanism, "setting": label, "method": "many_draws",
        "dataset": setting.get("dataset"), "privacy_unit": privacy_unit,
        "planted_bug": bug, "bug": bug_name(setting), "noise_factor": factor, "eps_claimed": epsilon,
        "delta": delta, "beta": ctx.beta, "eps_lower": result.eps_lower,
        "eps_up": b * d, "mu": None, "eps_gdp": None, "noise": 1.0 / b, "T": 1,
        "trials": draws, "k": None, "guesses": None, "correct": None,
        "tp": result.tp, "fp": result.fp, "threshold": result.threshold, "n_min": None,
    }
