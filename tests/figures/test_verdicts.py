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
         "n_for": n_for, "n_against": n_against, "where": "against: d5 (x=1)" if n_against else ""}
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
    assert text.startswith("**Paper S.** Of its five claims (as printed), one fails, one holds only in part, "
                           "one is underpowered, ")
    # a MIXED claim is not listed under "Fails": it holds in part, with both counts
    assert "Fails: method C beats the baseline (fails in 1 of 5 cells)." in text
    assert "Holds in part: method B beats the baseline (4 cells for, 1 against)" in text
    assert "Holds: method A beats the baseline (on 2 of 5 cells)" in text and "(all settings)" not in text
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


def _row(verdict: str, n_cells: int, n_for: int, n_against: int, **extra) -> pd.Series:
    return pd.Series({"verdict": verdict, "n_cells": n_cells, "n_informative": n_for + n_against,
                      "n_for": n_for, "n_against": n_against, **extra})


def test_each_cell_shows_its_support_and_the_reason_of_a_verdict_that_decides_nothing(frame):
    """Issue 46: a HOLDS on one cell of 120 reads differently from one on 56 of 56; MIXED shows both
    sides; a verdict that decides nothing shows the claims engine's ``reason`` when there is one."""
    assert verdicts.support(_row("HOLDS", 120, 1, 0)) == "1/120 cells for"
    assert verdicts.support(_row("HOLDS", 1, 1, 0)) == "1/1 cell for"
    assert verdicts.support(_row("FAILS", 12, 0, 3)) == "3/12 cells against"
    assert verdicts.support(_row("MIXED", 120, 11, 2)) == "in part: 11 for, 2 against"
    assert verdicts.support(_row("UNINFORMATIVE", 8, 0, 0)) == "at chance in 8/8"
    assert verdicts.support(_row("INCONCLUSIVE", 8, 0, 0, reason="reference unconverged")) == "reference unconverged"
    with_reason = frame.assign(reason=["", "", "", "underpowered", "at chance (Alg. 1)", *[""] * 5])
    page = verdicts.verdict_matrix_html(with_reason, {"s": "Paper S"}, lambda s, r, c: f"claim-{s}-{c}")
    shown = re.findall(r'<b>(\w+)</b><span>(\w+)</span><small class="mpdp-support">([^<]*)</small>', page)
    assert shown[:5] == [("A", "HOLDS", "2/5 cells for"), ("B", "MIXED", "in part: 4 for, 1 against"),
                         ("C", "FAILS", "1/5 cells against"), ("D", "UNDERPOWERED", "underpowered"),
                         ("E", "UNINFORMATIVE", "at chance (Alg. 1)")]
    # without the column (an older claims engine) the counts stand in for the reason
    page = verdicts.verdict_matrix_html(frame, {"s": "Paper S"}, lambda s, r, c: f"claim-{s}-{c}")
    assert "at chance in 5/5" in page and "no informative cell of 5" in page
    # a verdict the report does not know (a newer engine's) still gets a cell and a legend entry
    page = verdicts.verdict_matrix_html(frame.assign(verdict="UNDERPOWERED"), {"s": "Paper S"},
                                        lambda s, r, c: f"claim-{s}-{c}")
    assert 'v-UNDERPOWERED"><span>UNDERPOWERED</span>' in page and ".v-UNDERPOWERED" in sections.REPORT_CSS


@pytest.mark.parametrize(("reading", "name"), [("paper", "as printed"), ("equal_privacy", "equal privacy"),
                                               ("per_round", "per-round privacy"), ("end_to_end", "end to end"),
                                               ("final_run", "final run only"), ("-", ""), ("new_one", "new one")])
def test_readings_have_plain_names_in_the_matrix(reading, name):
    frame = _verdicts([(reading, "A", "HOLDS", 1, 0)])
    page = verdicts.verdict_matrix_html(frame, {"s": "Paper S"}, lambda s, r, c: "x")
    assert verdicts.reading_label(reading) == name
    assert re.findall(r'<span class="mpdp-reading">([^<]*)</span>', page) == ([name] if name else [])


def test_the_matrix_links_each_cell_to_its_forest_plot(frame):
    page = verdicts.verdict_matrix_html(frame, {"s": "Paper S"}, lambda s, r, c: f"claim-{s}-{c}",
                                        lambda s, r, c: f"fig-forest_{s}_{r}_{c}" if c != "E" else None)
    links = re.findall(r'<a class="mpdp-forest" href="#([\w-]+)"', page)
    assert len(links) == 8 and links[0] == "fig-forest_s_paper_A" and "fig-forest_s_paper_E" not in links


def test_every_paper_gets_a_why_sentence_from_its_verdicts(frame):
    """Issue 46: a "why" per paper, also for the papers whose study computes no fact of its own."""
    assert verdicts.why(frame) == "Why: the claim that method C beats the baseline fails in 1 of 5 cells, e.g. d5 (x=1)."
    holds = _verdicts([("paper", "A", "HOLDS", 5, 0), ("paper", "B", "HOLDS", 1, 0)])
    assert verdicts.why(holds) == ("Why: no cell goes against a claim that holds; the thinnest, method B beats the "
                                   "baseline, rests on 1 of 5 cells.")
    undecided = _verdicts([("paper", c, "UNINFORMATIVE", 0, 0) for c in "ABC"]).assign(reason="at chance")
    assert verdicts.why(undecided) == "Why: three of its three claims decide nothing, most often (three): at chance."
    # without the engine's reason, what the verdict means, counted over the claims (not per support)
    mixed = _verdicts([("paper", c, "UNINFORMATIVE", 0, 0) for c in "AB"] + [("paper", "C", "UNDERPOWERED", 0, 0)])
    assert verdicts.why(mixed) == ("Why: three of its three claims decide nothing, most often (two): a "
                                   "method the claim needs is at chance, or its reference has not converged.")
    assert verdicts.conclusion(holds, "Paper S").endswith("rests on 1 of 5 cells.")
    # facts of the study replace the generic sentence
    assert "Why:" not in verdicts.conclusion(holds, "Paper S", ["It spends 36× the ε it claims."])


def test_conclusions_agree_in_number_and_name_a_repeated_claim_once():
    one = _verdicts([("paper", "A", "VACUOUS", 0, 0), ("paper", "B", "UNDERPOWERED", 0, 0),
                     ("paper", "C", "HOLDS", 1, 0), ("paper", "D", "HOLDS", 2, 0)])
    one.loc[one["claim_id"] == "D", "claim"] = one.loc[one["claim_id"] == "C", "claim"].iloc[0]
    text = verdicts.conclusion(one, "Paper S")
    assert "one is vacuous, one is underpowered, two hold" in text
    assert "one are" not in text and "one stay " not in text
    assert text.count("method C beats the baseline") == 1 and "(C, D)" in text


def test_a_paper_name_the_claim_repeats_is_said_once():
    frame = _verdicts([("-", "XP-WDDP-lit", "FAILS", 0, 2)]).assign(
        claim="WD-DP (S-000): WD-DP Alg. 1 beats Jayaraman's gradient perturbation (local)")
    text = verdicts.conclusion(frame, "Benchmark")
    assert "WD-DP: WD-DP" not in text and "Fails: WD-DP Alg. 1 beats Jayaraman's gradient perturbation" in text
    other = frame.assign(claim="Zhang–Zhu (S-001): DVP has lower misclassification than PVP")
    assert "Zhang–Zhu: DVP has lower misclassification" in verdicts.conclusion(other, "Benchmark")


def test_a_claim_that_holds_on_its_only_cell_says_so():
    """Issue 46: Z1 and LS1-t hold on 1 of 1 cell; the conclusion says how thin that is."""
    one = _verdicts([("-", "Z1", "HOLDS", 1, 0)]).assign(n_cells=1, n_informative=1)
    assert "Holds: method Z1 beats the baseline (on 1 of 1 cell)." in verdicts.conclusion(one, "Paper S")
