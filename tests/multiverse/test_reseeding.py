"""The reseeding check (issue 60 item 5, mpdp.multiverse.reseeding): the comparison of a reseeded
study's claims tables with the headline's, on small synthetic tables, and its reseeds and configs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from mpdp import config
from mpdp.errors import ConfigError, InputDataError
from mpdp.multiverse import reseeding, universe
from mpdp.pipeline import reseeding as reseeding_cli

ROOT = Path(__file__).resolve().parents[2]


def _verdicts(rows: list[tuple[str, str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame([{"study": s, "claim_id": c, "reading": r, "claim": f"claim {c}", "verdict": v}
                         for s, c, r, v in rows])


def _cells(rows: list[tuple[str, str, str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame([{"study": s, "claim_id": c, "reading": r, "cell": cell, "dataset": "bank", "cell_verdict": v}
                         for s, c, r, cell, v in rows])


#: the headline: two claim-readings of wddp (and a voting row the check of wddp must ignore)
HEADLINE = (
    _cells([("wddp", "C1", "eq", "e1", "for"), ("wddp", "C1", "eq", "e2", "against"),
            ("wddp", "C2", "paper", "e1", "for"), ("wddp", "C2", "paper", "e2", "for"),
            ("wddp", "C2", "paper", "e3", "for"), ("wddp", "C2", "paper", "e4", "no_effect"),
            ("wddp", "C2", "paper", "e5", "against"), ("wddp", "C2", "paper", "only_here", "for"),
            ("voting", "H1", "-", "e1", "for")]),
    _verdicts([("wddp", "C1", "eq", "MIXED"), ("wddp", "C2", "paper", "HOLDS"), ("voting", "H1", "-", "HOLDS")]),
)
#: a reseed that changes C1's class (its for cell becomes underpowered) and reverses one C2 cell
RESEED_A = (
    _cells([("wddp", "C1", "eq", "e1", "underpowered"), ("wddp", "C1", "eq", "e2", "against"),
            ("wddp", "C2", "paper", "e1", "against"), ("wddp", "C2", "paper", "e2", "for"),
            ("wddp", "C2", "paper", "e3", "uninformative"), ("wddp", "C2", "paper", "e4", "for"),
            ("wddp", "C2", "paper", "e5", "against"), ("wddp", "C2", "paper", "only_there", "against"),
            ("voting", "H1", "-", "e1", "against")]),
    _verdicts([("wddp", "C1", "eq", "FAILS"), ("wddp", "C2", "paper", "HOLDS"), ("voting", "H1", "-", "FAILS")]),
)


def test_sign_reversals_and_class_changes_are_counted():
    table = reseeding.compare("wddp", HEADLINE, {"root_seed = 1": RESEED_A, "split.seed = 1": HEADLINE})
    assert list(table.columns) == reseeding.COLUMNS
    assert set(table["study"]) == {"wddp"}  # the other study's rows are not compared
    a = table[table["reseed"] == "root_seed = 1"].set_index("claim_id")
    assert a.loc["C1", "headline_verdict"] == "MIXED" and a.loc["C1", "verdict"] == "FAILS"
    assert a.loc["C1", "class_changed"] and a.loc["C1", "class_change"] == "MIXED→FAILS"
    assert not a.loc["C2", "class_changed"] and a.loc["C2", "class_change"] == ""
    # C1: e1 for -> underpowered moves, e2 against in both: decided in both, no reversal
    assert a.loc["C1", ["n_cells_both", "n_decided_both", "n_reversed", "n_moved"]].tolist() == [2, 1, 0, 1]
    # C2: e1 for -> against reverses; e2 for in both; e3 for -> uninformative and e4 no_effect -> for move;
    # e5 against in both; the cells present in one build only are not compared
    assert a.loc["C2", ["n_cells_both", "n_decided_both", "n_reversed", "n_moved"]].tolist() == [5, 3, 1, 2]
    same = table[table["reseed"] == "split.seed = 1"]
    assert not same["class_changed"].any() and same["n_reversed"].sum() == 0 and same["n_moved"].sum() == 0
    s = reseeding.summary(table).set_index("reseed")
    assert s.loc["root_seed = 1", ["claim_readings", "class_changed", "cells_decided_both", "sign_reversals",
                                   "cells_moved"]].tolist() == [2, 1, 4, 1, 3]
    assert s.loc["root_seed = 1", "share_changed"] == 0.5 and s.loc["split.seed = 1", "share_changed"] == 0.0


def test_a_claim_reading_missing_in_one_build_counts_as_changed():
    cells, verdicts = RESEED_A
    dropped = (cells[cells["claim_id"] != "C2"], verdicts[verdicts["claim_id"] != "C2"])
    table = reseeding.compare("wddp", HEADLINE, {"r": dropped}).set_index("claim_id")
    assert table.loc["C2", "verdict"] == reseeding.NO_ROW and table.loc["C2", "class_changed"]
    assert table.loc["C2", ["n_cells_both", "n_reversed"]].tolist() == [0, 0]
    extra = (cells, pd.concat([_verdicts([("wddp", "A0", "-", "HOLDS")]), verdicts]))
    both = reseeding.compare("wddp", HEADLINE, {"r": extra})
    assert both["claim_id"].tolist() == ["C1", "C2", "A0"]  # the headline's order, then the reseed's own rows
    row = both.set_index("claim_id").loc["A0"]
    assert row["headline_verdict"] == reseeding.NO_ROW and row["class_changed"]


def test_the_markdown_table_shows_every_reseed_and_the_summary():
    text = reseeding.markdown(reseeding.compare("wddp", HEADLINE, {"root_seed = 1": RESEED_A, "split.seed = 1": HEADLINE}))
    lines = text.splitlines()
    assert lines[0] == ("| claim | reading | headline | root_seed = 1 | split.seed = 1 | class changed? "
                        "| sign reversals (root_seed = 1 / split.seed = 1) |")
    assert "| C1 | eq | MIXED | FAILS | MIXED | yes | 0 / 0 |" in lines
    assert "| C2 | paper | HOLDS | HOLDS | HOLDS | no | 1 / 0 |" in lines
    assert "| root_seed = 1 | 2 | 1 | 50% | 4 | 1 | 3 |" in lines


def _smoke(**multiverse) -> dict:
    raw = config.load(ROOT / "config" / "smoke.yaml")
    if multiverse:
        raw["multiverse"].update(multiverse)
    return config.validate(raw)


def test_the_reseeds_are_the_checks_own_and_differ_from_the_main_config():
    cfg = _smoke()
    assert [u.settings for u in reseeding.reseeds(cfg)] == [{"root_seed": 1, "split.seed": 1}]
    assert [u.id for u in reseeding.reseeds(cfg)] == ["reseed=root_seed_1_split.seed_1"]
    assert cfg["multiverse"]["reseeds"] == [{"root_seed": 1}, {"split.seed": 1}]  # the multiverse's baseline: apart
    without = {k: v for k, v in cfg.items() if k != "multiverse"}  # the schema's default reseeds
    assert [u.settings for u in reseeding.reseeds(without)] == [{"root_seed": 1, "split.seed": 1}]
    one = _smoke(check_reseeds=[{"root_seed": 0}, {"root_seed": 2, "split.seed": 3}])  # root_seed 0: the main's
    assert [u.settings for u in reseeding.reseeds(one)] == [{"root_seed": 2, "split.seed": 3}]
    with pytest.raises(ConfigError, match=r"'multiverse\.check_reseeds\.0\.wddp\.T'.*not a seed key"):
        reseeding.reseeds({**cfg, "multiverse": {**cfg["multiverse"], "check_reseeds": [{"wddp.T": 3}]}})


def test_the_report_states_the_share_and_the_reversals_beside_the_verdicts():
    table = reseeding.compare("wddp", HEADLINE, {"root_seed = 1, split.seed = 1": RESEED_A})
    note = reseeding.report_note(table, HEADLINE[1], "wddp")
    assert note.startswith("**Reseeding check**: rebuilt on the full grid with root_seed = 1, split.seed = 1, ")
    assert "1 of 2 claim-readings change class (50%): C1 (eq) MIXED→FAILS;" in note
    assert "**1 sign reversals** among the 4 cells decided in both builds, 3 cells moved" in note
    shown = reseeding.report_note(table, HEADLINE[1], "wddp", limit=0)
    assert "C1 (eq)" not in shown and "1 of 2 claim-readings change class (50%);" in shown
    # against another build (a headline verdict differs from the current one): said, with the command
    now = HEADLINE[1].assign(verdict=["FAILS", "HOLDS", "HOLDS"])
    assert reseeding.stale_readings(table, now, "wddp") == ["C1 (eq)"]
    stale = reseeding.report_note(table, now, "wddp")
    assert "made against another build" in stale and "python -m mpdp.pipeline.reseeding --study wddp" in stale
    assert "sign reversals" not in stale
    assert reseeding.report_note(None, now, "wddp").startswith("**Reseeding check**: not run for this build")


def test_the_report_reruns_when_a_check_table_appears(tmp_path):
    assert reseeding.tables_stamp(tmp_path, ["wddp", "voting"]) == ""
    path = tmp_path / reseeding.table_path("voting")
    path.parent.mkdir(parents=True)
    table = reseeding.compare("wddp", HEADLINE, {"a": RESEED_A})
    table.to_parquet(path)
    first = reseeding.tables_stamp(tmp_path, ["wddp", "voting"])
    assert first and reseeding.tables_stamp(tmp_path, ["wddp"]) == ""
    pd.testing.assert_frame_equal(reseeding.read(tmp_path, "voting"), table)
    table.iloc[:1].to_parquet(path)
    assert reseeding.tables_stamp(tmp_path, ["wddp", "voting"]) not in ("", first)
    assert reseeding.read(tmp_path, "wddp") is None
    table.drop(columns="n_reversed").to_parquet(path)
    with pytest.raises(InputDataError, match=r"lacks columns \['n_reversed'\].*--study voting"):
        reseeding.read(tmp_path, "voting")


def test_a_reseeded_run_is_the_main_config_on_its_full_grid_with_the_seed_set():
    cfg = _smoke(base={"wddp.reps": 5}, check_reseeds=[{"root_seed": 1}, {"split.seed": 1}])
    root, split = reseeding.reseeds(cfg)
    ucfg = reseeding.reseed_config(cfg, split)
    assert "multiverse" not in ucfg
    assert ucfg["split"] == {**cfg["split"], "seed": 1} and ucfg["root_seed"] == cfg["root_seed"]
    assert ucfg["wddp"] == cfg["wddp"] and cfg["wddp"]["reps"] != 5  # the main grid: multiverse.base is not applied
    assert reseeding.reseed_config(cfg, root)["root_seed"] == 1
    config.validate(ucfg)


def test_a_reseeded_run_builds_the_studys_own_claims_tables():
    cells, verdicts = reseeding.targets("voting")
    assert (cells, verdicts) == ("data/results/claims/by_study/voting/cells.parquet",
                                 "data/results/claims/by_study/voting/verdicts.parquet")
    assert universe.command(2, (cells, verdicts))[-2:] == [cells, verdicts]
    assert universe.command(2)[-2:] == list(universe.TARGETS)


def test_the_command_names_a_bad_study_in_one_line(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert reseeding_cli.main(["--study", "nosuch", "-n"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mpdp: unknown study 'nosuch'") and err.count("\n") == 1
    assert reseeding_cli.main(["--study", "wddp", "-n", "--configfile", "config/nosuch.yaml"]) == 2
    assert "config file config/nosuch.yaml does not exist" in capsys.readouterr().err
    with pytest.raises(ConfigError, match=r"study 'audit' has no claims under this config"):
        reseeding.check_study("audit", ["wddp", "voting"])
