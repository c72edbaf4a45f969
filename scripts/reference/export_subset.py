"""Write the prepared Breast Cancer arrays as the CSV the diffprivlib reference reads (issue 56).

Run in the project's venv after the data are prepared (``snakemake data/processed/breast_cancer/card.json
--cores 1 --configfile config/smoke.yaml`` with ``MPDP_DATA_MIRROR`` set; spec E1: rows with
‖x‖ ≤ 1, the intercept a constant feature, labels ±1)::

    .venv/bin/python scripts/reference/export_subset.py

Every float is written with 17 significant digits, so both sides read bit-identical arrays.
The file is committed (``scripts/reference/breast_cancer_prepared.csv``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "data" / "processed" / "breast_cancer"
OUT = Path(__file__).with_name("breast_cancer_prepared.csv")


def main() -> int:
    if not (SOURCE / "card.json").is_file():
        print(f"error: {SOURCE} is not prepared; run snakemake data/processed/breast_cancer/card.json first",
              file=sys.stderr)
        return 1
    blocks = []
    for split in ("train", "test"):
        X = np.load(SOURCE / f"X_{split}.npy")
        y = np.load(SOURCE / f"y_{split}.npy").astype(np.float64)
        blocks.append(np.column_stack([np.full(len(y), 0.0 if split == "train" else 1.0), y, X]))
    table = np.vstack(blocks)
    header = "test,y," + ",".join(f"x{j}" for j in range(table.shape[1] - 2))
    tmp = OUT.with_suffix(".csv.tmp")
    np.savetxt(tmp, table, delimiter=",", fmt="%.17g", header=header, comments="")
    tmp.replace(OUT)
    print(f"wrote {OUT} ({int((table[:, 0] == 0).sum())} train, {int((table[:, 0] == 1).sum())} test rows)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
