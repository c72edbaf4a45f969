"""The tidy results table: one row per trained run (spec experiments.md E0 "per-run artefacts").

Every training job writes rows with exactly these columns; figures, the claims check and the
report read only this table. New mechanisms (ADMM, voting, averaging, least squares) add rows
with their own ``mechanism``/``mode``/``accountant`` ids and leave columns that do not apply
missing (NaN / <NA>), so the figure code needs no change to show them.

A study that needs columns of its own declares them as ``extra`` (name -> dtype) and passes
them to :func:`to_frame`, :func:`conform`, :func:`read` and :func:`write`; they follow the
common columns in the declared order. Without ``extra`` a table must have exactly the common
columns, so the WD-DP tables are unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from mpdp.engine import provenance as engine_provenance
from mpdp.errors import InputDataError
from mpdp.io import atomic_path, rebuild_hint, unreadable

#: column name -> pandas dtype. Order is the order in the written tables.
COLUMNS: dict[str, str] = {
    # identity of the run
    "dataset": "string",  # kddcup99 | adult | bank | breast_cancer | credit_card
    "experiment": "string",  # eps_sweep | u_sweep | cv
    "mechanism": "string",  # nonprivate | wyx | wddp | jayaraman
    "mode": "string",  # local_then_aggregate | per_round | central
    "accountant": "string",  # ma16 | exact | rdp | zcdp_code | ma_tight | ma_int | none
    "noise_sharing": "string",  # independent | shared | n/a
    "m": "Int64",  # number of parties (<NA> for centralised eps-sweep runs)
    "u": "Float64",  # unevenness n_max/n_min of the two-group design (<NA> for random sizes)
    "epsilon": "float64",  # target epsilon of the run
    "delta": "float64",
    "rep": "int64",  # repetition index 0..R-1
    "eta": "float64",  # learning rate used
    "eta_source": "string",  # cv | config
    "T": "int64",  # number of gradient steps
    "lambda": "float64",  # L2 regulariser weight
    "G": "float64",  # Lipschitz constant used in calibration
    "dtype": "string",  # float32 | float64
    # data and partition
    "n": "int64",  # pooled training records used (n_eff for the two-group design)
    "p": "int64",  # number of parameters
    "n_min": "Int64",  # n_(1), the smallest party
    "n_max": "Int64",
    "size_ratio": "Float64",  # n / (m n_(1)), the WD-DP vs Jayaraman noise ratio (spec B9)
    # privacy ledger
    "sensitivity": "float64",  # L2 sensitivity assumed by the calibration (2G/n_eff)
    "sigma": "float64",  # per-coordinate noise std actually injected per step
    "eps_claimed": "float64",  # epsilon the mechanism claims (= epsilon)
    "eps_accounted": "float64",  # ledger epsilon at delta, mechanism as implemented (see scope)
    # aggregate: exact epsilon of the release | worst_party: upper bound via the worst party's
    # trajectory (post-processing) | unaccounted: shared noise, no valid epsilon (NaN)
    "eps_accounted_scope": "string",
    # outcome
    "accuracy": "float64",  # test accuracy, sign(0) := +1
    "train_loss": "float64",  # L_D(theta_T) on the pooled training data of the setting
    "optimal_loss": "float64",  # L_D(theta*) on the same data
    "optimal_gap": "float64",  # train_loss - optimal_loss
    "init_loss": "float64",  # L_D(theta_0)
    # the floor and the ceiling of the accuracy panels (issue 11)
    "majority_rate": "float64",  # test accuracy of predicting the majority class of the test set
    "optimal_accuracy": "float64",  # test accuracy of the run's reference theta* (non-private ERM)
    # theory evaluated for this run (spec bounds.md); NaN where no bound applies
    "bound_gap": "float64",  # B1prime (WD-DP/WYX) or B3 (Jayaraman) upper bound on the gap
    "predicted_gap": "float64",  # B1triple-prime quadratic-model noise floor (heuristic)
    "aggregation_bias": "float64",  # B3 bias floor b_F of the simple average (Jayaraman)
    "seconds": "float64",  # wall time of the run's share of its batch
    # flops of the engine's two products for this run (4 n_b p T per column, spec E8); NaN
    # where the run is not trained by mpdp.engine or the study does not record it
    "flops": "float64",
    "synthetic": "boolean",  # True only for fixtures; never for real runs
    # how the row was computed: engine path, instruction set, layout rule, noise source
    # (mpdp.engine.provenance; filled by conform where a row builder leaves them out)
    **engine_provenance.COLUMNS,
}

KEY_COLUMNS = ["dataset", "experiment", "mechanism", "mode", "accountant", "m", "u", "epsilon", "rep"]


ExtraColumns = Mapping[str, str] | None


def columns(extra: ExtraColumns = None) -> dict[str, str]:
    """The common :data:`COLUMNS` followed by a study's declared ``extra`` columns (name -> dtype).

    An extra column may not redefine a common one with another dtype.
    """
    out = dict(COLUMNS)
    for name, dtype in (extra or {}).items():
        if name in COLUMNS and COLUMNS[name] != dtype:
            raise ValueError(f"extra column {name!r} ({dtype}) clashes with the common one ({COLUMNS[name]})")
        out[name] = dtype
    return out


def to_frame(rows: Iterable[Mapping[str, object]], extra: ExtraColumns = None) -> pd.DataFrame:
    """Build a results table with the canonical (and ``extra``) columns and dtypes from row dicts."""
    frame = pd.DataFrame(list(rows))
    return conform(frame, extra)


def engine_rows(frame: pd.DataFrame) -> pd.Series:
    """Which rows :func:`mpdp.engine.gd.noisy_gd` trained: the benchmark's gradient family (its
    ``family`` column), else the gradient-perturbation mechanisms of
    :data:`mpdp.mechanisms.REGISTRY` (the WD-DP study's runs); ADMM, voting, output perturbation
    and the exact references are solved otherwise."""
    if "family" in frame.columns:
        return frame["family"] == "gradient"
    from mpdp.mechanisms import REGISTRY

    return frame["mechanism"].isin(list(REGISTRY))


def conform(frame: pd.DataFrame, extra: ExtraColumns = None) -> pd.DataFrame:
    """Order and type the columns of ``frame``; unknown columns are an error, missing ones NA,
    except the provenance columns, which :func:`mpdp.engine.provenance.fill` fills (the one
    place every results table passes through)."""
    schema = columns(extra)
    unknown = sorted(set(frame.columns) - set(schema))
    if unknown:
        raise InputDataError(f"results table has unknown columns {unknown}")
    out = pd.DataFrame(index=frame.index)
    for name, dtype in schema.items():
        if name in frame.columns:
            col = frame[name]
            if dtype == "float64":  # None from row dicts means "does not apply": NaN
                col = pd.to_numeric(col, errors="raise").astype("float64")
            out[name] = col.astype(dtype)
        else:
            missing = np.nan if dtype == "float64" else pd.NA
            out[name] = pd.Series(missing, index=frame.index).astype(dtype)
    return engine_provenance.fill(out, engine_rows).reset_index(drop=True)


def read(path: str | Path, extra: ExtraColumns = None) -> pd.DataFrame:
    """Read a results table written by :func:`write` (with the same ``extra``) and check its columns."""
    frame = read_parquet(path)
    missing = sorted(set(columns(extra)) - set(frame.columns))
    if missing:
        raise InputDataError(f"results table {path} lacks columns {missing}; {rebuild_hint(path)}")
    return conform(frame, extra)


def read_parquet(path: str | Path, what: str = "results table") -> pd.DataFrame:
    """Read a parquet table of the pipeline; a missing or unreadable file (truncated by a full
    disk or a copy) is a one-line :class:`InputDataError` naming the file and the command that
    rebuilds it (Snakemake never rebuilds a file whose time stamp is up to date)."""
    path = Path(path)
    if not path.exists():
        raise unreadable(path, what)
    try:
        return pd.read_parquet(path)
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise unreadable(path, what, exc) from None


def write(frame: pd.DataFrame, path: str | Path, extra: ExtraColumns = None) -> None:
    """Write a results table atomically (:func:`mpdp.io.atomic_path`: a unique temporary
    sibling, renamed into place when complete, removed on error)."""
    table = conform(frame, extra)
    with atomic_path(path) as tmp:
        table.to_parquet(tmp, index=False)
