"""The section scaffold: one anatomy, stable anchors, summaries computed from the claims tables."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from mpdp.claims.tables import VERDICT_COLUMNS
from mpdp.figures import style
from mpdp.report import images, scaffold
from mpdp.report.build import table_of_contents
from mpdp.tuning import edge_warnings


def _claims(rows: list[tuple[str, str, str, str, int, int, int]]) -> pd.DataFrame:
    """(claim_id, claim, figures, verdict, n_informative, n_for, n_against) rows as verdict rows."""
    frame = pd.DataFrame([
        {"study": "s", "claim_id": cid, "reading": "-", "claim": text, "source": "seed", "verdict": verdict,
         "n_cells": 6, "n_informative": inf, "n_for": n_for, "n_against": n_against,
         "where": "against: d1 (m=8)" if n_against else "for: d2 (m=4)", "figures": figs}
        for cid, text, figs, verdict, inf, n_for, n_against in rows
    ])
    return frame[[*VERDICT_COLUMNS, "figures"]]


@pytest.fixture
def png() -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    x = np.linspace(0, 1, 50)
    # wide bands and thin lines of rare colours, as in the study figures
    for i, colour in enumerate(("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")):
        ax.fill_between(x, x**2 + i - 0.4, x**2 + i + 0.4, color=colour, alpha=0.25)
        ax.plot(x, x**2 + i, color=colour, linewidth=0.8, label=colour)
    ax.legend(fontsize=6)
    ax.set_title("a figure with text")
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=style.DPI)
    plt.close(fig)
    return out.getvalue()


@pytest.fixture
def section(png) -> scaffold.StudySection:
    claims = _claims([
        ("A", "A beats B.", "f1", "HOLDS", 4, 3, 0),
        ("B", "B is stable.", "f2", "MIXED", 5, 3, 1),
        ("C", "C converges.", "f1", "UNDERPOWERED", 2, 0, 0),
    ])
    edges = edge_warnings("s", [("d1", "eta", 1.0, [1.0, 2.0, 4.0])])
    return scaffold.StudySection(
        "s", "Study S", "Paper S", "intro text", claims_tables={"": claims},
        method=[scaffold.md("the method")],
        figures=[scaffold.FigureItem("f1", "first figure", data=png),
                 scaffold.FigureItem("f2", "second figure", missing="f2 was not built.")],
        claims=[scaffold.md("own claims table")], ledger=[scaffold.md("the ledger")],
        deviations=[scaffold.md("the REC choices")], tuning_edges=edges,
    )


def _html(blocks) -> str:
    return "\n".join(block.data for block in blocks)


def test_every_section_has_the_parts_in_order_with_stable_anchors(section):
    page = _html(scaffold.render(section))
    ids = re.findall(r'<h[23] id="([^"]+)"', page)
    assert ids == ["s", "s-method", "s-figures", "s-claims", "s-ledger", "s-deviations"]
    order = [page.index(text) for text in ("the method", 'id="fig-f1"', 'id="fig-f2"', "claim-s-a",
                                           "own claims table", "the ledger", "Tuning — warning", "the REC choices")]
    assert order == sorted(order)
    assert re.findall(r'<tr id="(claim-s-[a-z]+)"', page) == ["claim-s-a", "claim-s-b", "claim-s-c"]
    assert page.count("data:image/webp;base64,") == 1 and "f2 was not built." in page
    # each part collapsed under its heading (details one click away), figures listed in the contents
    assert page.count('<details class="mpdp-part"><summary><h3 id="s-') == 5
    assert re.findall(r'<figure id="(fig-\w+)" class="mpdp-figure" data-toc="4"', page) == ["fig-f1", "fig-f2"]
    # the tuning-edge warnings are a table, one row per tuned value on an edge
    tuning = page[page.index("Tuning — warning"):]
    assert "1 tuned value on an edge" in tuning
    assert re.search(r"<td>eta</td>\s*<td>d1</td>\s*<td>1</td>\s*<td>low</td>\s*<td>\[1, 4\]</td>", tuning)


def test_a_study_that_did_not_run_says_why_and_has_no_parts(section):
    section.not_run = "no results in this build."
    page = _html(scaffold.render(section))
    assert "no results in this build." in page and 's-claims' not in page
    assert "Not run in this build" in scaffold.paper_summary(section)


def test_paper_summary_lists_every_failing_claim_before_any_that_holds(section):
    text = scaffold.paper_summary(section)
    assert "3 claims checked" in text and "1 MIXED, 1 UNDERPOWERED, 1 HOLDS" in text
    # B holds in 3 cells and fails in one: it is listed first, with where it fails, never outvoted
    assert text.index("[B](#claim-s-b)") < text.index("[C](#claim-s-c)") < text.index("[A](#claim-s-a)")
    assert ("Does not replicate everywhere: [B](#claim-s-b) (B is stable) — MIXED: holds in 3 of 5 cells that can "
            "decide, fails in 1 (1 against, 0 with no effect); 1 cannot be judged (3 for, 1 against, 1 uninformative; "
            "against: d1 (m=8)); see [f2](#fig-f2).") in text
    assert "against: d1 (m=8)); see [f2](#fig-f2)." in text  # its anchor says it was not built
    assert "[C](#claim-s-c) (UNDERPOWERED: no cell decides" in text.split("Not decided by the data")[1]
    assert "Replicates: [A](#claim-s-a) (A beats B) — HOLDS" in text and "see [f1](#fig-f1)" in text
    # the summary follows the verdicts: B holding makes it replicate
    claims = section.claims_tables[""]
    claims.loc[claims["claim_id"] == "B", ["verdict", "n_against"]] = ["HOLDS", 0]
    assert "Does not replicate" not in scaffold.paper_summary(section)
    assert "1 UNDERPOWERED, 2 HOLDS" in scaffold.paper_summary(section)
    # verdict rows without a figures column (the benchmark's) summarise without figure links
    section.claims_tables[""] = claims.drop(columns="figures")
    assert "see [f" not in scaffold.paper_summary(section)
    section.claims_map = "map.png"
    assert "[verdict map](#fig-claims_map_s)" in scaffold.paper_summary(section)


def test_glance_covers_every_study_and_links_each_claim(section):
    other = scaffold.StudySection("o", "Study O", "Paper O", not_run="switched off.")
    page = scaffold.glance([section, other])
    assert [f"#claim-s-{c}" for c in "abc"] == re.findall(r'<a href="(#claim-s-\w+)">', page)
    assert "Paper O" in page and "switched off." in page


def test_embedded_figures_are_smaller_lossless_webp_of_few_colours(png):
    webp = images.compress(png)
    assert webp == images.compress(png)  # deterministic
    assert len(webp) < len(png) / 2
    decoded, original = Image.open(io.BytesIO(webp)), Image.open(io.BytesIO(png)).convert("RGB")
    assert decoded.format == "WEBP" and decoded.size == original.size  # no resampling
    assert len(decoded.convert("RGB").getcolors(1 << 16)) <= images.COLOURS
    error = np.abs(np.asarray(decoded.convert("RGB"), int) - np.asarray(original, int))
    assert error.max() <= 24 and error.mean() < 4.0  # no colour changes: the same picture to the eye


def test_table_of_contents_nests_parts_under_their_section():
    page = ('<h2 data-toc="2" id="a">A</h2><h3 id="a-x" data-toc="3">X</h3><h3 data-toc="3" id="a-y">Y</h3>'
            '<h2 id="b" data-toc="2">B</h2><h4 id="b-z">not listed</h4><h2 id="c">not listed</h2>')
    nav = table_of_contents(page)
    assert re.findall(r'href="#([\w-]+)"', nav) == ["top", "a", "a-x", "a-y", "b"]
    assert '<li><a href="#a">A</a><ul><li><a href="#a-x">X</a></li><li><a href="#a-y">Y</a></li></ul></li>' in nav
