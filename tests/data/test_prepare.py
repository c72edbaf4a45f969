"""prepare/load on synthetic raw files in the upstream formats (spec E1, E1.2, E1.3).

These fixtures are synthetic, so they are prepared with ``synthetic=True`` and the card says
so; a real run refuses files that do not match the pinned hashes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mpdp.data import prepare as prep
from mpdp.data.registry import DATASETS
from mpdp.errors import ChecksumMismatchError, InputDataError
from mpdp.seeding import rng

CARD_KEYS = {
    "dataset", "display_name", "n_total", "n_train", "n_test", "n_features", "positive_rate",
    "positive_rate_raw", "raw_files", "preprocessing", "feature_names", "subsampled", "synthetic",
}  # fmt: skip

Writer = Callable[[str, int], list[Path]]


def _prepare(
    raw: list[Path], out: Path, cfg: dict[str, Any], dataset: str
) -> tuple[dict[str, Any], prep.Processed]:
    card = prep.prepare(dataset, raw, out, cfg, synthetic=True)
    return card, prep.load(out)


def _rows(data: prep.Processed) -> np.ndarray:
    return np.vstack([data.X_train, data.X_test])


@pytest.mark.parametrize("dataset", list(DATASETS))
def test_prepared_arrays_satisfy_the_contract(
    dataset: str, synthetic_raw: Writer, tmp_path: Path, cfg: dict[str, Any]
) -> None:
    cfg["preprocess"]["kdd_sample_size"] = 300
    cfg["preprocess"]["credit_card_normals"] = 30
    card, data = _prepare(synthetic_raw(dataset, 500), tmp_path / "out", cfg, dataset)
    assert set(card) >= CARD_KEYS
    assert card["synthetic"] is True and card["subsampled"] is False
    assert prep.load(tmp_path / "out").card == card
    x = _rows(data)
    assert x.dtype == np.float64 and data.y_train.dtype == np.int8
    assert np.isfinite(x).all()
    assert np.all(np.linalg.norm(x, axis=1) <= 1 + 1e-12)
    assert np.all(x[:, -1] == 1 / math.sqrt(2))  # constant intercept coordinate
    assert x.shape[1] == card["n_features"] == len(card["feature_names"])
    assert card["feature_names"][-1] == "intercept"
    assert set(np.unique(np.concatenate([data.y_train, data.y_test]))) == {-1, 1}
    assert card["n_total"] == card["n_train"] + card["n_test"]
    assert card["n_test"] == math.ceil(0.2 * card["n_total"])
    assert set(card["raw_files"]) == {f.name for f in DATASETS[dataset].files}
    expected_total = {"kddcup99": 300, "credit_card": 50}.get(dataset)
    if expected_total is not None:
        assert card["n_total"] == expected_total


def test_encoding_uses_full_data_categories_and_ranges(
    synthetic_raw: Writer, tmp_path: Path, cfg: dict[str, Any]
) -> None:
    cfg["preprocess"]["kdd_sample_size"] = 100
    raw = synthetic_raw("kddcup99", 2000)
    card, data = _prepare(raw, tmp_path / "out", cfg, "kddcup99")
    from mpdp.data.parsers import parse_kddcup99

    full = parse_kddcup99(raw[0]).features
    # one column per category of the full file, even for categories absent from the sample
    services = [n for n in card["feature_names"] if n.startswith("service=")]
    assert services == [f"service={s}" for s in sorted(full["service"].unique())]
    assert card["numeric_ranges"]["src_bytes"] == [full["src_bytes"].min(), full["src_bytes"].max()]
    # 38 numeric + one-hot + intercept
    assert card["n_features"] == 38 + sum(len(v) for v in card["categories"].values()) + 1


def test_card_records_choices_and_provenance(
    synthetic_raw: Writer, tmp_path: Path, cfg: dict[str, Any]
) -> None:
    card, _ = _prepare(synthetic_raw("bank", 300), tmp_path / "out", cfg, "bank")
    pre = card["preprocessing"]
    assert pre["bank_keep_duration"] == {"value": True, "tag": "REC", "spec": "E1 (c), E7 #17"}
    assert pre["intercept"]["tag"] == "REC" and pre["split"]["value"]["test_frac"] == 0.2
    assert {"categorical_encoding", "numeric_scaling", "row_normalisation", "max_records"} <= set(
        pre
    )
    assert card["positive_label"].startswith("y == 'yes'")
    assert card["display_name"] == "Bank Marketing"


def test_outputs_are_bit_reproducible(
    synthetic_raw: Writer, tmp_path: Path, cfg: dict[str, Any]
) -> None:
    cfg["preprocess"]["kdd_sample_size"] = 200
    raw = synthetic_raw("kddcup99", 600)
    for out in ("a", "b"):
        prep.prepare("kddcup99", raw, tmp_path / out, cfg, synthetic=True)
    for name in [*(f"{a}.npy" for a in prep.ARRAYS), "card.json"]:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    cfg["root_seed"] = 1
    prep.prepare("kddcup99", raw, tmp_path / "c", cfg, synthetic=True)
    assert (tmp_path / "a/X_train.npy").read_bytes() != (tmp_path / "c/X_train.npy").read_bytes()


def test_max_records_is_a_stratified_cap(
    synthetic_raw: Writer, tmp_path: Path, cfg: dict[str, Any]
) -> None:
    cfg["max_records"] = 100
    card, data = _prepare(synthetic_raw("adult", 900), tmp_path / "out", cfg, "adult")
    assert card["subsampled"] is True and card["n_total"] == 100
    assert abs(card["positive_rate"] - card["positive_rate_raw"]) <= 1 / 100
    assert card["n_features"] == data.X_train.shape[1]


def test_without_intercept_rows_are_unit_or_zero(
    synthetic_raw: Writer, tmp_path: Path, cfg: dict[str, Any]
) -> None:
    cfg["preprocess"]["intercept"] = False
    card, data = _prepare(
        synthetic_raw("breast_cancer", 200), tmp_path / "out", cfg, "breast_cancer"
    )
    norms = np.linalg.norm(_rows(data), axis=1)
    assert np.all(np.isclose(norms, 1.0) | (norms == 0))
    assert card["n_features"] == 9 and "intercept" not in card["feature_names"]


def test_normalise_rows_handles_zero_rows() -> None:
    x = np.array([[3.0, 4.0], [0.0, 0.0]])
    assert np.allclose(prep.normalise_rows(x, False), [[0.6, 0.8], [0, 0]])
    with_intercept = prep.normalise_rows(x, True)
    assert np.allclose(with_intercept * math.sqrt(2), [[0.6, 0.8, 1], [0, 0, 1]])


def test_stratified_split_sizes_and_mix() -> None:
    y = np.array([1] * 30 + [-1] * 70, dtype=np.int8)
    train, test = prep.stratified_split(y, 0.2, rng(0, "split", "toy"))
    assert len(test) == 20 and len(train) == 80
    assert np.sum(y[test] == 1) == 6
    assert set(train).isdisjoint(test) and len(set(train) | set(test)) == 100


def test_unverified_raw_files_are_refused_in_real_runs(
    synthetic_raw: Writer, tmp_path: Path, cfg: dict[str, Any]
) -> None:
    raw = synthetic_raw("breast_cancer", 50)
    with pytest.raises(ChecksumMismatchError, match="Only verified raw files are prepared"):
        prep.prepare("breast_cancer", raw, tmp_path / "out", cfg)
    assert not (tmp_path / "out").exists()


def test_too_large_kdd_sample_is_a_clear_error(
    synthetic_raw: Writer, tmp_path: Path, cfg: dict[str, Any]
) -> None:
    with pytest.raises(InputDataError, match="kdd_sample_size = 70000 exceeds the 150 rows"):
        prep.prepare(
            "kddcup99", synthetic_raw("kddcup99", 150), tmp_path / "out", cfg, synthetic=True
        )


def test_load_reports_missing_and_corrupt_files(
    synthetic_raw: Writer, tmp_path: Path, cfg: dict[str, Any]
) -> None:
    out = tmp_path / "out"
    with pytest.raises(InputDataError, match="not prepared"):
        prep.load(out)
    prep.prepare("breast_cancer", synthetic_raw("breast_cancer", 100), out, cfg, synthetic=True)
    (out / "y_test.npy").write_bytes(b"garbage")
    with pytest.raises(
        InputDataError, match=r"prepared array .*y_test.npy is unreadable .*rebuild it with `snakemake --force"
    ):
        prep.load(out)
    np.save(out / "y_test.npy", np.zeros(3, dtype=np.int8))
    with pytest.raises(InputDataError, match=r"shape \(3,\).*card.json says"):
        prep.load(out)
    (out / "X_train.npy").unlink()
    with pytest.raises(InputDataError, match="X_train.npy does not exist; build it with `snakemake "):
        prep.load(out)


def test_card_is_written_last_and_removed_first(
    synthetic_raw: Writer, tmp_path: Path, cfg: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    raw = synthetic_raw("breast_cancer", 100)
    prep.prepare("breast_cancer", raw, out, cfg, synthetic=True)
    card_time = (out / "card.json").stat().st_mtime_ns
    assert all((out / f"{a}.npy").stat().st_mtime_ns <= card_time for a in prep.ARRAYS)

    def interrupted(path: Path, array: np.ndarray) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(prep, "save_npy", interrupted)
    with pytest.raises(KeyboardInterrupt):
        prep.prepare("breast_cancer", raw, out, cfg, synthetic=True)
    with pytest.raises(InputDataError, match="interrupted"):
        prep.load(out)


def test_global_max_scaling_keeps_norms_below_one_on_every_split(
    synthetic_raw: Writer, tmp_path: Path, cfg: dict[str, Any]
) -> None:
    """E7 #8's alternative: every row divided by the largest row norm of the prepared data."""
    raw = synthetic_raw("adult", 600)
    _, per_row = _prepare(raw, tmp_path / "per_row", cfg, "adult")
    cfg["preprocess"]["row_scaling"] = "global_max"
    card, data = _prepare(raw, tmp_path / "global", cfg, "adult")
    assert card["preprocessing"]["row_scaling"]["value"] == "global_max"
    for split in (data.X_train, data.X_test):
        assert np.linalg.norm(split, axis=1).max() <= 1.0 + 1e-12
    features = _rows(data)[:, :-1] * math.sqrt(2)  # without the intercept column
    norms = np.linalg.norm(features, axis=1)
    assert math.isclose(norms.max(), 1.0, rel_tol=1e-12)  # the largest row reaches norm 1
    assert norms.min() < 0.99  # the others keep their relative lengths (not all unit)
    # the same directions as the per-row default: only the lengths differ
    unit = features / norms[:, None]
    assert np.allclose(unit, _rows(per_row)[:, :-1] * math.sqrt(2))
    assert not np.allclose(_rows(data), _rows(per_row))


def test_training_split_bounds_clip_the_test_rows(
    synthetic_raw: Writer, tmp_path: Path, cfg: dict[str, Any]
) -> None:
    """E7 #9's alternative: the min-max bounds come from the training split only."""
    cfg["preprocess"]["credit_card_normals"] = 40  # continuous columns: extremes are single rows
    raw = synthetic_raw("credit_card", 400)
    full_card, full = _prepare(raw, tmp_path / "full", cfg, "credit_card")
    cfg["preprocess"]["scaling_bounds"] = "train_split"
    card, data = _prepare(raw, tmp_path / "train", cfg, "credit_card")
    assert card["preprocessing"]["scaling_bounds"]["value"] == "train_split"
    assert "training split" in card["preprocessing"]["numeric_scaling"]["value"]
    assert np.array_equal(data.y_train, full.y_train)  # the split itself is unchanged
    narrower = [c for c, (lo, hi) in card["numeric_ranges"].items()
                if (lo, hi) != tuple(full_card["numeric_ranges"][c])]
    assert narrower, "the training split's bounds equal the full data's: the fixture tests nothing"
    for c in narrower:
        lo, hi = card["numeric_ranges"][c]
        full_lo, full_hi = full_card["numeric_ranges"][c]
        assert full_lo <= lo <= hi <= full_hi
    assert not np.allclose(data.X_train, full.X_train)
    assert np.all(_rows(data) >= 0) and np.linalg.norm(_rows(data), axis=1).max() <= 1.0 + 1e-12


def test_default_scaling_is_per_row_over_full_data_bounds(
    synthetic_raw: Writer, tmp_path: Path, cfg: dict[str, Any]
) -> None:
    """The defaults of E7 #8/#9 are E1.3 as before: bounds of the full parsed data, rows of norm 1."""
    raw = synthetic_raw("breast_cancer", 300)
    card, data = _prepare(raw, tmp_path / "out", cfg, "breast_cancer")
    pre = card["preprocessing"]
    assert pre["row_scaling"]["value"] == "per_row" and pre["scaling_bounds"]["value"] == "full_data"
    parsed = prep.parse("breast_cancer", {p.name: p for p in raw}, cfg["preprocess"])
    expected = {c: [float(parsed.features[c].min()), float(parsed.features[c].max())]
                for c in parsed.numeric_columns}
    assert card["numeric_ranges"] == expected
    norms = np.linalg.norm(_rows(data), axis=1)
    assert np.allclose(norms, 1.0)


def test_unknown_row_scaling_is_a_config_error() -> None:
    with pytest.raises(prep.ConfigError, match="preprocess.row_scaling"):
        prep.normalise_rows(np.ones((2, 2)), True, "per_column")
