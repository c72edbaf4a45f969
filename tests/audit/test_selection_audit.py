"""Audit of the whole private procedure, selection and release together (issue 43): honest rows
consistent with the accounted end-to-end ε at both units, the planted un-noised selection caught."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from mpdp import config
from mpdp.audit import registry
from mpdp.audit import report as audit_report
from mpdp.audit import selection_adapter as sa
from mpdp.audit.adapters import AuditContext
from mpdp.errors import ConfigError
from mpdp.studies.benchmark import selection

ROOT = Path(__file__).resolve().parents[2]
CTX = AuditContext(root_seed=0, beta=0.05, delta=1e-5, bug_noise_factor={}, n_train={}, one_run={},
                   many_draws={"draws": 40_000, "f_sel": 0.2})


def _row(**setting):
    return registry.get("private_selection").run({"mechanism": "private_selection", "epsilon": 1.0, **setting}, CTX)


@pytest.mark.parametrize("unit", ["record", "party"])
def test_honest_whole_procedure_is_consistent_with_its_end_to_end_epsilon(unit):
    row = _row(unit=unit)
    assert row["privacy_unit"] == unit and not row["planted_bug"]
    assert 0 < row["eps_accounted"] <= row["eps_claimed"] * (1 + 1e-9)
    assert row["eps_lower"] <= row["eps_accounted"]
    assert audit_report.verdict(row) == "consistent (nothing refuted)"


def test_selection_on_unnoised_scores_is_caught_by_the_whole_procedure_audit():
    row = _row(unit="record", planted_bug="unnoised_scores")
    assert row["planted_bug"] and row["bug"] == "unnoised_scores"
    assert row["eps_lower"] > row["eps_claimed"]
    assert audit_report.verdict(row) == "bug caught (ε̂ > claimed ε)"


def test_the_audited_budgets_are_the_benchmarks():
    """The audit runs the benchmark's protocol: its ε_t at the benchmark's default knobs and δ is the
    benchmark's own budget, for a record-level and a party-level output mechanism."""
    cfg = copy.deepcopy(config.load(ROOT / "config" / "config.yaml"))
    b = cfg["benchmark"]
    b["delta"] = CTX.delta
    s = b["selection"]
    assert (s["trials"]["shape"], s["trials"]["mean"], s["final_share"], s["score_clip"]) == (
        sa.SHAPE, sa.MEAN, sa.FINAL_SHARE, sa.SCORE_CLIP)
    for unit, mech in (("record", "pathak"), ("party", "hamm_soft")):
        ours = sa.budget(unit, 1.0, CTX.delta, sa.SHAPE, sa.MEAN, sa.FINAL_SHARE, sa.SCORE_CLIP, sa.N_VAL)
        theirs = selection.budget(cfg, mech, 1.0)
        assert ours["eps_trial"] == pytest.approx(theirs.eps_trial, rel=1e-12)
        assert ours["eps_end_to_end"] == pytest.approx(theirs.eps_end_to_end, rel=1e-12)


def test_shipped_configs_audit_the_procedure_at_both_units_with_the_planted_bug():
    for name in ("config.yaml", "smoke.yaml"):
        rows = [s for s in config.load(ROOT / "config" / name)["audit"]["settings"]
                if s["mechanism"] == "private_selection"]
        assert {(s.get("unit"), s.get("planted_bug", False)) for s in rows} == {
            ("record", False), ("record", "unnoised_scores"), ("party", False)}


@pytest.mark.parametrize(("setting", "match"), [
    ({"unit": "parties"}, "unit must be record or party"),
    ({"unit": "party", "planted_bug": "unnoised_scores"}, "not plantable here"),
    ({"unit": "record", "planted_bug": True}, "not plantable here"),
])
def test_bad_settings_are_one_line_errors(setting, match):
    with pytest.raises(ConfigError, match=match) as err:
        _row(**setting)
    assert "\n" not in str(err.value)
