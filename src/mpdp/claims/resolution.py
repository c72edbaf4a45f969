"""The data's resolution and the guard's practical margin (issue 42; docs/claims.md, "Numerically honest
tests" and "Practical margins"): the one place that decides which differences are zero.

* :func:`zero_below`: the threshold below which a difference on a metric is zero — half a test record
  (0.5 / n_test) for a rate over one test set whose size is known (accuracies and errors are multiples of
  1/n_test: anything smaller is float round-off), else :data:`RELATIVE_RESOLUTION` of the magnitude
  (losses and every other continuous quantity);
* :func:`on_grid`: rates over a known test set rounded to their record grid k / n_test;
* :func:`snap`: values whose magnitude is below that threshold set to exactly 0;
* :func:`guard_margin`: how far a method must be beyond its trivial baseline to be above chance
  (:class:`mpdp.claims.declare.Metric`'s ``guard_records`` / ``guard_share`` / ``guard_relative``).

Every kind of claim (compare, trend, bound, one-sample) and the informativeness guard go through these
functions, so "a cell whose repetitions all equal the baseline" has differences exactly 0, a standard
error exactly 0 and is never significant.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from mpdp.claims.declare import METRICS, RESOLUTION_COLUMN

#: a relative difference below this is float round-off (losses, ratios, every continuous quantity)
RELATIVE_RESOLUTION: float = 1e-12


def record(n_test: float | None) -> float:
    """One test record as a rate (1 / n_test), NaN when the test-set size is unknown."""
    return 1.0 / float(n_test) if n_test is not None and np.isfinite(n_test) and n_test > 0 else float("nan")


def zero_below(metric: str, scale: float, n_test: float | None = None, log: bool = False) -> float:
    """The magnitude below which a difference on ``metric`` is zero.

    ``scale`` is the magnitude of the values compared (their largest absolute value), ``n_test`` the
    test-set size behind a per-record metric, ``log``: the difference is of log10 values (a relative
    difference, :data:`RELATIVE_RESOLUTION` whatever the metric).
    """
    if log:
        return RELATIVE_RESOLUTION
    one = record(n_test)
    if METRICS[metric].per_record and np.isfinite(one):
        return 0.5 * one
    return RELATIVE_RESOLUTION * float(abs(scale)) if np.isfinite(scale) else 0.0


def on_grid(obs: pd.DataFrame) -> pd.DataFrame:
    """The observations with every per-record value (a rate over ``n_test`` records) rounded to its record
    grid k / n_test: a perturbation below half a record (float round-off) leaves it exactly unchanged.
    ``n_test`` comes from the data set's card (the test set every rate is computed on)."""
    if RESOLUTION_COLUMN not in obs or obs.empty:
        return obs
    n = pd.to_numeric(obs[RESOLUTION_COLUMN], errors="coerce").to_numpy(float)
    per_record = obs["metric"].map(lambda m: METRICS[m].per_record if m in METRICS else False).to_numpy(bool)
    hit = per_record & np.isfinite(n) & (n > 0)
    if not hit.any():
        return obs
    out = obs.copy()
    values = out["value"].to_numpy(float).copy()
    counts = values[hit] * n[hit]
    values[hit] = np.round(counts) / n[hit]
    out["value"] = values
    return out


def snap(values: np.ndarray, tol: float) -> np.ndarray:
    """``values`` with every magnitude below ``tol`` set to exactly 0."""
    x = np.asarray(values, dtype=float).copy()
    x[np.abs(x) < tol] = 0.0
    return x


def guard_margin(metric: str, base: float, reference: float | None = None,
                 n_test: float | None = None) -> tuple[float, str]:
    """The practical margin by which a method must beat the trivial baseline ``base`` on ``metric``, and
    how it was set: the largest of the metric's ``guard_records`` test records (when ``n_test`` is known),
    its ``guard_share`` of |base − reference| (when the converged non-private ``reference`` is known) and
    its ``guard_relative`` share of |base| (used only when no reference is known)."""
    m = METRICS[metric]
    parts: list[tuple[float, str]] = []
    one = record(n_test)
    if m.guard_records and np.isfinite(one):
        parts.append((m.guard_records * one, f"{m.guard_records:g} test records"))
    has_ref = reference is not None and np.isfinite(reference)
    if m.guard_share and has_ref:
        parts.append((m.guard_share * abs(base - float(reference)),  # type: ignore[arg-type]
                      f"{100 * m.guard_share:g} % of the gap to the converged reference {float(reference):.4g}"))  # type: ignore[arg-type]
    if m.guard_relative and not has_ref and np.isfinite(base):
        parts.append((m.guard_relative * abs(base), f"{100 * m.guard_relative:g} % of the baseline"))
    if not parts:
        return 0.0, "no practical margin declared"
    value, how = max(parts, key=lambda p: p[0])
    return float(value), how
