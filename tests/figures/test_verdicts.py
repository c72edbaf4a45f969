"""The report's first screen (issue 35): the verdict matrix read from the claims engine's
data/results/claims/verdicts.parquet, and the per-paper conclusions."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from mpdp.claims import tables
from mpdp.errors import InputDataError
from mpdp.report import scaffold, sections, verdicts


def _verdicts(rows: list[tuple[str, str, str, int, int]]) -> pd.DataFrame:
    """(reading, claim_id, verdict, n_for, n_against) rows as the claims engine's verdicts table."""
    return tables.verdicts_frame(pd.DataFrame([
        {"study": "s", "claim_id": cid, "reading": reading, "claim": f"Method {cid} beats the baseline (all settings).",
         "source": "seed, sec. 4", "verdict": verdict, "n_cells": 5, "n_informative": n_for + n_against,
         "n_for": n_for, "n_against": n_against, "where": "d5" if n_against else ""}
        for reading, cid, verdict, n_for, n_against in rows]))


@pytest.fixture
def section() -> scaffold.StudySection:
    return scaffold.StudySection("s", "Study S", "Paper S", claims_tables={"paper": pd.DataFrame(),
                                                                           "eq": pd.DataFrame()})


@pytest.fixture
def frame() -> pd.DataFrame:
    # B holds in four cells and fails in one: the engine calls it MIXED, never HOLDS
    paper = [("paper", "A", "HOLDS", 2, 0), ("paper", "B", "MIXED", 4, 1), ("paper", "C", "FAILS", 0, 1),
             ("paper", "D", "UNDERPOWERED", 0, 0), ("paper", "E", "UNINFORMATIVE", 0, 0)]
    return _verdicts(paper + [("eq", cid, "HOLDS", 1, 0) for cid in "ABCDE"])


def test_the_report_reads_the_engines_verdicts_and_refuses_a_damaged_file(frame, tmp_path):
    path = tmp_path / tables.VERDICTS_PATH
    path.parent.mkdir(parents=True)
    frame.to_parquet(path)
    back = tables.read_verdicts(path)
    page = verdicts.verdict_matrix_html(back[back["claim_id"].isin(["B", "C"]) & (back["reading"] == "paper")],
                                        {"s": "Paper S"}, lambda s, r, c: f"claim-{s}-{c.lower()}")
    assert re.findall(r'class="mpdp-vcell v-(\w+)" href="#([\w-]+)"', page) == [
        ("MIXED", "claim-s-b"), ("FAILS", "claim-s-c")]
    frame.drop(columns="where").to_parquet(path)
    with pytest.raises(InputDataError, match="claims"):
        tables.read_verdicts(path)
    path.write_bytes(b"not a parquet file")
    with pytest.raises(InputDataError):
        tables.read_verdicts(path)


def test_matrix_has_one_linked_coloured_cell_per_claim_and_reading(section, frame):
    page = verdicts.verdict_matrix_html(frame, {"s": "Paper S"},
                                        lambda s, r, c: section.claim_anchor(c, list(section.claims_tables).index(r)))
    assert page.startswith('<div id="verdicts">')
    cells = re.findall(r'<a class="mpdp-vcell v-(\w+)" href="#([\w-]+)"', page)
    assert len(cells) == len(frame) == 10
    assert cells[1] == ("MIXED", "claim-s-b") and cells[6] == ("HOLDS", "claim-s-eq-b")
    assert page.count("as printed") == 1 and "equal privacy" in page
    for verdict in verdicts.VERDICT_ORDER:  # every verdict has a legend entry and a colour
        assert f'v-{verdict}"><span>{verdict}</span>' in page
        assert f".v-{verdict} {{" in sections.REPORT_CSS


def test_conclusion_is_short_plain_and_counted_from_the_frame(frame):
    text = verdicts.conclusion(frame, "Paper S", ["It spends about 36× the ε it claims."])
    assert text.startswith("**Paper S.** Of its five claims (as printed), one fail, one hold only in part, ")
    assert "method B beats the baseline (fails on 1 of 5)" in text and "(all settings)" not in text
    assert "Equal privacy: five hold." in text and text.endswith("36× the ε it claims.")
    assert verdicts.word_count(text) <= verdicts.MAX_WORDS
    many = pd.concat([frame.assign(claim_id=frame["claim_id"] + str(i), claim="A rather long claim " * 6,
                                   verdict="FAILS") for i in range(10)])
    long = verdicts.conclusion(many, "Paper S")
    assert verdicts.word_count(long) <= verdicts.MAX_WORDS and "more." in long
    assert verdicts.round_for_reading(36.123) == "36" and verdicts.round_for_reading(0.4731) == "0.47"
    assert verdicts.round_for_reading(123456.0) == "120 000"


def test_counts_print_as_whole_numbers_and_tables_scroll_in_the_column():
    frame = pd.DataFrame({"records": [494000.0], "n": [123456], "small": [1.0e-7], "x": [0.12345],
                          "mean": [45990.3]})
    text = sections.html_table(frame)
    assert "494\u2009000" in text and "123\u2009456" in text and "45\u2009990" in text and "e+0" not in text
    assert "1.000e-07" in text and "0.1235" in text
    assert text.startswith('<div class="mpdp-scroll">') and "overflow-x: auto" in sections.REPORT_CSS


def test_the_conclusion_gives_the_reason_of_an_uninformative_verdict_not_a_blanket_one():
    # issue 42: Z5 is uninformative for an unconverged reference, not because its methods are at chance
    rows = _verdicts([("-", "Z5", "UNINFORMATIVE", 0, 0), ("-", "V1", "UNINFORMATIVE", 0, 0),
                      ("-", "Z1", "HOLDS", 2, 0)])
    rows["reason"] = ["reference unconverged", "at chance (hamm_soft)", ""]
    text = verdicts.conclusion(rows, "Paper S")
    assert "two cannot be judged (reference unconverged, at chance)" in text
    assert "methods at chance" not in text
    page = verdicts.verdict_matrix_html(rows, {"s": "Paper S"}, lambda s, r, c: c)
    assert "UNINFORMATIVE (reference unconverged)" in page


def test_the_cells_that_decided_a_verdict_include_those_with_no_effect():
    from mpdp.report import claims_view

    cells = tables.cells_frame(pd.DataFrame([
        {"study": "s", "claim_id": "A", "reading": "-", "cell": f"k={i}", "dataset": "d", "informative": True,
         "estimate": 0.0, "lo": -0.001, "hi": 0.001, "cell_verdict": v, "p_holm": 0.01}
        for i, v in enumerate(["for", "no_effect", "underpowered", "uninformative"])]))
    shown = claims_view.significant_cells(claims_view.ClaimsTables(pd.DataFrame(), cells), "s")
    assert list(shown["cell verdict"]) == ["for", "no_effect"]
