"""Issue 48: the headline beside the reduced default, the reseeding baseline, claim-level effect
sizes with their specification curves, and honest coverage — on hand-built claims tables."""

import math

import numpy as np
import pandas as pd
import pytest
from test_multiverse_collect import BASE, DEFAULT, _alt, _cells, _result, _verdicts

from mpdp.figures import check
from mpdp.multiverse import collect, curves, effect, figure, section, spec
from mpdp.multiverse.collect import Result
from mpdp.multiverse.spec import Universe


def _reseed(key: str, value: int, index: int) -> Universe:
    return Universe(spec.RESEED, key, {key: value}, "reseeding baseline", index)


def _rows(**verdicts: str) -> list[tuple[str, str, str, str, int]]:
    """BASE with some claims' verdicts replaced (``C3="HOLDS"``)."""
    return [(s, c, r, verdicts.get(c, v), n) for s, c, r, v, n in BASE]


def test_claim_estimate_is_the_median_of_informative_cells_with_the_range_of_their_intervals():
    cells = pd.DataFrame([
        {"study": "w", "claim_id": "C1", "reading": "-", "cell": c, "dataset": "d", "informative": inf,
         "estimate": e, "lo": lo, "hi": hi, "cell_verdict": "for"}
        for c, inf, e, lo, hi in [("a", True, 1.0, 0.5, 1.5), ("b", True, 4.0, 3.0, 6.0), ("c", True, 2.0, -1.0, 2.5),
                                  ("d", False, 100.0, 99.0, 101.0), ("e", True, np.nan, np.nan, np.nan)]])
    none = cells.assign(claim_id="C2", informative=False)
    est = effect.claim_estimates(pd.concat([cells, none])).set_index("claim_id")
    assert est.loc["C1", ["estimate", "lo", "hi"]].tolist() == [2.0, -1.0, 6.0]  # the uninformative 100 is left out
    assert est.loc["C2", ["estimate", "lo", "hi"]].isna().all()


def test_changed_cells_counts_every_cell_that_differs_or_exists_on_one_side():
    default = _cells(BASE)
    other = _cells(BASE, {"C1": 0.25})
    other = other[~((other["claim_id"] == "C3") & (other["cell"] == "cell1"))]  # C3 loses a cell
    other.loc[(other["claim_id"] == "V2") & (other["cell"] == "cell0"), "cell_verdict"] = "against"
    got = effect.changed_cells(default, other).set_index("claim_id")["n_cells_changed"].to_dict()
    assert got == {"C1": 2, "C3": 1, "Z1": 0, "V2": 1}
    missing = default.assign(lo=np.nan, hi=np.nan)  # NaN equals NaN: an unchanged undefined interval
    assert (effect.changed_cells(missing, missing.copy())["n_cells_changed"] == 0).all()


def test_a_reduced_default_that_differs_from_the_headline_is_not_tested():
    headline = _verdicts(_rows(C3="MIXED"))
    table = collect.collect(_result(DEFAULT, BASE), [_result(_alt("x", "a.b", 1), _rows(C3="HOLDS"), {"C3": 1.0})],
                            headline=headline, headline_cells=_cells(BASE, {"C1": 0.5}))
    summary = collect.claim_summary(table).set_index("claim_id")
    # C3 flips under x, but its reduced default (FAILS) is not the headline (MIXED): never "fragile"
    assert summary.loc["C3", "status"] == "not tested"
    assert summary.loc["C3", ["headline_verdict", "default_verdict"]].tolist() == ["MIXED", "FAILS"]
    assert table.set_index("claim_id").loc["C1", "headline_estimate"] == 2.5
    text = section.markdown(table)
    assert "C3 (paper reading) (headline MIXED, reduced default FAILS)" in text
    assert "The reduced default gives the headline's verdict for 3 of 4 claim verdicts" in text
    assert "| wddp C3 (paper reading) | MIXED | FAILS | not tested |" in text
    assert "reduced grid" in text and (table["grid"] == "reduced").all()
    assert "headline MIXED: not tested" in figure.matrix(table).index[1]


def test_on_the_full_grid_the_default_is_the_main_build():
    """multiverse.full_grid (issue 48): the default universe's tables are the headline's, so no claim is
    'not tested' and the section says the universes ran the headline's own grid."""
    table = collect.collect(_result(DEFAULT, BASE), [_result(_alt("x", "a.b", 1), _rows(C3="HOLDS"), {"C3": 1.0})],
                            headline=_verdicts(BASE), headline_cells=_cells(BASE), grid="full")
    assert (table["grid"] == "full").all()
    assert "not tested" not in set(collect.claim_summary(table)["status"])
    text = section.markdown(table)
    assert "headline's own grid" in text and "reduced grid" not in text and "reduced default gives" not in text
    with pytest.raises(ValueError, match="grid"):
        collect.collect(_result(DEFAULT, BASE), [], grid="half")


def test_a_verdict_change_is_fragile_only_beyond_what_reseeding_produces():
    alt = _result(_alt("split", "split.test_frac", 0.3), _rows(C1="MIXED", C3="HOLDS", V2="INCONCLUSIVE"),
                  {"C1": 0.2, "C3": 0.2, "V2": 0.2})
    # root_seed: C1 is MIXED too (the same verdict change); split.seed moves V2's estimate further
    reseeds = [_result(_reseed("root_seed", 1, 0), _rows(C1="MIXED"), {"C1": 0.05}),
               _result(_reseed("split.seed", 1, 1), BASE, {"V2": -0.5})]
    table = collect.collect(_result(DEFAULT, BASE), [*reseeds, alt])
    rows = table[table["kind"] == "choice"].set_index("claim_id")
    assert rows.loc["C1", "assessment"] == "within reseeding variation"  # same verdict under a reseed
    assert rows.loc["V2", "assessment"] == "within reseeding variation"  # a reseed moved the estimate more
    assert rows.loc["C3", "assessment"] == "fragile"  # no reseed changes C3 at all
    assert rows.loc["C3", "class_change"] == "FAILS→HOLDS" and rows.loc["C3", "estimate_change"] == pytest.approx(0.2)
    summary = collect.claim_summary(table).set_index("claim_id")
    assert summary.loc["C3", "status"] == "fragile" and summary.loc["C1", "status"] == "within reseeding variation"
    assert summary.loc["C1", "reseed_verdicts"] == "root_seed = 1 → MIXED; split.seed = 1 → HOLDS"
    assert summary.loc["V2", "reseed_estimate_change"] == pytest.approx(-0.5)
    assert summary.loc["V2", "max_estimate_change"] == pytest.approx(0.2)
    reseed_rows = table[table["kind"] == "reseed"]
    assert set(reseed_rows["assessment"]) <= {f"reseed: {o}" for o in collect.OUTCOMES} | {"changes no cell"}
    text = section.markdown(table)
    assert "**Fragile: C3 (paper reading) FAILS** changes under split = 0.3 → HOLDS" in text
    assert "2 reseeded defaults" in text and "within reseeding variation" in text
    # without the reseeds the same change of C1 is fragile
    bare = collect.claim_summary(collect.collect(_result(DEFAULT, BASE), [alt])).set_index("claim_id")
    assert bare.loc["C1", "status"] == "fragile"


def test_the_fragility_summary_keeps_estimate_informative_cells_and_verdict_class_apart():
    weaker = [(s, c, r, "MIXED" if c == "C1" else v, 1 if c == "C1" else n) for s, c, r, v, n in BASE]
    table = collect.collect(_result(DEFAULT, BASE), [
        _result(_alt("a", "x.a", 1), weaker, {"C1": -0.3}),
        _result(_alt("b", "x.b", 2), _rows(C1="FAILS"), {"C1": 0.7})])
    s = collect.claim_summary(table).set_index("claim_id").loc["C1"]
    assert s["max_estimate_change"] == pytest.approx(0.7)
    assert s["max_informative_loss"] == 3  # 4 -> 1 informative cells under a
    assert s["class_changes"] == "HOLDS→MIXED (a = 1); HOLDS→FAILS (b = 2)"


def test_robust_needs_an_alternative_that_reaches_the_claim():
    # x changes only C1's cells; y's run reran no job (its key is read by nothing in the grid)
    table = collect.collect(_result(DEFAULT, BASE), [
        _result(_alt("x", "a.b", 1), BASE, {"C1": 0.1}),
        _result(_alt("y", "c.d", 2), BASE, reads_no_key=True)])
    rows = table.set_index(["choice", "claim_id"])
    assert rows.loc[("x", "V2"), "assessment"] == "changes no cell" and rows.loc[("x", "V2"), "n_cells_changed"] == 0
    assert rows.loc[("y", "C1"), "assessment"] == "reads no key"
    summary = collect.claim_summary(table).set_index("claim_id")
    assert summary.loc["C1", "status"] == "robust" and summary.loc["C1", "n_reaching"] == 1
    assert summary.loc["V2", "status"] == "not reached" and summary.loc["V2", "n_alternatives"] == 1  # y not counted
    text = section.markdown(table)
    assert "reran no job" in text and "`y=2`" in text
    assert "no alternative changes any of their cells" in text and "V2 HOLDS" in text
    m = figure.matrix(table)
    assert m.loc["voting V2 (HOLDS)", "x = 1"] == "changes no cell" and m.loc["wddp C1 [paper] (HOLDS)", "y = 2"] == "reads no key"


def test_a_nested_run_that_started_no_job_reads_no_key(tmp_path):
    from mpdp.multiverse import universe

    # a seeded universe redraws the claims figures (reports/ is not copied) and runs the target rule
    out = ("Building DAG of jobs...\n[Fri Nov 27 22:37:36 2026]\nlocalrule claims_forest:\n    input: "
           "data/results/claims/cells.parquet\n    output: reports/figures/forest_ls\n    jobid: 29\n\n"
           "localrule claims:\n    input: data/results/claims/cells.parquet, reports/figures/forest_ls\n    jobid: 0\n")
    assert universe.jobs_run(out) == 0
    ran = out + ("rule train_job:\n    input: data/processed/x.npy\n    output: data/results/wddp/runs/a.parquet\n"
                 "localrule optimum:\n    output: reports/x.png, data/results/wddp/optimum/a.npz\n")
    assert universe.jobs_run(ran) == 2


def test_specification_curves_sort_every_universe_and_mark_the_baselines(tmp_path):
    reseed = _result(_reseed("root_seed", 1, 0), BASE, {"C1": 0.4})
    table = collect.collect(_result(DEFAULT, BASE), [reseed, _result(_alt("x", "a.b", 1), BASE, {"C1": -0.6})],
                            headline=_verdicts(BASE), headline_cells=_cells(BASE, {"C1": 0.1}))
    pts = curves.points(table)
    c1 = pts[("wddp", "C1", "paper")]
    assert c1["kind"].tolist() == ["choice", "default", "headline", "reseed"]
    assert c1["estimate"].is_monotonic_increasing and c1["estimate"].iloc[0] == pytest.approx(1.4)
    assert len(pts) == len(BASE)
    fig = curves.draw(table)
    assert check.check(fig).problems == []
    assert sum(ax.get_visible() for ax in fig.axes) == len(BASE)
    # a claim without an informative cell anywhere gets a readable panel saying so (long titles not cut)
    long = [("wddp", "C6b", "per_round", "UNINFORMATIVE", 0), *BASE]
    dead = _cells(long).assign(informative=lambda c: c["claim_id"] != "C6b")
    bare = collect.collect(Result(DEFAULT, _verdicts(long), cells=dead),
                           [Result(_alt("x", "a.b", 1), _verdicts(long), cells=dead)])
    assert curves.points(bare)[("wddp", "C6b", "per_round")].empty
    fig = curves.draw(bare)
    assert check.check(fig).problems == []
    assert any("no informative cell" in t.get_text() for ax in fig.axes for t in ax.texts)
    assert check.check(figure.draw(table)).problems == []
    curves.write(table, tmp_path / "c.png", tmp_path / "c.pdf")
    assert (tmp_path / "c.png").stat().st_size > 0 and (tmp_path / "c.pdf").stat().st_size > 0


def test_a_failed_alternative_has_no_estimate():
    table = collect.collect(_result(DEFAULT, BASE), [Result(_alt("x", "a.b", 1), None, "boom")])
    assert table["estimate"].isna().all() and table["default_estimate"].notna().all()
    assert table["n_cells_changed"].isna().all() and set(table["assessment"]) == {"failed"}
    assert all(math.isnan(x) for x in collect.claim_summary(table)["max_estimate_change"])


def test_reseeded_defaults_are_universes_that_set_their_seed_keys():
    cfg = {"root_seed": 0, "split": {"seed": 0, "test_frac": 0.2}, "wddp": {"lambda": 1e-3},
           "multiverse": {"base": {}, "reseeds": [{"root_seed": 1}, {"split.seed": 1}],
                          "choices": [{"choice": "lam", "key": "wddp.lambda", "values": [0.0], "source": "E7"}]}}
    us = spec.universes(cfg)
    assert [u.id for u in us] == ["default", "reseed=root_seed_1", "reseed=split.seed_1", "lam=0.0"]
    assert [u.kind for u in us] == ["default", "reseed", "reseed", "choice"]
    assert spec.universe_config(cfg, us[1])["root_seed"] == 1
    assert spec.universe_config(cfg, us[2])["split"] == {"seed": 1, "test_frac": 0.2}
    assert us[2].value_label == "split.seed = 1"
    assert spec.repeated_defaults({**cfg, "multiverse": {**cfg["multiverse"], "reseeds": [{"root_seed": 0}]}})[0] \
        .startswith("multiverse.reseeds.0")


def test_an_alternative_equal_to_the_default_is_not_run_but_listed():
    """Not a planning refusal (a user setting that key in the main config must still build): the
    universe is left out of the runs with a warning and listed in the table, never counted."""
    cfg = {"root_seed": 0, "split": {"seed": 0}, "wddp": {"lambda": 1e-3},
           "multiverse": {"base": {}, "reseeds": [{"root_seed": 0}],
                          "choices": [{"choice": "lam", "key": "wddp.lambda", "values": [1e-3, 0.0], "source": "E7"}]}}
    assert [u.id for u in spec.to_run(cfg)] == ["default", "lam=0.0"]
    warned = spec.repeated_defaults(cfg)
    assert len(warned) == 2 and all("not run" in w for w in warned)
    same = [u for u in spec.universes(cfg) if spec.repeats_default(cfg, u)]
    table = collect.collect(_result(DEFAULT, BASE), [
        *(Result(u, None, "equals the default: not run", skipped=True) for u in same),
        _result(_alt("lam", "wddp.lambda", 0.0), BASE, {"C1": 0.1})])
    skipped = table[table["outcome"] == "skipped"]
    assert set(skipped["universe"]) == {"reseed=root_seed_0", "lam=0.001"}
    assert set(skipped["assessment"]) == {"equals the default"}
    summary = collect.claim_summary(table).set_index("claim_id")
    assert summary.loc["C1", "status"] == "robust" and summary.loc["C1", "n_alternatives"] == 1
    assert summary.loc["C1", "reseed_verdicts"] == ""
    text = section.markdown(table)
    assert "equal to the default, so not run" in text and "`lam=0.001`" in text
    assert "Each of 1 alternative value" in text and "No reseeded default ran" in text


def test_joint_variation_is_a_random_sample_of_combinations_of_two_or_more_choices():
    cfg = {"root_seed": 0, "split": {"seed": 0, "test_frac": 0.2},
           "preprocess": {"intercept": True, "bank_keep_duration": True, "breast_cancer_missing": "median"},
           "multiverse": {"base": {}, "reseeds": [],
                          "choices": [{"choice": "norm", "key": "preprocess.intercept", "values": [False], "source": "a"},
                                      {"choice": "split", "key": "split.test_frac", "values": [0.3, 0.1], "source": "b"},
                                      {"choice": "bc", "key": "preprocess.breast_cancer_missing", "values": ["drop"],
                                       "source": "c"}],
                          "joint": {"choices": ["norm", "split", "bc"], "sample": 3, "seed": 0}}}
    combos, total = spec.joint_sample(cfg)
    # 2 × 3 × 2 combinations, less the default and the 4 that vary one choice (the one-at-a-time universes)
    assert total == 12 - 1 - 4 == 7
    assert len(combos) == 3 and len({tuple(sorted(c.items())) for c in combos}) == 3
    assert all(len(c) >= 2 for c in combos)
    assert combos == spec.joint_sample(cfg)[0]  # reproducible from the seed
    other = spec.joint_sample({**cfg, "multiverse": {**cfg["multiverse"], "joint": {**cfg["multiverse"]["joint"],
                                                                                     "seed": 5, "sample": 7}}})
    assert len(other[0]) == 7  # the whole set when the sample asks for all of it
    joint = [u for u in spec.universes(cfg) if u.kind == "joint"]
    assert [u.settings for u in joint] == combos
    assert "a random sample of 3 of the 7 combinations" in joint[0].source
    ucfg = spec.universe_config(cfg, joint[0])
    assert all(spec.get(ucfg, k) == v for k, v in combos[0].items())
    # a name the choices do not declare (a config that replaced the list) is left out with a warning
    bad = {**cfg, "multiverse": {**cfg["multiverse"], "joint": {"choices": ["norm", "nope"], "sample": 2}}}
    assert not any(u.kind == "joint" for u in spec.universes(bad))  # one choice left: nothing joint
    assert "'nope'" in spec.joint_warnings(bad)[0] and spec.joint_warnings(cfg) == []
    assert spec.joint_warnings(bad)[0] in spec.planning_warnings(bad)
    # a joint universe counts as an alternative in the summary
    table = collect.collect(_result(DEFAULT, BASE), [_result(joint[0], _rows(C3="HOLDS"), {"C3": 0.3})])
    assert (table["kind"] == "joint").all()
    assert collect.claim_summary(table).set_index("claim_id").loc["C3", "status"] == "fragile"
    assert "Jointly: joint variation of norm, split, bc" in section.markdown(table)
