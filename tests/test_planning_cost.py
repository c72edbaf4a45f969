"""The cost check at planning (issue 58, item 3; :mod:`mpdp.pipeline.planning_cost`): runtime bombs
of the full config stop at planning with one line naming the key and the estimate, the shipped
profiles stay well under the caps, and planning never lists a run to count it. The smoke
profile's cases (and the caps' override) are in tests/test_bad_configs.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mpdp import config
from mpdp.errors import ConfigError
from mpdp.pipeline import planning, planning_cost
from mpdp.studies.registry import STUDIES
from mpdp.studies.wddp import plan

ROOT = Path(__file__).resolve().parents[1]
AVAILABLE = ["kddcup99", "adult", "bank", "breast_cancer", "credit_card"]
#: the WD-DP study's estimates are keyed by its registry name
WDDP = next(s.name for s in STUDIES if s.id == "wddp")


def _full(**sections: dict) -> dict:
    raw = config.load(ROOT / "config" / "config.yaml")
    for section, values in sections.items():
        raw.setdefault(section, {}).update(values)
    return raw


@pytest.mark.parametrize(("section", "values", "key"), [
    ("wddp", {"T": 10 ** 6}, "wddp.T"),
    ("wddp", {"T": "1e6"}, "wddp.T"),  # as YAML reads 1e6: a string, then a float
    ("wddp", {"reps": 100000}, "wddp.reps"),
    ("ls", {"draws": 10 ** 9}, "ls.draws"),
    ("audit", {"many_draws": {"draws": 10 ** 10, "training_draws": 10 ** 5, "f_sel": 0.2}}, "audit.many_draws.draws"),
    ("voting", {"M_grid": [10, 30, "1e6"]}, "voting.M_grid.2"),
    ("voting", {"M_grid": [10, 30, 100, 300], "reps": 10 ** 5}, "voting.reps"),
    ("admm", {"T": 10 ** 6}, "admm.T"),
    ("benchmark", {"reps": 10 ** 5}, "benchmark.reps"),
    ("benchmark", {"min_party_size": 5000}, "benchmark.min_party_size"),
])
def test_a_runtime_bomb_of_the_full_config_stops_at_planning(section, values, key):
    with pytest.raises(ConfigError) as err:
        cfg = config.validate(_full(**{section: values}))
        planning.check(cfg, AVAILABLE, {})
    message = str(err.value)
    assert f"config key '{key}'" in message and "\n" not in message
    if "CPU hours" in message or "GiB" in message:  # the estimate and the override are named
        assert "limits.cpu_hours" in message or "limits.memory_gib" in message


@pytest.mark.parametrize("name", ["config.yaml", "smoke.yaml"])
def test_the_shipped_profiles_stay_well_under_the_caps(name):
    cfg = config.load(ROOT / "config" / name)
    limits = cfg["limits"]
    sizes = planning._sizes(cfg, AVAILABLE, {})
    estimates = planning_cost.estimates(cfg, AVAILABLE, sizes)
    assert {WDDP, "the audit"} <= set(estimates)
    for study, terms in estimates.items():
        assert sum(t.seconds for t in terms) < limits["cpu_hours"] * 3600 / 10, study
        assert max(t.memory for t in terms) < limits["memory_gib"] * 2 ** 30 / 10, study
    wddp = sum(t.seconds for t in estimates[WDDP])
    if name == "config.yaml":  # measured 20-25 min on 2 cores (perf/README.md): the estimate's order
        assert 0.3 * 3600 < wddp < 5 * 3600


def test_the_estimate_follows_its_keys():
    cfg = config.load(ROOT / "config" / "config.yaml")
    sizes = planning._sizes(cfg, AVAILABLE, {})

    def wddp(c):
        return sum(t.seconds for t in planning_cost.estimates(c, AVAILABLE, sizes)[WDDP])

    more = config.validate({**cfg, "wddp": {**cfg["wddp"], "T": 2 * cfg["wddp"]["T"]}})
    assert wddp(more) == pytest.approx(2 * wddp(cfg))
    more = config.validate({**cfg, "wddp": {**cfg["wddp"], "reps": 3 * cfg["wddp"]["reps"]}})
    train = [t for t in planning_cost.estimates(more, AVAILABLE, sizes)[WDDP]
             if t.what == "WD-DP training runs"]
    base = [t for t in planning_cost.estimates(cfg, AVAILABLE, sizes)[WDDP]
            if t.what == "WD-DP training runs"]
    assert train[0].seconds == pytest.approx(3 * base[0].seconds)


@pytest.mark.parametrize("name", ["config.yaml", "smoke.yaml"])
def test_a_job_s_runs_are_counted_without_listing_them(name, monkeypatch):
    cfg = config.load(ROOT / "config" / name)
    etas = {k: (1.0, "config") for k in plan.method_keys(cfg)}
    for ds in cfg["datasets"]:
        for job in plan.jobs(cfg, ds):
            assert plan.job_run_count(cfg, job) == len(plan.runs_for_job(cfg, job, etas)), job
    # the priority Snakemake asks for every job lists no run (issue 58: wddp.reps: 100000 planned for minutes)
    monkeypatch.setattr(plan, "runs_for_job", lambda *a: pytest.fail("planning listed the runs"))
    many = config.validate({**cfg, "wddp": {**cfg["wddp"], "reps": 100000}})
    assert plan.job_priority(many, "adult", "eps_m8") > 0
    assert plan.setup_priority(many, "adult") > 0


@pytest.mark.slow
def test_snakemake_n_stops_a_runaway_config_at_planning(tmp_path, mirror):
    """``snakemake -n`` of the full config with ``wddp.reps: 100000`` (issue 58: it planned for
    minutes) stops at planning with the one line, before any rule is read."""
    for name in ("Snakefile", "workflow", "config", "notebooks", "environment.yml"):
        (tmp_path / name).symlink_to(ROOT / name)
    bad = tmp_path / "bad.yaml"
    bad.write_text("wddp:\n  reps: 100000\n")
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--configfile", str(bad)], cwd=tmp_path,
                          env={**os.environ, "MPDP_DATA_MIRROR": str(mirror)}, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if line.startswith("mpdp: config key")]
    assert len(lines) == 1 and lines[0].startswith("mpdp: config key 'wddp.reps': wddp.reps = 100000 makes WD-DP")
    assert "Traceback" not in proc.stderr
