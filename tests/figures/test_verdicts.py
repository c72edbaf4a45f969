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
    # fails in 1 of 1: a claim decided by one cell does not repeat its count
    assert "Fails: method C beats the baseline." in text
    assert ("Holds in part: method B beats the baseline (4 cells for, 1 against, 0 with no effect, of 5 cells that "
            "can decide)") in text
    assert "Holds: method A beats the baseline (in 2 of 2 cells that can decide)" in text
    assert "(all settings)" not in text
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
    assert "UNINFORMATIVE: none of its 5 cells can be judged: reference unconverged" in page
    assert "Hamm&#x27;s soft vote" in page and "hamm_soft" not in page  # display names, not raw ids


def test_the_cells_that_decided_a_verdict_include_those_with_no_effect():
    from mpdp.report import claims_view

    cells = tables.cells_frame(pd.DataFrame([
        {"study": "s", "claim_id": "A", "reading": "-", "cell": f"k={i}", "dataset": "d", "informative": True,
         "estimate": 0.0, "lo": -0.001, "hi": 0.001, "cell_verdict": v, "p_holm": 0.01}
        for i, v in enumerate(["for", "no_effect", "underpowered", "uninformative"])]))
    shown = claims_view.significant_cells(claims_view.ClaimsTables(pd.DataFrame(), cells), "s")
    assert list(shown["cell verdict"]) == ["for", "no effect"]
    assert '<td class="v-no_effect">no effect</td>' in sections.html_table(shown)


def _row(verdict: str, n_cells: int, n_for: int, n_against: int, **extra) -> pd.Series:
    return pd.Series({"verdict": verdict, "n_cells": n_cells, "n_informative": n_for + n_against,
                      "n_for": n_for, "n_against": n_against, **extra})


def test_each_verdict_says_what_it_is_made_of_in_plain_words():
    """Issue 59 / 55 part 6: the cells that can decide, those for, against, with no effect, those that
    need more repetitions and those that cannot be judged — never "0/3 cells against" for a FAILS made
    of no-effect cells."""
    holds = _row("HOLDS", 60, 18, 0, n_informative=59, n_underpowered=36, n_no_effect=0, n_uninformative=1)
    holds["n_against"] = 5  # (not a HOLDS the engine gives: the words say what the counts are)
    assert verdicts.support(holds).startswith("holds in 18 of 59 cells that can decide; 36 need more repetitions; "
                                              "1 cannot be judged")
    fails = _row("FAILS", 3, 0, 0, n_informative=3, n_no_effect=3)
    assert verdicts.support(fails) == "fails in 3 of 3 cells that can decide (0 against, 3 with no effect), holds in none"
    mixed = _row("MIXED", 12, 1, 4, n_informative=12, n_no_effect=7)
    assert verdicts.support(mixed) == ("holds in 1 of 12 cells that can decide, fails in 11 (4 against, 7 with no "
                                       "effect)")
    under = _row("UNDERPOWERED", 8, 0, 0, n_informative=6, n_underpowered=6, n_uninformative=2, reps_needed=72.0)
    assert verdicts.support(under) == ("no cell decides: 6 of 6 cells that can decide need more repetitions (about 72 "
                                       "each); 2 cannot be judged")
    stutter = _row("UNDERPOWERED", 1, 0, 0, reason="underpowered: 2 repetition(s), too few for an interval")
    assert "underpowered" not in verdicts.support(stutter).lower()
    assert verdicts.support(_row("UNINFORMATIVE", 8, 0, 0, reason="at chance (jayaraman, wddp)")) == (
        "none of its 8 cells can be judged: at chance (Jayaraman, WD-DP)")
    assert verdicts.composition_words(mixed) == "1 for, 4 against, 7 no effect"


def test_each_matrix_cell_shows_its_composition_as_a_bar_and_counts_missing_columns_from_the_cells(frame):
    """The matrix's bar: one segment per kind of cell, as wide as its count, with the count on hover;
    counts verdicts.parquet lacks (an older engine's n_uninformative, n_no_data) come from cells.parquet."""
    cells = tables.cells_frame(pd.DataFrame([
        {"study": "s", "claim_id": "B", "reading": "paper", "cell": f"k={i}", "dataset": "adult", "informative": True,
         "estimate": 0.0, "lo": -1.0, "hi": 1.0, "cell_verdict": v}
        for i, v in enumerate(["for", "for", "for", "for", "against", "uninformative", "no_data"])]))
    full = verdicts.with_composition(frame, cells)
    b = full[(full["claim_id"] == "B") & (full["reading"] == "paper")].iloc[0]
    assert (b["n_uninformative"], b["n_no_data"], b["hedge"]) == (1, 1, "")
    present = verdicts.with_composition(frame.assign(n_uninformative=7, n_no_data=0), cells)
    assert (present["n_uninformative"] == 7).all()  # the engine's column wins
    page = verdicts.verdict_matrix_html(full.assign(hedge=["", "for most values of α", *[""] * 8]),
                                        {"s": "Paper S"}, lambda s, r, c: f"claim-{s}-{c}")
    bar = re.search(r'<b>B<sup[^>]*>\*</sup></b><span>MIXED</span><span class="mpdp-comp"[^>]*>(.*?)</span>', page)
    assert bar, page
    assert re.findall(r'class="c-(\w+)" style="flex-grow:(\d+)" title="([^"]*)"', bar[1]) == [
        ("for", "4", "4 for"), ("against", "1", "1 against"), ("uninformative", "1", "1 uninformative")]
    assert "the paper: “for most values of α”" in page
    assert page.count('class="mpdp-comp"') == len(frame)
    # the legend states the engine's counting rules (docs/claims.md "Verdicts")
    assert "MIXED</span></span> cells for the claim, and cells against it or with no effect" in page
    assert "FAILS</span></span> cells against the claim or with no effect, none for it" in page
    assert "HOLDS</span></span> cells for the claim, none against it or with no effect" in page
    # a verdict the report does not know (a newer engine's) still gets a cell and a legend entry
    page = verdicts.verdict_matrix_html(frame.assign(verdict="NEWCLASS"), {"s": "Paper S"},
                                        lambda s, r, c: f"claim-{s}-{c}")
    assert 'v-NEWCLASS"><span>NEWCLASS</span>' in page


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
    assert verdicts.why(frame) == ("Why: the claim that method C beats the baseline fails in 1 of 1 cell that can "
                                   "decide, e.g. d5 (x=1).")
    holds = _verdicts([("paper", "A", "HOLDS", 5, 0), ("paper", "B", "HOLDS", 1, 0)])
    assert verdicts.why(holds) == ("Why: no cell goes against a claim that holds; the thinnest, method B beats the "
                                   "baseline, rests on 1 of 1 cell that can decide.")
    undecided = _verdicts([("paper", c, "UNINFORMATIVE", 0, 0) for c in "ABC"]).assign(reason="at chance")
    assert verdicts.why(undecided) == "Why: three of its three claims decide nothing, most often (three): at chance."
    # without the engine's reason, what the verdict means, counted over the claims (not per support)
    mixed = _verdicts([("paper", c, "UNINFORMATIVE", 0, 0) for c in "AB"] + [("paper", "C", "UNDERPOWERED", 0, 0)])
    assert verdicts.why(mixed) == ("Why: three of its three claims decide nothing, most often (two): a "
                                   "method the claim needs is at chance, or its reference has not converged.")
    assert verdicts.conclusion(holds, "Paper S").endswith("rests on 1 of 1 cell that can decide.")
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
    assert "Holds: method Z1 beats the baseline (in 1 of 1 cell that can decide)." in verdicts.conclusion(one, "Paper S")


def test_one_name_table_gives_every_method_data_set_and_reading_its_display_name():
    """Issue 59: no raw id ("wddp", "hamm_soft", "adult", "synthetic_d1") and no doubled class word."""
    from mpdp.report import names

    assert names.prose("at chance (jayaraman, wddp)") == "at chance (Jayaraman, WD-DP)"
    assert names.prose("against: adult (ε=1); for: kddcup99 (m=2)") == "against: Adult (ε=1); for: KDDCup99 (m=2)"
    assert names.prose("ls_sgd vs ls_ssp on synthetic_d1") == ("DP-SGD least squares vs sufficient-statistics "
                                                               "perturbation on synthetic (d = 1)")
    assert names.prose("wddp_literal beats jayaraman_literal") == "WD-DP (Alg. 1 as printed) beats Jayaraman (as printed)"
    assert names.prose("underpowered: 2 repetition(s), too few", "UNDERPOWERED") == "2 repetition(s), too few"
    assert names.method("hamm_soft") == "Hamm's soft vote" and names.dataset("breast_cancer").startswith("Breast")
    assert names.reading("equal_privacy") == "equal privacy" and names.reason("no_effect") == "no effect"
    assert names.prose("the fig03 variant ε-sweep of 2 sets") == "the fig03 variant ε-sweep of 2 sets"  # no id: kept


def test_composition_bars_use_the_verdict_maps_colours():
    """Issue 59's review: a verdict's colour has one source, the verdict maps (mpdp.claims.maps.COLOURS); the
    composition bars (verdicts.COMPOSITION) and the report's CSS of their segments and swatches read it."""
    from mpdp.claims import maps

    assert set(verdicts.COMPOSITION) == set(maps.COLOURS) - {"no_data"}  # a bar has no no-data segment
    for verdict, (_, colour, _) in verdicts.COMPOSITION.items():
        assert colour == maps.COLOURS[verdict][1], verdict
        assert f".c-{verdict} {{ background: {colour}; }}" in sections.REPORT_CSS
    assert len(re.findall(r"\.c-\w+ \{ background: #[0-9A-Fa-f]{6}; \}", sections.REPORT_CSS)) == len(
        verdicts.COMPOSITION)  # no other rule restates a bar colour
