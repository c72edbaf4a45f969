"""The one claims engine (issue 33; spec experiments.md E3.4 "claims check", applied to every study):
every declared claim, every cell where it is defined.

:func:`evaluate` turns declarations (:class:`mpdp.claims.declare.Claim`), a study's tidy
per-repetition observations and its trivial baselines into the cells table (one row per claim ×
cell, :data:`mpdp.claims.tables.CELL_COLUMNS`); :func:`verdicts` turns the cells into one verdict
per claim and reading (:data:`mpdp.claims.tables.VERDICT_COLUMNS`). The rules (docs/claims.md):

1. **Per cell**, the per-repetition statistic of the claim's kind (paired difference or log-ratio,
   fitted change along an axis, fraction of draws above a bound, one-sample value), its summary
   (mean, median or trimmed mean) with a 95 % interval and one-sided p-values for and against the
   claim (:mod:`mpdp.claims.summaries`).
2. **Informative cell**: every guarded method beats its trivial baseline on the guard metric
   (significantly, one-sided at :data:`~mpdp.claims.summaries.ALPHA`; where the guard metric is
   observed along an axis, at some point of it), and no method the claim uses is marked unusable (an unconverged reference).
   Uninformative cells are reported, never scored.
3. **Holm** across the informative cells of a claim and reading, separately for the p-values for
   and against; a cell is ``for`` / ``against`` when its Holm-adjusted p-value is below ALPHA,
   else ``neutral``; ``no_data`` when it has no value.
4. **Verdict**: no cell with data → INCONCLUSIVE; no informative cell → UNINFORMATIVE; a bound
   whose observed slack exceeds its ``vacuous_factor`` in every informative cell → VACUOUS; cells
   both for and against → MIXED; any against → FAILS; any for → HOLDS; else INCONCLUSIVE. No
   majority vote: one significant cell against is never hidden by cells for.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from mpdp.claims import summaries as sm
from mpdp.claims.declare import METRICS, Claim
from mpdp.claims.intervals import fitted_change

_NAN = float("nan")

#: at most this many cells are named per side in a verdict's ``where``
WHERE_MAX: int = 4


@dataclass(frozen=True)
class Inputs:
    """What a study hands the engine (frames with the columns of :mod:`mpdp.claims.declare`)."""

    observations: pd.DataFrame
    baselines: pd.DataFrame
    unusable: pd.DataFrame | None = None


def _log(values: np.ndarray, floor: float) -> np.ndarray:
    return np.log10(np.maximum(np.asarray(values, dtype=float), floor))


def _given(rows: pd.DataFrame) -> bool:
    return "lo" in rows and len(rows) == 1 and bool(np.isfinite(rows[["lo", "hi"]].to_numpy(float)).all())


def _rep_means(rows: pd.DataFrame, method: str | None = None) -> pd.Series:
    """Mean value per repetition (of ``method`` only when given), index: rep (sorted)."""
    mask = np.ones(len(rows), bool) if method is None else rows["method"].to_numpy() == method
    reps, vals = rows["rep"].to_numpy()[mask], rows["value"].to_numpy(float)[mask]
    if reps.size == 0:
        return pd.Series(dtype=float)
    keys, inv = np.unique(reps, return_inverse=True)
    return pd.Series(np.bincount(inv, weights=vals) / np.bincount(inv), index=keys)


def per_rep(claim: Claim, rows: pd.DataFrame) -> pd.Series:
    """The claim's statistic per repetition in one cell (index: rep), on its effect scale."""
    log = claim.effect_scale == "log_ratio"
    if claim.kind == "compare":
        a, b = (_rep_means(rows, m) for m in claim.methods)
        both = a.index.intersection(b.index)
        if both.empty:
            return pd.Series(dtype=float)
        va, vb = a.loc[both].to_numpy(float), b.loc[both].to_numpy(float)
        d = _log(va, claim.floor) - _log(vb, claim.floor) if log else va - vb
        return pd.Series(d, index=both).dropna()
    if claim.kind == "trend":
        reps, x, y = rows["rep"].to_numpy(), rows["x"].to_numpy(float), rows["value"].to_numpy(float)
        y = _log(y, claim.floor) if log else y
        out = {int(r): fitted_change(x[reps == r], y[reps == r]) for r in np.unique(reps)}
        return pd.Series(out, dtype=float).dropna()
    values = _rep_means(rows)
    return (pd.Series(_log(values.to_numpy(), claim.floor), index=values.index) if log else values).dropna()


def _beats(rows: pd.DataFrame, base: float, better: str, summary: str) -> bool:
    """Whether a method's values (per repetition, or a given interval) beat ``base`` significantly."""
    side = "below" if better == "lower" else "above"
    if _given(rows):
        lo, hi = float(rows["lo"].iloc[0]), float(rows["hi"].iloc[0])
        return hi < base if side == "below" else lo > base
    values = _rep_means(rows).to_numpy(float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return False
    if values.size < 2:
        return bool(values[0] < base) if side == "below" else bool(values[0] > base)
    return sm.p_value(values, summary, base, side) < sm.ALPHA


def _baseline(baselines: pd.DataFrame, dataset: str, cell: str, metric: str) -> tuple[float, str] | None:
    b = baselines[(baselines["dataset"] == dataset) & (baselines["metric"] == metric)]
    exact = b[b["cell"] == cell]
    hit = exact if not exact.empty else b[b["cell"] == "*"]
    if hit.empty:
        return None
    return float(hit["value"].iloc[0]), str(hit["baseline"].iloc[0])


def _informative(claim: Claim, guard_rows: pd.DataFrame, inputs: Inputs, dataset: str,
                 cell: str) -> tuple[bool, str]:
    """Rule 2 of the module docstring, with the reason when not informative."""
    if inputs.unusable is not None and not inputs.unusable.empty:
        u = inputs.unusable
        bad = u[(u["dataset"] == dataset) & u["cell"].isin([cell, "*"])
                & u["method"].isin([*claim.methods, *claim.uses])]
        if not bad.empty:
            return False, "; ".join(bad["note"].astype(str))
    found = _baseline(inputs.baselines, dataset, cell, claim.guard)
    if found is None:
        return True, ""
    base, what = found
    better = METRICS[claim.guard].better
    losers = []
    for method in claim.guarded:
        rows = guard_rows[guard_rows["method"].to_numpy() == method]
        if rows.empty:
            losers.append(method)
            continue
        x = rows["x"].to_numpy(float)
        groups = [rows[x == v] for v in np.unique(x[np.isfinite(x)])] if np.isfinite(x).any() else [rows]
        if not any(_beats(g, base, better, claim.summary) for g in groups):
            losers.append(method)
    if losers:
        return False, (f"{', '.join(losers)} not significantly {'below' if better == 'lower' else 'above'} "
                       f"the trivial baseline ({what}, {claim.guard} {base:.4g})")
    return True, ""


def _thresholds(claim: Claim) -> tuple[list[tuple[float, str]], list[tuple[float, str]]]:
    """(for, against) lists of one-sided tests; ``for`` combines by max (all), ``against`` by min (any)."""
    m = claim.margin
    if claim.kind == "bound":
        return [(m, "below")], [(m, "above")]
    if claim.direction == "greater":
        return [(m, "above")], [(0.0, "below")]
    if claim.direction == "less":
        return [(-m, "below")], [(0.0, "above")]
    return [(-m, "above"), (m, "below")], [(m, "above"), (-m, "below")]


def _given_difference(claim: Claim, rows: pd.DataFrame) -> tuple[float, float, float]:
    """Two study-given intervals (unpaired): a − b (or log10 a − log10 b) with the conservative
    interval (lo_a − hi_b, hi_a − lo_b); coverage ≥ 0.95² when the two are independent."""
    a, b = (rows[rows["method"] == m].iloc[0] for m in claim.methods)
    vals = np.array([[a["value"], a["lo"], a["hi"]], [b["value"], b["lo"], b["hi"]]], dtype=float)
    if claim.effect_scale == "log_ratio":
        vals = _log(vals, claim.floor)
    return (float(vals[0, 0] - vals[1, 0]), float(vals[0, 1] - vals[1, 2]), float(vals[0, 2] - vals[1, 1]))


def _p_values(claim: Claim, stat: pd.Series, given: bool, est: float,
              lo: float, hi: float) -> tuple[float, float]:
    tests_for, tests_against = _thresholds(claim)

    def one(c: float, side: str) -> float:
        if claim.kind == "bound":
            return sm.proportion_p(int(stat.sum()), int(stat.size), c, side)  # type: ignore[arg-type]
        if given:
            return sm.given_p(est, lo, hi, c, side)  # type: ignore[arg-type]
        return sm.p_value(stat.to_numpy(float), claim.summary, c, side)  # type: ignore[arg-type]

    p_for = max(one(c, s) for c, s in tests_for)
    p_against = min(1.0, len(tests_against) * min(one(c, s) for c, s in tests_against))
    return p_for, p_against


def evaluate_cell(claim: Claim, rows: pd.DataFrame, guard_rows: pd.DataFrame, inputs: Inputs,
                  dataset: str, cell: str) -> dict[str, object]:
    """One row of the cells table before Holm (``p_for`` / ``p_against`` raw)."""
    out: dict[str, object] = {"dataset": dataset, "cell": cell}
    informative, why = _informative(claim, guard_rows, inputs, dataset, cell)
    slack = _NAN
    given = False
    if claim.kind == "bound":
        draws = rows.dropna(subset=["value", "bound"])
        stat = pd.Series((draws["value"] > draws["bound"]).astype(float).to_numpy(), index=draws["rep"])
        est, lo, hi = sm.proportion(int(stat.sum()), int(stat.size))
        biggest = float(draws["value"].max()) if not draws.empty else _NAN
        slack = float(draws["bound"].median()) / biggest if biggest > 0 else np.inf
        n = int(draws["rep"].nunique())
    elif claim.kind == "compare" and all(_given(rows[rows["method"] == m]) for m in claim.methods):
        est, lo, hi = _given_difference(claim, rows)
        stat, given = pd.Series([est]), True
        n = int(rows["n"].min()) if "n" in rows and rows["n"].notna().all() else 1
    elif claim.kind == "one_sample" and _given(rows):
        stat, given = pd.Series([float(rows["value"].iloc[0])]), True
        est, lo, hi = float(rows["value"].iloc[0]), float(rows["lo"].iloc[0]), float(rows["hi"].iloc[0])
        if claim.effect_scale == "log_ratio":
            est, lo, hi = (float(v) for v in _log(np.array([est, lo, hi]), claim.floor))
        n = int(rows["n"].iloc[0]) if "n" in rows and pd.notna(rows["n"].iloc[0]) else 1
    else:
        stat = per_rep(claim, rows)
        est, lo, hi = sm.interval(stat.to_numpy(float), claim.summary)
        n = int(stat.size)
    notes = [why] if why else []
    if stat.size == 0:
        p_for = p_against = _NAN
        notes.append("no paired values")
    else:
        p_for, p_against = _p_values(claim, stat, given, est, lo, hi)
        if not np.isfinite(p_for):
            notes.append("fewer than 2 repetitions: no interval")
    if claim.kind == "bound" and np.isfinite(slack):
        notes.append(f"observed slack of the bound {slack:.3g}×")
    return out | {"informative": informative, "estimate": est, "lo": lo, "hi": hi, "n_reps": n,
                  "p_for": p_for, "p_against": p_against, "slack": slack, "note": "; ".join(notes),
                  "has_data": bool(stat.size)}


def _rows_of_kind(claim: Claim, rows: pd.DataFrame) -> pd.DataFrame:
    """A trend's rows carry its axis ``x``; every other kind's rows have none."""
    has_x = rows["x"].notna()
    return rows[has_x] if claim.kind == "trend" else rows[~has_x]


def _cells_of(claim: Claim, obs: pd.DataFrame) -> list[tuple[str, str, str]]:
    """(reading, dataset, cell) where the claim is defined: its metric observed for all its methods."""
    sel = _rows_of_kind(claim, obs[(obs["metric"] == claim.metric) & obs["method"].isin(claim.methods)])
    if claim.kind == "trend":  # a trend needs two points of its axis
        sel = sel[sel.groupby(["reading", "dataset", "cell", "method"])["x"].transform("nunique") >= 2]
    if claim.readings is not None:
        sel = sel[sel["reading"].isin(claim.readings)]
    if claim.cells is not None:
        sel = sel[sel["cell"].isin(claim.cells)]
    if claim.cell_match is not None:
        sel = sel[sel["cell"].astype(str).str.contains(claim.cell_match, regex=True)]
    keys = sel.groupby(["reading", "dataset", "cell"], sort=False)["method"].nunique()
    return [k for k, n in keys.items() if n == len(set(claim.methods))]


def _plain(obs: pd.DataFrame) -> pd.DataFrame:
    """The observations with plain numpy columns (string columns as objects: fast comparisons)."""
    out = obs.reset_index(drop=True).copy()
    for col in ("dataset", "reading", "cell", "method", "metric"):
        out[col] = out[col].astype(str).to_numpy(dtype=object)
    for col in ("value", "x", "bound"):
        out[col] = out[col].astype(float)
    return out


def _objects(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its string columns as plain objects."""
    out = frame.reset_index(drop=True).copy()
    for col in out.columns:
        if col != "value":
            out[col] = out[col].astype(str).to_numpy(dtype=object)
    return out


def evaluate_claim(claim: Claim, inputs: Inputs,
                   by_cell: dict[tuple[str, str, str], pd.DataFrame] | None = None) -> pd.DataFrame:
    """Every cell of one claim (all readings), Holm-adjusted and with cell verdicts."""
    obs = _plain(inputs.observations) if by_cell is None else inputs.observations
    rows = []
    if by_cell is None:
        by_cell = {k: g for k, g in obs.groupby(["reading", "dataset", "cell"], sort=False)}
    for reading, dataset, cell in _cells_of(claim, obs):
        g = by_cell[(reading, dataset, cell)]
        mine = _rows_of_kind(claim, g[(g["metric"] == claim.metric) & g["method"].isin(claim.methods)])
        guard = g[(g["metric"] == claim.guard) & g["method"].isin(claim.guarded)]
        rows.append({"reading": reading, **evaluate_cell(claim, mine, guard, inputs, dataset, cell)})
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    frame.insert(0, "claim_id", claim.claim_id)
    frame.insert(0, "study", claim.study)
    frame["p_value"], frame["p_holm"], frame["cell_verdict"] = _NAN, _NAN, "neutral"
    for _, idx in frame.groupby("reading", sort=False).groups.items():
        part = frame.loc[idx]
        scored = part["informative"] & part["has_data"]
        h_for = np.full(len(part), np.nan)
        h_against = np.full(len(part), np.nan)
        h_for[scored.to_numpy()] = sm.holm(part.loc[scored, "p_for"].to_numpy(float))
        h_against[scored.to_numpy()] = sm.holm(part.loc[scored, "p_against"].to_numpy(float))
        verdict = np.where(~part["has_data"], "no_data", np.where(
            ~part["informative"], "uninformative", np.where(
                h_for < sm.ALPHA, "for", np.where(h_against < sm.ALPHA, "against", "neutral"))))
        use_for = np.nan_to_num(part["p_for"].to_numpy(float), nan=2) <= np.nan_to_num(
            part["p_against"].to_numpy(float), nan=2)
        frame.loc[idx, "p_value"] = np.where(use_for, part["p_for"], part["p_against"])
        frame.loc[idx, "p_holm"] = np.where(use_for, h_for, h_against)
        frame.loc[idx, "cell_verdict"] = verdict
    return frame


def _where(cells: pd.DataFrame) -> str:
    parts = []
    for verdict, word in (("against", "against"), ("for", "for")):
        hit = cells[cells["cell_verdict"] == verdict]
        if hit.empty:
            continue
        names = [f"{r.dataset} ({r.cell})" for r in hit.head(WHERE_MAX).itertuples()]
        more = f" and {len(hit) - WHERE_MAX} more" if len(hit) > WHERE_MAX else ""
        parts.append(f"{word}: {'; '.join(names)}{more}")
    n_u = int((cells["cell_verdict"] == "uninformative").sum())
    if n_u:
        sets = sorted(set(cells.loc[cells["cell_verdict"] == "uninformative", "dataset"]))
        parts.append(f"{n_u} uninformative cell(s) ({', '.join(sets)})")
    n_0 = int((cells["cell_verdict"] == "neutral").sum())
    if n_0:
        parts.append(f"{n_0} cell(s) not significant either way")
    return "; ".join(parts) if parts else "no cell with data"


def claim_verdict(claim: Claim, cells: pd.DataFrame) -> str:
    """Rule 4 of the module docstring on one claim's cells of one reading."""
    with_data = cells[cells["cell_verdict"] != "no_data"]
    if with_data.empty:
        return "INCONCLUSIVE"
    informative = with_data[with_data["cell_verdict"] != "uninformative"]
    if informative.empty:
        return "UNINFORMATIVE"
    if claim.kind == "bound" and bool((informative["slack"] > claim.vacuous_factor).all()):
        return "VACUOUS"
    n_for = int((informative["cell_verdict"] == "for").sum())
    n_against = int((informative["cell_verdict"] == "against").sum())
    if n_for and n_against:
        return "MIXED"
    if n_against:
        return "FAILS"
    return "HOLDS" if n_for else "INCONCLUSIVE"


def verdicts(claims: Iterable[Claim], cells: pd.DataFrame) -> pd.DataFrame:
    """One row per claim and reading of its study (a claim without a cell in a reading: INCONCLUSIVE)."""
    rows = []
    for claim in claims:
        mine = cells[(cells["study"] == claim.study) & (cells["claim_id"] == claim.claim_id)] if not cells.empty \
            else cells
        study_readings = list(dict.fromkeys(cells.loc[cells["study"] == claim.study, "reading"])) if (
            not cells.empty) else []
        readings = list(dict.fromkeys([*(mine["reading"] if not mine.empty else []), *study_readings])) or [
            (claim.readings or ("-",))[0]]
        for reading in readings:
            part = mine[mine["reading"] == reading] if not mine.empty else mine.iloc[:0]
            counts = part["cell_verdict"].value_counts() if not part.empty else pd.Series(dtype=int)
            rows.append({
                "study": claim.study, "claim_id": claim.claim_id, "reading": reading, "claim": claim.text,
                "source": claim.source,
                "verdict": claim_verdict(claim, part) if not part.empty else "INCONCLUSIVE",
                "n_cells": int(len(part)),
                "n_informative": int(counts.get("for", 0) + counts.get("against", 0) + counts.get("neutral", 0)),
                "n_for": int(counts.get("for", 0)), "n_against": int(counts.get("against", 0)),
                "where": _where(part) if not part.empty else "no cell where the claim is defined",
                "metric": claim.metric, "effect_scale": claim.effect_scale, "summary": claim.summary,
                "margin": float(claim.margin), "kind": claim.kind, "direction": claim.direction,
            })
    return pd.DataFrame(rows)


def evaluate(claims: Iterable[Claim], inputs: Inputs) -> pd.DataFrame:
    """The cells of every claim (rule 1–3), in declaration order."""
    obs = _plain(inputs.observations)
    shared = Inputs(obs, _objects(inputs.baselines), None if inputs.unusable is None else _objects(inputs.unusable))
    by_cell = {k: g for k, g in obs.groupby(["reading", "dataset", "cell"], sort=False)}
    frames = [evaluate_claim(c, shared, by_cell) for c in claims]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(columns=["study", "claim_id", "reading", "dataset", "cell"])
    return pd.concat(frames, ignore_index=True)
