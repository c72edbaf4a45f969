"""Many-draws audit of objective perturbation (mpdp.audit.objective_adapter, issue 56)."""

from __future__ import annotations

import pytest

from mpdp.audit import registry
from mpdp.audit.adapters import AuditContext
from mpdp.audit.objective_adapter import ADAPTERS
from mpdp.audit.table import COLUMNS
from mpdp.errors import ConfigError
from mpdp.studies.benchmark import objective

CTX = AuditContext(root_seed=3, beta=0.05, delta=1e-5, bug_noise_factor={"many_draws": 0.5}, n_train={},
                   one_run={}, many_draws={"draws": 100000, "f_sel": 0.2, "training_draws": 3000})
IDS = ("objpert", "objpert_avg")


def test_registered_under_the_mechanisms_audit_ids():
    assert {a.id for a in ADAPTERS} == set(IDS)
    for mech in (objective.MECHANISM, objective.PARTY_MECHANISM):
        assert registry.get(mech.audit).mechanism is mech


@pytest.mark.parametrize("mech", IDS)
@pytest.mark.parametrize("setting", [{"epsilon": 1.0}, {"epsilon": 3.0, "lambda": 1e-3}])  # Δ = 0; Δ > 0
def test_correct_mechanism_is_not_flagged(mech, setting):
    row = registry.get(mech).run({"mechanism": mech, **setting}, CTX)
    assert set(row) == set(COLUMNS)
    assert row["eps_accounted"] == pytest.approx(setting["epsilon"], rel=1e-12)
    assert row["eps_up"] == pytest.approx(row["eps_accounted"], rel=1e-12)
    assert row["eps_lower"] <= row["eps_accounted"]
    assert not row["planted_bug"]


@pytest.mark.parametrize("mech", IDS)
def test_planted_noise_scale_bug_is_caught(mech):
    row = registry.get(mech).run({"mechanism": mech, "epsilon": 1.0, "planted_bug": "objective_noise_scale"}, CTX)
    assert row["planted_bug"] and row["bug"] == "objective_noise_scale"
    assert row["eps_accounted"] == pytest.approx(1.0)  # the ledger still claims ε
    assert row["eps_lower"] > 2.0 * row["eps_accounted"]
    assert row["eps_up"] > row["eps_lower"]


def test_other_bugs_are_refused_with_one_line():
    with pytest.raises(ConfigError, match="objective_noise_scale"):
        registry.get("objpert").run({"mechanism": "objpert", "epsilon": 1.0, "planted_bug": True}, CTX)


@pytest.mark.parametrize(("setting", "match"), [
    ({"mechanism": "nl2_output", "epsilon": 1.0, "planted_bug": "objective_noise_scale"}, "nl2_output audit"),
    ({"mechanism": "objpert_avg", "epsilon": 1.0, "planted_bug": True}, "objpert_avg audit"),
])
def test_a_bug_the_audit_cannot_plant_is_refused_at_planning(setting, match):
    from mpdp.pipeline.planning_studies import check_audit_settings

    with pytest.raises(ConfigError, match=match):
        check_audit_settings({"audit": {"settings": [setting]}})
    check_audit_settings({"audit": {"settings": [{"mechanism": "objpert", "epsilon": 1.0,
                                                  "planted_bug": "objective_noise_scale"}]}})
