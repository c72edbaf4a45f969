"""The report's first screen (issue 35): the verdict matrix, its one adapter from the per-study
claims tables, the switch to data/results/claims/verdicts.parquet, and the per-paper conclusions."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from mpdp.claims import COLUMNS
from mpdp.errors import InputDataError
from mpdp.report import scaffold, sections, verdicts


def _claims(rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    """(claim_id, dataset, verdict) rows as a claims table (:data:`mpdp.claims.COLUMNS`)."""
    return pd.DataFrame([
        {"claim_id": cid, "claim": f"Method {cid} beats the baseline (all settings).", "dataset": ds,
         "figures": "", "statistic": "diff", "estimate": 0.1, "ci_low": 0.05, "ci_high": 0.2,
         "n_reps": 0 if verdict == "INCONCLUSIVE" else 5, "margin": np.nan, "verdict": verdict, "note": ""}
        for cid, ds, verdict in rows])[COLUMNS]


@pytest.fixture
def section() -> scaffold.StudySection:
    claims = _claims([
        ("A", "d1", "PASS"), ("A", "d2", "PASS"),
        # a claim failing on one data set of five: never HOLDS, whatever the majority
        ("B", "d1", "PASS"), ("B", "d2", "PASS"), ("B", "d3", "PASS"), ("B", "d4", "PASS"), ("B", "d5", "FAIL"),
        ("C", "d1", "FAIL"), ("C", "d2", "UNINFORMATIVE"),
        ("D", "d1", "INCONCLUSIVE"), ("E", "d1", "UNINFORMATIVE"),
    ])
    other = claims.assign(verdict="PASS")
    return scaffold.StudySection("s", "Study S", "Paper S", claims_tables={"paper": claims, "eq": other})


def test_adapter_never_hides_a_failure_behind_a_majority(section):
    frame = verdicts.verdicts_from_claims_tables([section])
    assert list(frame.columns) == list(verdicts.VERDICT_COLUMNS)
    first = frame[frame["reading"] == "paper"].set_index("claim_id")
    assert first["verdict"].to_dict() == {"A": "HOLDS", "B": "MIXED", "C": "FAILS", "D": "INCONCLUSIVE",
                                          "E": "UNINFORMATIVE"}
    assert first.loc["B", ["n_cells", "n_for", "n_against"]].tolist() == [5, 4, 1]
    assert first.loc["B", "where"] == "fails on d5; holds on d1, d2, d3, d4"
    assert first.loc["C", "n_informative"] == 1 and first.loc["D", "n_informative"] == 0
    assert (frame[frame["reading"] == "eq"]["verdict"] == "HOLDS").all()
    not_run = scaffold.StudySection("o", "O", "Paper O", not_run="switched off")
    assert verdicts.verdicts_from_claims_tables([not_run]).empty


def test_verdicts_parquet_replaces_the_adapter_when_it_exists(section, tmp_path):
    path = tmp_path / "data" / "results" / "claims" / "verdicts.parquet"
    frame, source = verdicts.load_verdicts(path, [section])
    assert "claims table" in source and set(frame["claim_id"]) == set("ABCDE")
    hand = pd.DataFrame([
        {"study": "s", "claim_id": "Z1", "reading": "paper", "claim": "Z holds.", "source": "seed, sec. 4",
         "verdict": "VACUOUS", "n_cells": 3, "n_informative": 3, "n_for": 3, "n_against": 0, "where": "all"},
        {"study": "s", "claim_id": "Z2", "reading": "paper", "claim": "Z2 holds.", "source": "seed, sec. 5",
         "verdict": "FAILS", "n_cells": 2, "n_informative": 2, "n_for": 0, "n_against": 2, "where": "d1, d2"},
    ])
    path.parent.mkdir(parents=True)
    hand.to_parquet(path)
    frame, source = verdicts.load_verdicts(path, [section])
    assert "verdicts.parquet" in source and frame["claim_id"].tolist() == ["Z1", "Z2"]
    page = verdicts.verdict_matrix_html(frame, {"s": "Paper S"}, lambda s, r, c: f"claim-{s}-{c.lower()}")
    assert re.findall(r'class="mpdp-vcell v-(\w+)" href="#([\w-]+)"', page) == [
        ("VACUOUS", "claim-s-z1"), ("FAILS", "claim-s-z2")]
    hand.drop(columns="where").to_parquet(path)
    with pytest.raises(InputDataError, match="where.*snakemake --cores all claims"):
        verdicts.load_verdicts(path, [section])
    path.write_bytes(b"not a parquet file")
    with pytest.raises(InputDataError, match="cannot be read"):
        verdicts.load_verdicts(path, [section])


def test_matrix_has_one_linked_coloured_cell_per_claim_and_reading(section):
    frame = verdicts.verdicts_from_claims_tables([section])
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


def test_conclusion_is_short_plain_and_counted_from_the_frame(section):
    frame = verdicts.verdicts_from_claims_tables([section])
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
