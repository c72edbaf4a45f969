"""The pinned registry of raw files (spec E1, E1.1)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from mpdp.data import registry
from mpdp.errors import ConfigError

#: MANIFEST.tsv's dataset names -> the pipeline's data set ids
MANIFEST_IDS = {
    "kddcup99": "kddcup99",
    "adult": "adult",
    "bank_marketing": "bank",
    "breast_cancer_wisconsin_original": "breast_cancer",
    "creditcard_fraud": "credit_card",
}


def test_ids_are_the_stable_api() -> None:
    assert list(registry.DATASETS) == ["kddcup99", "adult", "bank", "breast_cancer", "credit_card"]
    assert [f.name for f in registry.get("adult").files] == ["adult.data", "adult.test"]
    assert registry.get("credit_card").file("creditcard.csv").size == 150_828_752


def test_every_file_is_pinned_and_has_sources() -> None:
    for info in registry.DATASETS.values():
        assert info.display_name and info.license and info.doi and info.positive_label
        for raw in info.files:
            assert re.fullmatch(r"[0-9a-f]{64}", raw.sha256)
            assert (
                raw.mirror_path.endswith(raw.name + ".gz")
                and not Path(raw.mirror_path).is_absolute()
            )
            assert raw.sources
            for source in raw.sources:
                assert source.url.startswith(("http://", "https://"))
                assert all(step == "gzip" or step.startswith("zip:") for step in source.unpack)


def test_upstream_archive_members() -> None:
    bank = registry.get("bank").files[0]
    assert bank.sources[0].url.endswith("bank-additional.zip")
    assert bank.sources[0].unpack == ("zip:bank-additional/bank-additional-full.csv",)
    kdd = registry.get("kddcup99").files[0]
    assert kdd.sources[0].url.endswith("kddcup.data_10_percent.gz") and kdd.sources[0].unpack == (
        "gzip",
    )


def test_unknown_id_lists_known_ones() -> None:
    with pytest.raises(ConfigError, match="known data sets: kddcup99, adult"):
        registry.get("mnist")


def test_pins_agree_with_the_mirror_manifest(mirror: Path) -> None:
    with open(mirror / "MANIFEST.tsv", newline="") as handle:
        manifest = {row["file"]: row for row in csv.DictReader(handle, delimiter="\t")}
    for info in registry.DATASETS.values():
        for raw in info.files:
            row = manifest[raw.mirror_path]
            assert MANIFEST_IDS[row["dataset"]] == info.id
            assert row["sha256_of_uncompressed_content"] == raw.sha256
            assert raw.sources[0].url.split("?")[0] in row["canonical_upstream_url"]
