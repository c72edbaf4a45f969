"""Which engine path float32 training takes on this machine, and its four provenance values.

Reads the kernel (:mod:`mpdp.engine.kernel`), the noise streams (:mod:`mpdp.engine.noise`)
and the layout rule (:mod:`mpdp.engine.layout`); :mod:`mpdp.engine.gd` records what it used,
and :mod:`mpdp.engine.provenance` writes it into the results rows (docs/engine.md).
"""

from __future__ import annotations

import dataclasses

from mpdp.engine import kernel as fused_kernel
from mpdp.engine import layout
from mpdp.engine import noise as normal_stream
from mpdp.errors import MpdpError


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

def current(dtype: str = "float32") -> tuple[Provenance, str | None]:
    """What :func:`mpdp.engine.gd.noisy_gd` in ``dtype`` uses in this process, and, when that is a
    fallback from the fused path this machine should take, why (else ``None``)."""
    if dtype != "float32":
        return Provenance(f"numpy-{dtype}"), None
    kernel = fused_kernel.load()
    if kernel is None:
        fallback = fused_kernel.fallback_reason()
        return Provenance("numpy-float32"), fallback
    if normal_stream.load() is None:
        return (Provenance("fused", kernel.isa, layout.LAYOUT_RULE, "numpy"),
                "the compiled normal stream is missing or disagrees with NumPy's; noise drawn by "
                "NumPy (the same values, slower)")
    return Provenance("fused", kernel.isa, layout.LAYOUT_RULE, "compiled-stream"), None


def describe(provenance: Provenance) -> str:
    """One line for logs and the report."""
    if provenance.engine_path == "fused":
        return (f"engine: fused {fused_kernel.ISAS[provenance.isa][1]} kernel (float32), "
                f"{layout.fused_layout_description()}, noise from "
                f"{'the compiled copy of NumPy' if provenance.noise_source == 'compiled-stream' else 'NumPy'}"
                "'s normal streams: bit-identical on every x86-64 CPU with AVX2 and FMA")
    return (f"engine: {provenance.engine_path} (NumPy/BLAS path, noise from NumPy): agrees with the "
            "fused path to rounding only")


def describe_training(dtype: str = "float32") -> str:
    """A few words for job logs: which engine path training in ``dtype`` takes."""
    try:
        provenance, fallback = current(dtype)
    except MpdpError as exc:
        return f"engine: {exc}"
    text = describe(provenance)
    return text if fallback is None else f"{text} (fallback: {fallback})"
