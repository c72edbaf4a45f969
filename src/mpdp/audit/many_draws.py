"""Many-draws distinguishing audit with Clopper–Pearson intervals (spec audit.md A1).

Under (ε, δ)-DP every fixed test satisfies TPR ≤ e^ε FPR + δ and TNR ≤ e^ε FNR + δ
(Jagielski, Ullman, Oprea 2020; Nasr et al. 2021). Run the mechanism many times on each of
two neighbouring inputs D and D', score every output (large = "D"), choose a threshold on a
*selection* split and count on a disjoint *evaluation* split; one-sided Clopper–Pearson
bounds at β/2 per rate turn the counts into a lower bound ε̂ that holds with probability
≥ 1 − β (spec A1 steps 2–6, pitfalls A6.1–A6.3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import beta as beta_dist

#: at most this many candidate thresholds are scored on the selection split (spec A1 step 3)
MAX_THRESHOLDS = 5000


def clopper_pearson_upper(k: int | np.ndarray, n: int, alpha: float) -> np.ndarray:
    """One-sided upper (1 − α) Clopper–Pearson bound on a rate from ``k`` successes of ``n``.

    ``B⁻¹(1 − α; k + 1, n − k)``, and 1 when ``k = n`` (spec A1 step 5; computed with
    ``beta.isf``, never ``1 − cdf``, pitfall A6.9).
    """
    k = np.asarray(k, dtype=np.float64)
    if n < 1 or np.any(k < 0) or np.any(k > n):
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    with np.errstate(invalid="ignore"):
        upper = beta_dist.isf(alpha, k + 1, np.maximum(n - k, 1))
    return np.where(k >= n, 1.0, upper)


def _log_ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """ln(numerator/denominator) where numerator > 0, else 0 (spec A1 step 6)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.log(numerator) - np.log(denominator)
    return np.where(numerator > 0, value, 0.0)


def epsilon_from_counts(
    tp: int | np.ndarray,
    fp: int | np.ndarray,
    n_pos: int,
    n_neg: int,
    beta: float = 0.05,
    delta: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Lower bound ε̂ from the counts of one fixed test (spec A1 steps 5–6).

    ``tp`` of ``n_pos`` outputs on D and ``fp`` of ``n_neg`` outputs on D' are flagged "D".
    FPR_ub and FNR_ub are one-sided Clopper–Pearson bounds at β/2 each; then
    ε̂ = max{0, ln((TPR_lb − δ)/FPR_ub), ln((TNR_lb − δ)/FNR_ub)} (a term with a numerator
    ≤ 0 counts as 0). Both directions reuse the same two intervals, so the joint coverage is
    ≥ 1 − β. Vectorised over arrays of counts.

    Returns:
        ``(eps, forward, reverse)``: the bound and its two terms.
    """
    tp = np.asarray(tp)
    fp = np.asarray(fp)
    fpr_ub = clopper_pearson_upper(fp, n_neg, beta / 2)
    fnr_ub = clopper_pearson_upper(n_pos - tp, n_pos, beta / 2)
    forward = _log_ratio(1.0 - fnr_ub - delta, fpr_ub)
    reverse = _log_ratio(1.0 - fpr_ub - delta, fnr_ub)
    return np.maximum(0.0, np.maximum(forward, reverse)), forward, reverse


def _counts_at(sorted_scores: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """#{s ≥ t} for each threshold t."""
    return sorted_scores.size - np.searchsorted(sorted_scores, thresholds, side="left")


@dataclass(frozen=True)
class ManyDrawsResult:
    """Outcome of :func:`many_draws_audit` (the fields spec A1 asks to report)."""

    eps_lower: float
    threshold: float
    tp: int
    fp: int
    n: int  # evaluation draws per side
    n_selection: int  # selection draws per side
    beta: float
    delta: float


def many_draws_audit(
    scores_d: np.ndarray,
    scores_d_prime: np.ndarray,
    rng: np.random.Generator,
    beta: float = 0.05,
    delta: float = 0.0,
    f_sel: float = 0.2,
) -> ManyDrawsResult:
    """ε̂ from scores of independent runs on D (``scores_d``) and on D' (spec A1 steps 2–6).

    Each side is split at random (``rng``): a fraction ``f_sel`` chooses the threshold t* that
    maximises the bound on the selection counts (candidate thresholds: the distinct selection
    scores, thinned to :data:`MAX_THRESHOLDS`); the rest, ``n`` draws per side (the smaller
    side's count), gives the counts TP, FP at t* and the bound. Selection and evaluation
    never share a draw (pitfall A6.1).
    """
    if not 0 < f_sel < 1:
        raise ValueError(f"f_sel must be in (0, 1), got {f_sel!r}")
    scores_d = np.asarray(scores_d, dtype=np.float64)
    scores_d_prime = np.asarray(scores_d_prime, dtype=np.float64)
    n_side = min(scores_d.size, scores_d_prime.size)
    n_sel = int(math.floor(f_sel * n_side))
    if n_sel < 1 or n_side - n_sel < 1:
        raise ValueError(f"too few draws ({n_side} per side) for a selection split of {f_sel}")
    perm_d = rng.permutation(scores_d.size)[:n_side]
    perm_p = rng.permutation(scores_d_prime.size)[:n_side]
    sel_d, ev_d = np.sort(scores_d[perm_d[:n_sel]]), np.sort(scores_d[perm_d[n_sel:]])
    sel_p, ev_p = np.sort(scores_d_prime[perm_p[:n_sel]]), np.sort(scores_d_prime[perm_p[n_sel:]])
    candidates = np.unique(np.concatenate([sel_d, sel_p]))
    if candidates.size > MAX_THRESHOLDS:
        idx = np.unique(np.linspace(0, candidates.size - 1, MAX_THRESHOLDS).round().astype(int))
        candidates = candidates[idx]
    eps_sel, _, _ = epsilon_from_counts(
        _counts_at(sel_d, candidates), _counts_at(sel_p, candidates), n_sel, n_sel, beta, delta
    )
    t_star = float(candidates[int(np.argmax(eps_sel))])
    n_eval = n_side - n_sel
    tp = int(_counts_at(ev_d, np.array([t_star]))[0])
    fp = int(_counts_at(ev_p, np.array([t_star]))[0])
    eps, _, _ = epsilon_from_counts(tp, fp, n_eval, n_eval, beta, delta)
    return ManyDrawsResult(float(eps), t_star, tp, fp, n_eval, n_sel, beta, delta)
