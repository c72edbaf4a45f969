"""The figure table of spec experiments.md E3.4 as data, targets and report captions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mpdp import config
from mpdp.studies.wddp.figure_spec import (
    DATASET_PANELS,
    FIGURES,
    VARIANTS,
    figure_name,
    figure_targets,
    parse_figure_name,
    variants_for,
)
from mpdp.studies.wddp.plan import Job, jobs

ROOT = Path(__file__).resolve().parents[2]

#: spec E3.4, transcribed independently: fig -> (metric, x, m, ε)
E34 = {
    1: ("accuracy", "epsilon", 32, None),
    2: ("accuracy", "u", 16, 0.05),
    3: ("optimal_gap", "epsilon", 32, None),
    4: ("accuracy", "epsilon", 2, None),
    5: ("optimal_gap", "epsilon", 2, None),
    6: ("accuracy", "epsilon", 4, None),
    7: ("optimal_gap", "epsilon", 4, None),
    8: ("accuracy", "epsilon", 8, None),
    9: ("optimal_gap", "epsilon", 8, None),
    10: ("accuracy", "epsilon", 16, None),
    11: ("optimal_gap", "epsilon", 16, None),
    12: ("optimal_gap", "u", 16, 0.05),
    13: ("accuracy", "u", 32, 0.1),
    14: ("optimal_gap", "u", 32, 0.1),
    15: ("accuracy", "u", 8, 0.01),
    16: ("optimal_gap", "u", 8, 0.01),
}


def test_figure_table_matches_spec_e34():
    assert list(FIGURES) == [f"fig{i:02d}" for i in range(1, 17)]
    for number, (metric, x, m, eps) in E34.items():
        spec = FIGURES[f"fig{number:02d}"]
        assert (spec.number, spec.metric, spec.x, spec.m, spec.epsilon) == (
            number,
            metric,
            x,
            m,
            eps,
        )
        assert spec.experiment == ("eps_sweep" if x == "epsilon" else "u_sweep")


def test_pairs_are_symmetric_and_join_accuracy_with_gap():
    for fig_id, spec in FIGURES.items():
        pair = FIGURES[spec.pair]
        assert pair.pair == fig_id
        assert {spec.metric, pair.metric} == {"accuracy", "optimal_gap"}
        assert (spec.x, spec.m, spec.epsilon) == (pair.x, pair.m, pair.epsilon)


def test_overlays_follow_bounds_b10():
    for spec in FIGURES.values():
        if spec.metric == "accuracy":
            assert spec.overlays == ()
        elif spec.x == "epsilon":
            assert set(spec.overlays) == {"B1prime", "B3", "B1triple"}
        else:  # gap vs u also carries the Jayaraman bias floor
            assert set(spec.overlays) == {"B1prime", "B3", "B1triple", "bias_floor"}


def test_variants_and_panels():
    assert VARIANTS[""][:2] == ("local_then_aggregate", "ma16")
    assert VARIANTS["-pr"][:2] == ("per_round", "ma16")
    assert VARIANTS["-exact"][:2] == ("local_then_aggregate", "exact")
    eq = VARIANTS["-eq"]
    assert (eq.mode, eq.accountant, eq.wyx_accountant) == (
        "local_then_aggregate", "exact_per_party", "exact"
    )
    assert VARIANTS[""].wyx_accountant == "ma16"
    assert [(ds, p.letter) for ds, p in DATASET_PANELS.items()] == [
        ("kddcup99", "a"),
        ("adult", "b"),
        ("bank", "c"),
        ("breast_cancer", "d"),
        ("credit_card", "e"),
    ]


def test_figure_targets_and_names():
    targets = figure_targets(VARIANTS, root="reports/figures")
    assert len(targets) == len(set(targets)) == 16 * 4 * 2
    assert targets[:2] == ["reports/figures/fig01.png", "reports/figures/fig01.pdf"]
    assert "reports/figures/fig16-exact.pdf" in targets
    assert "reports/figures/fig16-eq.pdf" in targets
    assert figure_targets(["-pr"], exts=["png"])[0].endswith("fig01-pr.png")
    for fig_id in FIGURES:
        for variant in VARIANTS:
            assert parse_figure_name(figure_name(fig_id, variant)) == (fig_id, variant)
    for bad in ("fig17", "fig07-xx", "figure7"):
        with pytest.raises(KeyError):
            parse_figure_name(bad)


def test_variants_for_follows_config():
    cfg = config.load(ROOT / "config" / "smoke.yaml")
    assert list(variants_for(cfg)) == ["", "-pr", "-exact", "-eq"]
    cfg["wddp"]["equal_privacy"] = False
    assert list(variants_for(cfg)) == ["", "-pr", "-exact"]
    cfg["wddp"]["modes"] = ["per_round"]
    cfg["wddp"]["accountants"] = ["ma16"]
    assert list(variants_for(cfg)) == ["-pr"]


def test_uses_job_selects_the_figure_setting_only():
    cfg = config.load(ROOT / "config" / "config.yaml")
    all_jobs = jobs(cfg, "adult")
    fig03 = [j for j in all_jobs if FIGURES["fig03"].uses_job(j)]
    assert {(j.experiment, j.m) for j in fig03} == {("eps_sweep", None), ("eps_sweep", 32)}
    fig14 = [j for j in all_jobs if FIGURES["fig14"].uses_job(j)]
    assert [(j.m, j.eps) for j in fig14] == [(32, 0.1)]  # one job holds every u
    assert not FIGURES["fig14"].uses_job(Job("adult", "u_sweep", 32, 0.05))


def test_snakemake_report_is_removed():
    """Snakemake's own --report was removed (docs/report.md says why): no caption or rule refers
    to it, so no caption can name a target that does not exist."""
    assert not (ROOT / "workflow" / "report").exists()
    for path in [ROOT / "Snakefile", *sorted((ROOT / "workflow" / "rules").glob("*.smk"))]:
        text = path.read_text()
        assert not re.search(r"\breport\(|^report:", text, re.M), path
