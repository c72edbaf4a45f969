"""Preparing a data set reads only the config keys its rule declares (mpdp.pipeline.rule_keys)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpdp import config
from mpdp.data import prepare as prep
from mpdp.pipeline import rule_keys

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("dataset", sorted(rule_keys.DATASET_KEYS))
def test_prepare_runs_on_exactly_its_declared_keys(dataset, synthetic_raw, tmp_path):
    cfg = config.load(ROOT / "config" / "smoke.yaml", {"max_records": 150})
    cfg["preprocess"]["kdd_sample_size"] = 300
    keys = rule_keys.keys_for("prepare", cfg, dataset=dataset)
    restricted = config.restrict(cfg, keys, owner="rule 'prepare'")
    n = 1200 if dataset == "credit_card" else 400
    card = prep.prepare(dataset, synthetic_raw(dataset, n), tmp_path / "out", restricted, synthetic=True)
    full = prep.prepare(dataset, synthetic_raw(dataset, n), tmp_path / "full", cfg, synthetic=True)
    assert card == full
    others = {k for ds, ks in rule_keys.DATASET_KEYS.items() if ds != dataset for k in ks}
    assert not others & set(keys)  # another data set's option does not rerun this one
