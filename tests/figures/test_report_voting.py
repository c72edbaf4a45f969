"""The report's voting section, built from synthetic voting tables (absent tables: test_report.py)."""

from __future__ import annotations

import copy
import html

import pytest

from mpdp import results
from mpdp.report.build import render_report
from mpdp.studies import registry
from mpdp.studies.claims_build import Paths
from mpdp.studies.voting import figures, plan, train
from mpdp.studies.voting import report as vr
from tests.figures.test_report import NOTEBOOK, ROOT, claims_context, context  # noqa: F401  (fixture)
from tests.voting.conftest import write_synthetic


class _NullLog:
    def info(self, *args, **kwargs) -> None:
        pass


@pytest.fixture(scope="module")
def voting_context(tmp_path_factory, context):  # noqa: F811
    root = tmp_path_factory.mktemp("voting_ctx")
    data = write_synthetic(root / "processed")
    cfg = copy.deepcopy(context["config"])
    cfg["voting"].update({"M_grid": [5, 10], "eps_grid": [0.5, 5.0], "reps": 2, "lambda": None, "h1_M": 10,
                          "lambda_grid": [1e-2, 1.0], "tune_draws": 2, "lambda_sweep_eps": [5.0]})
    tables, paths = {}, {}
    for table in ("kddcup99", "kddcup99_multiclass"):
        frame = results.to_frame(train.table_rows(cfg, table, data, _NullLog()), plan.EXTRA_COLUMNS)
        paths[table] = str(root / f"{table}.parquet")
        results.write(frame, paths[table], plan.EXTRA_COLUMNS)
        tables[table] = frame
    figs = {}
    for fig in figures.FIGURE_IDS:
        figures.render(fig, tables, cfg, root / f"{fig}.png", root / f"{fig}.pdf")
        figs[fig] = str(root / f"{fig}.png")
    claims = claims_context(root, Paths({"wddp": [p for p in context["results"].values() if p], "voting": list(paths.values())}), cfg)
    files = {"tables": list(paths.values()), "files": [*paths.values(), *figs.values()]}
    return {**context, "config": cfg, "studies": registry.report_context({"voting": files}), "claims": claims}


def test_report_shows_the_voting_section(tmp_path, voting_context):
    out = tmp_path / "report.html"
    render_report(NOTEBOOK, voting_context, out, ROOT)
    text = out.read_text(encoding="utf-8")
    assert "Output perturbation and voting" in text
    for item in ("hamm_soft", "jayaraman_output", "Lemma 6", "Clopper", "record", "party", "hamm_h4",
                 "pooled_output", "hamm_lambda", "λ chosen with the noise in the loop", "whose privacy cost is excluded", "end-to-end",
                 "first ε below it", "What the figures show", "H-1, kddcup99", "H-3, kddcup99_multiclass",
                 'id="claim-voting-v1"', 'id="claim-voting-v4"', "a comparator at chance is what Alg. 2 beats",
                 "eps_validation_record", "max ε validation record / claimed", "noise for one validation record"):
        assert item in text, item
    assert "on an edge of" in text  # mpdp.tuning.edge_sentence: a warning or "No tuned value lies on an edge…"
    assert "<td>voting/kddcup99_multiclass</td>" in text  # provenance: the engine paths of the voting tables
    # every figure has a caption saying what it shows and what to look at (issue 46), not its id only
    assert "voting study figure" not in text
    for caption in vr.captions(voting_context["config"]).values():
        before_quote = caption.split(chr(39))[0]  # the exporter escapes an apostrophe its own way
        assert 'alt="' + html.escape(before_quote) in text
        assert "Look at" in caption or "should" in caption
