"""Collection of the multiverse (issue 38): each alternative's verdicts against the default's,
on hand-built verdict frames in the claims contract's columns."""

import pandas as pd
import pytest

from mpdp.errors import InputDataError
from mpdp.multiverse import collect, figure, section
from mpdp.multiverse.collect import Result, outcome
from mpdp.multiverse.spec import Universe

DEFAULT = Universe(None, None, None, "defaults")


def _alt(choice: str, key: str, value) -> Universe:
    return Universe(choice, key, value, f"source of {choice}", 0)


def _verdicts(rows: list[tuple[str, str, str, str, int]]) -> pd.DataFrame:
    """(study, claim_id, reading, verdict, n_informative) -> a verdicts table."""
    return pd.DataFrame([{"study": s, "claim_id": c, "reading": r, "claim": f"text of {c}", "source": "seed",
                          "verdict": v, "n_cells": 4, "n_informative": n, "n_for": 0, "n_against": 0,
                          "where": ""} for s, c, r, v, n in rows])


def _cells(rows: list[tuple[str, str, str, str, int]], shift: dict[str, float] | None = None) -> pd.DataFrame:
    """Two informative cells per claim (estimates 1 and 3 plus ``shift[claim_id]``, intervals ±0.5):
    a cells table in the claims contract's columns."""
    shift = shift or {}
    return pd.DataFrame([{"study": s, "claim_id": c, "reading": r, "cell": f"cell{i}", "dataset": "ds",
                          "informative": True, "estimate": e + shift.get(c, 0.0), "lo": e + shift.get(c, 0.0) - 0.5,
                          "hi": e + shift.get(c, 0.0) + 0.5, "cell_verdict": "for"}
                         for s, c, r, _, _ in rows for i, e in enumerate((1.0, 3.0))])


def _result(universe: Universe, rows, shift: dict[str, float] | None = None, **kw) -> Result:
    """A universe's verdicts and cells (every claim's cells moved by ``shift`` where given)."""
    return Result(universe, _verdicts(rows), cells=_cells(rows, shift), **kw)


BASE = [("wddp", "C1", "paper", "HOLDS", 4), ("wddp", "C3", "paper", "FAILS", 4),
        ("admm", "Z1", "-", "INCONCLUSIVE", 3), ("voting", "V2", "-", "HOLDS", 2)]


@pytest.mark.parametrize(("default", "alt", "expected"), [
    ("HOLDS", "HOLDS", "holds"), ("FAILS", "FAILS", "holds"), ("MIXED", "MIXED", "holds"),
    ("HOLDS", "FAILS", "flips"), ("FAILS", "MIXED", "flips"), ("VACUOUS", "HOLDS", "flips"),
    ("HOLDS", "INCONCLUSIVE", "weakens"), ("FAILS", "UNINFORMATIVE", "uninformative"),
    ("INCONCLUSIVE", "UNINFORMATIVE", "uninformative"), ("INCONCLUSIVE", "HOLDS", "resolves"),
    ("UNINFORMATIVE", "INCONCLUSIVE", "resolves"), ("INCONCLUSIVE", "INCONCLUSIVE", "unchanged"),
    ("UNINFORMATIVE", "UNINFORMATIVE", "unchanged"), ("HOLDS", None, "failed"),
])
def test_outcome(default, alt, expected):
    assert outcome(default, alt) == expected
    assert expected in collect.OUTCOMES and expected in figure.STYLE


def test_identical_verdicts_leave_every_claim_unchanged():
    table = collect.collect(Result(DEFAULT, _verdicts(BASE)), [Result(_alt("x", "a.b", 1), _verdicts(BASE))])
    assert len(table) == len(BASE)
    assert (table["verdict"] == table["default_verdict"]).all()
    assert set(table["outcome"]) == {"holds", "unchanged"}
    assert (collect.claim_summary(table)["status"] != "fragile").all()


def test_flips_weakening_and_undefined_claims():
    alt = [("wddp", "C1", "paper", "INCONCLUSIVE", 1), ("wddp", "C3", "paper", "HOLDS", 4),
           ("admm", "Z1", "-", "HOLDS", 3), ("voting", "V9", "-", "HOLDS", 2)]  # V2 undefined, V9 new
    table = collect.collect(Result(DEFAULT, _verdicts(BASE)), [Result(_alt("lam", "wddp.lambda", 0.0), _verdicts(alt))])
    got = {(r.claim_id, r.outcome) for r in table.itertuples()}
    assert got == {("C1", "weakens"), ("C3", "flips"), ("Z1", "resolves"), ("V2", "uninformative"),
                   ("V9", "resolves")}  # absent at the default: UNINFORMATIVE there
    v2 = table.set_index("claim_id").loc["V2"]
    assert v2["verdict"] == "UNINFORMATIVE" and v2["n_informative"] == 0 and "undefined" in v2["note"]
    assert (table["choice"] == "lam").all() and (table["value"] == "0.0").all()
    assert table.set_index("claim_id").loc["C3", "default_n_informative"] == 4


def test_a_failed_universe_gives_failed_rows_not_a_crash():
    results = [Result(DEFAULT, _verdicts(BASE)), Result(_alt("x", "a.b", 1), None, "boom (log: l)"),
               Result(_alt("y", "c.d", 2), _verdicts(BASE))]
    table = collect.collect_results(results)
    failed = table[table["choice"] == "x"]
    assert len(failed) == len(BASE) and (failed["outcome"] == "failed").all()
    assert failed["verdict"].isna().all() and failed["note"].str.contains("boom").all()
    summary = collect.claim_summary(table).set_index("claim_id")
    assert summary.loc["C1", "status"] == "untested" and summary.loc["Z1", "status"] == "undecided"
    with pytest.raises(InputDataError, match="default run failed"):
        collect.collect_results([Result(DEFAULT, None, "broken"), results[2]])


def test_summary_and_report_name_each_fragile_verdict_and_its_choice():
    flip = [("wddp", "C1", "paper", "HOLDS", 4), ("wddp", "C3", "paper", "HOLDS", 4),
            ("admm", "Z1", "-", "INCONCLUSIVE", 3), ("voting", "V2", "-", "HOLDS", 2)]
    results = [_result(_alt("split", "split.test_frac", 0.3), flip, {"C1": 0.1, "C3": 0.2, "V2": 0.1}),
               _result(_alt("theta0", "wddp.init_std", 0.0), BASE)]
    table = collect.collect(_result(DEFAULT, BASE), results)
    summary = collect.claim_summary(table).set_index("claim_id")
    assert summary.loc["C3", "status"] == "fragile" and summary.loc["C3", "changed_by"] == "split = 0.3 → HOLDS"
    assert summary.loc["C1", "status"] == "robust" and summary.loc["V2", "status"] == "robust"
    text = section.markdown(table)
    assert "**Fragile: C3 (paper reading) FAILS** changes under split = 0.3 → HOLDS" in text
    assert "Robust to every alternative (1): C1 (paper reading) HOLDS (reached by 1)" in text
    assert "2 alternative values of 2 reconstructed" in text
    note = section.fragile_note(table, "wddp")
    assert "C3 (paper reading) FAILS (changes under split = 0.3 → HOLDS)" in note
    assert section.fragile_note(table, "voting") == "" and section.fragile_note(None, "wddp") == ""
    # one paragraph per study of the table, named as the caller (the registry) names it, in its order; a
    # study the caller does not name keeps its paragraph under its key (none is dropped: issue 57)
    named = section.paper_paragraphs(table, {"voting": "Hamm et al.", "wddp": "Kang et al."})
    assert [p for p, _ in named] == ["Hamm et al.", "Kang et al.", "admm"]
    assert [p for p, _ in section.paper_paragraphs(table)] == ["wddp", "admm", "voting"]
    assert "**Kang and others.**" in section.markdown(table, {"wddp": "kang and others"})


def test_figure_has_one_cell_per_claim_and_alternative(tmp_path):
    results = [Result(_alt("split", "split.test_frac", 0.3), _verdicts(BASE[:3])),
               Result(_alt("theta0", "wddp.init_std", 0.0), _verdicts(BASE))]
    table = collect.collect(Result(DEFAULT, _verdicts(BASE)), results)
    m = figure.matrix(table)
    assert m.shape == (len(BASE), 2)
    assert m.loc["voting V2 (HOLDS)", "split = 0.3"] == "uninformative"
    assert m.loc["wddp C3 [paper] (FAILS)", "theta0 = 0.0"] == "holds"
    figure.write(table, tmp_path / "m.png", tmp_path / "m.pdf")
    assert (tmp_path / "m.png").stat().st_size > 0 and (tmp_path / "m.pdf").stat().st_size > 0


def test_section_reads_only_an_existing_table(tmp_path):
    assert section.read(tmp_path / "absent.parquet") is None
    table = collect.collect(Result(DEFAULT, _verdicts(BASE)), [Result(_alt("x", "a.b", 1), _verdicts(BASE))])
    table.to_parquet(tmp_path / "m.parquet")
    assert section.read(tmp_path / "m.parquet").shape == table.shape
    table.drop(columns="outcome").to_parquet(tmp_path / "bad.parquet")
    with pytest.raises(InputDataError, match="lacks columns"):
        section.read(tmp_path / "bad.parquet")


def test_a_failed_universe_names_its_error_not_a_warning():
    from mpdp.multiverse import universe

    tail = ("mpdp: WARNING: wddp.m_grid: m = 4 is not in wddp.m_grid\n"
            "KeyError in file workflow/rules/multiverse.smk, line 31:\n'multiverse'\n")
    assert universe._reason(tail, 1).startswith("KeyError in file")
    assert universe._reason("mpdp: WARNING: only this\n", 2) == "snakemake exited with status 2"


def test_each_universes_warnings_reach_the_table_and_the_robustness_section():
    """Issue 47: a universe's planning warnings were discarded. They are read from its nested
    run's output into its status, carried by the table, and the section lists the default's once
    and each alternative's own."""
    from mpdp.multiverse.universe import planning_warnings

    output = ("Building DAG\nmpdp: WARNING: voting.M_grid: M = 30 dropped\n"
              "mpdp: WARNING: wddp.reps: 1 repetition\nmpdp: WARNING: voting.M_grid: M = 30 dropped\n")
    assert planning_warnings(output) == ["voting.M_grid: M = 30 dropped", "wddp.reps: 1 repetition"]
    results = [Result(DEFAULT, _verdicts(BASE), warnings=("voting.M_grid: M = 30 dropped",)),
               Result(_alt("x", "a.b", 1), _verdicts(BASE),
                      warnings=("voting.M_grid: M = 30 dropped", "wddp.reps: 1 repetition")),
               Result(_alt("y", "c.d", 2), _verdicts(BASE))]
    table = collect.collect_results(results)
    assert set(table["default_warnings"]) == {"voting.M_grid: M = 30 dropped"}
    assert set(table.loc[table["universe"] == "x=1", "warnings"]) == {
        "voting.M_grid: M = 30 dropped\nwddp.reps: 1 repetition"}
    text = section.markdown(table)
    assert "**Warnings of the runs**" in text
    assert "the default: voting.M_grid: M = 30 dropped" in text
    assert "`x=1`: wddp.reps: 1 repetition" in text and "`y=2`" not in text
    quiet = collect.collect_results([Result(DEFAULT, _verdicts(BASE)), results[2]])
    assert "Warnings of the runs" not in section.markdown(quiet)
