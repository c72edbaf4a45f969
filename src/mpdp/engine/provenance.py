"""Which code produced a results row: engine path, instruction set, layout rule, noise source.

The engine's float32 results are bit-identical across machines only on its fused path
(``docs/engine.md``); elsewhere they agree to rounding. So every results table carries four
columns (:data:`COLUMNS`) saying how each row was computed, filled where the tables are given
their columns (:func:`fill`, called by :func:`mpdp.results.conform`, the one writer of the
studies' results tables, and by the audit's and the least-squares study's table code), so
that no row builder has to know about them:

- ``engine_path``: ``fused`` (the compiled float32 kernel), ``numpy-float32`` or
  ``numpy-float64`` (the NumPy/BLAS path of :func:`mpdp.engine.gd.noisy_gd`; float64 is the exact
  reference), ``not-engine-float64`` (not trained by the gradient-descent engine: the
  mechanism's own NumPy float64 code — Newton or L-BFGS solvers, closed forms, the
  least-squares study, DP-SGD), or ``unrecorded`` (an engine
  row built in a process where the engine did not run, e.g. a hand-made test table);
- ``isa``: ``avx2`` | ``avx512`` on the fused path, else ``none``;
- ``layout_rule``: :data:`mpdp.engine.LAYOUT_RULE` on the fused path, else ``n/a``;
- ``noise_source``: ``compiled-stream`` (the compiled copy of NumPy's normal stream, the same
  values) or ``numpy``.

:func:`mpdp.engine.gd.noisy_gd` records what it used (:func:`record`); the first use of each path
in a process is logged on the ``mpdp`` logger (the job log), as a WARNING when it is a fallback
(the kernel missing or unusable, or the compiled noise stream disagreeing with NumPy).
"""

from __future__ import annotations

import os
import platform
from collections.abc import Callable

import pandas as pd

from mpdp.engine import gd
from mpdp.engine.path import NOT_ENGINE, UNRECORDED, current, describe

#: provenance column -> pandas dtype, after every other column of a results table
COLUMNS: dict[str, str] = {
    "engine_path": "string",  # fused | numpy-float32 | numpy-float64 | not-engine-float64 | unrecorded
    "isa": "string",  # avx2 | avx512 | none
    "layout_rule": "string",  # engine.LAYOUT_RULE (fused path) | n/a
    "noise_source": "string",  # compiled-stream | numpy
}

def fill(frame: pd.DataFrame, engine_rows: Callable[[pd.DataFrame], pd.Series]) -> pd.DataFrame:
    """``frame`` with the :data:`COLUMNS` (appended where absent), their NA values filled.

    ``engine_rows(frame)`` says which rows :func:`mpdp.engine.gd.noisy_gd` trained: they get what
    the engine recorded in this process for the row's ``dtype`` (or its only recorded dtype
    where the table has none), :data:`UNRECORDED` if it did not run; the other rows get
    :data:`NOT_ENGINE`. Values already present (a table read back, or set by a row builder)
    are kept.
    """
    out = frame.copy()
    for name, dtype in COLUMNS.items():
        out[name] = (out[name] if name in out.columns else pd.Series(pd.NA, index=out.index)).astype(dtype)
    missing = out["engine_path"].isna()
    if not missing.any():
        return out
    is_engine = engine_rows(out).fillna(False).astype(bool)
    if "dtype" in out.columns:
        dtypes = out["dtype"].astype("string").fillna("unknown")  # no dtype: unrecorded
    else:
        only = next(iter(gd._USED)) if len(gd._USED) == 1 else "float32"
        dtypes = pd.Series(only, index=out.index, dtype="string")
    for name in COLUMNS:
        values = [
            getattr(gd._USED.get(str(dt), UNRECORDED) if eng else NOT_ENGINE, name)
            for eng, dt in zip(is_engine, dtypes, strict=True)
        ]
        out[name] = out[name].fillna(pd.Series(values, index=out.index, dtype="string"))
    return out


def summary() -> tuple[str, bool]:
    """What float32 training on this machine will take, and whether that is a fallback: the line
    ``scripts/reproduce.sh`` and ``scripts/setup-venv.sh`` print (``python -m
    mpdp.engine.provenance``)."""
    provenance, fallback = current("float32")
    line = describe(provenance)
    if fallback is not None:
        line = (f"WARNING: {line}. Fallback: {fallback}. Tables will differ in the last digits "
                "from those of the fused path (docs/engine.md).")
    return line, fallback is not None


def main() -> None:
    line, _ = summary()
    print(f"{line} [{platform.machine()}; MPDP_ENGINE={os.environ.get('MPDP_ENGINE', 'auto')}]")


if __name__ == "__main__":
    main()
