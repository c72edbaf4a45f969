"""Planning checks of privacy budgets (mpdp.pipeline.planning_budgets; issue 47, issue 43 item 5).

The feasibility test of a private-selection budget is checked against an independent computation:
the benchmark's own budget split (:func:`mpdp.studies.benchmark.selection.budget`, the bisection
the jobs run) succeeds exactly where planning accepts.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path

import pytest
import yaml

from mpdp import config
from mpdp.errors import ConfigError, MpdpError
from mpdp.pipeline import planning, planning_budgets
from mpdp.studies.benchmark import selection

ROOT = Path(__file__).resolve().parents[1]


def _smoke(**benchmark: object) -> dict:
    raw = yaml.safe_load((ROOT / "config" / "smoke.yaml").read_text())
    raw["benchmark"].update(copy.deepcopy(benchmark))
    return config.validate(raw)


@pytest.mark.parametrize(("mech", "points"), [
    ("wyx", [(0.005, 0.5), (0.01, 0.5), (0.01, 0.88), (1.0, 0.88)]),
    ("pathak", [(0.005, 0.5), (0.01, 0.88), (0.1, 0.5)]),
    ("dvp", [(0.01, 0.5), (0.01, 0.88), (1.0, 0.88)]),
    ("dpsgd", [(0.002, 0.5), (0.01, 0.5), (1.0, 0.88), (10.0, 0.88)]),
    ("hamm_soft", [(0.003, 0.5), (0.01, 0.5), (1.0, 0.88)]),  # party level: the selected trial is released
])
def test_planning_accepts_exactly_the_budgets_the_jobs_can_split(mech, points):
    for eps, share in points:
        cfg = _smoke(selection={"final_share": share})
        accepted = planning_budgets.budget_key(cfg, mech, eps) is None
        try:
            b = selection.budget(cfg, mech, eps)
            feasible = b.eps_trial > 0 and b.eps_end_to_end <= eps * (1 + 1e-9)
        except ConfigError:
            feasible = False
        assert accepted == feasible, (mech, eps, share)


def test_both_outcomes_are_covered():
    """The points above include refused and accepted budgets of DP-SGD and ADMM (else the
    agreement would be vacuous); a party-level mechanism's pure ε/(2 + η) trials always fit once the
    overhead does. DP-SGD's curve, computed at every order up to
    4096 (issue 43), meets ε = 0.01: only the selection's overhead refuses it."""
    cfg = _smoke(selection={"final_share": 0.88})
    assert planning_budgets.budget_key(cfg, "dvp", 0.01) == "benchmark.selection.final_share"
    assert planning_budgets.budget_key(cfg, "dvp", 1.0) is None
    assert planning_budgets.budget_key(_smoke(), "dpsgd", 0.002) == "benchmark.selection.trials.mean"
    assert planning_budgets.budget_key(_smoke(), "wyx", 0.004) == "benchmark.eps_grid"
    assert planning_budgets.budget_key(_smoke(), "hamm_soft", 0.01) is None
    assert planning_budgets.budget_key(_smoke(), "dpsgd", 1.0) is None
    assert planning_budgets.budget_key(_smoke(), "wyx", 0.001) == "benchmark.selection.trials.mean"


def test_an_unwritable_folder_below_data_is_named(tmp_path, monkeypatch):
    """Issue 47: a non-writable folder below data/ gave a 40-line Snakemake traceback."""
    deep = tmp_path / "data" / "results" / "voting"
    deep.mkdir(parents=True)
    (tmp_path / "logs").mkdir()
    planning.check_writable(tmp_path)  # all writable
    real = os.access
    monkeypatch.setattr(planning_budgets.os, "access", lambda p, mode: real(p, mode) and Path(p) != deep)
    with pytest.raises(MpdpError, match=r"^the folder data/results/voting/ is not writable.*chmod -R u\+w "
                                        r"data/results/voting\)"):
        planning.check_writable(tmp_path)
