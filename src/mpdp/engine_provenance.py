"""Which code produced a results row: engine path, instruction set, layout rule, noise source.

The engine's float32 results are bit-identical across machines only on its fused path
(``docs/engine.md``); elsewhere they agree to rounding. So every results table carries four
columns (:data:`COLUMNS`) saying how each row was computed, filled where the tables are given
their columns (:func:`fill`, called by :func:`mpdp.results.conform`, the one writer of the
studies' results tables, and by the audit's and the least-squares study's table code), so
that no row builder has to know about them:

- ``engine_path``: ``fused`` (the compiled float32 kernel), ``numpy-float32`` or
  ``numpy-float64`` (the NumPy/BLAS path of :func:`mpdp.engine.noisy_gd`; float64 is the exact
  reference), ``not-engine-float64`` (not trained by the gradient-descent engine: the
  mechanism's own NumPy float64 code — Newton or L-BFGS solvers, closed forms, the
  least-squares study, DP-SGD), or ``unrecorded`` (an engine
  row built in a process where the engine did not run, e.g. a hand-made test table);
- ``isa``: ``avx2`` | ``avx512`` on the fused path, else ``none``;
- ``layout_rule``: :data:`mpdp.engine.LAYOUT_RULE` on the fused path, else ``n/a``;
- ``noise_source``: ``compiled-stream`` (the compiled copy of NumPy's normal stream, the same
  values) or ``numpy``.

:func:`mpdp.engine.noisy_gd` records what it used (:func:`record`); the first use of each path
in a process is logged on the ``mpdp`` logger (the job log), as a WARNING when it is a fallback
(the kernel missing or unusable, or the compiled noise stream disagreeing with NumPy).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import platform
from collections.abc import Callable

import pandas as pd

#: provenance column -> pandas dtype, after every other column of a results table
COLUMNS: dict[str, str] = {
    "engine_path": "string",  # fused | numpy-float32 | numpy-float64 | not-engine-float64 | unrecorded
    "isa": "string",  # avx2 | avx512 | none
    "layout_rule": "string",  # engine.LAYOUT_RULE (fused path) | n/a
    "noise_source": "string",  # compiled-stream | numpy
}

_LOG = logging.getLogger("mpdp")


@dataclasses.dataclass(frozen=True)
class Provenance:
    """The four provenance values of a row (see the module docstring)."""

    engine_path: str
    isa: str = "none"
    layout_rule: str = "n/a"
    noise_source: str = "numpy"

    def values(self) -> dict[str, str]:
        return dataclasses.asdict(self)


#: rows not trained by the gradient-descent engine (the mechanism's own NumPy float64 code)
NOT_ENGINE = Provenance("not-engine-float64")
#: engine rows of a process in which the engine never ran
UNRECORDED = Provenance("unrecorded", "unrecorded", "unrecorded", "unrecorded")

#: what noisy_gd used in this process, by dtype name ("float32", "float64")
_USED: dict[str, Provenance] = {}


def current(dtype: str = "float32") -> tuple[Provenance, str | None]:
    """What :func:`mpdp.engine.noisy_gd` in ``dtype`` uses in this process, and, when that is a
    fallback from the fused path this machine should take, why (else ``None``)."""
    from mpdp import engine, fused_kernel, normal_stream  # engine imports this module

    if dtype != "float32":
        return Provenance(f"numpy-{dtype}"), None
    kernel = fused_kernel.load()
    if kernel is None:
        fallback = fused_kernel.fallback_reason()
        return Provenance("numpy-float32"), fallback
    if normal_stream.load() is None:
        return (Provenance("fused", kernel.isa, engine.LAYOUT_RULE, "numpy"),
                "the compiled normal stream is missing or disagrees with NumPy's; noise drawn by "
                "NumPy (the same values, slower)")
    return Provenance("fused", kernel.isa, engine.LAYOUT_RULE, "compiled-stream"), None


def describe(provenance: Provenance) -> str:
    """One line for logs and the report."""
    if provenance.engine_path == "fused":
        from mpdp import engine, fused_kernel

        return (f"engine: fused {fused_kernel.ISAS[provenance.isa][1]} kernel (float32), "
                f"{engine.fused_layout_description()}, noise from "
                f"{'the compiled copy of NumPy' if provenance.noise_source == 'compiled-stream' else 'NumPy'}"
                "'s normal streams: bit-identical on every x86-64 CPU with AVX2 and FMA")
    return (f"engine: {provenance.engine_path} (NumPy/BLAS path, noise from NumPy): agrees with the "
            "fused path to rounding only")


def record(dtype: str) -> Provenance:
    """Note that :func:`mpdp.engine.noisy_gd` trains in ``dtype`` now and return its provenance;
    the first time per dtype it is logged (a WARNING for a fallback)."""
    provenance, fallback = current(dtype)
    if _USED.get(dtype) != provenance:
        _USED[dtype] = provenance
        _LOG.info("%s", describe(provenance))
        if fallback is not None:
            _LOG.warning("engine fallback: %s", fallback)
    return provenance


def used() -> dict[str, Provenance]:
    """What the engine used in this process so far, by dtype."""
    return dict(_USED)


def fill(frame: pd.DataFrame, engine_rows: Callable[[pd.DataFrame], pd.Series]) -> pd.DataFrame:
    """``frame`` with the :data:`COLUMNS` (appended where absent), their NA values filled.

    ``engine_rows(frame)`` says which rows :func:`mpdp.engine.noisy_gd` trained: they get what
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
        only = next(iter(_USED)) if len(_USED) == 1 else "float32"
        dtypes = pd.Series(only, index=out.index, dtype="string")
    for name in COLUMNS:
        values = [
            getattr(_USED.get(str(dt), UNRECORDED) if eng else NOT_ENGINE, name)
            for eng, dt in zip(is_engine, dtypes, strict=True)
        ]
        out[name] = out[name].fillna(pd.Series(values, index=out.index, dtype="string"))
    return out


def summary() -> tuple[str, bool]:
    """What float32 training on this machine will take, and whether that is a fallback: the line
    ``scripts/reproduce.sh`` and ``scripts/setup-venv.sh`` print (``python -m
    mpdp.engine_provenance``)."""
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
