"""The mechanism interface shared by every paper's mechanisms.

A *run* (:class:`RunSpec`) is one training of one mechanism at one setting and repetition.
A mechanism turns runs into a privacy :class:`Calibration` (noise actually used and the ε it
really gives) and, together with its family's trainer, into final parameters. The training
jobs only talk to this interface, so new families (ADMM, voting, averaging, least squares)
plug in by registering a :class:`Mechanism` and a batch trainer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np


@dataclass(frozen=True)
class RunSpec:
    """One run: every field that determines its result (with the data and the root seed)."""

    dataset: str
    experiment: str  # eps_sweep | u_sweep | cv
    mechanism: str
    mode: str
    accountant: str
    epsilon: float
    delta: float
    rep: int  # index of the partition / repetition within the batch's PartitionSet
    eta: float
    T: int
    lam: float
    G: float
    m: int | None = None
    u: int | None = None
    noise_sharing: str = "independent"
    seed: int = 0  # extra noise-seed index (cross-validation draws several per fold)
    eta_source: str = "config"
    #: (mechanism, mode, m) whose noise stream this run uses instead of its own; set for
    #: mechanisms identical in distribution to another (per-round WD-DP ≡ WYX, spec M3.2), so
    #: that they share their noise (common random numbers) and their results coincide
    noise_as: tuple[str, str, int | None] | None = None

    def noise_key(self, party: int | None = None) -> tuple:
        """Key of the run's noise stream (spec E0): a run's noise depends only on its identity.

        In the literal local mode each party has its own stream unless ``noise_sharing`` is
        ``shared`` (spec M3.1, I-2), in which case all parties draw the same ``z_t``. With
        ``noise_as`` the run draws the stream of that (mechanism, mode, m) instead.
        """
        if self.noise_sharing == "shared":
            party = None
        mechanism, mode, m = self.noise_as or (self.mechanism, self.mode, self.m)
        return (
            "noise", self.dataset, self.experiment, mechanism, mode, self.accountant,
            m, self.u, float(self.epsilon), float(self.eta), self.rep, self.seed, party,
        )


@dataclass(frozen=True)
class Calibration:
    """The privacy ledger entry of one run."""

    sigma: float  # per-coordinate std of the Gaussian noise added per step
    sensitivity: float  # per-step L2 sensitivity assumed by the calibration
    n_eff: float  # effective size in the calibration (n, or m n_(1) for the simple average)
    accountant: str  # accountant actually used
    eps_accounted: float  # ledger ε at δ of the mechanism as implemented (scope below)
    #: aggregate: exact ε of the released aggregate (per-round, central);
    #: worst_party: upper bound, the worst party's trajectory by post-processing (literal);
    #: unaccounted: no valid ε known (literal mode with shared noise), eps_accounted is NaN
    eps_accounted_scope: str
    #: per-party noise stds (literal mode calibrated per party, ``exact_per_party``); else None
    party_sigmas: tuple[float, ...] | None = None

    def party_sigma(self, party: int | None) -> float:
        """Noise std of ``party``'s columns (the run's σ unless calibrated per party)."""
        if party is None or self.party_sigmas is None:
            return self.sigma
        return self.party_sigmas[party]


class Mechanism(Protocol):
    """What every mechanism provides to the training jobs."""

    id: str
    modes: tuple[str, ...]

    def calibrate(self, run: RunSpec, party_sizes: Sequence[int]) -> Calibration:
        """Noise scale and ledger for ``run`` on a partition with ``party_sizes``."""
        ...

    def aggregation_weights(self, party_sizes: np.ndarray) -> np.ndarray:
        """Weights a_j of the parties' contributions (sum to 1)."""
        ...
