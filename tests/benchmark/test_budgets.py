"""The private selection's budgets computed once by rule ``benchmark_budgets`` (issue 45;
mpdp.studies.benchmark.budgets): the file's budgets are :func:`selection.budget`'s, a job reads them
instead of searching again, and refuses a file of another ``benchmark`` section in one line."""

from __future__ import annotations

import json

import pytest

from mpdp.errors import InputDataError
from mpdp.privacy import pure_dp
from mpdp.studies.benchmark import budgets, plan, registry, selection
from mpdp.studies.benchmark import calibration as calib
from mpdp.studies.benchmark.train import family_job


@pytest.fixture()
def fresh(monkeypatch):
    """No budget installed and an empty memo, before and after the test."""
    memo = selection._budget
    monkeypatch.setattr(selection, "_INSTALLED", {})
    monkeypatch.setattr(calib, "_ADMM_ALPHAS", {})
    memo.cache_clear()
    yield
    memo.cache_clear()


def test_the_file_holds_every_mechanisms_budget_at_every_epsilon_as_computed_directly(bench_cfg, tmp_path,
                                                                                      fresh, monkeypatch):
    grid = [float(e) for e in bench_cfg["benchmark"]["eps_grid"]]
    mechs = [m.id for m in registry.configured(bench_cfg) if m.family != "reference"]
    direct = {(m, e): (selection.budget(bench_cfg, m, e), selection.slack(bench_cfg, m, e)) for m in mechs for e in grid}
    path = tmp_path / "budgets.json"
    budgets.write(bench_cfg, path)
    stored = json.loads(path.read_text())
    assert stored["benchmark_section"] == budgets.section_hash(bench_cfg)
    assert set(stored["mechanisms"]) == set(mechs) and len(mechs) >= 10
    assert all(len(entries) == len(grid) for entries in stored["mechanisms"].values())

    # the job's side: nothing is searched again once the file is installed
    selection._budget.cache_clear()

    def no_search(*args, **kwargs):
        raise AssertionError("selection._budget searched again although the budgets file was installed")

    monkeypatch.setattr(selection, "_budget", no_search)
    assert budgets.install(bench_cfg, path) == len(mechs) * len(grid)
    for (m, e), (bud, slk) in direct.items():
        assert selection.budget(bench_cfg, m, e) == bud, (m, e)  # every field, bit for bit
        assert selection.slack(bench_cfg, m, e) == slk, (m, e)

    # issue 45: the ADMM family's per-step α of every ε its jobs calibrate a run to, bit for bit,
    # without a bisection in the job
    a = bench_cfg["benchmark"]["admm"]
    args = (int(a["T"]), float(bench_cfg["benchmark"]["delta"]), a["accountant"])
    needed = {*grid, plan.reference_cell(bench_cfg)[2]}
    needed |= {x for m in ("dvp", "pvp") for e in grid for x in (direct[m, e][0].eps_trial, direct[m, e][0].eps_final)}
    expected = {e: pure_dp.per_step_alpha(e, *args) for e in needed}

    def no_bisection(*args, **kwargs):
        raise AssertionError("calibration.per_step_alpha bisected again although the budgets file was installed")

    monkeypatch.setattr(calib, "per_step_alpha", no_bisection)
    assert {e: calib.admm_alpha(e, *args) for e in needed} == expected
    assert len(stored["admm_alphas"]["alphas"]) == len(needed)


def test_an_infeasible_budget_fails_the_job_that_uses_it_with_the_same_line(bench_cfg, tmp_path, fresh):
    b = bench_cfg["benchmark"]
    b["eps_grid"] = [0.001, 1.0]
    b["selection"]["final_share"] = 0.99
    with pytest.raises(Exception) as direct:
        selection.budget(bench_cfg, "dvp", 0.001)
    path = tmp_path / "budgets.json"
    budgets.write(bench_cfg, path)  # the rule itself does not fail: only the jobs that need the budget
    selection._budget.cache_clear()
    budgets.install(bench_cfg, path)
    with pytest.raises(type(direct.value)) as cached:
        selection.budget(bench_cfg, "dvp", 0.001)
    assert str(cached.value) == str(direct.value)
    assert selection.budget(bench_cfg, "dvp", 1.0).eps_trial > 0


def test_a_budgets_file_of_another_benchmark_section_is_refused_in_one_line(bench_cfg, tmp_path, fresh,
                                                                             bench_data):
    path = tmp_path / "budgets.json"
    budgets.write({**bench_cfg, "benchmark": {**bench_cfg["benchmark"], "mechanisms": ["dvp"]}}, path)
    with pytest.raises(InputDataError) as exc:
        budgets.install(bench_cfg, path)
    msg = str(exc.value)
    assert "\n" not in msg and str(path) in msg and "another 'benchmark' config section" in msg
    assert f"snakemake --force {path}" in msg
    # the job refuses before training anything
    with pytest.raises(InputDataError, match="another 'benchmark' config section"):
        family_job(bench_cfg, "breast_cancer", "admm", tmp_path / "absent", path, tmp_path / "t.parquet",
                   tmp_path / "h.json", __import__("logging").getLogger("test"))
    assert not (tmp_path / "t.parquet").exists()
    # the ranking's primary metric is not read by the budgets: a change of it keeps the file
    other = {**bench_cfg, "benchmark": {**bench_cfg["benchmark"], "primary_metric": "test_accuracy"}}
    assert budgets.section_hash(other) == budgets.section_hash(bench_cfg)


@pytest.mark.parametrize("text", ["", "{\"benchmark_section\": 1}", "[1, 2]",
                                  "{\"benchmark_section\": \"x\", \"mechanisms\": {\"dvp\": [{\"budget\": {}}]}}"])
def test_a_damaged_budgets_file_is_one_line_naming_it(bench_cfg, tmp_path, fresh, text):
    path = tmp_path / "budgets.json"
    path.write_text(text)
    with pytest.raises(InputDataError) as exc:
        budgets.install(bench_cfg, path)
    assert "\n" not in str(exc.value) and str(path) in str(exc.value)
    assert not selection._INSTALLED
