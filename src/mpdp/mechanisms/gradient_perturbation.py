"""Gradient-perturbation mechanisms of the WD-DP paper (spec M2, M3, M4).

- ``wyx``: Wang–Ye–Xu centralised DP-GD on the pooled data (spec M2), mode ``central``.
- ``wddp``: WD-DP, weighted aggregation a_j = n_j/n (spec M3). ``local_then_aggregate`` is
  Algorithm 1 as printed (M3.1): every party runs T noisy local steps from the shared θ₀ with
  σ calibrated to the *total* n, then the server averages once. ``per_round`` is the reading
  of the proof (M3.2): one noisy step per round on the weighted sum of local gradients, which
  equals the pooled gradient, so it coincides with ``wyx``.
- ``nonprivate``: the same gradient descent as ``wyx`` with σ = 0 (spec M1b): separates the
  optimisation error from the privacy error; it gives no privacy (ε = ∞ in the ledger).
- ``jayaraman``: Jayaraman et al. gradient perturbation, simple average a_j = 1/m with the
  effective size m·n_(1) (spec M4.1 literal, M4.2 per round).

σ always comes from :func:`mpdp.privacy.calibration.noise_std` with the accountant of the run (spec §0.5),
or, for the per-party accountant ``exact_per_party`` of the ``equal_privacy`` reading (literal
mode only), from :func:`mpdp.privacy.calibration.per_party_noise_std` (σ_j calibrated to party j's own
n_j, spec I-1). The ledger's ε is computed for the mechanism as implemented: composed
Gaussian with the calibration's sensitivity for per-round/central runs (scope ``aggregate``,
exact); for the literal local mode an upper bound, the worst party's trajectory
(sensitivity 2G/n_j) by post-processing (scope ``worst_party``, spec M3.1, M4.1, I-1).
With ``noise_sharing: shared`` (one z_t for all parties) the parties' releases are
correlated and that argument fails; no valid ε is known, so the ledger refuses: ε is NaN
with scope ``unaccounted`` (and training logs a warning).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mpdp.mechanisms.base import Calibration, RunSpec
from mpdp.privacy.calibration import (
    PER_PARTY_ACCOUNTANTS,
    PrivacyParameterError,
    noise_std,
    per_party_noise_std,
    sensitivity_replace_one,
)
from mpdp.privacy.ledger import accounted_epsilon, worst_party_epsilon


@dataclass(frozen=True)
class GradientPerturbation:
    """A full-batch noisy-GD mechanism defined by how it aggregates the parties."""

    id: str
    aggregation: str  # pooled | weighted | simple
    modes: tuple[str, ...]

    def effective_size(self, party_sizes: np.ndarray) -> float:
        """n_eff of the calibration: n (pooled, weighted) or m·n_(1) (simple; spec M4)."""
        sizes = np.asarray(party_sizes)
        if self.aggregation == "simple":
            return float(len(sizes) * sizes.min())
        return float(sizes.sum())

    def aggregation_weights(self, party_sizes: np.ndarray) -> np.ndarray:
        """Weights a_j of the parties in the aggregate: n_j/n (weighted, pooled) or 1/m (simple)."""
        sizes = np.asarray(party_sizes, dtype=np.float64)
        if self.aggregation == "simple":
            return np.full(len(sizes), 1.0 / len(sizes))
        return sizes / sizes.sum()

    def calibrate(self, run: RunSpec, party_sizes: Sequence[int]) -> Calibration:
        if run.mode not in self.modes:
            raise ValueError(f"mechanism {self.id!r} has no mode {run.mode!r}")
        sizes = np.asarray(party_sizes)
        if run.accountant in PER_PARTY_ACCOUNTANTS:
            return self._calibrate_per_party(run, sizes)
        n_eff = self.effective_size(sizes)
        sensitivity = sensitivity_replace_one(run.G, n_eff)
        sigma = noise_std(run.accountant, run.epsilon, run.delta, run.T, sensitivity)
        if run.mode == "local_then_aggregate":
            if run.noise_sharing == "shared":
                return Calibration(
                    sigma, sensitivity, n_eff, run.accountant, float("nan"), "unaccounted"
                )
            eps = worst_party_epsilon(sigma, run.G, sizes, run.T, run.delta)
            scope = "worst_party"
        else:
            eps = accounted_epsilon(sigma, sensitivity, run.T, run.delta)
            scope = "aggregate"
        return Calibration(sigma, sensitivity, n_eff, run.accountant, eps, scope)

    def _calibrate_per_party(self, run: RunSpec, sizes: np.ndarray) -> Calibration:
        """Literal mode with σ_j calibrated to each party's own n_j (``equal_privacy``, I-1).

        The ledger row records the smallest party's values (n_eff = n_(1), sensitivity
        2G/n_(1) and its σ, the largest); every party's σ_j is in ``party_sigmas``.
        """
        if run.mode != "local_then_aggregate" or run.noise_sharing == "shared":
            raise PrivacyParameterError(
                f"accountant {run.accountant!r} calibrates each party of the literal mode with "
                "independent noise; got mode "
                f"{run.mode!r}, noise_sharing {run.noise_sharing!r} (use 'exact' otherwise)"
            )
        sigmas = per_party_noise_std(run.accountant, run.epsilon, run.delta, run.T, run.G, sizes)
        smallest = int(np.argmin(sizes))
        n_min = float(sizes[smallest])
        eps = worst_party_epsilon(sigmas, run.G, sizes, run.T, run.delta)
        return Calibration(
            float(sigmas[smallest]), sensitivity_replace_one(run.G, n_min), n_min,
            run.accountant, eps, "worst_party", tuple(float(s) for s in sigmas),
        )

    def record_weights(self, party_sizes: np.ndarray) -> np.ndarray:
        """Weight of each record, in party order, in the per-round aggregated gradient.

        The server's gradient is Σ_j a_j ∇L_{D_j} = Σ_j Σ_{i∈D_j} (a_j/n_j) ∇ℓ_i (+ λθ), so a
        record of party j has weight a_j/n_j: 1/n for WD-DP (the pooled gradient, M3.2) and
        1/(m n_j) for the simple average (M4.2).
        """
        sizes = np.asarray(party_sizes)
        return np.repeat(self.aggregation_weights(sizes) / sizes, sizes)


@dataclass(frozen=True)
class NonPrivateGD(GradientPerturbation):
    """Spec M1b: full-batch GD on the pooled data without noise."""

    def calibrate(self, run: RunSpec, party_sizes: Sequence[int]) -> Calibration:
        n_eff = self.effective_size(np.asarray(party_sizes))
        sensitivity = sensitivity_replace_one(run.G, n_eff)
        return Calibration(0.0, sensitivity, n_eff, "none", float("inf"), "aggregate")


NONPRIVATE = NonPrivateGD("nonprivate", "pooled", ("central",))
WYX = GradientPerturbation("wyx", "pooled", ("central",))
WDDP = GradientPerturbation("wddp", "weighted", ("local_then_aggregate", "per_round"))
JAYARAMAN = GradientPerturbation("jayaraman", "simple", ("local_then_aggregate", "per_round"))
