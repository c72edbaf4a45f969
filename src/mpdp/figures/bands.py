"""Mean and 95 % Student-t confidence band over repetitions: the band every study draws."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats


def summarise(frame: pd.DataFrame, by: list[str], value: str) -> pd.DataFrame:
    """Mean, 95 % t-interval bounds (``lo``, ``hi``) and count of ``value`` over repetitions, per ``by``."""
    grouped = frame.groupby(by, sort=True)[value]
    out = grouped.agg(["mean", "std", "count"]).reset_index()
    half = stats.t.ppf(0.975, np.maximum(out["count"] - 1, 1)) * out["std"].fillna(0.0) / np.sqrt(out["count"])
    out["lo"], out["hi"] = out["mean"] - half, out["mean"] + half
    return out
