"""Audit of the whole private procedure: selection and release together (issues 43, 58; spec
audit.md A1, A4; experiments.md E10 "Hyper-parameters").

The benchmark's private protocol (:mod:`mpdp.studies.benchmark.selection`) is run end to end many
times on two neighbouring inputs, and the many-draws audit (:func:`mpdp.audit.many_draws.
many_draws_audit`, spec A1) bounds the ε of the *whole* procedure from below; the claim it is
held against is the row's accounted end-to-end ε for the individual that differs. One feature
(p = 1), two candidates standing for two knobs of the grid: candidate 0 releases θ₀ = +5,
candidate 1 θ₁ = −5 (the models a λ grid would give on a data set whose validation labels are
split almost evenly; at |θ| = 5 one record's clipped log-loss moves by ≈ ``score_clip``, the whole
sensitivity the score noise is calibrated to). K ~ truncated negative binomial (``trials_shape``, ``trials_mean``), each
trial draws a candidate uniformly. Each trial's release is θ_c + Lap(Δ/ε_t) (N-L2 in one
dimension); it is scored by the shipped :func:`~mpdp.studies.benchmark.selection.noisy_scores`
(the clipped log-loss on ``n_val`` validation records x = 1, ⌈n_val/2⌉ labelled +1 and the rest
−1, plus the shipped Gaussian noise for one validation record) on a batch of procedure runs at once.

- ``unit: record`` (the record-level protocol): scores noised at (ε_t, δ); the best trial's
  candidate is released by a fresh final run at ε_f = ``final_share``·ε. The neighbours differ in
  **one validation record** (+1 in D, −1 in D'), which the final run also trains on: its pre-noise
  model is θ_c + Δ/2 in D and θ_c − Δ/2 in D' (the worst case its sensitivity allows). Budget: the
  benchmark's (trial curve = pure ε_t ∨ the score's Gaussian curve, the final run composed, ε_t the
  largest meeting ε at δ).
- ``unit: party`` (the party-level protocol, one **party** differs): the trials run on the released
  parties, so every trial's pre-noise model moves with the audited party: θ_c + Δ/2 in D, θ_c − Δ/2
  in D'; the validation records are held out of every party (the same in D and D'), their scores
  noised at the shipped (ε_s, δ) of :func:`~mpdp.studies.benchmark.selection.validation_budget`; the
  selected trial is the release. Claim: the row's ``eps_end_to_end`` per party, (2 + η)ε_t = ε or
  the RDP route where tighter.
- ``unit: validation`` (the party-level protocol, one **validation record** differs, issue 58): the
  trials' releases are the same law in D and D' (the validation records lie in no party); one
  validation label is +1 in D, −1 in D'. Claim: the row's ``eps_validation_record``
  (:func:`~mpdp.studies.benchmark.selection.validation_budget`, the shipped budget).

Score of an output (large = "D"): the likelihood-ratio score of the released value against the
two means of its candidate, in [−1, 1], plus 2 when candidate 0 was chosen (the chosen knob shows
in the release). Planted bugs (:mod:`mpdp.audit.bugs`), each caught when ε̂ exceeds the claim:

- ``unnoised_scores`` (unit ``record``): the record-level scores are not noised;
- ``unnoised_party_scores`` (unit ``validation``): the party-level scores are not noised (the
  benchmark before issue 58): the winner follows the flipped validation record, ε̂ ≈ ln 8 at any ε;
- ``validation_in_parties`` (unit ``party``): the audited party also holds
  :data:`PARTY_VALIDATION` of the validation records (the benchmark's grid before issue 43), whose
  labels flip with it, while the claim is the party-level one: the score noise covers one record.
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
from mpdp.studies.benchmark import selection

#: the two candidates' pre-noise models (one feature)
THETA = np.array([5.0, -5.0])
#: draws per chunk (memory: chunk × E[K] × n_val floats in the shipped scoring)
CHUNK = 10_000
#: the protocol's knobs: the benchmark's defaults (``benchmark.selection``: geometric K with E[K] = 8,
#: half of ε to the final run, scores clipped at 5) and the pair's size (51 validation records,
#: release sensitivity 1e-3: the trials' noise then barely moves their scores, which the validation
#: labels decide, the case where one validation record matters most)
SHAPE, MEAN, FINAL_SHARE, SCORE_CLIP, N_VAL, SENSITIVITY = 1.0, 8.0, 0.5, 5.0, 51, 1e-3
#: the audited party's validation records under the planted bug ``validation_in_parties`` (about half
#: of the split: in the benchmark's grid before issue 43 one party held 25–720 of 800)
PARTY_VALIDATION = 25
#: the units: which protocol runs and which individual differs between D and D'
UNITS = ("record", "party", "validation")
#: the planted bugs of this adapter, each at its unit (module docstring)
PLANTABLE = {"unnoised_scores": "record", "unnoised_party_scores": "validation", "validation_in_parties": "party"}


def budget(unit: str, epsilon: float, delta: float, shape: float, mean: float, share: float,
           clip: float, n_val: int) -> dict[str, float]:
    """ε_t, ε_f, ε_s (the scores' per-trial ε), the end-to-end ε of the protocol of ``unit`` at target
    ``epsilon`` and the ε it claims for the individual that differs (``eps_claim``): the benchmark's
    formulas for a pure ε-DP release (:func:`mpdp.studies.benchmark.selection.budget`; the party-level
    scores' ε_s and ``eps_validation_record`` from the shipped
    :func:`~mpdp.studies.benchmark.selection.validation_budget`)."""
    del clip, n_val  # the score's Gaussian curve is per multiplier: its sensitivity cancels
    if unit in ("party", "validation"):
        eps_t = ps.calibrate_trial_epsilon(epsilon, delta, ps.pure_dp_rdp, np.zeros_like(ps.ORDERS), shape, mean)
        rdp = ps.rdp_to_epsilon(ps.repeat_and_select_rdp(ps.pure_dp_rdp(eps_t), shape, mean), delta)
        if epsilon / (2.0 + shape) > eps_t:
            eps_t, rdp = epsilon / (2.0 + shape), ps.pure_selection_epsilon(epsilon / (2.0 + shape), shape)
        eps_s, eps_val = selection.validation_budget(epsilon, delta, shape, mean)
        return {"eps_trial": eps_t, "eps_final": math.nan, "eps_score": eps_s, "eps_end_to_end": rdp,
                "eps_validation_record": eps_val, "eps_claim": eps_val if unit == "validation" else rdp}
    eps_f = share * epsilon
    final = ps.pure_dp_rdp(eps_f)

    def trial(e: float) -> np.ndarray:
        return np.maximum(ps.pure_dp_rdp(e), ps.gaussian_rdp(noise_multiplier("exact", e, delta, 1)))

    eps_t = ps.calibrate_trial_epsilon(epsilon, delta, trial, final, shape, mean)
    if eps_t <= 0:
        raise ConfigError(f"audit setting 'private_selection' at epsilon = {epsilon:g}: the split cannot meet it")
    total = ps.rdp_to_epsilon(ps.repeat_and_select_rdp(trial(eps_t), shape, mean) + final, delta)
    return {"eps_trial": eps_t, "eps_final": eps_f, "eps_score": eps_t, "eps_end_to_end": total,
            "eps_validation_record": total, "eps_claim": total}


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


def _labels(n_val: int, unit: str, side: int, bug: str | None) -> np.ndarray:
    """The validation labels of D (``side`` = +1) or D' (−1): ⌈n_val/2⌉ +1 and the rest −1 in D;
    D' flips the audited validation record (units ``record``, ``validation``) or, under
    ``validation_in_parties``, the audited party's :data:`PARTY_VALIDATION` records (all +1 in D)."""
    y = np.where(np.arange(n_val) < (n_val + 1) // 2, 1.0, -1.0)
    if bug == "validation_in_parties":
        y[:PARTY_VALIDATION] = float(side)
    elif unit in ("record", "validation") and side < 0:
        y[0] = -1.0
    return y


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
                  bug: str | None = None) -> np.ndarray:
    """Scores of ``draws`` runs of the whole procedure on D (``side`` = +1) or D' (−1), with the
    planted ``bug`` (None: the shipped protocol)."""
    X_val, y_val = np.ones((n_val, 1)), _labels(n_val, unit, side, bug)
    noise = bug not in ("unnoised_scores", "unnoised_party_scores")
    out = []
    for start in range(0, draws, CHUNK):
        n = min(CHUNK, draws - start)
        K = _trials(gen, n, shape, mean)
        width = int(K.max())
        cand = gen.integers(0, 2, size=(n, width))
        shift = side * sens / 2.0 if unit == "party" else 0.0  # the party moves every trial
        o = THETA[cand] + shift + gen.laplace(0.0, sens / b["eps_trial"], size=(n, width))
        live = np.arange(width)[None, :] < K[:, None]  # trials beyond K do not exist
        score = np.full((n, width), np.inf)
        score[live] = selection.noisy_scores(o[live][None, :], X_val, y_val, clip, b["eps_score"], delta, gen, noise)
        best = np.argmin(score, axis=1)
        chosen = cand[np.arange(n), best]
        if unit == "record":
            released = THETA[chosen] + side * sens / 2.0 + gen.laplace(0.0, sens / b["eps_final"], size=n)
        else:  # the selected trial itself
            released = o[np.arange(n), best]
        out.append(2.0 * (chosen == 0) + _lr_score(released, THETA[chosen], sens / 2.0))
    return np.concatenate(out)


#: what differs between D and D' at each unit (the audit row's ``data``)
DATA = {"record": "one validation record flipped (selection and final run)",
        "party": "one party moves every trial's model by its sensitivity; the selected trial released",
        "validation": "party-level protocol, one validation record (held out of every party) flipped; "
                      "the selected trial released"}


class SelectionProcedureAdapter:
    """Many-draws audit of the private selection and its release together (module docstring)."""

    id = "private_selection"
    method = "many_draws"
    privacy_unit = "record"  # per setting: ``unit``

    def run(self, setting: Mapping[str, Any], ctx: AuditContext) -> dict[str, Any]:
        start = time.perf_counter()
        unit = str(setting.get("unit", "record"))
        if unit not in UNITS:
            raise ConfigError(f"audit setting 'private_selection': unit must be one of {', '.join(UNITS)}, "
                              f"got {unit!r}")
        bug = bug_name(setting)
        if bug is not None and PLANTABLE.get(bug) != unit:
            raise ConfigError(f"audit setting 'private_selection': planted_bug {bug!r} is not plantable at unit "
                              f"{unit!r} (plantable: " + ", ".join(f"{k} at unit {v}" for k, v in PLANTABLE.items())
                              + ")")
        eps = float(setting["epsilon"])
        shape, mean, share, clip, n_val, sens = SHAPE, MEAN, FINAL_SHARE, SCORE_CLIP, N_VAL, SENSITIVITY
        delta = float(ctx.delta)
        b = budget(unit, eps, delta, shape, mean, share, clip, n_val)
        draws = int(setting.get("draws", ctx.many_draws["draws"]))
        label = setting_label(setting)
        args = (unit, b, sens, shape, mean, clip, n_val, delta, bug)
        s_d = run_procedure(rng(ctx.root_seed, "audit", "selection_d", label), 1, draws, *args)
        s_p = run_procedure(rng(ctx.root_seed, "audit", "selection_d'", label), -1, draws, *args)
        result = many_draws_audit(s_d, s_p, rng(ctx.root_seed, "audit", "split", self.id, label), ctx.beta, delta,
                                  float(ctx.many_draws["f_sel"]))
        return {
            "mechanism": self.id, "setting": label, "method": self.method, "dataset": None,
            "privacy_unit": "validation_record" if unit == "validation" else unit, "planted_bug": bug is not None,
            "bug": bug, "noise_factor": 1.0, "eps_claimed": eps, "eps_accounted": b["eps_claim"],
            "eps_accounted_scope": "end_to_end", "accountant": "rdp_random_stopping", "delta": delta,
            "beta": ctx.beta, "eps_lower": result.eps_lower, "eps_up": b["eps_claim"], "mu": None, "eps_gdp": None,
            "noise": sens / b["eps_trial"], "T": 1, "trials": draws, "k": None, "guesses": None,
            "correct": None, "tp": result.tp, "fp": result.fp, "threshold": result.threshold, "n_min": None,
            "n": n_val, "seconds": time.perf_counter() - start,
            "data": (f"synthetic 1-D pair: two candidates ±{THETA[0]:g}, K ~ TNB({shape:g}, E[K] = {mean:g}); " + DATA[unit]
                     + (f"; the party also holds {PARTY_VALIDATION} validation records" if bug == "validation_in_parties"
                        else "")),
        }
