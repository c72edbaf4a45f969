"""Audit of the whole private procedure: selection and release together (issue 43; spec audit.md
A1, A4; experiments.md E10 "Hyper-parameters").

The benchmark's private protocol (:mod:`mpdp.studies.benchmark.selection`) is run end to end many
times on two neighbouring inputs, and the many-draws audit (:func:`mpdp.audit.many_draws.
many_draws_audit`, spec A1) bounds the ε of the *whole* procedure from below; the claim it is
held against is the row's end-to-end target ε. One feature (p = 1), two candidates standing for
two knobs of the grid: candidate 0 releases θ₀ = +1, candidate 1 θ₁ = −1 (the models a λ grid
would give on a data set whose validation labels are split almost evenly). K ~ truncated
negative binomial (``trials_shape``, ``trials_mean``), each trial draws a candidate uniformly.

- ``unit: record`` (the record-level protocol): each trial releases θ_c + Lap(Δ/ε_t) (N-L2 in
  one dimension), trained on the fit records, and is scored by the clipped log-loss (``score_clip``)
  on ``n_val`` validation records (x = 1; ⌈n_val/2⌉ labelled +1, the rest −1) plus Gaussian noise
  σ = (clip/n_val)·z(ε_t, δ); the best trial's candidate is then released by a fresh final run at
  ε_f = ``final_share``·ε. The neighbours differ in **one validation record** (+1 in D, −1 in D'),
  which the final run also trains on: its pre-noise model is θ_c + Δ/2 in D and θ_c − Δ/2 in D'
  (the worst case its sensitivity allows). Budget: the benchmark's (trial curve = pure ε_t ∨ the
  score's Gaussian curve, the final run composed, ε_t the largest meeting ε at δ).
- ``unit: party`` (the party-level protocol): the trials run on the released parties, so **every
  trial's** pre-noise model moves with the audited party: θ_c + Δ/2 in D, θ_c − Δ/2 in D'; the
  scores read public validation records (no noise, identical in D and D'); the selected trial is
  the release. Budget: (2 + η)ε_t = ε, or the RDP route where tighter.

Score of an output (large = "D"): the likelihood-ratio score of the released value against the
two means of its candidate, in [−1, 1], plus 2 when candidate 0 was chosen (record level: the
chosen knob is released too). Planted bug ``unnoised_scores`` (record level): the scores are not
noised while the private protocol is claimed — the winner then follows the validation record's
label, and the audit must catch it (ε̂ above the claimed ε).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from mpdp.audit.adapters import SCORE_GRID, AuditContext, setting_label
from mpdp.audit.bugs import bug_name
from mpdp.audit.many_draws import many_draws_audit
from mpdp.errors import ConfigError
from mpdp.privacy import private_selection as ps
from mpdp.privacy.calibration import noise_multiplier
from mpdp.seeding import rng

#: the two candidates' pre-noise models (one feature)
THETA = np.array([1.0, -1.0])
#: draws per chunk (memory: chunk × the largest K)
CHUNK = 20_000
#: the protocol's knobs: the benchmark's defaults (``benchmark.selection``: geometric K with E[K] = 8,
#: half of ε to the final run, scores clipped at 5) and the pair's size (51 validation records,
#: release sensitivity 1e-3: the trials' noise then barely moves their scores, which the validation
#: labels decide, the case where one validation record matters most)
SHAPE, MEAN, FINAL_SHARE, SCORE_CLIP, N_VAL, SENSITIVITY = 1.0, 8.0, 0.5, 5.0, 51, 1e-3


def budget(unit: str, epsilon: float, delta: float, shape: float, mean: float, share: float,
           clip: float, n_val: int) -> dict[str, float]:
    """ε_t, ε_f and the end-to-end ε of the protocol of ``unit`` at target ``epsilon`` (the
    benchmark's formulas for a pure ε-DP release, :func:`mpdp.studies.benchmark.selection.budget`)."""
    del clip, n_val  # the score's Gaussian curve is per multiplier: its sensitivity cancels
    if unit == "party":
        eps_t = ps.calibrate_trial_epsilon(epsilon, delta, ps.pure_dp_rdp, np.zeros_like(ps.ORDERS), shape, mean)
        rdp = ps.rdp_to_epsilon(ps.repeat_and_select_rdp(ps.pure_dp_rdp(eps_t), shape, mean), delta)
        if epsilon / (2.0 + shape) > eps_t:
            eps_t, rdp = epsilon / (2.0 + shape), ps.pure_selection_epsilon(epsilon / (2.0 + shape), shape)
        return {"eps_trial": eps_t, "eps_final": math.nan, "eps_end_to_end": rdp}
    eps_f = share * epsilon
    final = ps.pure_dp_rdp(eps_f)

    def trial(e: float) -> np.ndarray:
        return np.maximum(ps.pure_dp_rdp(e), ps.gaussian_rdp(noise_multiplier("exact", e, delta, 1)))

    eps_t = ps.calibrate_trial_epsilon(epsilon, delta, trial, final, shape, mean)
    if eps_t <= 0:
        raise ConfigError(f"audit setting 'private_selection' at epsilon = {epsilon:g}: the split cannot meet it")
    total = ps.rdp_to_epsilon(ps.repeat_and_select_rdp(trial(eps_t), shape, mean) + final, delta)
    return {"eps_trial": eps_t, "eps_final": eps_f, "eps_end_to_end": total}


def _trials(gen: np.random.Generator, n: int, shape: float, mean: float) -> np.ndarray:
    """n draws of K ~ TNB(shape, mean) (inverse CDF, the law of :func:`~mpdp.privacy.
    private_selection.sample_trials`)."""
    gamma = ps.tnb_gamma(shape, mean)
    k = np.arange(1, 64)
    while True:
        cdf = np.cumsum(ps.tnb_pmf(k, gamma, shape))
        if cdf[-1] >= 1.0 - 1e-12:
            break
        k = np.arange(1, 2 * len(k) + 1)
    return np.minimum(np.searchsorted(cdf, gen.random(n)) + 1, len(k))


def _clipped_loss(o: np.ndarray, n_pos: int, n_neg: int, clip: float) -> np.ndarray:
    """Mean clipped log-loss of the 1-D model(s) ``o`` on validation records x = 1, ``n_pos``
    labelled +1 and ``n_neg`` labelled −1."""
    return (n_pos * np.minimum(np.logaddexp(0.0, -o), clip) + n_neg * np.minimum(np.logaddexp(0.0, o), clip)) \
        / (n_pos + n_neg)


def _lr_score(o: np.ndarray, centre: np.ndarray, half: float) -> np.ndarray:
    """|o − (c − h)| − |o − (c + h)|, over 2h: in [−1, 1], large when o is near c + h (D).

    Rounded to :data:`~mpdp.audit.adapters.SCORE_GRID`: outside the segment the score is ±1, but
    its floating-point rounding depends on the output's magnitude, which differs between D and
    D' (Mironov 2012); unrounded, a threshold between two rounding levels tests the float lattice.
    """
    raw = (np.abs(o - (centre - half)) - np.abs(o - (centre + half))) / (2.0 * half)
    return np.round(raw / SCORE_GRID) * SCORE_GRID


def run_procedure(gen: np.random.Generator, side: int, draws: int, unit: str, b: Mapping[str, float],
                  sens: float, shape: float, mean: float, clip: float, n_val: int, delta: float,
                  noise: bool = True) -> np.ndarray:
    """Scores of ``draws`` runs of the whole procedure on D (``side`` = +1) or D' (−1)."""
    n_pos = (n_val + 1) // 2
    if unit == "record" and side < 0:
        n_pos -= 1  # the audited validation record's label: +1 in D, −1 in D'
    n_neg = n_val - n_pos
    out = []
    for start in range(0, draws, CHUNK):
        n = min(CHUNK, draws - start)
        K = _trials(gen, n, shape, mean)
        width = int(K.max())
        cand = gen.integers(0, 2, size=(n, width))
        shift = side * sens / 2.0 if unit == "party" else 0.0  # the party moves every trial
        o = THETA[cand] + shift + gen.laplace(0.0, sens / b["eps_trial"], size=(n, width))
        if unit == "party":
            score = _clipped_loss(o, n_pos, n_neg, clip)  # public validation records
        else:
            sigma = clip / n_val * noise_multiplier("exact", b["eps_trial"], delta, 1)
            score = _clipped_loss(o, n_pos, n_neg, clip) + (gen.normal(0.0, sigma, size=(n, width)) if noise else 0.0)
        score[np.arange(width)[None, :] >= K[:, None]] = np.inf  # trials beyond K do not exist
        best = np.argmin(score, axis=1)
        chosen = cand[np.arange(n), best]
        if unit == "party":
            released = o[np.arange(n), best]
            out.append(_lr_score(released, THETA[chosen], sens / 2.0))
        else:
            final = THETA[chosen] + side * sens / 2.0 + gen.laplace(0.0, sens / b["eps_final"], size=n)
            out.append(2.0 * (chosen == 0) + _lr_score(final, THETA[chosen], sens / 2.0))
    return np.concatenate(out)


class SelectionProcedureAdapter:
    """Many-draws audit of the private selection and its release together (module docstring)."""

    id = "private_selection"
    method = "many_draws"
    privacy_unit = "record"  # per setting: ``unit``

    def run(self, setting: Mapping[str, Any], ctx: AuditContext) -> dict[str, Any]:
        start = time.perf_counter()
        unit = str(setting.get("unit", "record"))
        if unit not in ("record", "party"):
            raise ConfigError(f"audit setting 'private_selection': unit must be record or party, got {unit!r}")
        bug = bug_name(setting)
        if bug is not None and (bug != "unnoised_scores" or unit != "record"):
            raise ConfigError(f"audit setting 'private_selection': planted_bug {bug!r} is not plantable here "
                              "(only 'unnoised_scores', at unit record)")
        eps = float(setting["epsilon"])
        shape, mean, share, clip, n_val, sens = SHAPE, MEAN, FINAL_SHARE, SCORE_CLIP, N_VAL, SENSITIVITY
        delta = float(ctx.delta)
        b = budget(unit, eps, delta, shape, mean, share, clip, n_val)
        draws = int(setting.get("draws", ctx.many_draws["draws"]))
        label = setting_label(setting)
        args = (unit, b, sens, shape, mean, clip, n_val, delta, bug is None)
        s_d = run_procedure(rng(ctx.root_seed, "audit", "selection_d", label), 1, draws, *args)
        s_p = run_procedure(rng(ctx.root_seed, "audit", "selection_d'", label), -1, draws, *args)
        result = many_draws_audit(s_d, s_p, rng(ctx.root_seed, "audit", "split", self.id, label), ctx.beta, delta,
                                  float(ctx.many_draws["f_sel"]))
        return {
            "mechanism": self.id, "setting": label, "method": self.method, "dataset": None,
            "privacy_unit": unit, "planted_bug": bug is not None, "bug": bug, "noise_factor": 1.0,
            "eps_claimed": eps, "eps_accounted": b["eps_end_to_end"], "eps_accounted_scope": "end_to_end",
            "accountant": "rdp_random_stopping", "delta": delta, "beta": ctx.beta,
            "eps_lower": result.eps_lower, "eps_up": b["eps_end_to_end"], "mu": None, "eps_gdp": None,
            "noise": sens / b["eps_trial"], "T": 1, "trials": draws, "k": None, "guesses": None,
            "correct": None, "tp": result.tp, "fp": result.fp, "threshold": result.threshold, "n_min": None,
            "n": n_val, "seconds": time.perf_counter() - start,
            "data": (f"synthetic 1-D pair: two candidates ±1, K ~ TNB({shape:g}, E[K] = {mean:g}); "
                     + ("one validation record flipped (selection and final run)" if unit == "record"
                        else "one party moves every trial's model by its sensitivity; the selected trial released")),
        }
