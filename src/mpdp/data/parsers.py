"""Parsers from the upstream raw files to typed features and ±1 labels (spec E1, mechanisms.md §0.1).

Each parser reads the files exactly as upstream distributes them and handles their quirks
(listed per parser). It returns a :class:`Parsed`: a features DataFrame whose numeric
columns are float64 and whose categorical columns have a ``category`` dtype with sorted
categories (the public schema, spec E1.3 step 1), the labels as int8 in {-1, +1} with +1
as in the spec E1 table, and notes on what was dropped or imputed (copied to the card).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mpdp.errors import InputDataError


@dataclass(frozen=True)
class Parsed:
    """Features (numeric float64 / categorical ``category``) and ±1 int8 labels."""

    features: pd.DataFrame
    labels: np.ndarray
    notes: dict[str, Any] = field(default_factory=dict)
    #: optional multiclass label (int8 codes into ``class_names``), e.g. KDDCup99's 5 classes
    classes: np.ndarray | None = None
    class_names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if len(self.features) != len(self.labels):
            raise ValueError(f"{len(self.features)} feature rows but {len(self.labels)} labels")
        empty = [c for c in self.features.columns if self.features[c].isna().any()]
        if empty:
            raise InputDataError(
                f"raw data has empty or non-numeric values in columns {empty}; the file is not "
                f"the upstream one. Delete it and rerun to fetch the verified file."
            )

    @property
    def categorical_columns(self) -> list[str]:
        return [
            c
            for c in self.features.columns
            if isinstance(self.features[c].dtype, pd.CategoricalDtype)
        ]

    @property
    def numeric_columns(self) -> list[str]:
        categorical = set(self.categorical_columns)
        return [c for c in self.features.columns if c not in categorical]


ADULT_NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
]  # fmt: skip

BANK_NUMERIC = [
    "age", "duration", "campaign", "pdays", "previous", "emp.var.rate", "cons.price.idx",
    "cons.conf.idx", "euribor3m", "nr.employed",
]  # fmt: skip
BANK_COLUMNS = [
    "age", "job", "marital", "education", "default", "housing", "loan", "contact", "month",
    "day_of_week", "duration", "campaign", "pdays", "previous", "poutcome", "emp.var.rate",
    "cons.price.idx", "cons.conf.idx", "euribor3m", "nr.employed", "y",
]  # fmt: skip

BREAST_CANCER_COLUMNS = [
    "sample_code_number", "clump_thickness", "uniformity_of_cell_size",
    "uniformity_of_cell_shape", "marginal_adhesion", "single_epithelial_cell_size",
    "bare_nuclei", "bland_chromatin", "normal_nucleoli", "mitoses", "class",
]  # fmt: skip

#: Column names of kddcup.names; protocol_type, service and flag are the categorical ones
#: (spec E1: 38 numeric + one-hot of these three; the 0/1 "symbolic" flags stay numeric).
KDD_COLUMNS = [
    "duration", "protocol_type", "service", "flag", "src_bytes", "dst_bytes", "land",
    "wrong_fragment", "urgent", "hot", "num_failed_logins", "logged_in", "num_compromised",
    "root_shell", "su_attempted", "num_root", "num_file_creations", "num_shells",
    "num_access_files", "num_outbound_cmds", "is_host_login", "is_guest_login", "count",
    "srv_count", "serror_rate", "srv_serror_rate", "rerror_rate", "srv_rerror_rate",
    "same_srv_rate", "diff_srv_rate", "srv_diff_host_rate", "dst_host_count",
    "dst_host_srv_count", "dst_host_same_srv_rate", "dst_host_diff_srv_rate",
    "dst_host_same_src_port_rate", "dst_host_srv_diff_host_rate", "dst_host_serror_rate",
    "dst_host_srv_serror_rate", "dst_host_rerror_rate", "dst_host_srv_rerror_rate", "label",
]  # fmt: skip
KDD_CATEGORICAL = ["protocol_type", "service", "flag"]

CREDIT_CARD_FEATURES = ["Time", *(f"V{i}" for i in range(1, 29)), "Amount"]


def _read_csv(path: Path, **kwargs: Any) -> pd.DataFrame:
    """pandas C-engine read; a format problem becomes an InputDataError naming the file."""
    try:
        return pd.read_csv(path, engine="c", **kwargs)
    except (ValueError, pd.errors.ParserError) as exc:
        raise InputDataError(
            f"raw file {path} is not in the expected upstream format ({exc}). "
            f"Delete it and rerun to fetch the verified upstream file."
        ) from None


def _categorical(series: pd.Series) -> pd.Series:
    """The column as a ``category`` dtype whose categories are its sorted distinct values."""
    values = sorted(str(v) for v in series.dropna().unique())
    return series.astype(str).astype(pd.CategoricalDtype(values))


def _check_values(values: pd.Series, allowed: set[Any], path: Path, column: str) -> None:
    """Every value of ``column`` must be in ``allowed`` (the upstream label set)."""
    unexpected = sorted(str(v) for v in set(values.unique()) - allowed)
    if unexpected:
        raise InputDataError(
            f"raw file {path}: column {column!r} has unexpected values {unexpected[:5]} "
            f"(expected {sorted(map(str, allowed))}); the file is not the upstream one. "
            f"Delete it and rerun to fetch the verified file."
        )


def _check_columns(frame: pd.DataFrame, expected: list[str], path: Path) -> None:
    if list(frame.columns) != expected:
        raise InputDataError(
            f"raw file {path}: header {list(frame.columns)} differs from the expected "
            f"{expected}; the file is not the upstream one. Delete it and rerun."
        )


def _pm1(positive: np.ndarray) -> np.ndarray:
    """Boolean 'is positive' -> int8 labels in {-1, +1} (mechanisms.md §0.1)."""
    return np.where(positive, 1, -1).astype(np.int8)


def _typed(frame: pd.DataFrame, numeric: list[str]) -> pd.DataFrame:
    """Numeric columns as float64, every other column categorical."""
    out = {
        c: frame[c].astype(np.float64) if c in numeric else _categorical(frame[c]) for c in frame
    }
    return pd.DataFrame(out, index=pd.RangeIndex(len(frame)))


def _starts_with_bar(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(1) == b"|"


def _read_adult_file(path: Path) -> pd.DataFrame:
    """One Adult file: ', '-separated, no header, '?' missing, optional '|...' first line."""
    dtypes = {c: (np.float64 if c in ADULT_NUMERIC else str) for c in ADULT_COLUMNS}
    return _read_csv(
        path,
        header=None,
        names=ADULT_COLUMNS,
        sep=",",
        skipinitialspace=True,
        skiprows=1 if _starts_with_bar(path) else 0,
        na_values=["?"],
        keep_default_na=False,
        skip_blank_lines=True,
        dtype=dtypes,
    )


def parse_adult(data_path: Path, test_path: Path) -> Parsed:
    """Adult: adult.data + adult.test, rows with '?' dropped (spec E1 (b): 45 222 rows).

    Quirks: a space after every comma; '?' for missing values; adult.test starts with the
    line ``|1x3 Cross validator`` and its labels end with '.'; both files end with an
    empty line. Label +1: income ``>50K``.
    """
    frame = pd.concat([_read_adult_file(data_path), _read_adult_file(test_path)], ignore_index=True)
    income = frame["income"].str.rstrip(".")
    _check_values(income.dropna(), {"<=50K", ">50K"}, test_path, "income")
    complete = frame.notna().all(axis=1).to_numpy()
    frame = frame.loc[complete].reset_index(drop=True)
    features = _typed(frame.drop(columns="income"), ADULT_NUMERIC)
    labels = _pm1((income[complete] == ">50K").to_numpy())
    return Parsed(
        features,
        labels,
        {"rows_read": int(complete.size), "rows_dropped_missing": int((~complete).sum())},
    )


def parse_bank(path: Path, keep_duration: bool = True) -> Parsed:
    """Bank Marketing, bank-additional-full.csv (spec E1 (c), E7 #17).

    Quirks: ';' separator, a quoted header, string fields in double quotes, CRLF line
    endings; ``unknown`` is kept as a category. Label +1: ``y == "yes"``. ``duration`` is
    dropped when ``keep_duration`` is false.
    """
    dtypes = {c: (np.float64 if c in BANK_NUMERIC else str) for c in BANK_COLUMNS}
    frame = _read_csv(path, sep=";", dtype=dtypes, keep_default_na=False)
    _check_columns(frame, BANK_COLUMNS, path)
    _check_values(frame["y"], {"yes", "no"}, path, "y")
    numeric = [c for c in BANK_NUMERIC if keep_duration or c != "duration"]
    dropped = ["y"] if keep_duration else ["y", "duration"]
    features = _typed(frame.drop(columns=dropped), numeric)
    return Parsed(
        features,
        _pm1((frame["y"] == "yes").to_numpy()),
        {"rows_read": len(frame), "duration_kept": keep_duration},
    )


def parse_breast_cancer(path: Path, missing: str = "median") -> Parsed:
    """Breast Cancer Wisconsin (Original) (spec E1 (d), E7 #18).

    Quirks: no header; column 1 is a sample ID (dropped); 16 '?' in Bare Nuclei, imputed by
    the column median of the present values (``missing="median"``, keeps 699 rows) or
    dropped (``missing="drop"``, 683 rows). Label +1: class 4 (malignant).
    """
    if missing not in ("median", "drop"):
        raise ValueError(f"missing must be 'median' or 'drop', got {missing!r}")
    frame = _read_csv(
        path,
        header=None,
        names=BREAST_CANCER_COLUMNS,
        na_values=["?"],
        keep_default_na=False,
        dtype={c: np.float64 for c in BREAST_CANCER_COLUMNS},
    )
    _check_values(frame["class"], {2.0, 4.0}, path, "class")
    features = frame.drop(columns=["sample_code_number", "class"])
    absent = features.isna()
    notes: dict[str, Any] = {
        "rows_read": len(frame),
        "missing_values": int(absent.to_numpy().sum()),
        "missing": missing,
    }
    if missing == "median":
        medians = features.median()
        notes["imputed_medians"] = {c: float(medians[c]) for c in features if absent[c].any()}
        features = features.fillna(medians)
        keep = np.ones(len(frame), dtype=bool)
    else:
        keep = ~absent.any(axis=1).to_numpy()
        features = features.loc[keep].reset_index(drop=True)
        notes["rows_dropped_missing"] = int((~keep).sum())
    labels = _pm1((frame["class"] == 4.0).to_numpy()[keep])
    return Parsed(_typed(features, list(features.columns)), labels, notes)


#: KDDCup99 attack taxonomy (spec experiments.md E5): class names and attack name -> class
KDD_CLASSES: tuple[str, ...] = ("normal", "DoS", "Probe", "R2L", "U2R")
KDD_ATTACK_CLASS: dict[str, str] = {
    "normal": "normal",
    **dict.fromkeys(("back", "land", "neptune", "pod", "smurf", "teardrop"), "DoS"),
    **dict.fromkeys(("ipsweep", "nmap", "portsweep", "satan"), "Probe"),
    **dict.fromkeys(
        ("ftp_write", "guess_passwd", "imap", "multihop", "phf", "spy", "warezclient",
         "warezmaster"),
        "R2L",
    ),
    **dict.fromkeys(("buffer_overflow", "loadmodule", "perl", "rootkit"), "U2R"),
}


def kdd_classes(label: pd.Series, path: Path) -> np.ndarray:
    """5-class codes (index into :data:`KDD_CLASSES`) of KDD labels such as ``smurf.``.

    A label outside the taxonomy is an error, not a silent class (spec E5).
    """
    names = [str(c)[:-1] for c in label.cat.categories]
    unknown = [n for n in names if n not in KDD_ATTACK_CLASS]
    if unknown:
        raise InputDataError(
            f"raw file {path}: labels {unknown[:5]} are not in the KDDCup99 attack taxonomy "
            f"(spec E5); the file is not the upstream kddcup.data_10_percent."
        )
    lookup = np.array([KDD_CLASSES.index(KDD_ATTACK_CLASS[n]) for n in names], dtype=np.int8)
    return lookup[label.cat.codes.to_numpy()]


def parse_kddcup99(path: Path) -> Parsed:
    """KDD Cup 1999, kddcup.data_10_percent (spec E1 (a)).

    Quirks: 42 columns, no header; labels end with '.'. protocol_type, service and flag are
    categorical, the other 38 columns numeric. Label +1: attack (any label but ``normal.``).
    """
    dtypes: dict[str, Any] = {c: np.float64 for c in KDD_COLUMNS}
    dtypes.update({c: "category" for c in [*KDD_CATEGORICAL, "label"]})
    frame = _read_csv(path, header=None, names=KDD_COLUMNS, dtype=dtypes, keep_default_na=False)
    label = frame["label"]
    bad = [c for c in label.cat.categories if not str(c).endswith(".")]
    if bad:
        raise InputDataError(
            f"raw file {path}: labels {bad[:5]} lack the trailing '.' of the upstream file; "
            f"it is not the upstream kddcup.data_10_percent. Delete it and rerun."
        )
    numeric = [c for c in KDD_COLUMNS if c not in KDD_CATEGORICAL and c != "label"]
    features = _typed(frame.drop(columns="label"), numeric)
    labels = _pm1((label != "normal.").to_numpy())
    return Parsed(
        features,
        labels,
        {"rows_read": len(frame), "label_classes": len(label.cat.categories)},
        classes=kdd_classes(label, path),
        class_names=KDD_CLASSES,
    )


def parse_credit_card(path: Path) -> Parsed:
    """Credit Card Fraud, creditcard.csv (spec E1 (e)).

    Quirks: a quoted header ``"Time","V1",…,"Amount","Class"``; ``Class`` values quoted.
    Features: the 30 numeric columns Time, V1–V28, Amount. Label +1: ``Class == 1``.
    """
    dtypes: dict[str, Any] = {c: np.float64 for c in CREDIT_CARD_FEATURES}
    dtypes["Class"] = str
    frame = _read_csv(path, dtype=dtypes, keep_default_na=False)
    _check_columns(frame, [*CREDIT_CARD_FEATURES, "Class"], path)
    _check_values(frame["Class"], {"0", "1"}, path, "Class")
    features = _typed(frame[CREDIT_CARD_FEATURES], CREDIT_CARD_FEATURES)
    return Parsed(features, _pm1((frame["Class"] == "1").to_numpy()), {"rows_read": len(frame)})


def parse(dataset_id: str, paths: Mapping[str, Path], preprocess: Mapping[str, Any]) -> Parsed:
    """Parse the raw files of ``dataset_id`` (``paths``: raw file name -> path).

    ``preprocess`` is the config section of that name (spec E7 #17, #18).
    """

    def need(name: str) -> Path:
        if name not in paths:
            raise InputDataError(
                f"{dataset_id}: raw file {name} was not given (got {sorted(paths)}); "
                f"run the fetch step for {dataset_id} first."
            )
        return Path(paths[name])

    if dataset_id == "kddcup99":
        return parse_kddcup99(need("kddcup.data_10_percent"))
    if dataset_id == "adult":
        return parse_adult(need("adult.data"), need("adult.test"))
    if dataset_id == "bank":
        return parse_bank(need("bank-additional-full.csv"), preprocess["bank_keep_duration"])
    if dataset_id == "breast_cancer":
        return parse_breast_cancer(
            need("breast-cancer-wisconsin.data"), preprocess["breast_cancer_missing"]
        )
    if dataset_id == "credit_card":
        return parse_credit_card(need("creditcard.csv"))
    raise InputDataError(f"no parser for data set {dataset_id!r}")
