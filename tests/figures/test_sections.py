"""Report tables computed from results, cards, config and the claims check."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from mpdp import config
from mpdp.claims import engine
from mpdp.figures import style
from mpdp.report import sections
from mpdp.studies.wddp import claims as wddp_claims
from mpdp.studies.wddp import report as wddp_report
from mpdp.studies.wddp.claims import survival_sentence
from mpdp.studies.wddp.figure_spec import FIGURES

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cfg():
    return config.load(ROOT / "config" / "smoke.yaml")


@pytest.fixture(scope="module")
def claims(tables):
    """The paper reading's verdict rows of the synthetic tables (the claims engine, figures column added)."""
    table = pd.concat([t for t in tables.values() if t is not None], ignore_index=True)
    cells = engine.evaluate(wddp_claims.CLAIMS, engine.Inputs(wddp_claims.observations(table),
                                                              wddp_claims.baselines(table)))
    verdicts = engine.verdicts(wddp_claims.CLAIMS, cells)
    paper = verdicts[verdicts["reading"] == "paper"].reset_index(drop=True)
    return paper.assign(figures=paper["claim_id"].map(wddp_claims.FIGURES))


def test_warnings_flag_synthetic_subsampled_smoke_and_missing(cfg, tables, unavailable):
    warnings = wddp_report.data_warnings(cfg, {"adult": {"subsampled": True}}, tables, unavailable)
    text = "\n".join(warnings)
    assert "SYNTHETIC DATA" in text and "adult, kddcup99" in text
    assert "SUBSAMPLED DATA" in text and "SMOKE PROFILE" in text
    assert "NOT AVAILABLE: (e) Credit Card Fraud" in text


def test_claims_matrix_shows_each_claims_verdict_over_all_cells(claims):
    matrix = wddp_report.claims_matrix(claims)
    assert list(matrix["id"]) == [c.claim_id for c in wddp_claims.CLAIMS]
    assert list(matrix.columns) == ["id", "claim", "verdict", "in words", "reason", "cells", "can decide", "for",
                                    "against", "no effect", "underpowered", "uninformative", "no data", "margin ±δ",
                                    "mde (median)", "equivalence (TOST)", "above chance by", "where", "source"]
    summary = sections.verdict_summary(claims)
    # issue 59: every verdict's composition, and the counts add up to its cells (no data aside)
    parts = summary[["for", "against", "no effect", "underpowered", "uninformative"]].sum(axis=1)
    assert (parts <= summary["cells"]).all() and (summary["for"] <= parts).all()
    assert all(w.startswith(("holds in", "fails in", "no cell decides", "none of its", "the compared", "the bound"))
               for w in summary["in words"])


def test_figure_claims_name_their_own_claims_or_the_companions(claims):
    rows, note = wddp_report.figure_claims(claims, FIGURES["fig03"])
    assert set(rows["claim_id"]) == {"C2", "C3-gap", "C4-gap"} and note == ""
    rows, note = wddp_report.figure_claims(claims, FIGURES["fig12"])  # the gap over u has claims (issue 55)
    assert set(rows["claim_id"]) == {"C5-gap", "C6a-gap", "C6b-gap"} and note == ""
    # a figure no claim names gets its companion's verdicts, and the note says so
    without = claims[~claims["claim_id"].str.endswith("-gap")]
    rows, note = wddp_report.figure_claims(without, FIGURES["fig12"])
    assert set(rows["claim_id"]) == {"C5", "C6a", "C6b", "C7"} and "Fig. 2" in note


def test_figure_observations_are_means_at_the_ends(tables):
    obs = wddp_report.figure_observations(FIGURES["fig01"], tables)
    assert list(obs["data set"]) == ["(a) KDDCup99", "(a) KDDCup99", "(b) Adult", "(b) Adult"]
    assert list(obs["ε"]) == [0.05, 0.25, 0.05, 0.25]
    adult = tables["adult"]
    wd = adult[
        (adult["experiment"] == "eps_sweep")
        & (adult["mechanism"] == "wddp")
        & (adult["m"] == 32)
        & (adult["mode"] == "local_then_aggregate")
        & (adult["accountant"] == "ma16")
        & (adult["epsilon"] == 0.25)
    ]
    assert obs.iloc[3][style.mechanism_label("wddp")] == pytest.approx(wd["accuracy"].mean())
    findings = wddp_report.figure_findings(FIGURES["fig01"], obs)
    assert len(findings) == 2 and findings[0].startswith("(a) KDDCup99: best at ε = 0.05")


def test_privacy_ledger_explains_gaps(tables):
    ledger = wddp_report.privacy_ledger(tables)
    local = ledger[(ledger["mode"] == "local_then_aggregate") & (ledger["accountant"] == "ma16")]
    assert local["scope of accounted ε"].str.startswith("worst_party (upper bound").all()
    assert (
        local["explanation"].str.contains("I-1").all()
        and local["explanation"].str.contains("I-3").all()
    )
    exact = ledger[(ledger["mode"] == "per_round") & (ledger["accountant"] == "exact")]
    assert exact["accounted/claimed ε (mean)"].tolist() == pytest.approx([1.0] * len(exact))
    assert (ledger["σ min"] <= ledger["σ max"]).all()


def test_reconstructed_choices_list_config_and_card_values(cfg):
    card = {"preprocessing": {"intercept": {"value": True, "tag": "REC", "spec": "E1.3"}}}
    table = wddp_report.reconstructed_choices(cfg, {"adult": card, "bank": card, "kddcup99": None})
    by_choice = table.set_index("choice")
    assert by_choice.loc["wddp.lambda", "value used"] == str(cfg["wddp"]["lambda"])
    # issue 33: the reference's step and convergence tolerance are listed reconstructions
    assert by_choice.loc["wddp.reference_gap_tol", "value used"] == str(cfg["wddp"]["reference_gap_tol"])
    assert by_choice.loc["wddp.reference_step", "value used"] == "inverse_smoothness"
    assert by_choice.loc["preprocessing: intercept", "source"] == "data cards: adult, bank"
    assert "fixed in code" in set(table["source"])


def test_inconsistencies_and_learning_rates(cfg, tables):
    register = wddp_report.inconsistencies(cfg, tables)
    assert list(register["id"]) == ["I-1", "I-2", "I-3", "I-4", "I-5", "I-7", "I-19"]
    assert (
        "noise_sharing = independent" in register.set_index("id").loc["I-2", "what this run does"]
    )
    rates = wddp_report.learning_rates(tables)
    assert rates["η ≤ 1/L (B1′ applies)"].all()  # η = 0.1 ≤ 1/(1/4 + λ)


def test_html_table_escapes_and_colours_verdicts():
    frame = pd.DataFrame({"claim": ["<b>x</b>"], "v": ["PASS: +1 [+0.5, +2]"], "n": [1.0e-7]})
    text = sections.html_table(frame)
    assert "&lt;b&gt;" in text and '<td class="v-PASS">PASS' in text and "1.000e-07" in text


def test_table1_summary_one_row_per_setting(tables):
    from mpdp.studies.wddp.figures import table1_frame

    summary = wddp_report.table1_summary(table1_frame(tables))
    # per data set: ε-sweep m = 2, 32 and the u-sweep (m = 16, ε = 0.05) at u = 1 and 3
    assert len(summary) == 2 * 4
    assert list(summary["data set"].unique()) == ["(a) KDDCup99", "(b) Adult"]
    assert {"WD-DP", "Jayaraman et al. 2018", "Wang, Ye, Xu 2017"} <= set(summary.columns)
    assert (summary["WD-DP"] <= summary["Wang, Ye, Xu 2017"]).all()  # (11) beats (12) by ln n
    computed = summary["WD-DP/Jayaraman risk (computed)"]
    assert computed.tolist() == pytest.approx(summary["WD-DP/Jayaraman risk (claimed)"].tolist())


def test_ma16_ratio_and_zero_epsilon_come_from_the_tables(tables):
    ratios = {"adult": tables["adult"].copy(), "kddcup99": tables["kddcup99"]}
    t = ratios["adult"]
    agg = (t["accountant"] == "ma16") & (t["eps_accounted_scope"] == "aggregate")
    t.loc[agg & (t["epsilon"] == 0.05), "eps_accounted"] = 0.0
    sentence = wddp_report.ma16_ratio_sentence(ratios)
    assert "at claimed ε = 0.25" in sentence and "0.71 at claimed ε = 0.25" in sentence
    assert "0.7 ε" not in sentence
    ledger = wddp_report.privacy_ledger(ratios)
    row = ledger[(ledger["mode"] == "per_round") & (ledger["accountant"] == "ma16")].iloc[0]
    assert "accounted ε = 0 at claimed ε 0.05" in row["explanation"]
    assert "(0, δ)-DP" in row["explanation"]


def test_delta_at_zero_is_the_gaussian_tv_distance():
    from scipy import stats

    # s' = (σ/Δ)/sqrt(T) = 10/sqrt(4) = 5: δ(0) = P(|N(0,1)| ≤ 1/(2·5))
    assert wddp_report.delta_at_zero(10.0, 1.0, 4) == pytest.approx(
        stats.norm.cdf(0.1) - stats.norm.cdf(-0.1)
    )


def test_survival_sentence_is_computed_from_both_readings(claims):
    paper = claims.copy()
    other = claims.copy()
    paper["verdict"] = "HOLDS"
    other["verdict"] = "FAILS"
    other.loc[other["claim_id"] == "C1", "verdict"] = "HOLDS"
    sentence = survival_sentence(paper, other, "equal privacy")
    assert sentence.startswith(f"Of the {paper['claim_id'].nunique()} claims that HOLD")
    assert "these still hold: C1;" in sentence and "C2 (FAILS)" in sentence
    table = wddp_report.survival_table(paper, other)
    assert table.set_index("id").loc["C1", "status"] == "survives"
    assert table.set_index("id").loc["C2", "status"] == "lost"


def test_the_cv_figure_of_a_full_build_passes_the_layout_check(tmp_path):
    """Issue 46: cv_eta on the full config (four data sets, eight selection groups) had legends over
    each other and over a panel, and cut edges; its layout is recorded like a saved figure's."""
    import numpy as np

    from mpdp.figures import check
    from mpdp.studies.wddp.figures import cv_curves_png

    groups = [(m, mo, acc) for m, mo in (("wddp", "per_round"), ("wddp", "local_then_aggregate"),
                                          ("jayaraman", "per_round"), ("wyx", "central"))
              for acc in ("ma16", "exact")]
    etas = np.logspace(-3, 0, 6)
    scores = pd.DataFrame([{"dataset": ds, "mechanism": m, "mode": mo, "accountant": acc, "eta": eta,
                            "mean_accuracy": 0.7 + 0.05 * np.sin(i + j), "se": 0.01 if j else float("nan")}
                           for ds in ("kddcup99", "adult", "bank", "breast_cancer")
                           for i, (m, mo, acc) in enumerate(groups) for j, eta in enumerate(etas)])
    chosen = scores[np.isclose(scores["eta"], etas[2])]
    png = cv_curves_png(scores, chosen, tmp_path / "cv_eta.png")
    assert png.startswith(b"\x89PNG")
    assert check.read_record(check.record_path(tmp_path / "cv_eta.png")).problems == []


def test_cv_curves_and_choices_from_the_eta_tables(tmp_path):
    import json

    from mpdp.studies.wddp.figures import cv_curves_png

    (tmp_path / "eta").mkdir()
    scores = [
        {"mechanism": "wyx", "mode": "central", "accountant": "ma16", "eta": eta,
         "mean_accuracy": acc, "std_accuracy": 0.1, "n": 30}
        for eta, acc in ((0.01, 0.7), (0.1, 0.72), (1.0, 0.6))
    ]
    chosen = [{"mechanism": m, "mode": mo, "accountant": "ma16", "eta": 0.01, "mean_accuracy": 0.7,
               "se": 0.018, "best_eta": 0.1, "best_mean_accuracy": 0.72, "best_se": 0.018,
               "selected_as": "wyx/central"} for m, mo in (("wyx", "central"), ("wddp", "per_round"))]
    (tmp_path / "eta" / "adult.json").write_text(
        json.dumps({"source": "cv", "scores": scores, "chosen": chosen})
    )
    got_scores, got_chosen = wddp_report.cv_scores({"adult": str(tmp_path / "adult.parquet")})
    assert got_scores["se"].tolist() == pytest.approx([0.1 / 30**0.5] * 3)
    table = wddp_report.cv_choice_table(got_chosen)
    assert set(table["selected with (pooled group)"]) == {"wyx/central"} and len(table) == 2
    assert cv_curves_png(got_scores, got_chosen).startswith(b"\x89PNG")
    assert wddp_report.cv_scores({"adult": str(tmp_path / "bank.parquet")})[0].empty


def test_studies_at_a_glance_shows_verdicts_and_names_missing_studies() -> None:
    claims = pd.DataFrame({"claim_id": ["Z1", "Z2"], "claim": ["faster with larger α", "DVP oscillates less"],
                           "verdict": ["MIXED", "INCONCLUSIVE"], "n_cells": [3, 3], "n_informative": [3, 1],
                           "n_for": [1, 0], "n_against": [1, 0], "where": ["against: adult (α=10)", ""]})
    table = sections.studies_at_a_glance({"ADMM": claims, "voting": None, "ls": claims.iloc[:0]})
    admm = table[table["study"] == "ADMM"].set_index("id")
    assert admm.loc["Z1", ["verdict", "for", "against"]].tolist() == ["MIXED", 1, 1]
    assert admm.loc["Z1", "in words"] == "holds in 1 of 3 cells that can decide, fails in 1 (1 against, 0 with no effect)"
    assert admm.loc["Z2", "uninformative"] == 2 and admm.loc["Z1", "where"] == "against: Adult (α=10)"
    missing = table[table["study"].isin(["voting", "ls"])]
    assert len(missing) == 2 and (missing["claim"] == "not run in this build").all()
