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
- ``public``: the validation split (``benchmark.val_frac`` of the pool) is **removed** from the
  private pool and declared public; the candidates × ``tune_seeds`` are trained on its first part
  and scored (mean log-loss, not clipped, not noised) on its second part (``val_frac`` of it),
  the knob frozen for the grid, and the grid trains on the rest of the pool only.
  ``eps_selection`` = 0 (public data), ``eps_end_to_end`` = the final run's ε.
- ``oracle``: today's protocol, **non-private selection (the papers' convention)**: candidates ×
  ``tune_seeds`` at the reference ε on the fit part, un-noised validation accuracy (ties: first in
  config order), frozen for the grid trained on the whole pool (validation records included).
  ``eps_selection`` and ``eps_end_to_end`` are +inf: the validation records have no finite ε.
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
    "private": "private selection (random stopping, Papernot & Steinke 2022), end-to-end accounted",
    "public": "selection on a public split removed from the private pool",
    "oracle": "non-private selection (the papers' convention)",
}
#: privacy reading of each protocol's rows (``privacy_reading`` of the ranking)
READING = {"private": "end_to_end", "public": "end_to_end", "oracle": "final_run"}


@dataclass(frozen=True)
class Budget:
    """What one row of a (mechanism, target ε) pays under the private protocol."""

    epsilon: float  # the cell's target
    delta: float
    eps_trial: float  # each trial's (ε_t, δ) calibration target
    eps_final: float  # the final run's calibration target ε_f
    eps_selection: float  # the selection alone, at δ (RDP)
    eps_end_to_end: float  # selection ∘ final run, at δ (RDP)
    trials_shape: float
    trials_mean: float


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


def trial_curve(cfg: Mapping[str, Any], mech: str, eps_t: float) -> np.ndarray:
    """A private trial: training on the fit part ∨ the noisy score on the validation part."""
    return np.maximum(run_curve(cfg, mech, eps_t), _score_curve(eps_t, float(cfg["benchmark"]["delta"])))


def budget(cfg: Mapping[str, Any], mech: str, eps: float) -> Budget:
    """The private protocol's split of the target ε of ``mech`` (module docstring); memoised per
    (mechanism, ε, ``benchmark`` section).

    Raises :class:`ConfigError` naming ``benchmark.selection`` keys when no per-trial ε > 0 fits.
    """
    key = json.dumps(cfg["benchmark"], sort_keys=True, default=str)
    return _budget(_CfgKey(key, cfg), _curve_key(mech), float(eps))


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
def _budget(ck: _CfgKey, curve_key: str, eps: float) -> Budget:
    cfg, mech = ck.cfg, curve_key.split(":", 1)[1]
    b, s = cfg["benchmark"], cfg["benchmark"]["selection"]
    delta, shape, mean = float(b["delta"]), float(s["trials"]["shape"]), float(s["trials"]["mean"])
    eps_f = float(s["final_share"]) * eps
    final = run_curve(cfg, mech, eps_f)
    eps_t = ps.calibrate_trial_epsilon(eps, delta, lambda e: trial_curve(cfg, mech, e), final, shape, mean)
    if eps_t <= 0:
        raise _infeasible(cfg, mech, eps)
    sel = ps.repeat_and_select_rdp(trial_curve(cfg, mech, eps_t), shape, mean)
    return Budget(eps, delta, eps_t, eps_f, ps.rdp_to_epsilon(sel, delta), ps.rdp_to_epsilon(sel + final, delta),
                  shape, mean)


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
    """Mean per-record logistic loss clipped at ``clip`` of each column of ``thetas`` (p, K)."""
    margins = y[:, None] * (X @ thetas)
    loss = np.logaddexp(0.0, -margins)
    return np.minimum(loss, clip).mean(axis=0)


def noisy_scores(thetas: np.ndarray, X: np.ndarray, y: np.ndarray, clip: float, eps_t: float, delta: float,
                 gen: np.random.Generator, noise: bool = True) -> np.ndarray:
    """The private trial scores: clipped mean log-loss + N(0, σ²), σ = (clip/n_val)·z(ε_t, δ).

    ``noise=False`` is the audit's planted bug (un-noised scores while the private protocol is
    claimed); nothing else calls it so.
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


def budget_fields(bud: Budget | None, protocol: str, eps_run: float) -> dict[str, Any]:
    """The selection columns of a row."""
    if protocol == "private" and bud is not None:
        return {"selection": protocol, "eps_trial": bud.eps_trial, "eps_selection": bud.eps_selection,
                "eps_end_to_end": bud.eps_end_to_end, "delta_end_to_end": bud.delta}
    if protocol == "public":
        return {"selection": protocol, "eps_trial": math.nan, "eps_selection": 0.0,
                "eps_end_to_end": math.nan, "delta_end_to_end": math.nan}  # filled from the ledger
    return {"selection": protocol, "eps_trial": math.nan, "eps_selection": math.inf,
            "eps_end_to_end": math.inf, "delta_end_to_end": math.nan}


def budget_record(bud: Budget) -> dict[str, Any]:
    return asdict(bud)
