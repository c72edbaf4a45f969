"""Compare each alternative's verdicts with the default's: ``data/results/claims/multiverse.parquet``
(issues 38, 48).

Every statistic comes from the claims engine's own tables of each universe (``verdicts.parquet``
read with :func:`mpdp.claims.tables.read_verdicts`, ``cells.parquet`` for the claim-level
estimates and the changed cells, :mod:`.effect`); this module lines them up and names the
change (:func:`outcome`) and what it means (:func:`assess`):

* the **headline** (the main build's own ``verdicts.parquet``) beside the reduced default: a claim
  whose reduced default differs from the headline is *not tested by the robustness run*;
* the **reseeding baseline** (universes of kind ``reseed``): a verdict change under a choice is
  *fragile* only when no reseeded default already gives the same verdict or a change of the
  estimate at least as large (else *within reseeding variation*);
* **coverage**: an alternative that changes no cell of a claim has not tested it, and one whose
  nested run (seeded from the default) reran no job that writes results reads no key of the
  reduced grid; neither counts.

A claim the default judges but an alternative leaves without a row (the alternative makes it
undefined) counts as UNINFORMATIVE there; a universe whose run failed gives ``failed`` rows,
never a crash of the collection.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from mpdp.errors import InputDataError
from mpdp.multiverse import effect
from mpdp.multiverse.spec import Universe

#: verdicts that decide a claim one way (the rest say the data could not decide it)
DECISIVE: frozenset[str] = frozenset({"HOLDS", "FAILS", "MIXED", "VACUOUS"})

#: outcome of one alternative for one claim, most alarming first (the figure's legend order)
OUTCOMES: dict[str, str] = {
    "flips": "another decisive verdict than the default's",
    "weakens": "the default's decisive verdict becomes undecided (UNDERPOWERED or IDENTICAL)",
    "uninformative": "the claim becomes UNINFORMATIVE (or undefined) under the alternative",
    "failed": "the alternative's run failed: no verdict (see its log)",
    "resolves": "the default could not decide; the alternative can",
    "unchanged": "the same undecided verdict as the default",
    "holds": "the default's decisive verdict again",
    "skipped": "the alternative equals the default (a planning warning): not run",
}
#: outcomes that make a decisive default verdict fragile
FRAGILE: frozenset[str] = frozenset({"flips", "weakens", "uninformative"})

#: what one row means once coverage and the reseeding baseline are taken into account (:func:`assess`)
ASSESSMENTS: dict[str, str] = {
    "fragile": "a verdict change (flips, weakens, uninformative) beyond what reseeding the default produces",
    "within reseeding variation": "a verdict change that a reseeded default already produces (the same "
                                  "verdict, or a change of the estimate at least as large)",
    "changes no cell": "the alternative changes none of the claim's cells: it did not test the claim",
    "reads no key": "the alternative's run reran no job that writes results: no data set or study of the reduced "
                    "grid reads its key",
    "equals the default": "the alternative's value is the default's: not run, not counted",
    **{k: v for k, v in OUTCOMES.items() if k not in FRAGILE},
    **{f"reseed: {k}": f"a reseeded default: {v}" for k, v in OUTCOMES.items() if k not in ("failed", "skipped")},
}
#: per claim (:func:`claim_summary`), worst first
STATUSES: dict[str, str] = {
    "not tested": "the reduced default's verdict differs from the headline's: not tested by the robustness run",
    "fragile": "decisive, and changed by an alternative beyond the reseeding baseline",
    "untested": "decisive and held wherever the alternatives ran, but some runs failed",
    "within reseeding variation": "decisive; alternatives change it only as much as reseeding does",
    "not reached": "decisive, but no alternative changes any of its cells",
    "robust": "decisive, held under every alternative, and at least one alternative changes its cells",
    "undecided": "the default's verdict is not decisive",
}

KEYS = effect.KEYS
COLUMNS = ["kind", "choice", "key", "value", "universe", "source", "study", "claim_id", "reading", "claim",
           "verdict", "n_informative", "default_verdict", "default_n_informative", "headline_verdict",
           "outcome", "assessment", "class_change", "estimate", "lo", "hi", "default_estimate", "default_lo",
           "default_hi", "headline_estimate", "headline_lo", "headline_hi", "estimate_change",
           "informative_change", "n_cells_changed", "reads_no_key", "note", "warnings", "default_warnings", "grid"]
#: the ``grid`` column: every universe on the reduced ``multiverse.base`` or on the headline's own
#: grid (``multiverse.full_grid``, issue 48: the default universe is then the main build)
GRIDS = ("reduced", "full")
#: separates a universe's planning warnings in the ``warnings`` and ``default_warnings`` cells
WARNING_SEP = "\n"


def outcome(default_verdict: str, verdict: str | None) -> str:
    """The change from ``default_verdict`` to ``verdict`` (None: the universe failed); :data:`OUTCOMES`."""
    if verdict is None:
        return "failed"
    if verdict == default_verdict:
        return "holds" if verdict in DECISIVE else "unchanged"
    if verdict == "UNINFORMATIVE":
        return "uninformative"
    if default_verdict in DECISIVE:
        return "flips" if verdict in DECISIVE else "weakens"
    return "resolves"


@dataclass(frozen=True)
class Result:
    """One universe's run: its verdicts (and cells), or None with the reason when the run failed."""

    universe: Universe
    verdicts: pd.DataFrame | None
    error: str = ""
    warnings: tuple[str, ...] = ()  # its run's planning warnings (issue 47), from its status file
    cells: pd.DataFrame | None = None  # its cells.parquet (None: not read; no estimates, no changed cells)
    reads_no_key: bool = False  # seeded from the default, its nested run wrote no result (issue 48)
    skipped: bool = False  # equal to the default: not run (spec.repeats_default)


def _estimates(cells: pd.DataFrame | None, prefix: str = "") -> pd.DataFrame:
    if cells is None:
        return pd.DataFrame(columns=[*KEYS, *(prefix + c for c in effect.ESTIMATE_COLUMNS)])
    est = effect.claim_estimates(cells)
    return est.rename(columns={c: prefix + c for c in effect.ESTIMATE_COLUMNS})


def compare(default: Result, result: Result) -> pd.DataFrame:
    """One row per claim (and reading) of either table: ``result``'s verdict against the default's,
    their claim-level estimates (:mod:`.effect`), the cells it changes, and both runs' planning
    warnings (``warnings``, ``default_warnings``: :data:`WARNING_SEP`-joined)."""
    u = result.universe
    base = default.verdicts[[*KEYS, "claim", "verdict", "n_informative"]].rename(
        columns={"verdict": "default_verdict", "n_informative": "default_n_informative"})
    if result.skipped:
        rows = base.assign(verdict=pd.NA, n_informative=pd.NA, note="this alternative equals the default: not run")
    elif result.verdicts is None:
        rows = base.assign(verdict=pd.NA, n_informative=pd.NA,
                           note=f"this alternative's run failed: {result.error}")
    else:
        alt = result.verdicts[[*KEYS, "claim", "verdict", "n_informative"]]
        rows = base.merge(alt, on=KEYS, how="outer", suffixes=("", "_alt"), indicator=True)
        rows["claim"] = rows["claim"].fillna(rows.pop("claim_alt"))
        only_default, only_alt = rows["_merge"] == "left_only", rows["_merge"] == "right_only"
        rows.loc[only_default, ["verdict", "n_informative"]] = ["UNINFORMATIVE", 0]
        rows.loc[only_alt, ["default_verdict", "default_n_informative"]] = ["UNINFORMATIVE", 0]
        rows["note"] = ""
        rows.loc[only_default, "note"] = "no row under this alternative: the claim is undefined there"
        rows.loc[only_alt, "note"] = "no row at the default: the claim is only defined under this alternative"
        rows = rows.drop(columns="_merge")
    rows["outcome"] = ["skipped" if result.skipped else outcome(d, None if pd.isna(v) else v)
                       for d, v in zip(rows["default_verdict"], rows["verdict"], strict=True)]
    rows = rows.merge(_estimates(default.cells, "default_"), on=KEYS, how="left")
    rows = rows.merge(_estimates(result.cells if result.verdicts is not None else None), on=KEYS, how="left")
    if default.cells is not None and result.cells is not None and result.verdicts is not None:
        rows = rows.merge(effect.changed_cells(default.cells, result.cells), on=KEYS, how="left")
        rows["n_cells_changed"] = rows["n_cells_changed"].fillna(0)
    else:
        rows["n_cells_changed"] = pd.NA
    rows = rows.assign(kind=u.kind, choice=u.choice, key=u.key, value=u.value_label, universe=u.id, source=u.source,
                       reads_no_key=result.reads_no_key, warnings=WARNING_SEP.join(result.warnings),
                       default_warnings=WARNING_SEP.join(default.warnings))
    return rows


def _class_change(default_verdict: str, verdict: object) -> str:
    """``HOLDS→MIXED`` when the verdict class changes ('' when it does not or the run failed)."""
    if pd.isna(verdict) or verdict == default_verdict:
        return ""
    return f"{default_verdict}→{verdict}"


def _within_reseeding(row: pd.Series, reseeds: pd.DataFrame) -> bool:
    """Whether a reseeded default of the same claim gives ``row``'s verdict again, or changes the
    estimate at least as much as ``row`` does."""
    if reseeds.empty:
        return False
    if (reseeds["verdict"] == row["verdict"]).any():
        return True
    change = abs(row["estimate_change"]) if pd.notna(row["estimate_change"]) else np.nan
    reseed_change = reseeds["estimate_change"].abs().dropna()
    return bool(np.isfinite(change) and not reseed_change.empty and (reseed_change >= change).any())


def assess(table: pd.DataFrame) -> pd.Series:
    """Each row's :data:`ASSESSMENTS` label: its outcome, read against coverage (no cell changed,
    no key read) and, for a verdict change under a choice, against the reseeded defaults' rows of
    the same claim."""
    ran = table[(table["kind"] == "reseed") & ~table["outcome"].isin(["failed", "skipped"])]
    reseeds = {key: g for key, g in ran.groupby(KEYS, sort=False)}
    empty = ran.iloc[0:0]
    out = []
    for _, row in table.iterrows():
        if row["outcome"] in ("failed", "skipped"):
            out.append("failed" if row["outcome"] == "failed" else "equals the default")
        elif row["kind"] != "reseed" and bool(row["reads_no_key"]):
            out.append("reads no key")
        elif pd.notna(row["n_cells_changed"]) and row["n_cells_changed"] == 0 and row["verdict"] == row["default_verdict"]:
            out.append("changes no cell")
        elif row["kind"] == "reseed":
            out.append(f"reseed: {row['outcome']}")
        elif row["outcome"] in FRAGILE:
            within = _within_reseeding(row, reseeds.get(tuple(row[KEYS]), empty))
            out.append("within reseeding variation" if within else "fragile")
        else:
            out.append(row["outcome"])
    return pd.Series(out, index=table.index, dtype="object")


def collect(default: Result, results: Sequence[Result], headline: pd.DataFrame | None = None,
            headline_cells: pd.DataFrame | None = None, grid: str = "reduced") -> pd.DataFrame:
    """The multiverse table: :func:`compare` for every reseeded default and alternative, in
    declaration order, with the headline verdict and estimate (``headline``, ``headline_cells``:
    the main build's claims tables; None when there are none), each row's :func:`assess` label
    and the universes' ``grid`` (:data:`GRIDS`)."""
    if grid not in GRIDS:
        raise ValueError(f"grid must be one of {GRIDS}, got {grid!r}")
    frames = [compare(default, r) for r in results]
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in COLUMNS})
    out = pd.concat(frames, ignore_index=True)
    if headline is None:
        out["headline_verdict"] = pd.NA
    else:
        head = headline[[*KEYS, "verdict"]].rename(columns={"verdict": "headline_verdict"})
        out = out.merge(head, on=KEYS, how="left")
        out["headline_verdict"] = out["headline_verdict"].fillna("UNINFORMATIVE")  # undefined in the main build
    out["headline_verdict"] = out["headline_verdict"].astype("string")
    out = out.merge(_estimates(headline_cells, "headline_"), on=KEYS, how="left")
    out["class_change"] = [_class_change(d, v) for d, v in zip(out["default_verdict"], out["verdict"], strict=True)]
    out["estimate_change"] = out["estimate"].astype(float) - out["default_estimate"].astype(float)
    out["informative_change"] = (pd.to_numeric(out["n_informative"]) - pd.to_numeric(out["default_n_informative"]))
    for col in ("n_informative", "default_n_informative", "informative_change", "n_cells_changed"):
        out[col] = pd.to_numeric(out[col]).astype("Int64")
    for col in ("estimate", "lo", "hi", "default_estimate", "default_lo", "default_hi", "estimate_change",
                "headline_estimate", "headline_lo", "headline_hi"):
        out[col] = out[col].astype(float)
    out["reads_no_key"] = out["reads_no_key"].astype(bool)
    out["grid"] = grid
    out["assessment"] = assess(out)
    # the report's paper order: the default verdicts table's (the claims build goes study by study in the
    # registry's order); this shared layer names no study
    rank = {study: i for i, study in enumerate(dict.fromkeys(default.verdicts["study"].astype(str)))}
    out = out.assign(_rank=out["study"].map(lambda st: rank.get(st, len(rank))))
    return (out.sort_values(["_rank", "claim_id", "reading"], kind="stable").drop(columns="_rank")[COLUMNS]
            .reset_index(drop=True))


def _changes(rows: pd.DataFrame) -> str:
    return "; ".join(f"{c} = {v} → {vd}" for c, v, vd in zip(rows["choice"], rows["value"], rows["verdict"], strict=True))


def _status(g: pd.DataFrame, counted: pd.DataFrame) -> str:
    default, headline = str(g["default_verdict"].iloc[0]), g["headline_verdict"].iloc[0]
    if pd.notna(headline) and headline != default:
        return "not tested"
    if default not in DECISIVE:
        return "undecided"
    if (counted["assessment"] == "fragile").any():
        return "fragile"
    if (counted["assessment"] == "failed").any():
        return "untested"
    if (counted["assessment"] == "within reseeding variation").any():
        return "within reseeding variation"
    if not (pd.to_numeric(counted["n_cells_changed"]).fillna(0) > 0).any():
        return "not reached"
    return "robust"


def _max_abs(values: pd.Series) -> float:
    """The value of largest magnitude (its sign kept); NaN when there is none."""
    v = values.astype(float).dropna()
    return float(v.loc[v.abs().idxmax()]) if not v.empty else np.nan


def claim_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per claim (and reading): the headline and reduced-default verdicts, its :data:`STATUSES`
    label, the alternatives counted (those that read a key of the grid) and those that reach it
    (change a cell), the changes (``changed_by``: ``choice = value → verdict``, beyond and within
    the reseeding baseline), the reseeded defaults' verdicts, and the fragility summary kept
    apart: the largest change of the estimate (alternatives, reseeds), the largest loss of
    informative cells, and the changes of verdict class."""
    rows = []
    for (study, claim_id, reading), g in table.groupby(KEYS, sort=False):
        choices, reseeds = g[g["kind"] != "reseed"], g[g["kind"] == "reseed"]  # one choice or several (joint)
        counted = choices[~choices["assessment"].isin(["reads no key", "equals the default"])]
        reached = counted[pd.to_numeric(counted["n_cells_changed"]).fillna(0) > 0]
        loss = -pd.to_numeric(counted["informative_change"]).astype(float)
        classes = counted[counted["class_change"] != ""]
        rows.append({
            "study": study, "claim_id": claim_id, "reading": reading, "claim": g["claim"].iloc[0],
            "headline_verdict": g["headline_verdict"].iloc[0], "default_verdict": str(g["default_verdict"].iloc[0]),
            "status": _status(g, counted), "n_alternatives": len(counted), "n_reaching": len(reached),
            "n_failed": int((counted["assessment"] == "failed").sum()),
            "changed_by": _changes(counted[counted["assessment"].isin({"fragile", "resolves"})]),
            "within_reseeding": _changes(counted[counted["assessment"] == "within reseeding variation"]),
            "reseed_verdicts": "; ".join(f"{v} → {vd}" for v, vd, o in
                                         zip(reseeds["value"], reseeds["verdict"], reseeds["outcome"], strict=True)
                                         if o != "skipped"),
            "default_estimate": float(g["default_estimate"].iloc[0]),
            "max_estimate_change": _max_abs(reached["estimate_change"]),
            "reseed_estimate_change": _max_abs(reseeds["estimate_change"]),
            "max_informative_loss": float(loss.max()) if loss.notna().any() and loss.max() > 0 else 0.0,
            "class_changes": "; ".join(f"{cc} ({c} = {v})" for cc, c, v in
                                       zip(classes["class_change"], classes["choice"], classes["value"], strict=True)),
        })
    return pd.DataFrame(rows)


def collect_results(results: Sequence[Result], headline: pd.DataFrame | None = None,
                    headline_cells: pd.DataFrame | None = None, grid: str = "reduced") -> pd.DataFrame:
    """:func:`collect` from every universe's :class:`Result`, the default's among them; raises
    :class:`InputDataError` when the default run failed (nothing to compare against)."""
    default = [r for r in results if r.universe.choice is None]
    if len(default) != 1:
        raise InputDataError("the multiverse needs exactly one default universe")
    if default[0].verdicts is None:
        raise InputDataError(f"the multiverse's default run failed, so no alternative can be compared: "
                             f"{default[0].error}")
    return collect(default[0], [r for r in results if r.universe.choice is not None], headline, headline_cells, grid)
