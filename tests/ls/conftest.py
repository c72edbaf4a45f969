"""A tiny least-squares study config (the smoke profile's ls section, fewer draws)."""

import copy
from pathlib import Path

import pytest

from mpdp import config

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def ls_cfg():
    cfg = copy.deepcopy(config.load(ROOT / "config" / "smoke.yaml")["ls"])
    cfg["draws"] = 2000
    cfg["ls_1"]["n"] = 1000
    cfg["sgd"]["reps"] = 5
    cfg["ls_2"]["n"] = 30
    cfg["ls_3"]["max_records"] = 30
    return cfg
