"""Planted bugs: deliberate mutations of the shipped code that the audit must catch (spec A4).

A setting's ``planted_bug`` names one (``true`` is ``noise_factor``):

- ``noise_factor``: every noise std times ``audit.bug_noise_factor[<method>]`` (a global
  factor; for the gradient family through the trainer's ``noise_scale``).
- ``largest_party_sigma``: a bug in the per-party σ mapping of the literal local mode — the
  trainer gives every party the σ of the largest party (the smallest σ_j = mult·2G/n_j of the
  equal-privacy reading), so the small parties are under-noised. It is planted by replacing
  :meth:`mpdp.mechanisms.Calibration.party_sigma`, the mapping the trainer calls, for the
  duration of one training; the ledger (computed apart) is left right, as it would be in a
  real bug of this kind.
- ``unnoised_scores``: the private selection scores its trials without their Gaussian noise
  while the private protocol is claimed (issue 43); planted in the whole-procedure audit
  (:mod:`mpdp.audit.selection_adapter`), where the winner then follows one validation record.
- ``objective_noise_scale``: objective perturbation's linear term is bᵀθ/n² instead of bᵀθ/n
  (the noise divided by n twice; an n-scaling slip of the kind diffprivlib fixed in its ε′ and Δ
  in March 2025, its issue #71; issue 56):
  planted by replacing :func:`mpdp.mechanisms.objective_perturbation.linear_term`, which the
  solver calls, for one block; the ledger is left right. Audited by
  :mod:`mpdp.audit.objective_adapter`.
- ``unnoised_party_scores``: the party-level private selection scores its trials on the validation
  records held out of every party without noise (the benchmark before issue 58, which declared
  them public); planted in the whole-procedure audit at unit ``validation`` (one validation record
  flipped), where the winner follows that record: ε̂ ≈ ln 8 at any target.
- ``validation_in_parties``: the audited party also holds validation records (the benchmark's grid
  before issue 43) while the party-level claim is kept; planted in the whole-procedure audit at
  unit ``party``: the scores' noise covers one validation record, not a party's.

Only a planted bug shows that the audit has power (spec A6.12).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from unittest import mock

import numpy as np

from mpdp.errors import ConfigError
from mpdp.mechanisms import Calibration, objective_perturbation

#: planted bugs -> the audit methods they apply to
BUGS: dict[str, tuple[str, ...]] = {
    "noise_factor": ("one_run", "many_draws", "canary_draws"),
    "largest_party_sigma": ("one_run", "canary_draws"),
    "unnoised_scores": ("many_draws",),
    "objective_noise_scale": ("many_draws",),
    "unnoised_party_scores": ("many_draws",),
    "validation_in_parties": ("many_draws",),
}


def bug_name(setting: Mapping[str, Any]) -> str | None:
    """The planted bug of ``setting`` (None when honest); a one-line error for unknown names."""
    value = setting.get("planted_bug", False)
    if value is True:
        return "noise_factor"
    if value is False or value is None:
        return None
    if value not in BUGS:
        raise ConfigError(f"config key 'audit.settings[].planted_bug': unknown bug {value!r}; "
                          f"known: true, false, {sorted(BUGS)}")
    return str(value)


def _largest_party_sigma(self: Calibration, party: int | None) -> float:
    """The mutated mapping: the smallest per-party σ (the largest party's) for every party."""
    if party is None or self.party_sigmas is None:
        return self.sigma
    return min(self.party_sigmas)


def _noise_over_n_squared(noise: np.ndarray, n: int) -> np.ndarray:
    """The mutated perturbation coefficient: b/n² (n times too little noise in θ)."""
    return noise / (n * n)


@contextmanager
def planted(setting: Mapping[str, Any], method: str, factor: float) -> Iterator[float]:
    """Apply the setting's planted bug while the block runs; yields the noise scale to use.

    ``factor``: ``audit.bug_noise_factor`` of ``method`` (used by ``noise_factor`` only).
    """
    bug = bug_name(setting)
    if bug is not None and method not in BUGS[bug]:
        raise ConfigError(f"config key 'audit.settings[].planted_bug': {bug!r} cannot be planted "
                          f"in a {method} audit (it applies to {list(BUGS[bug])})")
    if bug == "largest_party_sigma":
        with mock.patch.object(Calibration, "party_sigma", _largest_party_sigma):
            yield 1.0
    elif bug == "objective_noise_scale":
        with mock.patch.object(objective_perturbation, "linear_term", _noise_over_n_squared):
            yield 1.0
    else:
        yield factor if bug == "noise_factor" else 1.0
