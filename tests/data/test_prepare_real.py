"""Preparation of the real mirrored raw files: the sizes and properties of spec E1, E1.2, E1.3.

Skipped, with the reason, when the mirror ($MPDP_DATA_MIRROR or ../shared/datasets) is
absent, and for credit_card when creditcard.csv is not in it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mpdp.data.prepare import Processed
from mpdp.data.registry import DATASETS

pytestmark = pytest.mark.slow

Prepared = Callable[[str], tuple[dict[str, Any], Processed, float]]

#: data set -> (n_total, n_train, p incl. intercept) of the full configuration (spec E1, E1.2)
EXPECTED = {
    "kddcup99": (70_000, 56_000, 119),
    "adult": (45_222, 36_177, 105),
    "bank": (41_188, 32_950, 64),
    "breast_cancer": (699, 559, 10),
    "credit_card": (984, 787, 31),
}


@pytest.mark.parametrize("dataset", list(DATASETS))
def test_real_sizes_and_contract(dataset: str, real_prepared: Prepared) -> None:
    card, data, _ = real_prepared(dataset)
    n_total, n_train, p = EXPECTED[dataset]
    assert (card["n_total"], card["n_train"], card["n_test"]) == (
        n_total,
        n_train,
        n_total - n_train,
    )
    assert card["n_features"] == p
    assert card["synthetic"] is False and card["subsampled"] is False
    assert card["raw_files"] == {f.name: f.sha256 for f in DATASETS[dataset].files}
    assert data.X_train.shape == (n_train, p) and data.X_test.shape == (n_total - n_train, p)
    for x, y in ((data.X_train, data.y_train), (data.X_test, data.y_test)):
        assert not np.isnan(x).any()
        assert np.all(np.linalg.norm(x, axis=1) <= 1 + 1e-12)
        assert np.all(x[:, -1] == 1 / math.sqrt(2))
        assert set(np.unique(y)) == {-1, 1}
    if dataset == "credit_card":
        assert card["positive_rate"] == 0.5
    else:
        assert abs(card["positive_rate"] - card["positive_rate_raw"]) <= 0.005


def test_real_positive_rates_match_the_upstream_counts(real_prepared: Prepared) -> None:
    # README of the mirror: Adult 11 208 of 45 222 '>50K'; Bank 4 640 'yes'; BC 241 class 4
    assert real_prepared("adult")[0]["positive_rate_raw"] == pytest.approx(11_208 / 45_222)
    assert real_prepared("bank")[0]["positive_rate_raw"] == pytest.approx(4_640 / 41_188)
    assert real_prepared("breast_cancer")[0]["positive_rate_raw"] == pytest.approx(241 / 699)
    assert real_prepared("kddcup99")[0]["positive_rate_raw"] == pytest.approx(1 - 97_278 / 494_021)


def test_real_kdd_five_class_label(real_prepared: Prepared, tmp_path) -> None:
    # spec E5: the standard attack taxonomy; counts of the 10 % file (494 021 rows) are public
    from mpdp.data.prepare import load_classes

    card, data, _ = real_prepared("kddcup99")
    assert card["classes"] == ["normal", "DoS", "Probe", "R2L", "U2R"]
    assert card["class_counts_raw"] == {
        "normal": 97_278, "DoS": 391_458, "Probe": 4_107, "R2L": 1_126, "U2R": 52,
    }
    assert sum(card["class_counts"].values()) == card["n_total"]
    out_dir = Path(data.X_train.filename).parent
    y_class_train, y_class_test, names = load_classes(out_dir)
    assert names == card["classes"]
    # the ±1 labels other studies use are unchanged: +1 exactly for the attack classes
    np.testing.assert_array_equal(data.y_train == 1, y_class_train != 0)
    np.testing.assert_array_equal(data.y_test == 1, y_class_test != 0)
    assert card["class_counts_train"]["normal"] == int(np.sum(data.y_train == -1))
