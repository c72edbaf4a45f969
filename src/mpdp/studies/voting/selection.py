"""λ selection protocols of the voting study (issue 34; spec experiments.md E5 "λ with the noise in the loop").

``voting.selection.protocol`` names the protocol of the study's rows (``experiment = voting``);
``voting.selection.final_run_reading`` adds the ``oracle`` rows under ``experiment =
voting_final_run`` (the papers' convention), which the study's claims and figures do not read.

- ``private`` (default): per (table, M, ε, mechanism), **random stopping** (Papernot & Steinke 2022;
  :mod:`mpdp.privacy.private_selection`): K ~ truncated negative binomial (``trials.shape`` η,
  ``trials.mean``) trials, each drawing λ uniformly from ``voting.lambda_grid`` and releasing that
  mechanism's model with N-L2 noise at ε_t; each is scored by its 0/1 error on the validation
  split, which lies **outside the private pool** (in no party), **plus Laplace noise for one
  validation record** (:func:`noisy_errors`), and the lowest noisy score wins. Two kinds of
  individual, two guarantees, both pure (δ = 0) and both at most the target ε (issue 58):

  - a **member of the private pool** (a party, or a record, in the mechanism's ``privacy_unit``):
    every release is pure ε_t-DP in that unit and the scores are a post-processing of the
    releases (given the validation records and the score noise, which do not depend on the pool),
    so the selection is ((2 + η)ε_t, 0)-DP
    (:func:`~mpdp.privacy.private_selection.pure_selection_epsilon`). The chosen λ is then used
    by the row's release at ε_f = ``final_share``·ε, and by basic composition the whole procedure
    is (ε_sel + ε_f, 0)-DP with ε_t = (1 − share)·ε/(2 + η), i.e. exactly ε;
  - a **validation record** (replace one of them): the releases never read it, so a trial is its
    Laplace score, ε_s-DP for sensitivity 1/n_val (a 0/1 error rate over n_val records), and the
    selection is its random stopping, ((2 + η)ε_s, 0)-DP by the same theorem; the row's release
    reads no validation record (it only uses the chosen λ: post-processing). ε_s = ε/(2 + η),
    so ``eps_validation_record`` = ε exactly (:func:`budget`).

  Laplace rather than the benchmark's Gaussian score noise: the study's guarantees are pure
  (``delta_end_to_end`` = 0), and at δ = 0 the Laplace score has about half the standard deviation
  the Gaussian would need at (ε, 10⁻⁵) through the RDP conversion. Columns: ``eps_trial``,
  ``eps_selection``, ``eps_accounted`` (the release alone), ``eps_end_to_end``,
  ``delta_end_to_end`` (0), ``eps_validation_record``, ``delta_validation_record`` (0),
  ``score_multiplier`` (the score noise's Laplace scale b over its sensitivity 1/n_val: 1/ε_s)
  and ``validation_records`` (where the validation records lie and what protects them,
  :data:`VALIDATION`).

  **Where the trials run (issue 43).** A guarantee per record holds whichever party holds the
  record, so the record-level mechanisms (:func:`selects_on_release_partition` false) run their
  trials once per M on the tuning partition of the private pool. A guarantee per *party* composes
  only when the trials and the release see the same parties: one party of a repetition's partition
  spreads over up to M parties of a partition drawn apart, and group privacy would multiply the
  selection's cost by that many. The party-level mechanisms (``hamm_vote``, ``hamm_soft``,
  ``param_avg``) therefore run their trials on the partition of the repetition they release
  (tuning stream keyed by the repetition), so ε_sel + ε_f is per party.

  The accounting reads what each release really gives (``eps_accounted`` of its calibration, not
  its calibration target): with ``code_faithful_laplace`` on, ``jayaraman_output``'s trials and
  release give √d times their target, and the row's ``eps_end_to_end`` says so (it then exceeds
  the target, a FAIL the ledger shows rather than hides).
- ``oracle``: today's selection, **non-private (the papers' convention)**: every λ of the grid
  scored over ``tune_draws`` private releases at ε (120 unaccounted releases per cell at the
  defaults) by their un-noised validation error; ``eps_selection`` = ``eps_end_to_end`` =
  ``eps_validation_record`` = +inf.

The controls at ε = ∞ (``*_np``) are not private under either protocol; their λ is chosen without
noise on the validation split as before (``eps_validation_record`` = +inf). With ``voting.lambda``
set nothing is selected and no row reads a validation record (``eps_validation_record`` = 0).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from mpdp.mechanisms.output_perturbation import PRIVACY_UNIT
from mpdp.privacy.private_selection import pure_selection_epsilon

LABELS = {
    "private": "private selection (random stopping, Papernot & Steinke 2022), end-to-end accounted for every "
               "record read: the private pool's members (in the row's unit) and validation records (noised scores)",
    "oracle": "non-private selection (the papers' convention)",
}
#: the ``experiment`` of the oracle rows written next to private ones
FINAL_RUN = "voting_final_run"
#: where a row's validation records lie and what protects them (column ``validation_records``)
VALIDATION = {
    "private": "outside the private pool: scores noised per record (Laplace), eps_validation_record",
    "oracle": "outside the private pool, read without noise: no finite epsilon",
    "control": "non-private control: lambda chosen without noise on them, no finite epsilon",
    "none": "not read (voting.lambda configured): nothing selected",
}


def protocols(cfg: Mapping[str, Any]) -> list[str]:
    """The protocols a table is trained under: the headline one, then ``oracle`` if read too."""
    s = cfg["voting"]["selection"]
    out = [s["protocol"]]
    if s["final_run_reading"] and s["protocol"] != "oracle" and cfg["voting"]["lambda"] is None:
        out.append("oracle")
    return out


def budget(cfg: Mapping[str, Any], epsilon: float) -> dict[str, float]:
    """The private protocol's split of a target ε (module docstring): per member of the private pool
    (trials at ε_t, release at ε_f) and per validation record (scores at ε_s, ``eps_validation_record``)."""
    s = cfg["voting"]["selection"]
    shape, share = float(s["trials"]["shape"]), float(s["final_share"])
    eps_t = (1.0 - share) * float(epsilon) / (2.0 + shape)
    eps_sel = pure_selection_epsilon(eps_t, shape)
    eps_f = share * float(epsilon)
    eps_s = float(epsilon) / (2.0 + shape)
    return {"eps_trial": eps_t, "eps_final": eps_f, "eps_selection": eps_sel, "eps_end_to_end": eps_sel + eps_f,
            "delta_end_to_end": 0.0, "eps_score": eps_s,
            "eps_validation_record": pure_selection_epsilon(eps_s, shape), "delta_validation_record": 0.0}


def score_scale(n_val: int, eps_score: float) -> float:
    """The Laplace scale b of a trial's score: sensitivity 1/n_val (replace one validation record in
    a 0/1 error rate over n_val records) over ε_s, so that the score is ε_s-DP for that record."""
    return 1.0 / (int(n_val) * float(eps_score))


def noisy_errors(errors: np.ndarray, n_val: int, eps_score: float, gen: np.random.Generator) -> np.ndarray:
    """The private trial scores: each validation error rate + Laplace(0, :func:`score_scale`), one
    draw per trial from ``gen`` (module docstring)."""
    errors = np.asarray(errors, dtype=np.float64)
    return errors + gen.laplace(0.0, score_scale(n_val, eps_score), size=errors.shape)


def selects_on_release_partition(mechanism: str) -> bool:
    """Whether ``mechanism``'s private trials run on the partition of the repetition it releases
    (its guarantee is per party; module docstring) rather than on the tuning partition."""
    return PRIVACY_UNIT[mechanism] == "party"


def fields(cfg: Mapping[str, Any], protocol: str, epsilon: float, eps_accounted: float) -> dict[str, Any]:
    """The selection columns of a row (private, oracle, or λ configured: nothing selected).

    ``eps_accounted`` is the ε the row's release really gives (its calibration's ledger); the trials
    share the release's calibration, so each gives ε_t times the same ratio to its target, and the
    selection and the whole procedure are charged from those (module docstring). Every row also
    states its guarantee for one validation record (``eps_validation_record``, module docstring).
    """
    none = cfg["voting"]["lambda"] is not None
    if none or not math.isfinite(epsilon):
        return {"selection": "none", "eps_trial": math.nan, "eps_selection": 0.0,
                "eps_end_to_end": float(eps_accounted), "delta_end_to_end": 0.0,
                **_validation(0.0 if none else math.inf, 0.0 if none else math.nan, math.nan,
                              "none" if none else "control")}
    if protocol == "private":
        b = budget(cfg, epsilon)
        ratio = float(eps_accounted) / b["eps_final"]  # 1 for N-L2; √d for N-Lap1 (I-9)
        eps_sel = pure_selection_epsilon(b["eps_trial"] * ratio, float(cfg["voting"]["selection"]["trials"]["shape"]))
        return {"selection": protocol, "eps_trial": b["eps_trial"], "eps_selection": eps_sel,
                "eps_end_to_end": eps_sel + float(eps_accounted), "delta_end_to_end": 0.0,
                **_validation(b["eps_validation_record"], b["delta_validation_record"], 1.0 / b["eps_score"],
                              "private")}
    return {"selection": protocol, "eps_trial": math.nan, "eps_selection": math.inf, "eps_end_to_end": math.inf,
            "delta_end_to_end": math.nan, **_validation(math.inf, math.nan, math.nan, "oracle")}


def _validation(eps: float, delta: float, multiplier: float, kind: str) -> dict[str, Any]:
    """The validation-record columns of a row (module docstring): ``score_multiplier`` is the score
    noise's Laplace scale over its sensitivity (1/ε_s; NaN where the scores are not noised)."""
    return {"eps_validation_record": eps, "delta_validation_record": delta, "score_multiplier": multiplier,
            "validation_records": VALIDATION[kind]}


def final_run_tables(tables: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The oracle rows (``voting_final_run``) of each table relabelled as the study's rows, with the
    λ sweep, so that the claims can be evaluated on the papers' convention too."""
    from mpdp.studies.voting.plan import MAIN, SWEEP

    out = {}
    for name, df in tables.items():
        if (df["experiment"] == FINAL_RUN).any():
            fin = df[df["experiment"].isin([FINAL_RUN, SWEEP])]
            out[name] = fin.assign(experiment=fin["experiment"].replace({FINAL_RUN: MAIN}))
    return out
