"""Compare each alternative's verdicts with the default's: ``data/results/claims/multiverse.parquet``
(issue 38).

Every statistic comes from the claims engine's own ``verdicts.parquet`` of each universe (read
with :func:`mpdp.claims.tables.read_verdicts`); this module only lines them up and names the
change (:func:`outcome`). A claim the default judges but an alternative leaves without a row
(the alternative makes it undefined) counts as UNINFORMATIVE there; a universe whose run failed
gives ``failed`` rows, never a crash of the collection.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from mpdp.errors import InputDataError
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
}
#: outcomes that make a decisive default verdict fragile
FRAGILE: frozenset[str] = frozenset({"flips", "weakens", "uninformative"})

KEYS = ["study", "claim_id", "reading"]
COLUMNS = ["choice", "key", "value", "universe", "source", "study", "claim_id", "reading", "claim",
           "verdict", "n_informative", "default_verdict", "default_n_informative", "outcome", "note",
           "warnings", "default_warnings"]
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
    """One universe's run: its verdicts, or None with the reason when the run failed."""

    universe: Universe
    verdicts: pd.DataFrame | None
    error: str = ""
    warnings: tuple[str, ...] = ()  # its run's planning warnings (issue 47), from its status file


def compare(default: pd.DataFrame, result: Result, default_warnings: Sequence[str] = ()) -> pd.DataFrame:
    """One row per claim (and reading) of either table: ``result``'s verdict against the default's,
    with both runs' planning warnings (``warnings``, ``default_warnings``: :data:`WARNING_SEP`-joined)."""
    u = result.universe
    base = default[[*KEYS, "claim", "verdict", "n_informative"]].rename(
        columns={"verdict": "default_verdict", "n_informative": "default_n_informative"})
    if result.verdicts is None:
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
    rows["outcome"] = [outcome(d, None if pd.isna(v) else v)
                       for d, v in zip(rows["default_verdict"], rows["verdict"], strict=True)]
    rows = rows.assign(choice=u.choice, key=u.key, value=u.value_label, universe=u.id, source=u.source,
                       warnings=WARNING_SEP.join(result.warnings), default_warnings=WARNING_SEP.join(default_warnings))
    return rows[COLUMNS]


def collect(default: pd.DataFrame, results: Sequence[Result], default_warnings: Sequence[str] = ()) -> pd.DataFrame:
    """The multiverse table: :func:`compare` for every alternative, in declaration order."""
    frames = [compare(default, r, default_warnings) for r in results]
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in COLUMNS})
    out = pd.concat(frames, ignore_index=True)
    out["n_informative"] = out["n_informative"].astype("Int64")
    out["default_n_informative"] = out["default_n_informative"].astype("Int64")
    # the report's paper order: the default verdicts table's (the claims build goes study by study in the
    # registry's order); this shared layer names no study
    rank = {study: i for i, study in enumerate(dict.fromkeys(default["study"].astype(str)))}
    out = out.assign(_rank=out["study"].map(lambda st: rank.get(st, len(rank))))
    return (out.sort_values(["_rank", "claim_id", "reading"], kind="stable").drop(columns="_rank")
            .reset_index(drop=True))


def claim_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per claim (and reading): its default verdict, whether it is ``robust`` (decisive and held
    under every alternative), ``fragile`` (decisive and changed by one), or ``undecided``, and
    the alternatives that change it (``changed_by``: ``choice = value -> verdict``)."""
    rows = []
    for (study, claim_id, reading), g in table.groupby(KEYS, sort=False):
        default = str(g["default_verdict"].iloc[0])
        changed = g[g["outcome"].isin(FRAGILE | {"resolves"})]
        failed = g[g["outcome"] == "failed"]
        if default not in DECISIVE:
            status = "undecided"
        elif g["outcome"].isin(FRAGILE).any():
            status = "fragile"
        elif failed.empty:
            status = "robust"
        else:
            status = "untested"  # held wherever it ran, but some alternatives did not run
        rows.append({
            "study": study, "claim_id": claim_id, "reading": reading, "claim": g["claim"].iloc[0],
            "default_verdict": default, "status": status, "n_alternatives": len(g),
            "n_failed": len(failed),
            "changed_by": "; ".join(f"{c} = {v} → {vd}" for c, v, vd in
                                    zip(changed["choice"], changed["value"], changed["verdict"], strict=True)),
        })
    return pd.DataFrame(rows)


def collect_results(results: Sequence[Result]) -> pd.DataFrame:
    """:func:`collect` from every universe's :class:`Result`, the default's among them; raises
    :class:`InputDataError` when the default run failed (nothing to compare against)."""
    default = [r for r in results if r.universe.choice is None]
    if len(default) != 1:
        raise InputDataError("the multiverse needs exactly one default universe")
    if default[0].verdicts is None:
        raise InputDataError(f"the multiverse's default run failed, so no alternative can be compared: "
                             f"{default[0].error}")
    return collect(default[0].verdicts, [r for r in results if r.universe.choice is not None], default[0].warnings)
