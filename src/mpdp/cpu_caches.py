"""The CPU facts the fused engine sizes its block layouts by (issue 12): the vendor and the
L2 cache of one core, read from Linux's ``/proc/cpuinfo`` and ``/sys/devices/system/cpu``.

Both are read once per process and never measured, so a machine always makes the same layout
choices (and a run its same rounding). Elsewhere, or where a file is missing, they are
``None`` and :mod:`mpdp.engine` keeps its defaults.
"""

from __future__ import annotations

import functools
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")
CACHE_DIR = Path("/sys/devices/system/cpu/cpu0/cache")
_UNITS = {"K": 1024, "M": 1024**2, "G": 1024**3}


def parse_size(text: str) -> int | None:
    """Bytes of a sysfs cache size such as ``2048K`` or ``1M`` (``None`` if not one)."""
    text = text.strip().upper()
    scale = _UNITS.get(text[-1:], 1) if text else 1
    digits = text[:-1] if text[-1:] in _UNITS else text
    return int(digits) * scale if digits.isdigit() and int(digits) > 0 else None


@functools.cache
def vendor() -> str | None:
    """The ``vendor_id`` of the first CPU (``GenuineIntel``, ``AuthenticAMD``, …) or ``None``."""
    try:
        for line in CPUINFO.read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "vendor_id":
                return value.strip() or None
    except OSError:
        return None
    return None


@functools.cache
def l2_bytes() -> int | None:
    """Size of the level-2 data (or unified) cache of the first core, or ``None``."""
    try:
        entries = sorted(CACHE_DIR.glob("index*"))
        for entry in entries:
            level = (entry / "level").read_text().strip()
            kind = (entry / "type").read_text().strip()
            if level == "2" and kind in ("Unified", "Data"):
                return parse_size((entry / "size").read_text())
    except OSError:
        return None
    return None
