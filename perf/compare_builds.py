"""Are two builds' tables and figures the same? (issue 36: every speed-up keeps them identical)

```bash
python perf/compare_builds.py BUILD_A BUILD_B      # e.g. two bench_pipeline.py --workdir clones
```

Compares every file under ``data/results/`` and ``reports/figures/`` of the two folders: byte for
byte, except Parquet tables, compared value for value without their wall-time columns (names
containing ``second``, ``time`` or ``wall``: they differ between any two builds), and JSON files
without such keys. Exits 1 if a file differs or exists in one build only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

FOLDERS = ("data/results", "reports/figures")
TIMING = ("second", "time", "wall")


def _files(root: Path) -> dict[str, Path]:
    return {str(p.relative_to(root)): p for sub in FOLDERS for p in (root / sub).rglob("*") if p.is_file()}


def _timing(name: str) -> bool:
    return any(t in name.lower() for t in TIMING)


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if not _timing(k)}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def same(a: Path, b: Path) -> tuple[bool, str]:
    """Whether files ``a`` and ``b`` agree, and how they were compared."""
    x, y = a.read_bytes(), b.read_bytes()
    if x == y:
        return True, "bytes"
    if a.suffix == ".parquet":
        import pandas as pd

        A, B = pd.read_parquet(a), pd.read_parquet(b)
        if list(A.columns) != list(B.columns):
            return False, "columns differ"
        cols = [c for c in A.columns if _timing(str(c))]
        return A.drop(columns=cols).equals(B.drop(columns=cols)), f"values without {cols}"
    if a.suffix == ".json":
        try:
            return _strip(json.loads(x)) == _strip(json.loads(y)), "JSON without timing keys"
        except ValueError:
            return False, "bytes"
    return False, "bytes"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    args = ap.parse_args(argv)
    fa, fb = _files(args.a), _files(args.b)
    only = sorted(set(fa) ^ set(fb))
    bad, ways = [], set()
    for rel in sorted(set(fa) & set(fb)):
        ok, how = same(fa[rel], fb[rel])
        if ok:
            ways.add(how)
        else:
            bad.append(f"{rel} ({how})")
    print(f"{len(set(fa) & set(fb)) - len(bad)} of {len(set(fa) & set(fb))} files the same "
          f"(compared as: {', '.join(sorted(ways))})")
    for line in bad:
        print(f"DIFFERENT: {line}")
    for rel in only:
        print(f"ONLY IN {'A' if rel in fa else 'B'}: {rel}")
    return 1 if bad or only else 0


if __name__ == "__main__":
    sys.exit(main())
