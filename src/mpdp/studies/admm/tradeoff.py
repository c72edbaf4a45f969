"""The trade-off model of Zhang–Zhu Sec. V (spec bounds.md B7) [REC functional forms].

* :func:`fit_g`: least-squares fit of g(α) = κ₁e^{−κ₂α} + κ₃ (κ ≥ 0) to (α, loss) points;
* :func:`alpha_star`: α* = argmax_α U^p(α) − g(α) with U^p(α) = q e^{−α}, on the α range;
* :func:`fit_table`: κ per (mechanism, topology, iteration) and α*, the ``zz_table``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import curve_fit


@dataclass(frozen=True)
class GFit:
    """Fitted κ₁, κ₂, κ₃ and the root-mean-square residual."""

    kappa1: float
    kappa2: float
    kappa3: float
    rmse: float

    def __call__(self, alpha: np.ndarray | float) -> np.ndarray:
        return g(np.asarray(alpha, dtype=float), self.kappa1, self.kappa2, self.kappa3)


def g(alpha: np.ndarray, k1: float, k2: float, k3: float) -> np.ndarray:
    """g(α) = κ₁e^{−κ₂α} + κ₃ (spec B7 default family)."""
    return k1 * np.exp(-k2 * alpha) + k3


def fit_g(alpha: np.ndarray, loss: np.ndarray) -> GFit:
    """Least squares with κ ≥ 0 (spec B7). NaN fit when fewer than 3 distinct α or no finite data."""
    alpha = np.asarray(alpha, dtype=float)
    loss = np.asarray(loss, dtype=float)
    ok = np.isfinite(alpha) & np.isfinite(loss)
    alpha, loss = alpha[ok], loss[ok]
    if np.unique(alpha).size < 3:
        return GFit(math.nan, math.nan, math.nan, math.nan)
    k3 = float(loss.min())
    k1 = max(float(loss.max() - k3), 1e-12)
    k2 = 1.0 / max(float(np.median(alpha)), 1e-12)
    best = None
    for scale in (1.0, 0.1, 10.0, 100.0):  # a few starts for κ₂ (the only nonlinear parameter)
        try:
            params, _ = curve_fit(g, alpha, loss, p0=[k1, k2 * scale, k3], bounds=(0.0, np.inf),
                                  maxfev=20000)
        except (RuntimeError, ValueError):
            continue
        rmse = float(np.sqrt(np.mean((g(alpha, *params) - loss) ** 2)))
        if best is None or rmse < best.rmse:
            best = GFit(float(params[0]), float(params[1]), float(params[2]), rmse)
    return best or GFit(math.nan, math.nan, math.nan, math.nan)


def utility(alpha: np.ndarray, q: float) -> np.ndarray:
    """U^p(α) = q e^{−α}, convex and decreasing (spec B7 default) [REC]."""
    return q * np.exp(-np.asarray(alpha, dtype=float))


def alpha_star(fit: GFit, q: float, alpha_min: float, alpha_max: float, points: int = 4001) -> float:
    """argmax_α U^p(α) − g(α) on a log grid over [alpha_min, alpha_max] (spec B7)."""
    if not math.isfinite(fit.kappa1):
        return math.nan
    grid = np.geomspace(alpha_min, alpha_max, points)
    return float(grid[np.argmax(utility(grid, q) - fit(grid))])


def fit_table(table: pd.DataFrame, iterations: list[int], q: float) -> pd.DataFrame:
    """κ₁, κ₂, κ₃, RMSE and α* per (topology, mechanism, iteration), fitted on every repetition's
    (α, training loss) point at that iteration (private mechanisms only)."""
    rows = []
    private = table[table["mechanism"].isin(["dvp", "pvp"])]
    for (top, mech), runs in private.groupby(["topology", "mechanism"], sort=True):
        for t in iterations:
            at = runs[runs["iteration"] == t]
            if at.empty:
                continue
            fit = fit_g(at["alpha"].to_numpy(), at["train_loss"].to_numpy())
            rows.append({
                "topology": top, "mechanism": mech, "iteration": int(t),
                "kappa1": fit.kappa1, "kappa2": fit.kappa2, "kappa3": fit.kappa3, "rmse": fit.rmse,
                "alpha_star": alpha_star(fit, q, float(at["alpha"].min()), float(at["alpha"].max())),
                "utility_q": q, "n_points": len(at),
            })
    return pd.DataFrame(rows)
