"""The benchmark's extension point: registry, job groups and a registered mechanism's job (spec E10)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from mpdp import results
from mpdp.errors import ConfigError
from mpdp.studies.benchmark import builtin, registry, train
from mpdp.studies.benchmark.schema import EXTRA_COLUMNS

TOY = str(Path(__file__).with_name("toy_mechanism.py"))
EXAMPLE = str(Path(__file__).resolve().parents[2] / "docs" / "examples" / "central_output.py")
LOG = logging.getLogger("test")


def test_default_config_names_every_paper_mechanism_in_legend_order(bench_cfg):
    assert [m.id for m in registry.configured(bench_cfg)] == [*(m.id for m in builtin.MECHANISMS), "dpsgd", "objpert",
                                                              "objpert_avg"]
    assert registry.job_groups(bench_cfg) == {
        "output": ("nonprivate", "jayaraman_output", "pathak", "param_avg", "hamm_vote", "hamm_soft"),
        "gradient": ("wyx", "wddp_per_round", "wddp_literal", "jayaraman_per_round", "jayaraman_literal"),
        "admm": ("dvp", "pvp"),
        "dpsgd": ("dpsgd",),
        "objpert": ("objpert",),
        "objpert_avg": ("objpert_avg",),
    }


def test_a_module_path_registers_its_mechanism_as_its_own_job(bench_cfg):
    bench_cfg["benchmark"]["mechanisms"] = ["nonprivate", "dvp", TOY]
    assert [m.id for m in registry.configured(bench_cfg)] == ["nonprivate", "dvp", "toy_first_party"]
    assert registry.job_groups(bench_cfg) == {"output": ("nonprivate",), "admm": ("dvp",),
                                              "toy_first_party": ("toy_first_party",)}
    assert registry.get("toy_first_party").family == "toy"


@pytest.mark.parametrize(("entry", "match"), [
    ("no_such_mechanism", "unknown mechanism 'no_such_mechanism'"),
    ("missing/module.py", "does not exist"),
    ("mpdp.errors", "defines no MECHANISM"),
])
def test_bad_entries_are_one_line_config_errors(bench_cfg, entry, match):
    bench_cfg["benchmark"]["mechanisms"] = ["wyx", entry]
    with pytest.raises(ConfigError, match=match):
        registry.configured(bench_cfg)


def test_an_id_taken_by_another_mechanism_is_refused():
    clash = builtin.GradientFamily("wyx", "another", "x", "gradient", "x", "record")
    with pytest.raises(ConfigError, match="already registered"):
        registry.register(clash)


def test_a_registered_mechanism_runs_the_common_protocol(bench_cfg, bench_data):
    """Tuned with the same budget, trained on every cell, ε, repetition, accounted at the target."""
    bench_cfg["benchmark"]["mechanisms"] = [TOY]
    assert registry.configured(bench_cfg)[0].id == "toy_first_party"  # registers the added mechanism
    rows, hp = train.run_job(bench_cfg, "synthetic", bench_data, ("toy_first_party",), LOG)
    everything = results.to_frame(rows, EXTRA_COLUMNS)
    b = bench_cfg["benchmark"]
    # the private protocol accounts it through its declared RDP curve, end to end at the target
    private = everything[everything["selection"] == "private"]
    assert (private["eps_end_to_end"] <= private["epsilon"] * (1 + 1e-9)).all() and len(private)
    frame = everything[everything["selection"] == "oracle"]
    hp = hp["oracle"]
    assert len(frame) == len(b["eps_grid"]) * len(b["m_grid"]) * len(b["u_grid"]) * b["reps"]
    assert (frame["label"] == "toy: first party alone").all() and (frame["family"] == "toy").all()
    np.testing.assert_allclose(frame["eps_total"], frame["epsilon"])
    # β = ε/Δ₂ with Δ₂ = 2/(n_(first party) λ): recomputed here from the partition sizes
    first = frame["n_min"].where(frame["u"] == 1.0)  # u = 1: equal parties, the first is n_min
    np.testing.assert_allclose(frame["beta"][first.notna()],
                               frame["epsilon"][first.notna()] * first.dropna() * frame["lambda"][first.notna()] / 2)
    assert hp["toy_first_party"]["candidates"] == b["output"]["lambda_candidates"]
    assert hp["toy_first_party"]["chosen"] in b["output"]["lambda_candidates"]
    assert frame["accuracy"].between(0, 1).all() and frame["test_logloss"].gt(0).all()
    # the same partitions as every other mechanism (paired repetitions)
    other, _ = train.run_job(bench_cfg, "synthetic", bench_data, ("pathak",), LOG)
    key = ["m", "u", "rep"]
    ours = frame.drop_duplicates(key).set_index(key)["partition"]
    theirs = results.to_frame(other, EXTRA_COLUMNS)
    theirs = theirs[theirs["selection"] == "oracle"].drop_duplicates(key).set_index(key)["partition"]
    assert ours.sort_index().equals(theirs.sort_index())


def test_unequal_candidate_budget_of_a_registered_mechanism_is_refused(bench_cfg, bench_data):
    bench_cfg["benchmark"]["mechanisms"] = [TOY]
    bench_cfg["benchmark"]["output"]["lambda_candidates"] = [0.01, 0.1, 1.0]
    assert registry.configured(bench_cfg)[0].id == "toy_first_party"  # registers the added mechanism
    with pytest.raises(ConfigError, match="same selection budget"):
        train.run_job(bench_cfg, "synthetic", bench_data, ("toy_first_party",), LOG)


def test_own_audit_adapters_are_registered_with_the_audit(bench_cfg, monkeypatch):
    from mpdp.audit import registry as audit_registry

    monkeypatch.setattr(audit_registry, "ADAPTERS", dict(audit_registry.ADAPTERS))
    bench_cfg["benchmark"]["mechanisms"] = ["pathak", TOY, EXAMPLE]
    assert registry.audit_adapters(bench_cfg) == {"pathak": "pathak", "toy_first_party": "nl2_output",
                                                  "central_output": "central_output"}
    assert audit_registry.register_benchmark(bench_cfg) == ["central_output"]
    assert audit_registry.get("central_output").method == "many_draws"
    assert audit_registry.register_benchmark(bench_cfg) == []  # idempotent
