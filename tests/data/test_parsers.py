"""Parsers on tiny files in the exact upstream formats, quirks included (spec E1)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mpdp.data import parsers
from mpdp.errors import InputDataError

ADULT_DATA = (
    "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K\n"
    "50, Self-emp-not-inc, 83311, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Male, 0, 0, 13, United-States, >50K\n"
    "54, ?, 180211, Some-college, 10, Married-civ-spouse, ?, Husband, Asian-Pac-Islander, Male, 0, 0, 60, South, >50K\n"
    "\n"
)
ADULT_TEST = (
    "|1x3 Cross validator\n"
    "25, Private, 226802, 11th, 7, Never-married, Machine-op-inspct, Own-child, Black, Male, 0, 0, 40, United-States, <=50K.\n"
    "44, Private, 160323, Some-college, 10, Married-civ-spouse, Machine-op-inspct, Husband, Black, Male, 7688, 0, 40, ?, >50K.\n"
    "52, Self-emp-inc, 287927, HS-grad, 9, Married-civ-spouse, Exec-managerial, Wife, White, Female, 15024, 0, 40, United-States, >50K.\n"
    "\n"
)

BANK = (
    '"age";"job";"marital";"education";"default";"housing";"loan";"contact";"month";"day_of_week";"duration";"campaign";"pdays";"previous";"poutcome";"emp.var.rate";"cons.price.idx";"cons.conf.idx";"euribor3m";"nr.employed";"y"\r\n'
    '56;"housemaid";"married";"basic.4y";"no";"no";"no";"telephone";"may";"mon";261;1;999;0;"nonexistent";1.1;93.994;-36.4;4.857;5191;"no"\r\n'
    '57;"services";"married";"high.school";"unknown";"no";"no";"telephone";"may";"mon";149;1;999;0;"nonexistent";1.1;93.994;-36.4;4.857;5191;"no"\r\n'
    '37;"unknown";"single";"university.degree";"no";"yes";"no";"cellular";"nov";"wed";1224;1;3;1;"success";-1.1;94.767;-50.8;1.03;4963.6;"yes"\r\n'
)

BREAST_CANCER = (
    "1000025,5,1,1,1,2,1,3,1,1,2\n"
    "1002945,5,4,4,5,7,10,3,2,1,2\n"
    "1057013,8,4,5,1,2,?,7,3,1,4\n"
    "1015425,3,1,1,1,2,2,3,1,1,2\n"
    "897471,4,8,8,5,4,5,10,4,1,4\n"
)

KDD = (
    "0,tcp,http,SF,181,5450,0,0,0,0,0,1,0,0,0,0,0,0,0,0,0,0,8,8,0.00,0.00,0.00,0.00,1.00,0.00,0.00,9,9,1.00,0.00,0.11,0.00,0.00,0.00,0.00,0.00,normal.\n"
    "0,icmp,ecr_i,SF,1032,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,511,511,0.00,0.00,0.00,0.00,1.00,0.00,0.00,255,255,1.00,0.00,1.00,0.00,0.00,0.00,0.00,0.00,smurf.\n"
    "0,tcp,private,S0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,123,6,1.00,1.00,0.00,0.00,0.05,0.07,0.00,255,26,0.10,0.05,0.00,0.00,1.00,1.00,0.00,0.00,neptune.\n"
)

CREDIT_CARD_HEADER = ",".join(f'"{c}"' for c in parsers.CREDIT_CARD_FEATURES + ["Class"])
CREDIT_CARD = (
    CREDIT_CARD_HEADER
    + "\n"
    + "0,"
    + ",".join(["-1.35"] * 28)
    + ',149.62,"0"\n'
    + "406,"
    + ",".join(["2.5"] * 28)
    + ',0,"1"\n'
    + "472,"
    + ",".join(["-0.3"] * 28)
    + ',529,"0"\n'
)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


def _assert_typed(parsed: parsers.Parsed) -> None:
    for col in parsed.numeric_columns:
        assert parsed.features[col].dtype == np.float64
    for col in parsed.categorical_columns:
        categories = list(parsed.features[col].cat.categories)
        assert categories == sorted(categories)
    assert parsed.labels.dtype == np.int8
    assert set(np.unique(parsed.labels)) <= {-1, 1}
    assert not parsed.features.isna().any().any()


def test_adult_quirks(tmp_path: Path) -> None:
    parsed = parsers.parse_adult(
        _write(tmp_path, "adult.data", ADULT_DATA), _write(tmp_path, "adult.test", ADULT_TEST)
    )
    _assert_typed(parsed)
    # 6 records, 2 with '?' dropped; the cross-validator line and empty lines are no records
    assert len(parsed.features) == 4
    assert parsed.notes == {"rows_read": 6, "rows_dropped_missing": 2}
    assert parsed.labels.tolist() == [-1, 1, -1, 1]
    assert parsed.numeric_columns == parsers.ADULT_NUMERIC
    assert parsed.features["workclass"].cat.categories.tolist() == [
        "Private",
        "Self-emp-inc",
        "Self-emp-not-inc",
        "State-gov",
    ]
    assert parsed.features["age"].tolist() == [39.0, 50.0, 25.0, 52.0]


def test_bank_quirks(tmp_path: Path) -> None:
    path = _write(tmp_path, "bank-additional-full.csv", BANK)
    parsed = parsers.parse_bank(path)
    _assert_typed(parsed)
    assert parsed.labels.tolist() == [-1, -1, 1]
    assert "unknown" in parsed.features["job"].cat.categories
    assert parsed.features["default"].tolist() == ["no", "unknown", "no"]
    assert parsed.numeric_columns == parsers.BANK_NUMERIC
    assert parsed.features["nr.employed"].tolist() == [5191.0, 5191.0, 4963.6]  # no stray \r
    dropped = parsers.parse_bank(path, keep_duration=False)
    assert "duration" not in dropped.features.columns
    assert dropped.features.shape[1] == parsed.features.shape[1] - 1


@pytest.mark.parametrize(("missing", "rows"), [("median", 5), ("drop", 4)])
def test_breast_cancer_missing(tmp_path: Path, missing: str, rows: int) -> None:
    parsed = parsers.parse_breast_cancer(
        _write(tmp_path, "breast-cancer-wisconsin.data", BREAST_CANCER), missing
    )
    _assert_typed(parsed)
    assert parsed.features.shape == (rows, 9)
    assert "sample_code_number" not in parsed.features.columns
    if missing == "median":
        # median of the present Bare Nuclei values 1, 10, 2, 5
        assert parsed.features["bare_nuclei"].iloc[2] == 3.5
        assert parsed.labels.tolist() == [-1, -1, 1, -1, 1]
    else:
        assert parsed.labels.tolist() == [-1, -1, -1, 1]
        assert parsed.notes["rows_dropped_missing"] == 1


def test_kddcup99_quirks(tmp_path: Path) -> None:
    parsed = parsers.parse_kddcup99(_write(tmp_path, "kddcup.data_10_percent", KDD))
    _assert_typed(parsed)
    assert parsed.features.shape == (3, 41)
    assert parsed.categorical_columns == parsers.KDD_CATEGORICAL
    assert len(parsed.numeric_columns) == 38
    assert parsed.labels.tolist() == [-1, 1, 1]
    assert parsed.features["service"].cat.categories.tolist() == ["ecr_i", "http", "private"]


def test_credit_card_quirks(tmp_path: Path) -> None:
    parsed = parsers.parse_credit_card(_write(tmp_path, "creditcard.csv", CREDIT_CARD))
    _assert_typed(parsed)
    assert list(parsed.features.columns) == ["Time", *(f"V{i}" for i in range(1, 29)), "Amount"]
    assert parsed.labels.tolist() == [-1, 1, -1]
    assert parsed.features["Amount"].tolist() == [149.62, 0.0, 529.0]


def test_dispatch_by_file_name(tmp_path: Path) -> None:
    path = _write(tmp_path, "breast-cancer-wisconsin.data", BREAST_CANCER)
    parsed = parsers.parse("breast_cancer", {path.name: path}, {"breast_cancer_missing": "drop"})
    assert len(parsed.labels) == 4
    with pytest.raises(InputDataError, match="adult.test"):
        parsers.parse("adult", {"adult.data": path}, {})


@pytest.mark.parametrize(
    ("name", "text", "call", "message"),
    [
        ("adult.test", ADULT_TEST.replace("<=50K.", "small."), "adult", "income"),
        ("bank-additional-full.csv", BANK.replace('"yes"\r\n', '"maybe"\r\n'), "bank", "'y'"),
        ("bank-additional-full.csv", BANK.replace('"age";', '"Age";'), "bank", "header"),
        (
            "breast-cancer-wisconsin.data",
            BREAST_CANCER.replace(",4\n", ",3\n"),
            "breast_cancer",
            "class",
        ),
        ("kddcup.data_10_percent", KDD.replace("normal.", "normal"), "kddcup99", "trailing '.'"),
        ("creditcard.csv", CREDIT_CARD.replace('"1"', '"2"'), "credit_card", "Class"),
        (
            "creditcard.csv",
            CREDIT_CARD.replace(",149.62,", ",,"),
            "credit_card",
            "expected upstream format",
        ),
    ],
)
def test_wrong_format_is_a_readable_error(
    tmp_path: Path, name: str, text: str, call: str, message: str
) -> None:
    path = _write(tmp_path, name, text)
    paths = {path.name: path}
    if call == "adult":
        paths["adult.data"] = _write(tmp_path, "adult.data", ADULT_DATA)
    pre = {"bank_keep_duration": True, "breast_cancer_missing": "median"}
    with pytest.raises(InputDataError, match=message) as info:
        parsers.parse(call, paths, pre)
    assert "rerun" in str(info.value)


def test_categorical_helper_sorts_and_types() -> None:
    series = parsers._categorical(pd.Series(["b", "a", "c", "a"]))
    assert series.cat.categories.tolist() == ["a", "b", "c"]
    assert series.cat.codes.tolist() == [1, 0, 2, 0]


def test_parsed_rejects_missing_values() -> None:
    features = pd.DataFrame({"a": [1.0, np.nan]})
    with pytest.raises(InputDataError, match=r"empty or non-numeric values in columns \['a'\]"):
        parsers.Parsed(features, np.array([1, -1], dtype=np.int8))
