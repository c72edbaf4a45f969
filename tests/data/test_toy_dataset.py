"""A data set added the documented way (docs/development.md "How to add a data set"; issue 44):
its own module in ``mpdp/data/`` plus its entry in the registry, nothing else. The workflow then
fetches, prepares and partitions it, and plans every study's jobs for it, on the smoke profile.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mpdp.pipeline import code_hash

ROOT = Path(__file__).resolve().parents[2]

TOY_MODULE = '''"""A toy data set: three numeric features and a ±1 label (tests/data/test_toy_dataset.py)."""

import numpy as np
import pandas as pd

from mpdp.data.info import DatasetInfo, RawFile
from mpdp.data.parsers import Parsed


def parse(paths, preprocess):
    frame = pd.read_csv(paths["toy.csv"])
    return Parsed(frame[["a", "b", "c"]].astype(float), np.where(frame["y"] == 1, 1, -1).astype(np.int8),
                  {{"rows_read": len(frame)}})


TOY = DatasetInfo(
    id="toy", display_name="Toy",
    files=(RawFile("toy.csv", "{sha256}", {size}, "toy/toy.csv.gz", ()),),
    positive_label="y == 1", homepage="-", license="CC0", doi="-", citation="a test", parse=parse,
)
'''


def _toy_csv(n: int = 1500) -> bytes:
    gen = np.random.default_rng(0)
    x = gen.normal(size=(n, 3))
    y = (x @ np.array([1.0, -0.5, 0.25]) + 0.3 * gen.normal(size=n) > 0).astype(int)
    lines = ["a,b,c,y", *(f"{a:.6f},{b:.6f},{c:.6f},{t}" for (a, b, c), t in zip(x, y, strict=True))]
    return ("\n".join(lines) + "\n").encode()


def _add_toy(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the package with the toy data set added (its module + the registry entry) and a
    mirror holding its raw file; (the copy's src folder, the mirror)."""
    src = tmp_path / "src"
    shutil.copytree(code_hash.PACKAGE_ROOT, src / "mpdp", ignore=shutil.ignore_patterns("__pycache__"))
    raw = _toy_csv()
    (src / "mpdp" / "data" / "toy.py").write_text(
        TOY_MODULE.format(sha256=hashlib.sha256(raw).hexdigest(), size=len(raw)))
    registry = src / "mpdp" / "data" / "registry.py"
    text = registry.read_text()
    entry = "(KDDCUP99, ADULT, BANK, BREAST_CANCER, CREDIT_CARD)"
    assert text.count(entry) == 1
    # the registry entry: the module's DatasetInfo in the DATASETS tuple
    registry.write_text(text.replace(entry, "(KDDCUP99, ADULT, BANK, BREAST_CANCER, CREDIT_CARD, _toy.TOY)")
                        .replace("from mpdp.errors import ConfigError\n",
                                 "from mpdp.data import toy as _toy\nfrom mpdp.errors import ConfigError\n"))
    mirror = tmp_path / "mirror"
    (mirror / "toy").mkdir(parents=True)
    (mirror / "toy" / "toy.csv.gz").write_bytes(gzip.compress(raw))
    return src, mirror


def _snakemake(work: Path, src: Path, mirror: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(src), "MPDP_DATA_MIRROR": str(mirror), "MPDP_WARM": "0"}
    return subprocess.run([sys.executable, "-m", "snakemake", *args, "--configfile", "config/smoke.yaml",
                           "--config", "datasets=[toy]", "wddp={u_grid: {toy: [1, 3]}}"],
                          cwd=work, env=env, capture_output=True, text=True)


@pytest.mark.slow
def test_a_data_set_added_by_its_module_and_one_registry_entry_runs(tmp_path):
    src, mirror = _add_toy(tmp_path)
    changed = {p.relative_to(src / "mpdp").as_posix() for p in (src / "mpdp").rglob("*")
               if p.is_file() and not (code_hash.PACKAGE_ROOT / p.relative_to(src / "mpdp")).is_file()}
    assert changed == {"data/toy.py"}  # plus the one edited registry file
    work = tmp_path / "work"
    work.mkdir()
    for name in ("Snakefile", "workflow", "config", "notebooks", "environment.yml"):
        (work / name).symlink_to(ROOT / name)
    # the data stages run for real: fetch from the mirror, prepare, partition
    proc = _snakemake(work, src, mirror, "--cores", "1", "data/partitions/toy/eps_sweep.npz",
                      "data/partitions/toy/u_sweep.npz")
    assert proc.returncode == 0, proc.stderr[-3000:]
    card = json.loads((work / "data" / "processed" / "toy" / "card.json").read_text())
    assert card["n_train"] + card["n_test"] == 1500 and card["n_train"] == 1200
    # the whole smoke profile plans with it: the WD-DP study's jobs and figures of the toy set
    proc = _snakemake(work, src, mirror, "-n")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    planned = set(re.findall(r"^(?:local)?rule (\w+):$", out, flags=re.M))
    assert {"optimum", "learning_rates", "train_job", "collect_results", "figure", "report_html"} <= planned
    assert "data/results/wddp/toy.parquet" in out
    assert not {"fetch_raw", "prepare", "partition"} & planned  # already built above
