"""The work per stage of two builds, and its ratio (issue 60 item 3: a change's cost as measured ratios).

```bash
python perf/stage_times.py BEFORE AFTER                 # two build folders (each with data/benchmarks/)
python perf/stage_times.py BEFORE AFTER --column s      # wall seconds instead of CPU seconds
```

Every Snakemake job with a ``benchmark:`` file writes ``data/benchmarks/<stage>/<job>.tsv`` (one
row: wall seconds ``s``, CPU seconds ``cpu_time``, …). This sums the chosen column per stage (the
folder under ``data/benchmarks/``) in each build and prints a markdown table: the two sums, their
ratio AFTER / BEFORE and the number of jobs. Compare builds made on the same machine, idle, with the
same config but for the change measured (e.g. ``split.per_repetition: false`` then ``true``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

BENCHMARKS = Path("data/benchmarks")


def stage_sums(build: Path, column: str) -> pd.DataFrame:
    """Per stage: the sum of ``column`` over the stage's benchmark files, and their count."""
    rows = []
    for tsv in sorted((build / BENCHMARKS).rglob("*.tsv")):
        frame = pd.read_csv(tsv, sep="\t")
        if column not in frame or frame.empty:
            raise SystemExit(f"stage_times: {tsv} has no column {column!r} (columns: {list(frame.columns)})")
        stage = tsv.relative_to(build / BENCHMARKS).parts[0]
        rows.append({"stage": stage, "value": float(pd.to_numeric(frame[column], errors="coerce").iloc[-1])})
    if not rows:
        raise SystemExit(f"stage_times: {build / BENCHMARKS} holds no benchmark file; build there first")
    out = pd.DataFrame(rows).groupby("stage")["value"].agg(["sum", "count"])
    return out


def compare(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """The two builds' sums side by side and the ratio after / before (stages of either build)."""
    both = before.merge(after, how="outer", left_index=True, right_index=True, suffixes=("_before", "_after"))
    total = pd.DataFrame({c: [both[c].sum()] for c in both.columns}, index=["total"])
    both = pd.concat([both, total])
    both["ratio"] = both["sum_after"] / both["sum_before"]
    return both


def markdown(table: pd.DataFrame, column: str) -> str:
    lines = [f"| stage | before ({column}) | after ({column}) | after / before | jobs before → after |",
             "|---|---|---|---|---|"]
    for stage, r in table.iterrows():
        ratio = "—" if pd.isna(r["ratio"]) else f"{r['ratio']:.2f}"
        jobs = f"{int(r['count_before']) if pd.notna(r['count_before']) else 0} → " \
               f"{int(r['count_after']) if pd.notna(r['count_after']) else 0}"
        lines.append(f"| {stage} | {r['sum_before']:.1f} | {r['sum_after']:.1f} | {ratio} | {jobs} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--column", default="cpu_time", help="benchmark column to sum (default cpu_time; s = wall)")
    args = parser.parse_args(argv)
    table = compare(stage_sums(args.before, args.column), stage_sums(args.after, args.column))
    print(markdown(table, args.column))
    return 0


if __name__ == "__main__":
    sys.exit(main())
