"""One-run audit of Steinke, Nasr, Jagielski (NeurIPS 2023) (spec audit.md A2).

m canaries, each with a hidden sign S_i ∈ {−1, +1} drawn with probability ½; the auditor sees
one score per canary and guesses the sign of the ``k`` highest (+1) and the ``k`` lowest (−1)
scores, abstaining on the rest (r = 2k guesses, v correct). Under (ε, δ)-DP the number of
correct guesses is stochastically dominated as in SNJ23's main theorem, which gives the
p-value :func:`p_value`; ε̂ is the largest ε that the guesses reject at level α.
Guess counts come from a fixed set K chosen before the run, with a Bonferroni correction
α = β/|K| (spec A2 "Guesses and bound", pitfall A6.1), so no peeking is involved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit
from scipy.stats import binom

#: fractions of m defining the guess counts k (spec A2 step 1)
DEFAULT_K_FRACTIONS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5)

_XTOL = 1e-6


def p_value(m: int, r: int, v: int, epsilon: float, delta: float) -> float:
    """p(ε) of v correct guesses out of r with m canaries (spec A2 step 2; SNJ23 Thm, App. D).

    p = min{1, F(v) + 2mδ max_{1≤i≤v} (F(v − i) − F(v))/i} with F(x) = Pr[Bin(r, q) ≥ x],
    q = e^ε/(1 + e^ε); F(v) alone when δ = 0. Tails use ``binom.sf`` (pitfall A6.9).
    """
    q = float(expit(epsilon))
    tail = float(binom.sf(v - 1, r, q))
    if delta == 0 or v < 1:
        return min(1.0, tail)
    i = np.arange(1, v + 1)
    gains = (binom.sf(v - i - 1, r, q) - tail) / i
    return min(1.0, tail + 2 * m * delta * float(np.max(gains)))


def epsilon_lower(m: int, r: int, v: int, alpha: float, delta: float) -> float:
    """ε̂ = inf{ε ≥ 0 : p(ε) > α}, 0 if p(0) > α (spec A2 step 3).

    Bracketed by doubling, then Brent's method to 1e-6. p is non-decreasing in ε.
    """
    if not 0 <= v <= r:
        raise ValueError(f"need 0 <= v <= r, got v={v}, r={r}")
    if r == 0 or p_value(m, r, v, 0.0, delta) > alpha:
        return 0.0

    def objective(eps: float) -> float:
        return alpha - p_value(m, r, v, eps, delta)

    low, high = 0.0, 1.0
    while objective(high) >= 0:
        low, high = high, 2 * high
        if high > 1e4:  # every ε is rejected (e.g. v = r with huge r): report the bracket
            return low
    return float(brentq(objective, low, high, xtol=_XTOL))


def guess_counts(m: int, fractions: Sequence[float] = DEFAULT_K_FRACTIONS) -> list[int]:
    """The distinct guess counts k = round(f m) ≥ 1 with 2k ≤ m (spec A2 step 1)."""
    ks = sorted({max(1, round(f * m)) for f in fractions})
    return [k for k in ks if 2 * k <= m]


@dataclass(frozen=True)
class OneRunResult:
    """Outcome of :func:`one_run_audit`."""

    eps_lower: float
    k: int  # guess count (per side) of the best bound
    guesses: int  # r = 2k
    correct: int  # v
    m: int
    n_hypotheses: int  # |K| of the Bonferroni correction
    beta: float
    delta: float


def one_run_audit(
    scores: np.ndarray,
    signs: np.ndarray,
    beta: float = 0.05,
    delta: float = 0.0,
    fractions: Sequence[float] = DEFAULT_K_FRACTIONS,
) -> OneRunResult:
    """ε̂ from canary scores (large = sign +1) and their hidden signs (spec A2).

    For each k of :func:`guess_counts`, guess +1 for the top k scores and −1 for the bottom k;
    ε̂_k at level β/|K|; ε̂ = max_k ε̂_k (Bonferroni).
    """
    scores = np.asarray(scores, dtype=np.float64)
    signs = np.asarray(signs)
    m = scores.size
    if signs.shape != scores.shape or not np.all(np.abs(signs) == 1):
        raise ValueError("signs must be ±1, one per score")
    ks = guess_counts(m, fractions)
    if not ks:
        raise ValueError(f"too few canaries (m={m}) for any guess")
    order = np.argsort(scores, kind="stable")
    alpha = beta / len(ks)
    results = []
    for k in ks:
        correct = int(np.sum(signs[order[-k:]] == 1) + np.sum(signs[order[:k]] == -1))
        eps = epsilon_lower(m, 2 * k, correct, alpha, delta)
        results.append(OneRunResult(eps, k, 2 * k, correct, m, len(ks), beta, delta))
    return max(results, key=lambda result: result.eps_lower)
