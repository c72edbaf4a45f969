"""Training of the ADMM study (spec E4): η tuning, final runs, result rows.

One job per topology. All runs of a phase, every mechanism included, are the columns of one
call of :func:`mpdp.mechanisms.admm.run_groups`, one group per case
(:mod:`mpdp.studies.admm.cases`: the fixed split's one case, or one per repetition under
``split.per_repetition``), so products over a node's X are as fat as its case allows:

1. **Tuning** [S-001 "optimal values … for Algorithm 1, 2 and 3"; grids REC, E4] of the ADMM
   penalty η on ``penalty_grid`` at the fixed ρ = ``admm.rho`` [REC] and the one α
   ``tune_alpha`` [REC], by the final training loss (E4's primary metric), in every case on
   that case's own nodes (per repetition: repetition r's η is chosen on r's training records
   only, issue 60). ρ is not tuned: the paper's criterion, the training loss without the
   regulariser, falls monotonically as ρ falls, so the data never choose it (it landed on the
   floor of every grid; issue 33 §4). DVP and PVP stand on equal footing
   (:mod:`mpdp.studies.admm.footing`): one shared η, or each its own only where its winner is
   the same in ``tune_draws`` independent tuning-noise draws. Non-private ADMM (the paper's
   control) takes its own best η. The tuning runs draw their noise from tuning streams
   (:func:`mpdp.seeding.tuning_key`), disjoint from every evaluated repetition's (and, per
   repetition, from every other repetition's tuning). Non-private ADMM is deterministic: one
   run per η and case (:func:`tune`).
2. **Final runs** at each case's chosen (ρ, η) for its repetitions, recording the training
   loss (on the case's nodes), the MER (on the case's test records) and the noise actually
   drawn every ``record_every`` iterations (and at T), with the ε each release really gives
   given the history (PVP: spec I-20) and its composition; plus, per case, non-private ADMM at
   its own η and the non-private references ``admm_ref`` at the private mechanisms' own (ρ, η)
   (:func:`reference_runs`), so that a statistic net of the reference measures the noise only,
   and the centralised optimum L(θ*) on the case's nodes.

Noise streams of evaluated runs are keyed by the run's identity (topology, mechanism, α, ρ, η,
repetition), so a run's result does not depend on the batch.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mpdp import io, results, seeding
from mpdp.data import splits
from mpdp.data.prepare import Processed
from mpdp.data.prepare import load as load_processed
from mpdp.mechanisms import admm as zz
from mpdp.models.logistic import solve_optimum
from mpdp.privacy.pure_dp import composed_pure_epsilon, pld_or_basic
from mpdp.studies.admm import footing
from mpdp.studies.admm.cases import Case, StudyData, cases
from mpdp.studies.admm.footing import PRIVATE
from mpdp.studies.admm.schema import EXTRA_COLUMNS

#: the table's label of the non-private reference runs at a private mechanism's (ρ, η)
REFERENCE = "admm_ref"


def data_loss(nodes: list[tuple[np.ndarray, np.ndarray]], released: list[np.ndarray], C_R: float) -> np.ndarray:
    """Total empirical loss Σ_p (C^R/B_p) Σ_i l(y_i f_pᵀx_i) of the released iterates (spec E4), (K,)."""
    total = 0.0
    for (X, y), f in zip(nodes, released, strict=True):
        total = total + (C_R / len(y)) * np.logaddexp(0.0, -y[:, None] * (X @ f)).sum(axis=0)
    return np.asarray(total)


def mer(X_test: np.ndarray, y_test: np.ndarray, released: list[np.ndarray]) -> np.ndarray:
    """Test misclassification rate, sign(0) := +1, averaged over nodes (spec E4 "MER"), (K,)."""
    errors = [np.mean(np.where(X_test @ f >= 0, 1.0, -1.0) != y_test[:, None], axis=0) for f in released]
    return np.mean(errors, axis=0)


def centralised_optimum(data: StudyData, rho: float, C_R: float) -> tuple[np.ndarray, float]:
    """Minimiser f* of CR-ERM (eq. 1), J(f) = Σ_p (C^R/B_p) Σ_i l + ρ‖f‖²/2, and its data term.

    Solved by the shared L-BFGS reference (spec M1a, gtol 1e−10) on the pooled node data with
    record weights C^R/B_p.
    """
    X = np.concatenate([x for x, _ in data.nodes])
    y = np.concatenate([yy for _, yy in data.nodes])
    w = np.concatenate([np.full(len(yy), C_R / len(yy)) for _, yy in data.nodes])
    f = solve_optimum(X, y, rho, weights=w)
    return f, float(data_loss(data.nodes, [f[:, None]] * len(data.nodes), C_R)[0])


def noise_key(topology: str, run: zz.ADMMRun) -> tuple[Any, ...]:
    """The key of an evaluated run's noise stream: its identity (module docstring)."""
    return ("admm_noise", topology, run.mechanism, float(run.alpha), float(run.rho), float(run.penalty),
            int(run.rep))


def tuning_noise_key(topology: str, run: zz.ADMMRun, split_rep: int | None = None) -> tuple[Any, ...]:
    """The key of a tuning run's noise stream, disjoint from every :func:`noise_key`; per repetition
    (``split_rep`` of a :class:`~mpdp.studies.admm.cases.Case`) also from every other repetition's tuning."""
    key = noise_key(topology, run)
    return seeding.tuning_key(*key) if split_rep is None else seeding.tuning_key(*key, "split_rep", int(split_rep))


def _rng_for(root_seed: int, topology: str, tuning: bool = False, split_rep: int | None = None):  # noqa: ANN202
    def rng_for(run: zz.ADMMRun) -> np.random.Generator:
        key = tuning_noise_key(topology, run, split_rep) if tuning else noise_key(topology, run)
        return seeding.rng(root_seed, *key)
    return rng_for


def _final_losses(cfg: dict[str, Any], groups: list[Case], topology: str, runs: list[zz.ADMMRun],
                  log: logging.Logger, what: str) -> list[pd.DataFrame]:
    """Final training loss of every tuning run of every case (one call, one group per case): per case,
    one row per run (mechanism, penalty, rep, draw, loss)."""
    a = cfg["admm"]

    def loss_of(data: StudyData) -> zz.Metrics:
        return lambda rel: {"train_loss": data_loss(data.nodes, rel, a["C_R"])}

    start = time.perf_counter()
    res = zz.run_groups([zz.Group(c.data.nodes, topology, runs,
                                  _rng_for(cfg["root_seed"], topology, tuning=True, split_rep=c.split_rep),
                                  loss_of(c.data), [a["T"]]) for c in groups], a["T"], a["C_R"])
    log.info("%s: %d runs in %.1f s (%d Newton iterations, %d Hessian products)", what, len(runs) * len(groups),
             time.perf_counter() - start, sum(r.newton_iterations for r in res),
             sum(r.hessian_products for r in res))
    frames = []
    for r in res:
        loss = r.metrics["train_loss"][-1]
        if not np.all(np.isfinite(loss)):
            raise ValueError(f"{what}: non-finite training loss")
        frames.append(pd.DataFrame({"mechanism": [x.mechanism for x in runs], "rho": [x.rho for x in runs],
                                    "penalty": [x.penalty for x in runs], "rep": [x.rep for x in runs],
                                    "draw": [x.rep // a["tune_reps"] for x in runs], "loss": loss}))
    return frames


def tuning_runs(cfg: dict[str, Any]) -> list[zz.ADMMRun]:
    """Every tuning candidate at the fixed ρ = ``admm.rho`` [REC]: non-private ADMM once per η
    (deterministic); DVP and PVP at α = ``tune_alpha`` per η, ``tune_draws`` × ``tune_reps``
    repetitions (draw k holds repetitions k·tune_reps … (k+1)·tune_reps − 1: distinct tuning
    streams, so the draws are independent)."""
    a = cfg["admm"]
    rho, own = float(a["rho"]), a["own_unperturbed_in_dual"]
    runs = [zz.ADMMRun("admm", rho, float(e), math.nan, 0, own) for e in a["penalty_grid"]]
    reps = a["tune_draws"] * a["tune_reps"]
    for mech in PRIVATE:
        runs += [zz.ADMMRun(mech, rho, float(e), float(a["tune_alpha"]), rep, own)
                 for e in a["penalty_grid"] for rep in range(reps)]
    return runs


def tune(cfg: dict[str, Any], groups: list[Case], topology: str, log: logging.Logger) -> list[dict[str, dict[str, Any]]]:
    """Phase 1 (module docstring), per case on its own nodes: per mechanism, the η it runs at, its footing
    and every candidate's loss (one dict per case, in the order of ``groups``).

    ρ is fixed (``admm.rho`` [REC]), not tuned. Non-private ADMM takes the η of least final
    training loss (its own control, footing ``own``); DVP and PVP share one η or take stable
    per-method winners (:func:`mpdp.studies.admm.footing.select`), all at the one α ``tune_alpha``.
    """
    losses = _final_losses(cfg, groups, topology, tuning_runs(cfg), log, f"tuning {topology}")
    return [choose(cfg, frame, topology, log, "" if c.split_rep is None else f" (repetition {c.split_rep})")
            for c, frame in zip(groups, losses, strict=True)]


def choose(cfg: dict[str, Any], losses: pd.DataFrame, topology: str, log: logging.Logger,
           where: str = "") -> dict[str, dict[str, Any]]:
    """The choices of one case from its tuning runs' final losses (:func:`tune`)."""
    a = cfg["admm"]
    selection = footing.select(losses, a["footing"])
    log.info("%s%s: footing %s (shared eta = %g; per-draw winners %s)", topology, where, selection.footing,
             selection.shared_penalty, selection.draw_winners)
    mean = losses.groupby(["mechanism", "penalty"], sort=True)["loss"].mean()
    choices = {}
    for mech in zz.MECHANISMS:
        sel = mean.loc[mech]
        if mech == "admm":
            eta, record = float(sel.idxmin()), {"footing": "own"}
        else:
            eta, record = selection.penalty[mech], selection.record(mech)
        choices[mech] = {
            "mechanism": mech, "topology": topology, "rho": float(a["rho"]), "rho_source": "config",
            "penalty": eta, "tuning_alpha": math.nan if mech == "admm" else float(a["tune_alpha"]),
            "loss": float(sel.loc[eta]),
            "candidates": [{"rho": float(a["rho"]), "penalty": float(e),
                            "alpha": "nan" if mech == "admm" else repr(float(a["tune_alpha"])),
                            "mean_final_loss": float(v)} for e, v in sel.items()],
            "tune_reps": 1 if mech == "admm" else a["tune_reps"],
            "tune_draws": 1 if mech == "admm" else a["tune_draws"],
            **record,
        }
    return choices


@dataclass(frozen=True)
class Evaluated:
    """One evaluated run and how its rows are labelled in the table."""

    run: zz.ADMMRun
    label: str  # the table's mechanism: admm | dvp | pvp | admm_ref
    reference_for: str  # admm_ref: the private mechanisms (joined by +) at whose (ρ, η) it runs; else ""
    footing: str  # own (admm) | shared | per_method_stable


def reference_runs(cfg: dict[str, Any], choices: dict[str, dict[str, Any]], rep: int = 0) -> list[Evaluated]:
    """Non-private ADMM at the (ρ, η) of each compared private mechanism (label ``admm_ref``), as
    repetition ``rep`` (the case's first; per repetition: the repetition whose data it runs on).

    The reference of a private run must differ from it only by the noise, so that a statistic
    net of it (claim Z5) measures the noise and not convergence at another penalty: at an α
    where the noise is negligible the private run's loss equals its reference's. One run per
    distinct (ρ, η) (both mechanisms share it under the ``shared`` footing).
    """
    own = cfg["admm"]["own_unperturbed_in_dual"]
    by_setting: dict[tuple[float, float], list[str]] = {}
    for mech in PRIVATE:
        by_setting.setdefault((choices[mech]["rho"], choices[mech]["penalty"]), []).append(mech)
    return [Evaluated(zz.ADMMRun("admm", rho, eta, math.nan, rep, own), REFERENCE, "+".join(mechs),
                      choices[mechs[0]]["footing"])
            for (rho, eta), mechs in by_setting.items()]


def evaluated_runs(cfg: dict[str, Any], choices: dict[str, dict[str, Any]],
                   reps: tuple[int, ...] | None = None) -> list[Evaluated]:
    """Phase 2's runs of one case: its chosen (ρ, η) of each private mechanism × α grid × its repetitions
    ``reps`` (default: every repetition, the fixed split's one case), non-private ADMM once (deterministic:
    as the case's first repetition) and the non-private references at the private mechanisms' (ρ, η)
    (:func:`reference_runs`)."""
    a = cfg["admm"]
    reps = tuple(range(a["reps"])) if reps is None else tuple(reps)
    runs = []
    for mech in zz.MECHANISMS:
        alphas = [math.nan] if mech == "admm" else [float(x) for x in a["alpha_grid"]]
        own_reps = reps[:1] if mech == "admm" else reps
        choice = choices[mech]
        runs += [Evaluated(zz.ADMMRun(mech, choice["rho"], choice["penalty"], al, rep, a["own_unperturbed_in_dual"]),
                           mech, "", choice["footing"])
                 for al in alphas for rep in own_reps]
    return runs + reference_runs(cfg, choices, reps[0])


def final_runs(cfg: dict[str, Any], groups: list[Case], topology: str, choices: list[dict[str, dict[str, Any]]],
               log: logging.Logger) -> pd.DataFrame:
    """Phase 2: every case's runs (:func:`evaluated_runs`; one call, one group per case), one row per
    recorded iteration; each case's losses on its nodes, its MER on its test records, its L(θ*) on its
    nodes."""
    a = cfg["admm"]
    T, C_R = a["T"], a["C_R"]
    evaluated = [evaluated_runs(cfg, ch, c.reps) for c, ch in zip(groups, choices, strict=True)]
    record = list(range(a["record_every"], T + 1, a["record_every"]))

    def metrics_of(data: StudyData) -> zz.Metrics:
        return lambda rel: {"train_loss": data_loss(data.nodes, rel, C_R), "mer": mer(data.X_test, data.y_test, rel)}

    start = time.perf_counter()
    res = zz.run_groups([zz.Group(c.data.nodes, topology, [e.run for e in ev], _rng_for(cfg["root_seed"], topology),
                                  metrics_of(c.data), record) for c, ev in zip(groups, evaluated, strict=True)], T, C_R)
    seconds = time.perf_counter() - start
    n_runs = sum(len(ev) for ev in evaluated)
    log.info("final %s: %d runs in %.1f s (%d Newton iterations, %d Hessian products)", topology, n_runs,
             seconds, sum(r.newton_iterations for r in res), sum(r.hessian_products for r in res))
    frames = []
    for c, ev, ch, r in zip(groups, evaluated, choices, res, strict=True):
        runs = [e.run for e in ev]
        optimum = {rho: centralised_optimum(c.data, rho, C_R)[1] for rho in sorted({x.rho for x in runs})}
        frames.append(result_rows(cfg, c.data, topology, runs, r, optimum, ch, seconds / max(n_runs, 1), labels=ev))
    return frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class RealPrivacy:
    """The ε each release of a run really gives given the history (DVP: α, Theorem 1; PVP: the
    I-20 bound of :func:`mpdp.mechanisms.admm.pvp_transcript_epsilons`; ADMM: none).

    PVP's gain r is the worst node's (equal on the ring and the complete graph). The I-20 bound
    assumes the duals are public (eq. (20) from released values); with
    ``own_unperturbed_in_dual`` the dual is hidden too and no bound is derived: NaN.
    """

    gain: float  # r = ηV_p/κ_p (PVP), NaN otherwise
    epsilons: np.ndarray  # (T,) real ε of releases 1..T

    @classmethod
    def of(cls, run: zz.ADMMRun, topology: str, P: int, alpha_prime: float, T: int) -> RealPrivacy:
        if run.mechanism == "admm":
            return cls(math.nan, np.full(T, math.nan))
        if run.mechanism == "dvp":
            return cls(math.nan, np.full(T, float(run.alpha)))
        degree = max(len(n) for n in zz.neighbours(topology, P))
        gain = float(zz.pvp_hidden_gain(run.rho, P, run.penalty, degree))
        if run.own_unperturbed_in_dual:
            return cls(gain, np.full(T, math.nan))
        return cls(gain, zz.pvp_transcript_epsilons(float(run.alpha), alpha_prime, gain, T))

    def release(self, t: int) -> float:
        """Real ε of release t (1..T)."""
        return float(self.epsilons[t - 1])

    def cumulative(self, t: int) -> float:
        """Basic composition of releases 1..t."""
        return float(math.fsum(self.epsilons[:t])) if np.all(np.isfinite(self.epsilons[:t])) else math.nan


def result_rows(cfg: dict[str, Any], data: StudyData, topology: str, runs: list[zz.ADMMRun],
                res: zz.BatchResult, optimum: dict[float, float], choices: dict[str, dict[str, Any]],
                seconds: float, labels: list[Evaluated] | None = None) -> pd.DataFrame:
    """The table rows (common schema + :data:`EXTRA_COLUMNS`) of a finished batch.

    ``labels`` (one per run; default: the run's mechanism, its choice's footing) name the
    reference runs ``admm_ref`` with the mechanisms they are the reference for.
    """
    a = cfg["admm"]
    if labels is None:
        labels = [Evaluated(run, run.mechanism, "", choices[run.mechanism].get("footing", "")) for run in runs]
    delta = a["delta"]
    sizes = [len(y) for _, y in data.nodes]
    real = [RealPrivacy.of(run, topology, a["P"], float(res.alpha_prime[k]), a["T"]) for k, run in enumerate(runs)]
    rows = []
    for k, run in enumerate(runs):
        private = run.mechanism != "admm"
        label = labels[k]
        tuning_loss = math.nan if label.label == REFERENCE else choices[run.mechanism]["loss"]
        for i, t in enumerate(res.iterations):
            eps = {m: (composed_pure_epsilon(run.alpha, t, delta, m) if private else math.nan)
                   for m in ("basic", "exact")}
            eps["pld"], pld_fallback = pld_or_basic([run.alpha] * t, delta) if private else (math.nan, False)
            loss = float(res.metrics["train_loss"][i, k])
            rows.append({
                "dataset": a["dataset"], "experiment": "e4", "mechanism": label.label,
                "mode": "decentralised", "accountant": "pure_pld" if private else "none",
                "noise_sharing": "n/a", "m": a["P"], "epsilon": run.alpha, "delta": delta,
                "rep": run.rep, "eta": math.nan,
                "eta_source": "reference" if label.label == REFERENCE else "tuned", "T": a["T"],
                "lambda": run.rho, "G": 1.0, "dtype": "float64", "n": sum(sizes),
                "p": data.d, "n_min": min(sizes), "n_max": max(sizes), "size_ratio": sum(sizes) / (a["P"] * min(sizes)),
                "sensitivity": float(res.sensitivity[k]), "sigma": math.nan,
                "eps_claimed": run.alpha, "eps_accounted": eps["pld"],
                "eps_accounted_scope": "per_node" if private else "n/a",
                "accuracy": 1.0 - float(res.metrics["mer"][i, k]), "train_loss": loss,
                "optimal_loss": optimum[run.rho], "optimal_gap": loss - optimum[run.rho],
                "init_loss": a["P"] * a["C_R"] * math.log(2.0), "seconds": seconds, "synthetic": False,
                "topology": topology, "alpha": run.alpha, "iteration": t,
                "mer": float(res.metrics["mer"][i, k]),
                "eps_cumulative_basic": eps["basic"], "eps_cumulative_pld": eps["pld"],
                "eps_cumulative_exact": eps["exact"], "rho": run.rho, "admm_penalty": run.penalty,
                "C_R": a["C_R"], "alpha_prime": float(res.alpha_prime[k]), "phi": float(res.phi[k]),
                "dvp_case": ("phi_zero" if res.phi_zero[k] else "phi_positive") if private else "n/a",
                "zeta": float(res.zeta[k]), "noise_norm": float(res.noise_norm[i, k]),
                "noise_norm_expected": _expected_noise(data.d, run, res, k, t, a["T"]),
                "own_unperturbed_in_dual": run.own_unperturbed_in_dual,
                "tuning_loss": tuning_loss, "footing": label.footing, "reference_for": label.reference_for,
                "pvp_gain": real[k].gain, "eps_real": real[k].release(t),
                "eps_real_cumulative_basic": real[k].cumulative(t), "eps_pld_fallback": pld_fallback,
            })
    return results.to_frame(rows, EXTRA_COLUMNS)


def _expected_noise(d: int, run: zz.ADMMRun, res: zz.BatchResult, k: int, t: int, T: int) -> float:
    """B7 mean noise norm d/ζ of the release at iteration t (PVP's last one is a DVP step: 2d/α′)."""
    if run.mechanism == "admm":
        return math.nan
    zeta = res.alpha_prime[k] / 2.0 if (run.mechanism == "pvp" and t == T) else res.zeta[k]
    return float(zz.expected_noise_norm(d, zeta))


def run_job(cfg: dict[str, Any], data: Processed, topology: str,
            log: logging.Logger) -> tuple[pd.DataFrame, dict[str, Any]]:
    """One topology's job on a prepared data set: tune, run; its table part and its tuning record."""
    groups = cases(cfg, data)
    first = groups[0].data
    log.info("split design: %s", splits.describe(cfg))
    log.info("%s: %d case(s), each %d nodes of %s records, d = %d, %d test records", cfg["admm"]["dataset"],
             len(groups), len(first.nodes), [len(y) for _, y in first.nodes], first.d, len(first.y_test))
    choices = tune(cfg, groups, topology, log)
    for c, ch in zip(groups, choices, strict=True):
        for mech, choice in ch.items():
            log.info("chosen for %s%s: eta = %g, rho = %s", mech,
                     "" if c.split_rep is None else f" (repetition {c.split_rep})", choice["penalty"], choice["rho"])
    frame = final_runs(cfg, groups, topology, choices, log)
    return frame, tuning_record(cfg, groups, choices)


def tuning_record(cfg: dict[str, Any], groups: list[Case], choices: list[dict[str, dict[str, Any]]]) -> dict[str, Any]:
    """The job's tuning record: the fixed split's one case as its choices per mechanism (as before issue
    60); per repetition, the split design and each repetition's choices."""
    if len(groups) == 1 and groups[0].split_rep is None:
        return choices[0]
    return {"split": splits.describe(cfg),
            "repetitions": [{"rep": c.split_rep, "choices": ch} for c, ch in zip(groups, choices, strict=True)]}


def train_job(cfg: dict[str, Any], topology: str, processed_dir: Path, out: Path, tuning_out: Path,
              log: logging.Logger) -> None:
    """One Snakemake job per topology: tune, run, write the job's table part and its tuning record."""
    frame, record = run_job(cfg, load_processed(processed_dir), topology, log)
    results.write(frame, out, EXTRA_COLUMNS)
    io.write_json(record, tuning_out)


def collect(parts: list[Path], out: Path) -> None:
    """Concatenate the jobs' parts into ``data/results/admm/<dataset>.parquet``."""
    frame = pd.concat([results.read(p, EXTRA_COLUMNS) for p in parts], ignore_index=True)
    frame = frame.sort_values(["topology", "mechanism", "alpha", "rep", "iteration"], kind="stable")
    results.write(frame, out, EXTRA_COLUMNS)


def read_table(path: str | Path) -> pd.DataFrame:
    """The study's results table (common + extra columns)."""
    return results.read(path, EXTRA_COLUMNS)
