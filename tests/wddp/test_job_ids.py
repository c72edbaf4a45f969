"""Training-job ids round-trip for every setting the config schema accepts (issue 13 item 2)."""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpdp import config
from mpdp.errors import ConfigError
from mpdp.studies.wddp import plan

ROOT = Path(__file__).resolve().parents[2]

SCHEMA = config.schema()
U_SETTING = SCHEMA["properties"]["wddp"]["properties"]["u_settings"]["items"]["properties"]
M_GRID = SCHEMA["properties"]["wddp"]["properties"]["m_grid"]["items"]
WILDCARD = re.compile(plan.JOB_ID_PATTERN)


def _int_strategy(node: dict) -> st.SearchStrategy[int]:
    """Integers the schema node accepts (minimum, multipleOf), small and huge ones."""
    step = node.get("multipleOf", 1)
    low = math.ceil(node.get("minimum", 0) / step)
    return st.integers(min_value=low, max_value=10**30).map(lambda k: k * step)


def _eps_strategy(node: dict) -> st.SearchStrategy[float]:
    assert node == {"type": "number", "exclusiveMinimum": 0}  # the ranges this test covers
    return st.floats(min_value=0.0, exclude_min=True, allow_nan=False, allow_infinity=False)


@settings(max_examples=400, deadline=None)
@given(m=_int_strategy(U_SETTING["m"]), eps=_eps_strategy(U_SETTING["eps"]),
       dataset=st.sampled_from(SCHEMA["properties"]["datasets"]["items"]["enum"]))
def test_u_sweep_ids_round_trip_and_match_the_wildcard(m, eps, dataset):
    job = plan.Job(dataset, "u_sweep", m, eps)
    assert WILDCARD.fullmatch(job.job_id), job.job_id
    back = plan.parse_job_id(dataset, job.job_id)
    assert back == job and back.eps == eps  # the exact float, not a rounded one


@settings(max_examples=100, deadline=None)
@given(m=_int_strategy(M_GRID))
def test_eps_sweep_ids_round_trip(m):
    job = plan.Job("adult", "eps_sweep", m, None)
    assert WILDCARD.fullmatch(job.job_id) and plan.parse_job_id("adult", job.job_id) == job


def test_the_full_config_has_one_job_per_u_sweep_setting():
    cfg = config.load(ROOT / "config" / "config.yaml")
    ids = [j.job_id for j in plan.jobs(cfg, "adult")]
    assert {"u_m16_e0.05", "u_m32_e0.1", "u_m8_e0.01", "eps_m2", "eps_central"} <= set(ids)
    assert len(ids) == 1 + len(cfg["wddp"]["m_grid"]) + len(cfg["wddp"]["u_settings"])


def test_close_epsilons_get_distinct_ids():
    a, b = plan.Job("adult", "u_sweep", 8, 0.1234567), plan.Job("adult", "u_sweep", 8, 0.1234568)
    assert a.job_id != b.job_id  # '{:g}' wrote both as e0.123457


@pytest.mark.parametrize("value", [".nan", ".inf"])
def test_non_finite_numbers_are_rejected(tmp_path, value):
    text = (ROOT / "config" / "smoke.yaml").read_text().replace("{m: 8, eps: 0.01}", f"{{m: 8, eps: {value}}}")
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=r"wddp.u_settings.2.eps'?: must be"):
        config.load(path)


def test_repeated_u_setting_is_rejected():
    cfg = config.load(ROOT / "config" / "smoke.yaml")
    raw = copy.deepcopy(cfg)
    raw["wddp"]["u_settings"].append({"m": 16, "eps": 0.05})
    with pytest.raises(ConfigError, match=r"'wddp.u_settings.3': repeats the setting m = 16"):
        config.validate(raw)
