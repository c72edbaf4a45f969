"""Selection protocols of the benchmark's hyper-parameters (issue 34; spec E10 "Hyper-parameters").

``benchmark.selection.protocol`` names the protocol of the headline rows;
``benchmark.selection.final_run_reading`` adds the ``oracle`` rows (the papers' convention) so
that the ranking can be read both ways (``privacy_reading``: ``end_to_end`` | ``final_run``).

- ``private`` (default): for every target ε of the grid and every mechanism, the knob is chosen
  by **random stopping** (Papernot & Steinke 2022, Theorem 2; :mod:`mpdp.privacy.private_selection`):
  K ~ truncated negative binomial (``trials.shape``, ``trials.mean``) independent trials, each
  drawing a candidate uniformly, training the mechanism at (ε_t, δ) on the fit part of the private
  pool at the reference cell (m, u) and scoring it by the mean clipped log-loss
  (per-record loss clipped at ``score_clip``) on the disjoint validation part plus Gaussian noise
  calibrated to (ε_t, δ) for sensitivity ``score_clip``/n_val (replace-one). A record lies in one
  of the two parts, so a trial's RDP curve is the pointwise maximum of its training curve (maximum
  over the candidates: the candidate is drawn independently of the data) and its score curve. The
  best trial's candidate is then used by a **fresh final run** on the whole private pool at
  (ε_f, δ), ε_f = ``final_share`` · ε, under the mechanism's own calibration. The row's whole
  procedure is the adaptive composition of the selection and the final run; its RDP curves add,
  and ``eps_end_to_end`` is their sum converted at the cell's δ. ε_t is the largest per-trial ε
  (bisection) with ``eps_end_to_end`` ≤ ε. Columns: ``eps_trial`` (ε_t), ``eps_selection``
  (the selection alone at δ), ``eps_accounted`` (the final run alone, its own accountant),
  ``eps_end_to_end`` and ``delta_end_to_end`` (= δ).

  **Party-level mechanisms** (``privacy_unit`` = party: ``param_avg``, ``hamm_vote``,
  ``hamm_soft``; issues 43, 58). Their guarantee is per party, and a party of the grid would hold
  validation records (whose scores are noised for one record only) and records spread over
  several parties of the reference cell's tuning partition (group privacy would multiply the
  trials' cost). So for them, per (cell, repetition): the validation split is **held out of every
  party** (``n_validation`` records, in the hparams record; the parties share the rest of the
  pool), the trials run **on the partition the row releases**, and the **selected trial itself is
  released** (Papernot & Steinke's setting: no final run). The validation records stay private
  (issue 58: they are records of the private pool, in no party): each trial's score is the clipped
  log-loss on them plus Gaussian noise σ = (clip/n_val)·z(ε_s, δ), the replace-one sensitivity of
  **one validation record**. Two kinds of individual, two guarantees, both ≤ the target ε:

  - a **party** (any change of one party's data): the scores are a post-processing of the
    trials' releases (given the validation records and the score noise), so a trial is ε_t-DP
    per party and ``eps_end_to_end`` = ``eps_selection`` = the better of the selection's RDP curve
    converted at δ and, for the pure-DP output family, the theorem's pure limit (2 + η)ε_t
    (:func:`~mpdp.privacy.private_selection.pure_selection_epsilon`, δ = 0, the tighter one
    here), ε_t the largest with ``eps_end_to_end`` ≤ ε; ``eps_accounted`` is the released trial's
    own ε (ε_t);
  - a **validation record** (replace one of them): the trials' releases do not read it, so a
    trial is the Gaussian score mechanism at (ε_s, δ) and the selection is its random stopping:
    ``eps_validation_record`` = the theorem's RDP curve of that Gaussian converted at δ
    (:func:`validation_budget`; ε_s the largest with ``eps_validation_record`` ≤ ε).

  :func:`releases_selected_trial` says which mechanisms take this path. For the record-level
  rows a validation record is a record of the pool like any other (scored with noise at ε_t and
  trained on by the final run): ``eps_validation_record`` = ``eps_end_to_end``.
- ``public``: the validation split (``benchmark.val_frac`` of the pool) is **removed** from the
  private pool and declared public; the candidates × ``tune_seeds`` are trained on its first part
  and scored (mean log-loss, not clipped, not noised) on its second part (``val_frac`` of it),
  the knob frozen for the grid, and the grid trains on the rest of the pool only.
  ``eps_selection`` = 0 (public data), ``eps_end_to_end`` = the final run's ε; the public split's
  records get no DP guarantee (``eps_validation_record`` = +inf: they are *assumed* public).
- ``oracle``: today's protocol, **non-private selection (the papers' convention)**: candidates ×
  ``tune_seeds`` at the reference ε on the fit part, un-noised validation accuracy (ties: first in
  config order), frozen for the grid trained on the whole pool (validation records included).
  ``eps_selection``, ``eps_end_to_end`` and ``eps_validation_record`` are +inf: the validation
  records have no finite ε.

Every row states its guarantee for both kinds of individual it reads (:func:`budget_fields`):
``eps_end_to_end`` at ``delta_end_to_end`` in the unit of its ``privacy_unit`` (a record of a
party, or a party), and ``eps_validation_record`` at ``delta_validation_record`` for one
validation record, with ``validation_records`` saying where those records lie and what protects
them (:data:`VALIDATION`).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from mpdp.errors import ConfigError
from mpdp.models import logistic
from mpdp.privacy import private_selection as ps
from mpdp.privacy.calibration import noise_multiplier
from mpdp.studies.benchmark import calibration as calib
from mpdp.studies.benchmark import registry

PROTOCOLS = ("private", "public", "oracle")
LABELS = {
    "private": "private selection (random stopping, Papernot & Steinke 2022), end-to-end accounted for every "
               "record read: party members (in the row's unit) and validation records (noised scores)",
    "public": "selection on a public split removed from the private pool",
    "oracle": "non-private selection (the papers' convention)",
}
#: privacy reading of each protocol's rows (``privacy_reading`` of the ranking)
READING = {"private": "end_to_end", "public": "end_to_end", "oracle": "final_run"}
#: where a row's validation records lie and what protects them (column ``validation_records``)
VALIDATION = {
    "record": "in the private pool: scores noised per record, covered by eps_end_to_end",
    "party": "held out of every party: scores noised per record, eps_validation_record",
    "public": "removed from the private pool and declared public: no DP guarantee",
    "oracle": "read without noise: no finite epsilon",
    "reference": "non-private reference: no DP guarantee for any record",
}


@dataclass(frozen=True)
class Budget:
    """What one row of a (mechanism, target ε) pays under the private protocol."""

    epsilon: float  # the cell's target
    delta: float
    eps_trial: float  # each trial's (ε_t, δ) calibration target
    eps_final: float  # the final run's calibration target ε_f
    eps_selection: float  # the selection alone, at δ (RDP)
    eps_end_to_end: float  # selection ∘ final run, at δ (RDP), in the row's privacy_unit
    trials_shape: float
    trials_mean: float
    eps_score: float  # each trial's score noise: Gaussian at (ε_s, δ) for one validation record
    eps_validation_record: float  # the whole procedure for one validation record, at δ


def protocols(cfg: Mapping[str, Any]) -> list[str]:
    """The protocols whose rows a job writes: the headline one, then ``oracle`` if read too."""
    s = cfg["benchmark"]["selection"]
    out = [s["protocol"]]
    if s["final_run_reading"] and s["protocol"] != "oracle":
        out.append("oracle")
    return out


def headline(cfg: Mapping[str, Any]) -> str:
    return str(cfg["benchmark"]["selection"]["protocol"])


# ---------------------------------------------------------------------------------------------
# RDP curves of the mechanisms' runs (their calibration at a target (ε, δ))
# ---------------------------------------------------------------------------------------------


def _gradient_curve(eps: float, delta: float, T: int) -> np.ndarray:
    # accountant exact / exact_per_party: every party's T steps have multiplier σ/Δ
    return ps.gaussian_rdp(noise_multiplier("exact", eps, delta, T), T)


def _score_curve(eps: float, delta: float) -> np.ndarray:
    return ps.gaussian_rdp(noise_multiplier("exact", eps, delta, 1), 1)


@functools.cache
def _run_curve(mech: str, eps: float, delta: float, params: tuple[Any, ...]) -> np.ndarray:
    """RDP curve of one run of a built-in ``mech`` calibrated to (ε, δ)."""
    if mech in calib.GRADIENT:
        return _gradient_curve(eps, delta, int(params[0]))
    if mech in calib.OUTPUT:
        return ps.pure_dp_rdp(eps)
    if mech in ("dvp", "pvp"):
        T, accountant = int(params[1]), str(params[2])
        return ps.pure_dp_rdp(calib.admm_alpha(eps, T, delta, accountant), T)
    raise ConfigError(f"config key 'benchmark.selection.protocol' = 'private': mechanism {mech!r} declares no "
                      f"RDP curve (Mechanism.rdp_curve) for the private selection's accounting; choose protocol "
                      f"'public' or 'oracle', or declare one")


def releases_selected_trial(mech: str) -> bool:
    """Whether ``mech``'s private selection runs its trials on the released partition, scores them
    on the validation records held out of every party (noised for one of them) and releases the selected
    trial (party-level; module docstring)."""
    return registry.get(mech).privacy_unit == "party"


def _params(cfg: Mapping[str, Any]) -> tuple[Any, ...]:
    b = cfg["benchmark"]
    return (int(b["gradient"]["T"]), int(b["admm"]["T"]), str(b["admm"]["accountant"]))


def run_curve(cfg: Mapping[str, Any], mech: str, eps: float) -> np.ndarray:
    """RDP curve of one run of ``mech`` at (ε, ``benchmark.delta``): the mechanism's own
    :meth:`~mpdp.studies.benchmark.interface.Mechanism.rdp_curve` where it declares one, else the
    built-in family's (gradient: composed Gaussian; output: pure ε; ADMM: T pure α-steps)."""
    own = registry.get(mech).rdp_curve(cfg, float(eps))
    if own is not None:
        return np.asarray(own, dtype=np.float64)
    return _run_curve(mech, float(eps), float(cfg["benchmark"]["delta"]), _params(cfg))


@functools.cache
def validation_budget(eps: float, delta: float, shape: float, mean: float) -> tuple[float, float]:
    """(ε_s, ``eps_validation_record``) of a party-level row at target ``eps`` (issue 58).

    The trials' releases never read a validation record (they are held out of every party), so for
    one validation record a trial is its Gaussian score at (ε_s, δ) (:func:`noisy_scores`) and the
    procedure is that trial's random stopping (Papernot & Steinke 2022, Thm 2) converted at δ; ε_s is
    the largest (bisection, :func:`~mpdp.privacy.private_selection.calibrate_trial_epsilon`) with
    that ≤ ``eps``. Raises :class:`ConfigError` naming ``benchmark.selection.trials`` when none fits.
    """
    eps_s = ps.calibrate_trial_epsilon(float(eps), float(delta), lambda e: _score_curve(e, float(delta)),
                                       np.zeros_like(ps.ORDERS), float(shape), float(mean))
    if eps_s <= 0:
        raise ConfigError(f"config key 'benchmark.selection.trials': shape {shape:g}, mean {mean:g} cannot meet "
                          f"epsilon = {eps:g} for one validation record of the party-level rows (the selection's "
                          f"overhead alone exceeds it); lower trials.mean, or raise eps_grid")
    sel = ps.repeat_and_select_rdp(_score_curve(eps_s, float(delta)), float(shape), float(mean))
    return eps_s, ps.rdp_to_epsilon(sel, float(delta))


def trial_curve(cfg: Mapping[str, Any], mech: str, eps_t: float) -> np.ndarray:
    """A private trial: training on the fit part ∨ the noisy score on the validation part."""
    return np.maximum(run_curve(cfg, mech, eps_t), _score_curve(eps_t, float(cfg["benchmark"]["delta"])))


def budget(cfg: Mapping[str, Any], mech: str, eps: float) -> Budget:
    """The private protocol's split of the target ε of ``mech`` (module docstring); memoised per
    (mechanism, ε, ``benchmark`` section).

    A budget installed from rule ``benchmark_budgets``'s file (:func:`install`) is returned as
    it was computed there (the same function, once per ``benchmark`` section).

    Raises :class:`ConfigError` naming ``benchmark.selection`` keys when no per-trial ε > 0 fits.
    """
    key = _section_key(cfg)
    if (hit := _INSTALLED.get((key, mech, float(eps)))) is not None:
        if isinstance(hit.budget, str):
            raise ConfigError(hit.budget)
        return hit.budget
    return _budget(_CfgKey(key, cfg), _curve_key(mech), float(eps), releases_selected_trial(mech))


def slack(cfg: Mapping[str, Any], mech: str, eps: float) -> dict[str, float]:
    """How much the selection's RDP accounting of ``mech`` at target ``eps`` gives away (issue 43).

    ``trial_share``: ε_t/ε, what each trial may spend (equal across families only if their
    curves are equally tight); ``run_rdp_slack``: the ε at δ of the RDP curve charged for one run
    calibrated to ε_f, over ε_f (the run's own accountant: PLD/analytic Gaussian, pure ε, ADMM's PLD
    composition, DP-SGD's PLD) — above 1 where the curve is looser than the run's calibration,
    below 1 where converting at δ > 0 is tighter than the run's own statement (pure ε-DP at δ = 0).
    """
    if (hit := _INSTALLED.get((_section_key(cfg), mech, float(eps)))) is not None and hit.slack is not None:
        return dict(hit.slack)
    bud = budget(cfg, mech, eps)
    delta = float(cfg["benchmark"]["delta"])
    return {"trial_share": bud.eps_trial / float(eps),
            "run_rdp_slack": ps.rdp_to_epsilon(run_curve(cfg, mech, bud.eps_final), delta) / bud.eps_final}


def can_meet(cfg: Mapping[str, Any], mech: str, eps: float) -> bool:
    """Whether the private protocol's budget split (``benchmark.selection``: final share, trial law)
    meets target ``eps`` for ``mech`` — the exact budget of :func:`budget`, for the planning checks."""
    try:
        budget(cfg, mech, eps)
    except ConfigError:
        return False
    return True


@dataclass(frozen=True)
class Installed:
    """A budget computed by rule ``benchmark_budgets``: the :class:`Budget` (or the one-line
    :class:`ConfigError` message its computation raised) and its :func:`slack` record."""

    budget: Budget | str
    slack: dict[str, float] | None


#: budgets installed from rule ``benchmark_budgets``'s file: (``benchmark`` section, mechanism, ε) -> record
_INSTALLED: dict[tuple[str, str, float], Installed] = {}


def install(cfg: Mapping[str, Any], mech: str, eps: float, record: Installed) -> None:
    """Make :func:`budget` and :func:`slack` of (``mech``, ``eps``) under ``cfg``'s ``benchmark``
    section return ``record`` (computed once for every job: :mod:`mpdp.studies.benchmark.budgets`)."""
    _INSTALLED[(_section_key(cfg), mech, float(eps))] = record


def _section_key(cfg: Mapping[str, Any]) -> str:
    return json.dumps(cfg["benchmark"], sort_keys=True, default=str)


class _CfgKey:
    """A config hashed by its ``benchmark`` section (the only part the budget reads)."""

    def __init__(self, key: str, cfg: Mapping[str, Any]) -> None:
        self.key, self.cfg = key, cfg

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _CfgKey) and other.key == self.key


def _curve_key(mech: str) -> str:
    """Mechanisms whose run curves are equal share one budget (the gradient family, the output
    family, DVP and PVP)."""
    if mech in calib.GRADIENT:
        return "gradient:wyx"
    if mech in calib.OUTPUT:
        return "output:pathak"
    if mech in ("dvp", "pvp"):
        return "admm:dvp"
    return f"own:{mech}"


@functools.cache
def _budget(ck: _CfgKey, curve_key: str, eps: float, released_trial: bool = False) -> Budget:
    cfg, mech = ck.cfg, curve_key.split(":", 1)[1]
    b, s = cfg["benchmark"], cfg["benchmark"]["selection"]
    delta, shape, mean = float(b["delta"]), float(s["trials"]["shape"]), float(s["trials"]["mean"])
    if released_trial:  # party level: trial = the run (public scores), no final run
        eps_t = ps.calibrate_trial_epsilon(eps, delta, lambda e: run_curve(cfg, mech, e), np.zeros_like(ps.ORDERS),
                                           shape, mean)
        if mech in calib.OUTPUT and eps / (2.0 + shape) > eps_t:  # pure ε_t-DP trials: (2 + η)ε_t, δ = 0
            eps_t = eps / (2.0 + shape)
            sel_eps = ps.pure_selection_epsilon(eps_t, shape)
        elif eps_t <= 0:
            raise _infeasible(cfg, mech, eps)
        else:
            sel_eps = ps.rdp_to_epsilon(ps.repeat_and_select_rdp(run_curve(cfg, mech, eps_t), shape, mean), delta)
        eps_s, eps_val = validation_budget(eps, delta, shape, mean)
        return Budget(eps, delta, eps_t, eps_t, sel_eps, sel_eps, shape, mean, eps_s, eps_val)
    eps_f = float(s["final_share"]) * eps
    final = run_curve(cfg, mech, eps_f)
    eps_t = ps.calibrate_trial_epsilon(eps, delta, lambda e: trial_curve(cfg, mech, e), final, shape, mean)
    if eps_t <= 0:
        raise _infeasible(cfg, mech, eps)
    sel = ps.repeat_and_select_rdp(trial_curve(cfg, mech, eps_t), shape, mean)
    total = ps.rdp_to_epsilon(sel + final, delta)
    # a validation record is a record of the pool: scored at ε_t, trained on by the final run
    return Budget(eps, delta, eps_t, eps_f, ps.rdp_to_epsilon(sel, delta), total, shape, mean, eps_t, total)


def _infeasible(cfg: Mapping[str, Any], mech: str, eps: float) -> ConfigError:
    s = cfg["benchmark"]["selection"]
    t = s["trials"]
    return ConfigError(
        f"config key 'benchmark.selection': final_share = {s['final_share']} with trials (shape {t['shape']:g}, "
        f"mean {t['mean']:g}) cannot meet epsilon = {eps:g} for mechanism {mech!r} (the final run and the "
        f"selection's overhead alone exceed it); lower final_share or trials.mean, or raise eps_grid")


# ---------------------------------------------------------------------------------------------
# trials, scores, selection
# ---------------------------------------------------------------------------------------------


def draw_trials(gen: np.random.Generator, cfg: Mapping[str, Any], n_candidates: int) -> list[int]:
    """K ~ TNB(shape, mean), then K candidate indices drawn uniformly (one stream)."""
    t = cfg["benchmark"]["selection"]["trials"]
    k = ps.sample_trials(gen, float(t["shape"]), float(t["mean"]))
    return [int(c) for c in gen.integers(0, n_candidates, size=k)]


def clipped_logloss(thetas: np.ndarray, X: np.ndarray, y: np.ndarray, clip: float) -> np.ndarray:
    """Mean per-record logistic loss clipped at ``clip`` of each column of ``thetas`` (p, K), or of
    a batch of them (..., p, K) → (..., K) (the audit runs the procedure many times at once)."""
    margins = y[:, None] * (X @ thetas)
    loss = np.logaddexp(0.0, -margins)
    return np.minimum(loss, clip).mean(axis=-2)


def noisy_scores(thetas: np.ndarray, X: np.ndarray, y: np.ndarray, clip: float, eps_t: float, delta: float,
                 gen: np.random.Generator, noise: bool = True) -> np.ndarray:
    """The private trial scores: clipped mean log-loss + N(0, σ²), σ = (clip/n_val)·z(ε_t, δ), the
    Gaussian at (ε_t, δ) for one validation record (replace-one sensitivity clip/n_val).

    ``thetas`` (p, K) or a batch (..., p, K) (:func:`clipped_logloss`). ``noise=False`` is the
    audit's planted bugs (un-noised scores while the private protocol is claimed) and the
    noise-free runs of :func:`~mpdp.studies.benchmark.output_runner.run_output`.
    """
    sens = float(clip) / len(y)
    sigma = sens * noise_multiplier("exact", eps_t, delta, 1)
    raw = clipped_logloss(thetas, X, y, clip)
    return raw + gen.normal(0.0, sigma, size=raw.shape) if noise else raw


def choose_lowest(candidates: Sequence[float], scores: np.ndarray) -> float:
    """The candidate of lowest score; exact ties (public protocol only): first in config order."""
    return float(candidates[int(np.argmin(scores))])


def validation_logloss(thetas: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.asarray(logistic.loss(thetas, X, y, 0.0))


def budget_fields(bud: Budget | None, protocol: str, eps_run: float, party: bool = False) -> dict[str, Any]:
    """The selection columns of a row: what it paid, and its guarantee for both kinds of individual
    it reads — ``eps_end_to_end`` in its ``privacy_unit`` and ``eps_validation_record`` for one
    validation record (module docstring; ``party``: a party-level row, :func:`releases_selected_trial`).
    ``bud`` None under ``private``: the non-private reference (no guarantee at all)."""
    if protocol == "private" and bud is not None:
        return {"selection": protocol, "eps_trial": bud.eps_trial, "eps_selection": bud.eps_selection,
                "eps_end_to_end": bud.eps_end_to_end, "delta_end_to_end": bud.delta,
                "eps_validation_record": bud.eps_validation_record, "delta_validation_record": bud.delta,
                "score_multiplier": noise_multiplier("exact", bud.eps_score, bud.delta, 1),
                "validation_records": VALIDATION["party" if party else "record"]}
    if protocol == "public":
        return {"selection": protocol, "eps_trial": math.nan, "eps_selection": 0.0,
                "eps_end_to_end": math.nan, "delta_end_to_end": math.nan,  # filled from the ledger
                "eps_validation_record": math.inf, "delta_validation_record": math.nan,
                "score_multiplier": math.nan, "validation_records": VALIDATION["public"]}
    return {"selection": protocol, "eps_trial": math.nan, "eps_selection": math.inf,
            "eps_end_to_end": math.inf, "delta_end_to_end": math.nan,
            "eps_validation_record": math.inf, "delta_validation_record": math.nan, "score_multiplier": math.nan,
            "validation_records": VALIDATION["oracle" if protocol == "oracle" else "reference"]}


def budget_record(bud: Budget) -> dict[str, Any]:
    return asdict(bud)
