"""Fixtures of the data-layer tests: the raw-data mirror, prepared real data, synthetic raw files.

The ``mirror`` fixture is in ``tests/conftest.py`` (skipped without the mirror, failed under
CI). Synthetic raw files are written in
the exact upstream format (spec E1.1 allows such fixtures for unit tests only).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mpdp.data import fetch
from mpdp.data.parsers import (
    ADULT_COLUMNS,
    BANK_COLUMNS,
    CREDIT_CARD_FEATURES,
    KDD_CATEGORICAL,
    KDD_COLUMNS,
)
from mpdp.data.prepare import Processed, load, prepare

REPO_ROOT = Path(__file__).resolve().parents[2]


def base_cfg(**preprocess: Any) -> dict[str, Any]:
    """The config keys that prepare reads, with the defaults of config/config.yaml."""
    pre = {
        "intercept": True,
        "row_scaling": "per_row",
        "scaling_bounds": "full_data",
        "kdd_sample_size": 70000,
        "bank_keep_duration": True,
        "breast_cancer_missing": "median",
        "credit_card_normals": 492,
    }
    pre.update(preprocess)
    return {
        "root_seed": 0,
        "max_records": None,
        "split": {"test_frac": 0.2, "seed": 0},
        "preprocess": pre,
    }


@pytest.fixture
def cfg() -> dict[str, Any]:
    return base_cfg()


@pytest.fixture(scope="session")
def real_prepared(
    mirror: Path, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], tuple[dict[str, Any], Processed, float]]:
    """Prepare a real data set from the mirror once per session: (card, arrays, seconds)."""
    from mpdp.config import load as load_config

    config = load_config(REPO_ROOT / "config" / "config.yaml", {"max_records": None})
    raw_dir = tmp_path_factory.mktemp("raw")
    out_root = tmp_path_factory.mktemp("processed")
    cache: dict[str, tuple[dict[str, Any], Processed, float]] = {}

    def get(dataset_id: str) -> tuple[dict[str, Any], Processed, float]:
        if dataset_id not in cache:
            if fetch.locate(dataset_id, raw_dir, mirror, False) is None:
                pytest.skip(f"{dataset_id}: raw files not in the mirror {mirror}")
            paths = fetch.fetch(dataset_id, raw_dir, mirror, False, log=lambda _: None)
            start = time.perf_counter()
            card = prepare(dataset_id, paths, out_root / dataset_id, config)
            cache[dataset_id] = (card, load(out_root / dataset_id), time.perf_counter() - start)
        return cache[dataset_id]

    return get


# --- synthetic raw files in the upstream formats ---------------------------------------------

ADULT_CATS = {
    "workclass": ["Private", "Self-emp-inc", "State-gov", "?"],
    "education": ["Bachelors", "HS-grad", "11th"],
    "marital-status": ["Never-married", "Married-civ-spouse"],
    "occupation": ["Adm-clerical", "Exec-managerial", "?"],
    "relationship": ["Husband", "Wife", "Own-child"],
    "race": ["White", "Black"],
    "sex": ["Male", "Female"],
    "native-country": ["United-States", "Cuba", "?"],
}
BANK_CATS = {
    "job": ["admin.", "services", "unknown"],
    "marital": ["married", "single", "unknown"],
    "education": ["basic.4y", "high.school", "unknown"],
    "default": ["no", "unknown"],
    "housing": ["no", "yes", "unknown"],
    "loan": ["no", "yes"],
    "contact": ["telephone", "cellular"],
    "month": ["may", "jun"],
    "day_of_week": ["mon", "tue"],
    "poutcome": ["nonexistent", "failure", "success"],
}
KDD_CATS = {
    "protocol_type": ["tcp", "udp", "icmp"],
    "service": ["http", "smtp", "ecr_i", "private", "rare_svc"],
    "flag": ["SF", "S0", "REJ"],
}


def _adult_row(gen: np.random.Generator, label: str) -> str:
    values = []
    for col in ADULT_COLUMNS[:-1]:
        if col in ADULT_CATS:
            values.append(str(gen.choice(ADULT_CATS[col], p=_rare_last(len(ADULT_CATS[col])))))
        else:
            values.append(str(int(gen.integers(0, 100))))
    return ", ".join([*values, label])


def _rare_last(k: int) -> np.ndarray:
    """Choice weights that make the last option rare (a '?' or a rare category)."""
    w = np.ones(k)
    w[-1] = 0.1
    return w / w.sum()


def write_adult(directory: Path, n: int, gen: np.random.Generator) -> list[Path]:
    labels = gen.choice(["<=50K", ">50K"], size=n, p=[0.75, 0.25])
    half = n // 2
    data = directory / "adult.data"
    data.write_text("\n".join(_adult_row(gen, lab) for lab in labels[:half]) + "\n\n")
    test = directory / "adult.test"
    rows = "\n".join(_adult_row(gen, lab + ".") for lab in labels[half:])
    test.write_text("|1x3 Cross validator\n" + rows + "\n\n")
    return [data, test]


def write_bank(directory: Path, n: int, gen: np.random.Generator) -> list[Path]:
    lines = [";".join(f'"{c}"' for c in BANK_COLUMNS)]
    for _ in range(n):
        fields = []
        for col in BANK_COLUMNS[:-1]:
            if col in BANK_CATS:
                fields.append(f'"{gen.choice(BANK_CATS[col])}"')
            else:
                fields.append(f"{gen.normal(10, 5):.3f}")
        fields.append('"yes"' if gen.random() < 0.12 else '"no"')
        lines.append(";".join(fields))
    path = directory / "bank-additional-full.csv"
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode())
    return [path]


def write_breast_cancer(directory: Path, n: int, gen: np.random.Generator) -> list[Path]:
    lines = []
    for i in range(n):
        values = [str(int(v)) for v in gen.integers(1, 11, size=9)]
        if gen.random() < 0.05:
            values[5] = "?"
        lines.append(",".join([str(1000000 + i), *values, "4" if gen.random() < 0.35 else "2"]))
    path = directory / "breast-cancer-wisconsin.data"
    path.write_text("\n".join(lines) + "\n")
    return [path]


def write_kddcup99(directory: Path, n: int, gen: np.random.Generator) -> list[Path]:
    lines = []
    for _ in range(n):
        fields = []
        for col in KDD_COLUMNS[:-1]:
            if col in KDD_CATEGORICAL:
                fields.append(str(gen.choice(KDD_CATS[col], p=_rare_last(len(KDD_CATS[col])))))
            else:
                fields.append(f"{gen.integers(0, 3) * gen.random():.2f}")
        fields.append(str(gen.choice(["normal.", "smurf.", "neptune."], p=[0.2, 0.5, 0.3])))
        lines.append(",".join(fields))
    path = directory / "kddcup.data_10_percent"
    path.write_text("\n".join(lines) + "\n")
    return [path]


def write_credit_card(
    directory: Path, n: int, gen: np.random.Generator, frauds: int = 20
) -> list[Path]:
    classes = np.zeros(n, dtype=int)
    classes[gen.choice(n, size=frauds, replace=False)] = 1
    lines = [",".join(f'"{c}"' for c in [*CREDIT_CARD_FEATURES, "Class"])]
    for i, cls in enumerate(classes):
        values = [
            f"{float(i)}",
            *(f"{v:.6f}" for v in gen.normal(size=28)),
            f"{gen.exponential(80):.2f}",
        ]
        lines.append(",".join([*values, f'"{cls}"']))
    path = directory / "creditcard.csv"
    path.write_text("\n".join(lines) + "\n")
    return [path]


WRITERS: dict[str, Callable[[Path, int, np.random.Generator], list[Path]]] = {
    "kddcup99": write_kddcup99,
    "adult": write_adult,
    "bank": write_bank,
    "breast_cancer": write_breast_cancer,
    "credit_card": write_credit_card,
}


@pytest.fixture
def synthetic_raw(tmp_path: Path) -> Callable[[str, int], list[Path]]:
    """Write ``n`` synthetic records of a data set in its upstream format; return the paths."""

    def write(dataset_id: str, n: int) -> list[Path]:
        directory = tmp_path / "synthetic_raw" / dataset_id
        directory.mkdir(parents=True, exist_ok=True)
        return WRITERS[dataset_id](directory, n, np.random.default_rng(12345))

    return write
