"""Prepared design matrices: subsample, encode, normalise, split (spec E1, E1.2, E1.3).

``prepare`` turns the verified raw files of one data set into ``data/processed/<id>/``:
``X_train.npy``, ``y_train.npy``, ``X_test.npy``, ``y_test.npy`` (float64 rows with
``||x||_2 <= 1``, int8 labels in {-1, +1}), for data sets with a multiclass label (KDDCup99's
5 classes, spec E5) also ``y_class_train.npy`` / ``y_class_test.npy`` (int8 class codes, the
names in the card's ``classes``), and ``card.json``, written last, which describes
the data and every preprocessing choice. Every random choice draws from
``mpdp.seeding.rng`` keyed by its role and the data set, so outputs are bit-reproducible.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mpdp.data.fetch import sha256_file
from mpdp.data.parsers import Parsed, parse
from mpdp.data.registry import DatasetInfo, get, multiclass
from mpdp.errors import ChecksumMismatchError, ConfigError, InputDataError
from mpdp.io import load_npy, read_json, rebuild_hint, save_npy, write_json
from mpdp.seeding import rng

ARRAYS = ("X_train", "y_train", "X_test", "y_test")
CLASS_ARRAYS = ("y_class_train", "y_class_test")
#: data sets whose parser yields a multiclass label (KDDCup99's 5 classes, spec E5): their
#: preparation also writes :data:`CLASS_ARRAYS`, declared as outputs of the workflow's
#: ``prepare_multiclass`` rule so that a job reading them declares them as inputs
MULTICLASS_DATASETS: tuple[str, ...] = multiclass()
CARD = "card.json"


@dataclass(frozen=True)
class Encoding:
    """One-hot categories and min-max bounds fitted on the full parsed data (spec E1.3 steps 1-2)."""

    columns: list[str]
    ranges: dict[str, tuple[float, float]]
    categories: dict[str, list[str]]
    #: clip scaled numerics to [0, 1] (bounds fitted on fewer rows than are transformed)
    clip: bool = False

    @classmethod
    def fit(cls, parsed: Parsed, bound_rows: np.ndarray | None = None) -> Encoding:
        """Fit on the full parsed data; ``bound_rows`` (row positions): take the min-max bounds of
        those rows only (spec E7 #9's ``scaling_bounds: train_split``), clipping the others."""
        frame = parsed.features
        bounds = frame if bound_rows is None else frame.iloc[bound_rows]
        ranges = {c: (float(bounds[c].min()), float(bounds[c].max())) for c in parsed.numeric_columns}
        categories = {
            c: [str(v) for v in frame[c].cat.categories] for c in parsed.categorical_columns
        }
        return cls(list(frame.columns), ranges, categories, clip=bound_rows is not None)

    @property
    def feature_names(self) -> list[str]:
        names: list[str] = []
        for col in self.columns:
            names.extend(
                [f"{col}={v}" for v in self.categories[col]] if col in self.categories else [col]
            )
        return names

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        """Encoded rows x~ in [0,1]^d: min-max scaled numerics (constant -> 0), one-hot categoricals."""
        blocks = [self._encode_column(col, frame[col]) for col in self.columns]
        return np.concatenate(blocks, axis=1) if blocks else np.zeros((len(frame), 0))

    def _encode_column(self, col: str, values: pd.Series) -> np.ndarray:
        if col in self.categories:
            codes = values.cat.codes.to_numpy()
            block = np.zeros((len(values), len(self.categories[col])))
            block[np.arange(len(values)), codes] = 1.0
            return block
        lo, hi = self.ranges[col]
        scaled = (
            (values.to_numpy(np.float64) - lo) / (hi - lo) if hi > lo else np.zeros(len(values))
        )
        if self.clip:
            scaled = np.clip(scaled, 0.0, 1.0)
        return scaled[:, None]


#: how the encoded rows are scaled to norm <= 1 (spec E7 #8): per_row = x~/||x~|| (E1.3 step 3);
#: global_max = x~/max_i ||x~_i|| over every row of the prepared data (train and test together)
ROW_SCALINGS = ("per_row", "global_max")
#: where the numeric min-max bounds come from (spec E7 #9): the full parsed data, or the
#: training split only (test values outside them clipped to [0, 1])
SCALING_BOUNDS = ("full_data", "train_split")


def normalise_rows(x_tilde: np.ndarray, intercept: bool, scaling: str = "per_row") -> np.ndarray:
    """x = [s(x~); 1]/sqrt(2), or s(x~) without intercept (spec E1.3 step 3, E7 #8).

    ``scaling="per_row"``: s(x~) = x~/||x~||, all-zero rows stay zero (every row has norm 1 or 0).
    ``"global_max"``: s(x~) = x~ / max_i ||x~_i|| over all rows given (the full prepared data, so
    ||s(x~)|| <= 1 on every split; rows keep their relative lengths).
    """
    if scaling not in ROW_SCALINGS:
        raise ConfigError(f"config key 'preprocess.row_scaling' must be one of {ROW_SCALINGS}, got {scaling!r}")
    if scaling == "global_max":
        top = float(np.linalg.norm(x_tilde, axis=1).max()) if len(x_tilde) else 0.0
        norms = np.full((len(x_tilde), 1), top)
    else:
        norms = np.linalg.norm(x_tilde, axis=1, keepdims=True)
    unit = np.divide(x_tilde, norms, out=np.zeros_like(x_tilde), where=norms > 0)
    if not intercept:
        return unit
    return np.hstack([unit, np.ones((len(unit), 1))]) / math.sqrt(2.0)


def stratified_take(y: np.ndarray, k: int, gen: np.random.Generator) -> np.ndarray:
    """Sorted indices of ``k`` rows drawn without replacement, per-class counts proportional.

    Class quotas are ``k * n_c / n`` rounded by largest remainder, so the class mix of the
    draw matches that of ``y`` to within one record per class.
    """
    classes, counts = np.unique(y, return_counts=True)
    quota = k * counts / len(y)
    take = np.floor(quota).astype(np.int64)
    order = np.argsort(-(quota - take), kind="stable")
    take[order[: k - int(take.sum())]] += 1
    picks = [
        gen.choice(np.flatnonzero(y == c), size=int(t), replace=False)
        for c, t in zip(classes, take, strict=True)
    ]
    return np.sort(np.concatenate(picks))


def stratified_split(
    y: np.ndarray, test_frac: float, gen: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Train and test indices (sorted) of a stratified split with ceil(test_frac * n) test rows (spec E1.2)."""
    n_test = math.ceil(round(test_frac * len(y), 9))
    test = stratified_take(y, n_test, gen)
    train = np.setdiff1d(np.arange(len(y)), test, assume_unique=True)
    return train, test


def _select_rows(dataset_id: str, labels: np.ndarray, cfg: Mapping[str, Any]) -> np.ndarray:
    """Rows of the parsed data that enter the prepared set (spec E1 table, E8 max_records)."""
    seed = cfg["root_seed"]
    pre = cfg["preprocess"]
    rows = np.arange(len(labels))
    if dataset_id == "kddcup99":
        rows = _kdd_sample(labels, pre["kdd_sample_size"], rng(seed, "subsample", dataset_id))
    elif dataset_id == "credit_card":
        rows = _balanced_sample(
            labels, pre["credit_card_normals"], rng(seed, "subsample", dataset_id)
        )
    cap = cfg.get("max_records")
    if cap is not None and len(rows) > cap:
        rows = rows[stratified_take(labels[rows], cap, rng(seed, "max_records", dataset_id))]
    return rows


def _kdd_sample(labels: np.ndarray, size: int, gen: np.random.Generator) -> np.ndarray:
    """KDD: a uniform sample of ``size`` rows without replacement (spec E1 (a))."""
    if size > len(labels):
        raise InputDataError(
            f"kddcup99: preprocess.kdd_sample_size = {size} exceeds the {len(labels)} rows of "
            f"the raw file; lower the config key preprocess.kdd_sample_size."
        )
    return np.sort(gen.choice(len(labels), size=size, replace=False))


def _balanced_sample(labels: np.ndarray, normals: int, gen: np.random.Generator) -> np.ndarray:
    """Credit Card: every fraud plus ``normals`` non-frauds drawn without replacement (spec E1 (e))."""
    frauds = np.flatnonzero(labels == 1)
    pool = np.flatnonzero(labels == -1)
    if normals > len(pool):
        raise InputDataError(
            f"credit_card: preprocess.credit_card_normals = {normals} exceeds the {len(pool)} "
            f"non-fraud rows of the raw file; lower that config key."
        )
    return np.sort(np.concatenate([frauds, gen.choice(pool, size=normals, replace=False)]))


def _raw_hashes(info: DatasetInfo, paths: Mapping[str, Path], synthetic: bool) -> dict[str, str]:
    """SHA-256 of each raw file; unless ``synthetic``, each must equal the pin (spec E1.1)."""
    hashes: dict[str, str] = {}
    for raw in info.files:
        if raw.name not in paths or not Path(paths[raw.name]).is_file():
            raise InputDataError(
                f"{info.id}: raw file {raw.name} is missing (given: {sorted(paths)}); "
                f"run the fetch step for {info.id} first."
            )
        hashes[raw.name] = sha256_file(Path(paths[raw.name]))
        if not synthetic and hashes[raw.name] != raw.sha256:
            raise ChecksumMismatchError(
                f"{info.id}: raw file {paths[raw.name]} has the wrong SHA-256.\n"
                f"  expected: {raw.sha256}\n  actual:   {hashes[raw.name]}\n"
                f"Only verified raw files are prepared. Delete the file and rerun the fetch step."
            )
    return hashes


def _choice(value: Any, tag: str, spec: str) -> dict[str, Any]:
    return {"value": value, "tag": tag, "spec": spec}


def preprocessing(dataset_id: str, cfg: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Every preprocessing choice used, with its provenance tag ([REC] = reconstruction)."""
    pre = cfg["preprocess"]
    split = cfg["split"]
    choices = {
        "categorical_encoding": _choice(
            "one-hot; categories = sorted distinct values of the full parsed raw data",
            "REC",
            "E1.3 step 1",
        ),
        "numeric_scaling": _choice(
            "min-max to [0,1] with min/max of the full parsed raw data (before any subsample); "
            "constant columns -> 0"
            if pre["scaling_bounds"] == "full_data" else
            "min-max to [0,1] with min/max of the training split's rows only; other values clipped "
            "to [0,1]; constant columns -> 0",
            "REC",
            "E1.3 step 2, E7 #9",
        ),
        "row_normalisation": _choice(
            "x~ / ||x~||_2; all-zero rows stay zero"
            if pre["row_scaling"] == "per_row" else
            "x~ / max_i ||x~_i||_2 over every prepared row (train and test): ||x|| <= 1 on every split",
            "REC",
            "E1.3 step 3, E7 #8",
        ),
        "intercept": _choice(pre["intercept"], "REC", "E1.3 step 3"),
        "row_scaling": _choice(pre["row_scaling"], "REC", "E7 #8"),
        "scaling_bounds": _choice(pre["scaling_bounds"], "REC", "E7 #9"),
        "split": _choice(
            {
                "stratified": True,
                "test_frac": split["test_frac"],
                "seed": split["seed"],
                "rng_key": ["split", dataset_id],
            },
            "REC",
            "E1.2, E7 #7",
        ),
        "max_records": _choice(
            cfg.get("max_records"), "config", "E8 (stratified cap, rng key max_records)"
        ),
    }
    specific = {  # lazy: a data set reads only its own preprocessing keys (mpdp.pipeline.rule_keys)
        "kddcup99": lambda: {
            "kdd_sample_size": _choice(
                pre["kdd_sample_size"], "S-000", "E1 (a); sample without replacement [REC]"
            )
        },
        "adult": lambda: {
            "missing": _choice("drop rows with '?' (adult.data + adult.test)", "REC", "E1 (b)")
        },
        "bank": lambda: {
            "bank_keep_duration": _choice(pre["bank_keep_duration"], "REC", "E1 (c), E7 #17")
        },
        "breast_cancer": lambda: {
            "breast_cancer_missing": _choice(pre["breast_cancer_missing"], "REC", "E1 (d), E7 #18")
        },
        "credit_card": lambda: {
            "credit_card_normals": _choice(pre["credit_card_normals"], "REC", "E1 (e), E7 #19")
        },
    }
    return {**choices, **specific.get(dataset_id, dict)()}


def prepare(
    dataset_id: str,
    raw_paths: Sequence[Path],
    out_dir: Path,
    cfg: Mapping[str, Any],
    synthetic: bool = False,
) -> dict[str, Any]:
    """Prepare ``dataset_id`` from its raw files into ``out_dir``; return the card (spec E1, E1.2, E1.3).

    ``cfg`` is a validated config. ``synthetic=True`` is for fixtures only: the raw files
    need not match the pinned hashes and the card says ``synthetic: true``.
    """
    info = get(dataset_id)
    paths = {Path(p).name: Path(p) for p in raw_paths}
    hashes = _raw_hashes(info, paths, synthetic)
    # a data set added by its own module brings its parser (mpdp.data.info.DatasetInfo.parse)
    parsed = info.parse(paths, cfg["preprocess"]) if info.parse else parse(dataset_id, paths, cfg["preprocess"])
    pre = cfg["preprocess"]
    rows = _select_rows(dataset_id, parsed.labels, cfg)
    y = parsed.labels[rows]
    # the split depends on the labels only, so the scaling bounds can come from its training part
    train, test = stratified_split(
        y, cfg["split"]["test_frac"], rng(cfg["split"]["seed"], "split", dataset_id)
    )
    if pre["scaling_bounds"] not in SCALING_BOUNDS:
        raise ConfigError(f"config key 'preprocess.scaling_bounds' must be one of {SCALING_BOUNDS}, "
                          f"got {pre['scaling_bounds']!r}")
    encoding = Encoding.fit(parsed, rows[train] if pre["scaling_bounds"] == "train_split" else None)
    x = normalise_rows(
        encoding.transform(parsed.features.iloc[rows]), pre["intercept"], pre["row_scaling"]
    )
    out_dir = Path(out_dir)
    (out_dir / CARD).unlink(missing_ok=True)
    arrays = {"X_train": x[train], "y_train": y[train], "X_test": x[test], "y_test": y[test]}
    if (parsed.classes is not None) != (dataset_id in MULTICLASS_DATASETS):
        raise InputDataError(f"{dataset_id}: a multiclass label is expected exactly for {MULTICLASS_DATASETS}")
    if parsed.classes is not None:
        classes = parsed.classes[rows]
        arrays |= {"y_class_train": classes[train], "y_class_test": classes[test]}
    for name, array in arrays.items():
        save_npy(out_dir / f"{name}.npy", array)
    feature_names = encoding.feature_names + (
        ["intercept"] if cfg["preprocess"]["intercept"] else []
    )
    card = {
        "dataset": dataset_id,
        "display_name": info.display_name,
        "n_raw": len(parsed.labels),
        "n_total": len(y),
        "n_train": len(train),
        "n_test": len(test),
        "n_features": x.shape[1],
        "positive_label": info.positive_label,
        "positive_rate": float(np.mean(y == 1)),
        "positive_rate_raw": float(np.mean(parsed.labels == 1)),
        "positive_rate_train": float(np.mean(y[train] == 1)),
        "raw_files": hashes,
        **_class_card(parsed, rows, train),
        "preprocessing": preprocessing(dataset_id, cfg),
        "parsing": parsed.notes,
        "numeric_ranges": {c: list(r) for c, r in encoding.ranges.items()},
        "categories": encoding.categories,
        "feature_names": feature_names,
        "root_seed": cfg["root_seed"],
        "subsampled": cfg.get("max_records") is not None,
        "synthetic": synthetic,
        "license": info.license,
        "doi": info.doi,
        "citation": info.citation,
    }
    write_json(card, out_dir / CARD)
    return card


def _class_card(parsed: Parsed, rows: np.ndarray, train: np.ndarray) -> dict[str, Any]:
    """Card entries of the multiclass label: names and per-class counts (spec E5)."""
    if parsed.classes is None:
        return {}
    names = list(parsed.class_names)

    def counts(codes: np.ndarray) -> dict[str, int]:
        return {name: int(np.sum(codes == k)) for k, name in enumerate(names)}

    return {
        "classes": names,
        "class_counts_raw": counts(parsed.classes),
        "class_counts": counts(parsed.classes[rows]),
        "class_counts_train": counts(parsed.classes[rows][train]),
    }


def load_classes(out_dir: Path) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The multiclass labels of a prepared data set: (train codes, test codes, class names)."""
    out_dir = Path(out_dir)
    card = read_json(out_dir / CARD, "data card")
    if "classes" not in card:
        raise InputDataError(
            f"{out_dir} has no multiclass label (card.json lacks 'classes'); only KDDCup99 has "
            f"one. Rerun the prepare step if this is KDDCup99 prepared by an older version."
        )
    redo = f"Rerun the prepare step for this data set: {rebuild_hint(out_dir / CARD)}."
    train, test = (_load_array(out_dir / f"{name}.npy") for name in CLASS_ARRAYS)
    if train.shape != (card["n_train"],) or test.shape != (card["n_test"],):
        raise InputDataError(f"{out_dir}: class label arrays do not match card.json. {redo}")
    return np.asarray(train), np.asarray(test), list(card["classes"])


@dataclass(frozen=True)
class Processed:
    """A prepared data set: memory-mapped arrays and its card."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    card: dict[str, Any]


def load(out_dir: Path) -> Processed:
    """Read a prepared data set written by :func:`prepare`; InputDataError if missing or corrupt."""
    out_dir = Path(out_dir)
    redo = f"Rerun the prepare step for this data set: {rebuild_hint(out_dir / CARD)}."
    card_path = out_dir / CARD
    if not card_path.is_file():
        raise InputDataError(
            f"{out_dir} holds no {CARD}: the data set was not prepared or its preparation was "
            f"interrupted. Run the prepare step for this data set."
        )
    card = read_json(card_path, "data card")
    arrays = {name: _load_array(out_dir / f"{name}.npy") for name in ARRAYS}
    _check_shapes(card, arrays, out_dir, redo)
    return Processed(card=card, **arrays)


def _load_array(path: Path) -> np.ndarray:
    return load_npy(path, "prepared array", mmap_mode="r")


def _check_shapes(
    card: dict[str, Any], arrays: dict[str, np.ndarray], out_dir: Path, redo: str
) -> None:
    try:
        expected = {
            "X_train": ((card["n_train"], card["n_features"]), np.float64),
            "y_train": ((card["n_train"],), np.int8),
            "X_test": ((card["n_test"], card["n_features"]), np.float64),
            "y_test": ((card["n_test"],), np.int8),
        }
    except (KeyError, TypeError) as exc:
        raise InputDataError(f"{out_dir / CARD} lacks the key {exc}. {redo}") from None
    for name, (shape, dtype) in expected.items():
        array = arrays[name]
        if array.shape != shape or array.dtype != dtype:
            raise InputDataError(
                f"{out_dir / name}.npy has shape {array.shape} and dtype {array.dtype}, but "
                f"{CARD} says {shape} and {np.dtype(dtype)}. {redo}"
            )


def array_files(dataset_id: str) -> tuple[str, ...]:
    """File names of the arrays :func:`prepare` writes for ``dataset_id`` (workflow outputs)."""
    names = ARRAYS + (CLASS_ARRAYS if dataset_id in MULTICLASS_DATASETS else ())
    return tuple(f"{name}.npy" for name in names)
