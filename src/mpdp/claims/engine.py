"""The one claims engine (issue 33; spec experiments.md E3.4 "claims check", applied to every study):
every declared claim, every cell where it is defined.

:func:`evaluate` turns declarations (:class:`mpdp.claims.declare.Claim`), a study's tidy
per-repetition observations and its trivial baselines into the cells table (one row per claim ×
cell, :data:`mpdp.claims.tables.CELL_COLUMNS`); :func:`verdicts` turns the cells into one verdict
per claim and reading (:data:`mpdp.claims.tables.VERDICT_COLUMNS`). The rules (docs/claims.md):

1. **Per cell**, the per-repetition statistic of the claim's kind (paired difference or log-ratio,
   fitted change along an axis, fraction of draws above a bound, one-sample value), every value below
   the data's resolution set to 0 (:mod:`mpdp.claims.resolution`: half a test record for a rate, a
   relative 1e-12 otherwise), its summary (mean, median or trimmed mean) with a 95 % interval, one-sided
   p-values for and against the claim, the TOST within the claim's practical margin ±δ
   (:attr:`Claim.delta`) and the minimum detectable effect at the cell's repetitions
   (:mod:`mpdp.claims.summaries`).
2. **Informative cell**: every guarded method (:attr:`Claim.guarded`: for "A beats B" A) beats its
   trivial baseline on the guard metric by the metric's practical margin
   (:func:`mpdp.claims.resolution.guard_margin`), significantly (one-sided at
   :data:`~mpdp.claims.summaries.ALPHA`; where the guard metric is observed along an axis, at some point
   of it), and no method the claim uses is marked unusable by a gap that could move the claim's
   statistic by more than :data:`~mpdp.claims.declare.REFERENCE_SHARE` of ±δ. An informative ``compare``
   cell whose two methods are bitwise identical in every repetition is ``identical`` (a cell where a
   method is at chance is ``uninformative`` first: two majority classifiers agree trivially). Neither is
   scored.
3. **Holm** across the scored cells of a claim and reading, separately for the p-values for, against and
   of the TOST (:func:`decide`); three-sided against the practical margin δ (issue 55): a cell is ``for``
   when its Holm-adjusted p-value that the effect is beyond δ in the claimed direction is below ALPHA,
   ``against`` when beyond δ the other way, else (a directional claim) ``no_effect`` when the TOST puts
   it within ±δ, else ``underpowered``; ``no_data`` when it has no value. Power (``mde``,
   ``reps_needed``) is stated for the cell inside that family (:func:`cell_power`).
4. **Verdict** (:func:`claim_outcome`, with its ``reason``): no cell with data → UNINFORMATIVE (no data);
   no scored cell → IDENTICAL when a cell is identical, else UNINFORMATIVE (at chance, naming the methods,
   or reference unconverged); a bound whose observed slack exceeds its ``vacuous_factor`` in every scored
   cell → VACUOUS; cells for and against (or no effect) → MIXED; against or no effect → FAILS; for →
   HOLDS; else UNDERPOWERED (with the repetitions needed). No majority vote: one significant cell against
   is never hidden by cells for.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from mpdp.claims import resolution as res
from mpdp.claims import summaries as sm
from mpdp.claims.declare import (
    EFFECT_COLUMN,
    METRICS,
    REFERENCE_COLUMN,
    REFERENCE_SHARE,
    RESOLUTION_COLUMN,
    Claim,
)
from mpdp.claims.intervals import CONFIDENCE, fitted_change

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


def _n_test(rows: pd.DataFrame) -> float | None:
    """The test-set size behind the rows' values (the smallest when several; None when not carried)."""
    if RESOLUTION_COLUMN not in rows:
        return None
    n = pd.to_numeric(rows[RESOLUTION_COLUMN], errors="coerce").to_numpy(float)
    n = n[np.isfinite(n)]
    return float(n.min()) if n.size else None


def _scale(values: np.ndarray) -> float:
    v = np.abs(np.asarray(values, dtype=float))
    v = v[np.isfinite(v)]
    return float(v.max()) if v.size else 0.0


def _beats(rows: pd.DataFrame, base: float, margin: float, metric: str, summary: str) -> bool:
    """Whether a method's values (per repetition, or a given interval) are beyond ``base`` by more than
    ``margin`` on the better side, significantly (one-sided at ALPHA); differences from ``base`` below the
    data's resolution are zero (:mod:`mpdp.claims.resolution`), so repetitions all at the baseline never
    beat it."""
    higher = METRICS[metric].better == "higher"
    if _given(rows):
        lo, hi = float(rows["lo"].iloc[0]), float(rows["hi"].iloc[0])
        return lo > base + margin if higher else hi < base - margin
    values = _rep_means(rows).to_numpy(float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return False
    tol = res.zero_below(metric, max(_scale(values), abs(base)), _n_test(rows))
    d = res.snap(values - base if higher else base - values, tol)
    if d.size < 2:
        return bool(d[0] > 0 and d[0] > margin)
    return sm.p_value(d, summary, margin, "above", tol) < sm.ALPHA


def _baseline(baselines: pd.DataFrame, dataset: str, cell: str, metric: str) -> tuple[float, str, float] | None:
    """(value, what it is, converged reference or NaN) of the metric's trivial baseline in a cell."""
    b = baselines[(baselines["dataset"] == dataset) & (baselines["metric"] == metric)]
    exact = b[b["cell"] == cell]
    hit = exact if not exact.empty else b[b["cell"] == "*"]
    if hit.empty:
        return None
    ref = float(hit[REFERENCE_COLUMN].iloc[0]) if REFERENCE_COLUMN in hit else _NAN
    return float(hit["value"].iloc[0]), str(hit["baseline"].iloc[0]), ref


@dataclass(frozen=True)
class Guard:
    """The informativeness guard's outcome in one cell (rule 2)."""

    informative: bool
    reason: str = ""  # "at chance" | "reference unconverged" | ""
    note: str = ""
    at_chance: tuple[str, ...] = ()
    margin: float = _NAN  # the practical margin the guarded methods had to beat the baseline by
    rule: str = ""  # how that margin was set (e.g. "10 test records")


def _reference_check(claim: Claim, inputs: Inputs, dataset: str, cell: str) -> tuple[bool, str]:
    """Whether the claim's methods and references are usable, and the note (rule 2, references judged
    against the claim's own margin: a reference whose gap could move the statistic by at most
    :data:`~mpdp.claims.declare.REFERENCE_SHARE` of ±δ stays usable)."""
    u = inputs.unusable
    if u is None or u.empty:
        return True, ""
    bad = u[(u["dataset"] == dataset) & u["cell"].isin([cell, "*"]) & u["method"].isin([*claim.methods, *claim.uses])]
    if bad.empty:
        return True, ""
    effect = pd.to_numeric(bad[EFFECT_COLUMN], errors="coerce").to_numpy(float) if EFFECT_COLUMN in bad else \
        np.full(len(bad), np.nan)
    allowed = REFERENCE_SHARE * claim.delta
    material = ~(np.isfinite(effect) & (effect <= allowed))
    notes = [f"{n} — moves the statistic by at most {e:.2g}, {'more' if m else 'not more'} than "
             f"{100 * REFERENCE_SHARE:g} % of its margin ±{claim.delta:g}" if np.isfinite(e) else str(n)
             for n, e, m in zip(bad["note"].astype(str), effect, material, strict=True)]
    return not bool(material.any()), "; ".join(notes)


def _informative(claim: Claim, guard_rows: pd.DataFrame, inputs: Inputs, dataset: str, cell: str) -> Guard:
    """Rule 2 of the module docstring, with the reason when not informative."""
    usable, ref_note = _reference_check(claim, inputs, dataset, cell)
    if not usable:
        return Guard(False, "reference unconverged", ref_note)
    found = _baseline(inputs.baselines, dataset, cell, claim.guard)
    if found is None:
        return Guard(True, note=ref_note)
    base, what, reference = found
    better = METRICS[claim.guard].better
    losers, margins = [], []
    for method in claim.guarded:
        rows = guard_rows[guard_rows["method"].to_numpy() == method]
        margin, how = res.guard_margin(claim.guard, base, reference, _n_test(rows))
        margins.append((margin, how))
        if rows.empty:
            losers.append(method)
            continue
        x = rows["x"].to_numpy(float)
        groups = [rows[x == v] for v in np.unique(x[np.isfinite(x)])] if np.isfinite(x).any() else [rows]
        if not any(_beats(g, base, margin, claim.guard, claim.summary) for g in groups):
            losers.append(method)
    margin, how = max(margins, key=lambda m: m[0]) if margins else (0.0, "")
    if losers:
        side = "below" if better == "lower" else "above"
        note = (f"{', '.join(losers)} at chance: not significantly {side} the trivial baseline ({what}, "
                f"{claim.guard} {base:.4g}) by the practical margin {margin:.3g} ({how})")
        return Guard(False, "at chance", "; ".join(filter(None, [note, ref_note])), tuple(losers), margin, how)
    return Guard(True, note=ref_note, margin=margin, rule=how)


def _thresholds(claim: Claim) -> tuple[list[tuple[float, str]], list[tuple[float, str]]]:
    """(for, against) lists of one-sided tests; ``for`` combines by max (all), ``against`` by min (any).

    Three-sided testing against the practical margin δ (issue 55; Goeman, Solari & Stijnen 2010): a
    directional cell is ``for`` only when the effect is beyond δ in the claimed direction and ``against``
    only when it is beyond δ the other way; the TOST decides ``no_effect`` within ±δ. An equivalence
    claim is ``for`` inside ±δ (the TOST) and ``against`` outside it; a bound's share of draws above the
    bound is ``for`` below its allowed share and ``against`` above it."""
    if claim.kind == "bound":
        m = claim.margin
        return [(m, "below")], [(m, "above")]
    d = claim.delta
    if claim.direction == "greater":
        return [(d, "above")], [(-d, "below")]
    if claim.direction == "less":
        return [(-d, "below")], [(d, "above")]
    return [(-d, "above"), (d, "below")], [(d, "above"), (-d, "below")]


def _given_difference(claim: Claim, rows: pd.DataFrame) -> tuple[float, float, float]:
    """Two study-given intervals (unpaired): a − b (or log10 a − log10 b) with the conservative
    interval (lo_a − hi_b, hi_a − lo_b); coverage ≥ 0.95² when the two are independent."""
    a, b = (rows[rows["method"] == m].iloc[0] for m in claim.methods)
    vals = np.array([[a["value"], a["lo"], a["hi"]], [b["value"], b["lo"], b["hi"]]], dtype=float)
    if claim.effect_scale == "log_ratio":
        vals = _log(vals, claim.floor)
    return (float(vals[0, 0] - vals[1, 0]), float(vals[0, 1] - vals[1, 2]), float(vals[0, 2] - vals[1, 1]))


def p_values(claim: Claim, stat: pd.Series, given: bool, est: float, lo: float, hi: float,
              tol: float) -> tuple[float, float, float]:
    """(p for, p against, p of the TOST within ±δ) of one cell; the TOST is NaN for a bound."""
    tests_for, tests_against = _thresholds(claim)

    def one(c: float, side: str) -> float:
        if claim.kind == "bound":
            return sm.proportion_p(int(stat.sum()), int(stat.size), c, side)  # type: ignore[arg-type]
        if given:
            return sm.given_p(est, lo, hi, c, side, tol)  # type: ignore[arg-type]
        return sm.p_value(stat.to_numpy(float), claim.summary, c, side, tol)  # type: ignore[arg-type]

    p_for = max(one(c, s) for c, s in tests_for)
    p_against = min(1.0, len(tests_against) * min(one(c, s) for c, s in tests_against))
    delta = claim.delta
    p_equiv = _NAN if claim.kind == "bound" or not delta > 0 else max(one(-delta, "above"), one(delta, "below"))
    return p_for, p_against, p_equiv


def identical(claim: Claim, rows: pd.DataFrame) -> bool:
    """Whether a ``compare`` claim's two methods gave bitwise-equal values in every repetition of the cell
    (an identity by construction in this reading: the claim cannot fail or hold on it)."""
    if claim.kind != "compare":
        return False
    a, b = (rows[rows["method"].to_numpy() == m].sort_values(["rep", "x"], kind="stable") for m in claim.methods)
    if a.empty or len(a) != len(b) or not np.array_equal(a["rep"].to_numpy(), b["rep"].to_numpy()):
        return False
    return bool(np.array_equal(a["value"].to_numpy(float), b["value"].to_numpy(float), equal_nan=True))


def _stat_tol(claim: Claim, rows: pd.DataFrame) -> float:
    """The resolution of the claim's per-repetition statistic (:func:`mpdp.claims.resolution.zero_below`)."""
    if claim.kind == "bound":
        return res.RELATIVE_RESOLUTION * _scale(rows["bound"].to_numpy(float))
    values = rows["value"].to_numpy(float)
    if "lo" in rows:
        values = np.r_[values, rows["lo"].to_numpy(float), rows["hi"].to_numpy(float)]
    return res.zero_below(claim.metric, _scale(values), _n_test(rows), log=claim.effect_scale == "log_ratio")


def evaluate_cell(claim: Claim, rows: pd.DataFrame, guard_rows: pd.DataFrame, inputs: Inputs,
                  dataset: str, cell: str) -> dict[str, object]:
    """One row of the cells table before Holm (``p_for`` / ``p_against`` / ``p_equiv`` raw)."""
    out: dict[str, object] = {"dataset": dataset, "cell": cell}
    guard = _informative(claim, guard_rows, inputs, dataset, cell)
    slack = _NAN
    given = False
    tol = _stat_tol(claim, rows)
    se, df = _NAN, _NAN
    if claim.kind == "bound":
        draws = rows.dropna(subset=["value", "bound"])
        above = res.snap((draws["value"] - draws["bound"]).to_numpy(float), tol) > 0
        stat = pd.Series(above.astype(float), index=draws["rep"])
        est, lo, hi = sm.proportion(int(stat.sum()), int(stat.size))
        biggest = float(draws["value"].max()) if not draws.empty else _NAN
        slack = float(draws["bound"].median()) / biggest if biggest > 0 else np.inf
        n = int(draws["rep"].nunique())
    elif claim.kind == "compare" and all(_given(rows[rows["method"] == m]) for m in claim.methods):
        est, lo, hi = _given_difference(claim, rows)
        est = float(res.snap(np.array([est]), tol)[0])
        stat, given, se, df = pd.Series([est]), True, sm.given_se(lo, hi), float("inf")
        n = int(rows["n"].min()) if "n" in rows and rows["n"].notna().all() else 1
    elif claim.kind == "one_sample" and _given(rows):
        est, lo, hi = float(rows["value"].iloc[0]), float(rows["lo"].iloc[0]), float(rows["hi"].iloc[0])
        if claim.effect_scale == "log_ratio":
            est, lo, hi = (float(v) for v in _log(np.array([est, lo, hi]), claim.floor))
        est = float(res.snap(np.array([est]), tol)[0])
        stat, given, se, df = pd.Series([est]), True, sm.given_se(lo, hi), float("inf")
        n = int(rows["n"].iloc[0]) if "n" in rows and pd.notna(rows["n"].iloc[0]) else 1
    else:
        raw = per_rep(claim, rows)
        stat = pd.Series(res.snap(raw.to_numpy(float), tol), index=raw.index)
        est, lo, hi = sm.interval(stat.to_numpy(float), claim.summary)
        se, df = sm.standard_error(stat.to_numpy(float), claim.summary)
        n = int(stat.size)
    notes = [guard.note] if guard.note else []
    same = identical(claim, rows)
    if same:
        notes.append(f"{' and '.join(claim.methods)} bitwise identical in every repetition")
    if stat.size == 0:
        p_for = p_against = p_equiv = _NAN
        notes.append("no paired values")
    else:
        p_for, p_against, p_equiv = p_values(claim, stat, given, est, lo, hi, tol)
        if not np.isfinite(p_for):
            notes.append("fewer than 2 repetitions: no interval")
    if claim.kind == "bound" and np.isfinite(slack):
        notes.append(f"observed slack of the bound {slack:.3g}×")
    return out | {"informative": guard.informative, "estimate": est, "lo": lo, "hi": hi, "n_reps": n,
                  "p_for": p_for, "p_against": p_against, "p_equiv": p_equiv, "slack": slack,
                  "note": "; ".join(notes), "has_data": bool(stat.size), "identical": same,
                  "reason": guard.reason, "at_chance": ", ".join(guard.at_chance), "guard_margin": guard.margin,
                  "guard_rule": guard.rule,
                  "resolution": tol, "delta": claim.delta, "stat_se": se, "stat_df": df,
                  "stat_flips": claim.summary == "trimmed" and not given and 2 <= n <= sm.EXACT_FLIPS_MAX}


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
    return res.on_grid(out)


def _objects(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its string columns as plain objects."""
    out = frame.reset_index(drop=True).copy()
    for col in out.columns:
        if col in ("value", REFERENCE_COLUMN, EFFECT_COLUMN):
            out[col] = pd.to_numeric(out[col], errors="coerce").astype(float)
        else:
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
    frame["p_value"], frame["p_holm"], frame["p_equiv_holm"], frame["cell_verdict"] = _NAN, _NAN, _NAN, ""
    for _, idx in frame.groupby("reading", sort=False).groups.items():
        part = frame.loc[idx]
        scored = (part["informative"] & part["has_data"] & ~part["identical"]).to_numpy()
        h_for, h_against, h_equiv, verdict = decide(claim, *(part[c].to_numpy(float) for c in (
            "p_for", "p_against", "p_equiv")), *(part[c].to_numpy(bool) for c in ("has_data", "informative",
                                                                                  "identical")))
        use_for = np.nan_to_num(part["p_for"].to_numpy(float), nan=2) <= np.nan_to_num(
            part["p_against"].to_numpy(float), nan=2)
        frame.loc[idx, "p_value"] = np.where(use_for, part["p_for"], part["p_against"])
        frame.loc[idx, "p_holm"] = np.where(use_for, h_for, h_against)
        frame.loc[idx, "p_equiv_holm"] = h_equiv
        frame.loc[idx, "cell_verdict"] = verdict
        family = int(scored.sum())
        frame.loc[idx, "family"] = family
        power = [cell_power(claim, se, df, int(n), bool(flips), family) for se, df, n, flips in
                 part[["stat_se", "stat_df", "n_reps", "stat_flips"]].itertuples(index=False)]
        frame.loc[idx, "mde"] = [m for m, _ in power]
        frame.loc[idx, "reps_needed"] = [k for _, k in power]
    frame = frame.drop(columns=["stat_se", "stat_df", "stat_flips"])
    frame.loc[frame["cell_verdict"] == "identical", "reason"] = "identical by construction"
    frame.loc[frame["cell_verdict"] == "no_effect", "reason"] = "no effect beyond margin"
    frame.loc[frame["cell_verdict"] == "underpowered", "reason"] = "underpowered"
    frame.loc[frame["cell_verdict"] == "no_data", "reason"] = "no data"
    return frame


def decide(claim: Claim, p_for: np.ndarray, p_against: np.ndarray, p_equiv: np.ndarray, has_data: np.ndarray,
           informative: np.ndarray, same: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rule 3 on one Holm family (a claim's cells in one reading): the Holm-adjusted p-values for, against
    and of the TOST over the scored cells (informative, with data, not identical) and each cell's verdict.
    A cell is ``for`` / ``against`` when its adjusted p-value against the practical margin is below
    :data:`~mpdp.claims.summaries.ALPHA`; else, for a directional claim, ``no_effect`` when the adjusted
    TOST puts it within ±δ, else ``underpowered`` (an equivalence claim's or a bound's ``for`` already is
    its TOST or its exact test)."""
    scored = informative & has_data & ~same
    h_for, h_against, h_equiv = (np.full(len(scored), np.nan) for _ in range(3))
    h_for[scored] = sm.holm(p_for[scored])
    h_against[scored] = sm.holm(p_against[scored])
    h_equiv[scored] = sm.holm(p_equiv[scored])
    directional = claim.direction != "equivalence" and claim.kind != "bound"
    no_effect = (h_equiv < sm.ALPHA) if directional else np.zeros(len(scored), bool)
    verdict = np.where(~has_data, "no_data", np.where(
        ~informative, "uninformative", np.where(
            same, "identical", np.where(
                h_for < sm.ALPHA, "for", np.where(h_against < sm.ALPHA, "against", np.where(
                    no_effect, "no_effect", "underpowered"))))))
    return h_for, h_against, h_equiv, verdict


def cell_power(claim: Claim, se: float, df: float, n: int, flips: bool, family: int) -> tuple[float, float]:
    """(mde, repetitions needed) of one cell inside its Holm family of ``family`` cells (issue 55: power
    for the procedure that decides). A directional cell's mde is the true effect (from 0, in the claimed
    direction) found ``for`` with :data:`~mpdp.claims.summaries.POWER`: δ plus the noncentral-t distance
    (:func:`~mpdp.claims.summaries.mde`); an equivalence cell's the half-width ±e within which a true 0 is
    shown with that power. The repetitions needed show a true 0 within ±δ with that power
    (:func:`~mpdp.claims.summaries.tost_reps_needed`), which also finds an effect of 2δ beyond δ; with the
    sign-flip test never fewer than its 2^-R resolution allows. Bounds: NaN (their draws are counted by
    :func:`bound_draws_needed`)."""
    if claim.kind == "bound" or not np.isfinite(se) or family < 1:
        return _NAN, _NAN
    a = sm.family_alpha(family)
    floor = 2
    if flips:
        need = int(np.ceil(-np.log2(a)))
        floor = need if need <= sm.EXACT_FLIPS_MAX else sm.EXACT_FLIPS_MAX + 1
    reachable = not flips or sm.min_flip_p(n) <= a
    if claim.direction == "equivalence":
        cell_mde = sm.tost_mde(se, df, family) if reachable else np.inf
    else:
        cell_mde = claim.delta + sm.mde(se, df, family) if reachable else np.inf
    return cell_mde, sm.tost_reps_needed(n, se, df, claim.delta, family, floor)


#: cell verdicts that decide a cell (the rest say why it could not)
SCORED: tuple[str, ...] = ("for", "against", "no_effect", "underpowered")


def _where(cells: pd.DataFrame) -> str:
    parts = []
    for verdict, word in (("against", "against"), ("no_effect", "no effect beyond the margin"), ("for", "for")):
        hit = cells[cells["cell_verdict"] == verdict]
        if hit.empty:
            continue
        names = [f"{r.dataset} ({r.cell})" for r in hit.head(WHERE_MAX).itertuples()]
        more = f" and {len(hit) - WHERE_MAX} more" if len(hit) > WHERE_MAX else ""
        parts.append(f"{word}: {'; '.join(names)}{more}")
    for verdict, word in (("identical", "identical by construction"), ("uninformative", "uninformative")):
        hit = cells[cells["cell_verdict"] == verdict]
        if not hit.empty:
            parts.append(f"{len(hit)} {word} cell(s) ({', '.join(sorted(set(hit['dataset'])))})")
    n_0 = int((cells["cell_verdict"] == "underpowered").sum())
    if n_0:
        parts.append(f"{n_0} cell(s) underpowered (not significant either way)")
    return "; ".join(parts) if parts else "no cell with data"


def _uninformative_reason(cells: pd.DataFrame) -> str:
    """Why no cell is informative: which methods are at chance, or an unconverged reference."""
    bad = cells[cells["cell_verdict"] == "uninformative"]
    if bad.empty:
        return "no data"
    words = []
    chance = sorted({m.strip() for text in bad.loc[bad["reason"] == "at chance", "at_chance"].astype(str)
                     for m in text.split(",") if m.strip()})
    if chance:
        words.append(f"at chance ({', '.join(chance)})")
    if (bad["reason"] == "reference unconverged").any():
        words.append("reference unconverged")
    return "; ".join(words) or "uninformative"


def claim_outcome(claim: Claim, cells: pd.DataFrame) -> tuple[str, str]:
    """(verdict, reason) of one claim's cells of one reading (rule 4 of the module docstring)."""
    with_data = cells[cells["cell_verdict"] != "no_data"]
    if with_data.empty:
        return "UNINFORMATIVE", "no data"
    scored = with_data[with_data["cell_verdict"].isin(SCORED)]
    if scored.empty:
        if (with_data["cell_verdict"] == "identical").any():
            return "IDENTICAL", "identical by construction"
        return "UNINFORMATIVE", _uninformative_reason(with_data)
    if claim.kind == "bound" and bool((scored["slack"] > claim.vacuous_factor).all()):
        return "VACUOUS", "the bound's observed slack exceeds its vacuous factor in every informative cell"
    counts = scored["cell_verdict"].value_counts()
    n_for, n_against, n_none = (int(counts.get(v, 0)) for v in ("for", "against", "no_effect"))
    if n_for and (n_against or n_none):
        return "MIXED", "" if n_against else "no effect beyond margin where it does not hold"
    if n_against or n_none:
        return "FAILS", "" if n_against else "no effect beyond margin"
    if n_for:
        return "HOLDS", ""
    need = scored["reps_needed"].to_numpy(float)
    need = need[np.isfinite(need)]
    reps = int(scored["n_reps"].max())
    family = len(scored)
    within = f"with {sm.POWER:.0%} power inside its family of {family} cell(s) (Holm)"
    if need.size:
        mde = float(scored["mde"].median())
        found = (f"{reps} repetitions find only effects beyond ±{mde:.2g} (median cell) {within}" if np.isfinite(mde)
                 else f"{reps} repetitions are too few for the sign-flip test to reach Holm's level in a family "
                      f"of {family}")
        return "UNDERPOWERED", (f"underpowered: {found}; about {int(np.median(need))} needed in the median cell to "
                                f"show no effect within ±{claim.delta:g} (or an effect of twice that beyond it), "
                                f"{int(need.max())} in every cell")
    if claim.kind == "bound" and 0 < claim.margin < 1:
        return "UNDERPOWERED", (f"underpowered: {reps} draws put the {CONFIDENCE:.0%} interval of the share above "
                                f"the bound up to {float(scored['hi'].median()):.2g} (median), above the allowed "
                                f"{claim.margin:g}; with none above it, about "
                                f"{bound_draws_needed(claim.margin, family=family)} are needed inside its family "
                                f"of {family} cell(s) (Holm)")
    return "UNDERPOWERED", f"underpowered: {reps} repetition(s), too few for an interval"


def bound_draws_needed(allowed: float, confidence: float = CONFIDENCE, family: int = 1) -> int:
    """The fewest draws, none of them above the bound, at which the exact binomial test puts the share
    above it below the ``allowed`` share inside a Holm family of ``family`` cells (its first step, level
    (1 − confidence)/2 / family): ``(1 − allowed)^n ≤ level``; with ``family`` 1 also where the
    Clopper–Pearson interval (:func:`mpdp.claims.intervals.binomial_interval`) ends below ``allowed``."""
    level = (1.0 - confidence) / 2.0 / max(int(family), 1)
    return int(np.floor(np.log(level) / np.log1p(-allowed))) + 1


def claim_verdict(claim: Claim, cells: pd.DataFrame) -> str:
    """Rule 4 of the module docstring on one claim's cells of one reading."""
    return claim_outcome(claim, cells)[0]


def _guard_rule(claim: Claim, cells: pd.DataFrame) -> str:
    """The guard's practical margin in words: the guarded methods, the metric and how the margin was set."""
    rules = list(dict.fromkeys(str(r) for r in cells.get("guard_rule", pd.Series(dtype=str)) if r)) if (
        not cells.empty) else []
    if not rules:
        return ""
    margins = cells["guard_margin"].to_numpy(float)
    margins = margins[np.isfinite(margins)]
    span = f"{margins.min():.2g}" if margins.size and margins.min() == margins.max() else (
        f"{margins.min():.2g}–{margins.max():.2g}" if margins.size else "")
    return f"{', '.join(claim.guarded)} beyond the trivial {claim.guard} by {span} ({'; '.join(rules)})"


def _equivalence(claim: Claim, scored: pd.DataFrame) -> str:
    """The TOST's result in words: in how many scored cells the statistic is within ±δ."""
    if claim.kind == "bound" or scored.empty:
        return ""
    k = int((scored["p_equiv_holm"] < sm.ALPHA).sum())
    return f"within ±{claim.delta:g} in {k} of {len(scored)} informative cells (TOST, Holm)"


def verdicts(claims: Iterable[Claim], cells: pd.DataFrame) -> pd.DataFrame:
    """One row per claim and reading of its study (a claim without a cell in a reading: UNINFORMATIVE,
    no data)."""
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
            verdict, reason = claim_outcome(claim, part) if not part.empty else ("UNINFORMATIVE", "no data")
            scored = part[part["cell_verdict"].isin(SCORED)] if not part.empty else part
            mde = scored["mde"].to_numpy(float) if not scored.empty else np.array([])
            need = scored["reps_needed"].to_numpy(float) if not scored.empty else np.array([])
            rows.append({
                "study": claim.study, "claim_id": claim.claim_id, "reading": reading, "claim": claim.text,
                "source": claim.source, "verdict": verdict, "n_cells": int(len(part)),
                "n_informative": int(sum(counts.get(v, 0) for v in SCORED)),
                "n_for": int(counts.get("for", 0)), "n_against": int(counts.get("against", 0)),
                "where": _where(part) if not part.empty else "no cell where the claim is defined",
                "metric": claim.metric, "effect_scale": claim.effect_scale, "summary": claim.summary,
                "margin": float(claim.margin), "kind": claim.kind, "direction": claim.direction,
                "reason": reason, "delta": claim.delta,
                "mde": float(np.nanmedian(mde)) if np.isfinite(mde).any() else _NAN,
                "reps_needed": float(np.nanmax(need)) if np.isfinite(need).any() else _NAN,
                "equivalence": _equivalence(claim, scored),
                "n_no_effect": int(counts.get("no_effect", 0)), "n_underpowered": int(counts.get("underpowered", 0)),
                "n_identical": int(counts.get("identical", 0)),
                "n_uninformative": int(counts.get("uninformative", 0)), "n_no_data": int(counts.get("no_data", 0)),
                "margin_reason": claim.delta_reason, "hedge": claim.hedge, "family": int(len(scored)),
                "guarded": f"{', '.join(claim.guarded)}: {claim.guarded_why}",
                "guard_rule": _guard_rule(claim, part),
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
