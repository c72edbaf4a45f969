"""The HTML report builds from a synthetic context and is self-contained (checked in Chromium)."""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from mpdp import config, results
from mpdp.claims import tables as claims_tables
from mpdp.errors import MpdpError
from mpdp.multiverse import reseeding
from mpdp.report.build import CONTEXT_KEYS, render_report
from mpdp.studies.claims_build import Paths, build
from mpdp.studies.wddp.figures import render_figure, render_noise_diagnostics

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "report.py"
FIGURES_SHOWN = ("fig03", "fig12-pr")
#: the data mirror the fixture's invocation names (absolute, outside the project)
MIRROR = ROOT.parent / "mirror-of-the-builder" / "datasets"


def claims_context(root: Path, paths: Paths, cfg: dict) -> dict:
    """The claims tables of ``paths`` (the rule claims_tables in-process) as the report's context key."""
    cells, verdicts = build(paths, cfg)
    claims_tables.write(cells, root / "cells.parquet")
    claims_tables.write(verdicts, root / "verdicts.parquet")
    return {"cells": str(root / "cells.parquet"), "verdicts": str(root / "verdicts.parquet"), "maps": {}}


@pytest.fixture(scope="module")
def context(tmp_path_factory, tables, unavailable):
    """A small, complete context: two data sets, two figures, one card, one benchmark file."""
    root = tmp_path_factory.mktemp("context")
    paths = {}
    for ds in ("kddcup99", "adult"):
        results.write(tables[ds], root / f"{ds}.parquet")
        paths[ds] = str(root / f"{ds}.parquet")
    figures = {}
    for name in FIGURES_SHOWN:
        fig_id, _, variant = name.partition("-")
        png = root / f"{name}.png"
        render_figure(
            fig_id, f"-{variant}" if variant else "", tables, png, root / f"{name}.pdf", unavailable
        )
        figures[name] = str(png)
    render_noise_diagnostics(
        tables, root / "noise.png", root / "noise.pdf", unavailable=unavailable
    )
    figures["noise_diagnostics"] = str(root / "noise.png")
    card = {
        "dataset": "adult",
        "display_name": "Adult",
        "n_raw": 900,
        "n_total": 875,
        "n_train": 700,
        "n_test": 175,
        "n_features": 9,
        "positive_label": "income '>50K'",
        "positive_rate": 0.25,
        "raw_files": {"adult.data": "0" * 64},
        "parsing": {"dropped": "25 rows with '?'"},
        "preprocessing": {"intercept": {"value": True, "tag": "REC", "spec": "E1.3"}},
        "subsampled": True,
        "synthetic": True,
    }
    (root / "card.json").write_text(json.dumps(card))
    cfg = config.load(ROOT / "config" / "smoke.yaml")
    claims = claims_context(root, Paths({"wddp": list(paths.values())}), cfg)
    bench = root / "benchmarks" / "train"
    bench.mkdir(parents=True)
    (bench / "adult.tsv").write_text("s\th:m:s\tmax_rss\n2.5\t0:00:02\t150.0\n")
    return {
        "config": cfg,
        "claims": claims,
        # an absolute mirror outside the project, as a builder's machine has it (issue 59: never printed)
        "invocation": {"cli_configfiles": ["config/smoke.yaml"], "config_args": ["root_seed=0"],
                       "mirror": str(MIRROR)},
        "results": {**paths, "credit_card": None},
        "cards": {"kddcup99": None, "adult": str(root / "card.json"), "credit_card": None},
        "unavailable": dict(unavailable),
        "figures": figures,
        "benchmarks_dir": str(root / "benchmarks"),
        "repo_root": str(ROOT),
        "studies": {},
    }


@pytest.fixture(scope="module")
def report(tmp_path_factory, context) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    render_report(NOTEBOOK, {**context, "report_dir": str(out.parent)}, out, ROOT)
    return out


def test_report_is_one_self_contained_html_file(report, context):
    text = report.read_text(encoding="utf-8")
    assert sorted(p.name for p in report.parent.iterdir()) == [
        "report.html"
    ]  # nothing else written
    images = re.findall(r"<img [^>]*>", text)
    assert len(images) == len(context["figures"])
    assert all(
        re.search(r'src="data:image/webp;base64,[A-Za-z0-9+/=]{1000,}"', img) for img in images
    )
    alts = [re.search(r'alt="([^"]*)"', img).group(1) for img in images]
    assert alts[0].startswith("Fig. 3 (main") and alts[-1].startswith("Noise diagnostics")
    assert not re.search(r"<script[^>]*\bsrc\s*=", text, re.I)  # no script loaded from anywhere
    assert not re.search(
        r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", text, re.I
    )  # no external URL
    assert "<code" not in text or "import json" not in text  # code cells are hidden
    assert "<title>Replication report: multi-party differentially private ERM</title>" in text
    for heading in (
        "Verdicts: what replicates and what does not",
        "Details of the verdicts",
        "Claims at a glance",
        "How to reproduce it",
        "Provenance",
        "Data cards",
        "Privacy ledger",
        "Deviations and [REC] choices",
        "Table 1",
    ):
        assert heading in text
    assert "SYNTHETIC DATA" in text and "Credit Card Fraud" in text
    assert "snakemake --cores all --configfile config/smoke.yaml --config root_seed=0\n" in text
    # issue 59: no absolute path of the building machine — the project, the mirror, the build's files
    assert "MPDP_DATA_MIRROR=../mirror-of-the-builder/datasets snakemake --cores all" in text
    for path in (str(ROOT), str(MIRROR), str(Path(context["benchmarks_dir"]).parent)):
        assert path not in text, path
    assert "snakemake --cores all fig07 --configfile config/smoke.yaml --config root_seed=0" in text
    assert "`config/config.yaml`, then `config/smoke.yaml`" not in text  # markdown is rendered
    assert "<code>config/config.yaml</code>, then <code>config/smoke.yaml</code>" in text
    assert config.config_hash(context["config"]) in text
    assert "voting study was not run" in text  # builds without the voting study's outputs
    # issue 60: the reseeding check beside each study's verdicts (this context's repo has none of its tables
    # for wddp unless it was run there: then its line, else the command)
    assert "<strong>Reseeding check</strong>:" in text
    assert ("python -m mpdp.pipeline.reseeding --study wddp" in text
            or (ROOT / reseeding.table_path("wddp")).is_file())
    assert "snakemake --cores all fig07" in text and config.config_hash(context["config"]) in text
    for fig in range(1, 17):
        assert f"Fig. {fig} — " in text


def test_report_build_failure_names_the_cell(tmp_path, context):
    broken = tmp_path / "broken.py"
    broken.write_text("# %%\nx = 1\n\n# %%\nraise ValueError('boom in the report')\n")
    out = tmp_path / "out.html"
    with pytest.raises(
        MpdpError, match=r"cell 1 \(.raise ValueError.*ValueError: boom in the report"
    ):
        render_report(broken, context, out, tmp_path)
    assert not out.exists()
    with pytest.raises(MpdpError, match="lacks the keys"):
        render_report(NOTEBOOK, {k: context[k] for k in CONTEXT_KEYS[:3]}, out, tmp_path)


def test_warnings_of_the_notebook_go_to_the_job_log_not_the_report(tmp_path, context):
    """Issue 46: a Python warning (with the absolute path of the code that raised it) printed by a
    cell is moved from the report into the job's log; the cell's other output stays."""
    noisy = tmp_path / "noisy.py"
    noisy.write_text("# %%\nimport warnings\nwarnings.warn('a figure warning from /abs/path/figures.py')\n"
                     "print('kept output')\n")
    out = tmp_path / "out.html"
    logged: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: logged.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger("mpdp").addHandler(handler)
    try:
        render_report(noisy, context, out, tmp_path)
    finally:
        logging.getLogger("mpdp").removeHandler(handler)
    page = out.read_text()
    assert "kept output" in page and "a figure warning" not in page and "/abs/path" not in page
    assert any("a figure warning from /abs/path/figures.py" in line for line in logged)


# --------------------------------------------------------------------------------------------
# headless Chromium: every image decodes and the page logs no error
# --------------------------------------------------------------------------------------------

_PROBE = """<script>
window.__mpdpErrors = [];
window.addEventListener("error", function (e) {
  window.__mpdpErrors.push("error: " + (e.message || (e.target && (e.target.src || e.target.tagName))));
}, true);
window.addEventListener("unhandledrejection", function (e) { window.__mpdpErrors.push("rejection: " + e.reason); });
(function () {
  var original = console.error;
  console.error = function () {
    window.__mpdpErrors.push("console.error: " + Array.prototype.join.call(arguments, " "));
    return original.apply(console, arguments);
  };
})();
window.addEventListener("load", function () {
  var images = Array.prototype.slice.call(document.images);
  var result = {
    images: images.length,
    loaded: images.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length,
    displayed: images.filter(function (i) { return i.getBoundingClientRect().width > 0; }).length,
    errors: window.__mpdpErrors,
    nav: null,
    claims: {},
    broken: []
  };
  var matrix = document.getElementById("verdicts");
  var grid = matrix && matrix.querySelector(".mpdp-vmatrix");
  result.verdicts = matrix ? {top: matrix.getBoundingClientRect().top + window.scrollY,
    bottom: grid ? grid.getBoundingClientRect().bottom + window.scrollY : null,
    cells: matrix.querySelectorAll(".mpdp-vmatrix a.mpdp-vcell").length, screen: window.innerHeight,
    width: window.innerWidth} : null;
  // every cell: inside the window, its text readable, its composition bar drawn with a segment per count
  result.cellboxes = [];
  if (matrix) {
    Array.prototype.forEach.call(matrix.querySelectorAll(".mpdp-vmatrix a.mpdp-vcell"), function (a) {
      var box = a.getBoundingClientRect();
      var bar = a.querySelector(".mpdp-comp");
      var segments = bar ? Array.prototype.map.call(bar.querySelectorAll("i"), function (i) {
        return {width: i.getBoundingClientRect().width, title: i.getAttribute("title")}; }) : [];
      result.cellboxes.push({id: a.querySelector("b").textContent, left: box.left, right: box.right,
        bottom: box.bottom + window.scrollY, font: parseFloat(getComputedStyle(a).fontSize),
        bar: bar ? bar.getBoundingClientRect().width : 0, segments: segments, tip: a.getAttribute("title")});
    });
  }
  var conclusion = Array.prototype.find.call(document.querySelectorAll("p"), function (p) {
    return /Of its|No claim could be checked/.test(p.textContent); });
  result.conclusion = conclusion ? {top: conclusion.getBoundingClientRect().top + window.scrollY,
    text: conclusion.textContent.slice(0, 80)} : null;
  result.supports = matrix ? matrix.querySelectorAll(".mpdp-vmatrix .mpdp-comp").length : 0;
  var main = document.querySelector("body > main") || document.body;
  result.content = {left: main.getBoundingClientRect().left, width: main.getBoundingClientRect().width};
  result.tables = [];
  Array.prototype.forEach.call(document.querySelectorAll("table"), function (t) {
    var box = t.parentElement.getBoundingClientRect();
    if (box.right > window.innerWidth + 1) { result.tables.push(t.parentElement.className); }
  });
  var img = document.querySelector("img.mpdp-zoomable");
  if (img) {
    img.click();
    var fig = img.parentElement;
    result.zoom = {zoomed: fig.classList.contains("mpdp-zoomed"), position: getComputedStyle(fig).position,
      width: img.getBoundingClientRect().width, natural: img.naturalWidth};
    img.click();
    result.zoom.closed = !fig.classList.contains("mpdp-zoomed");
  }
  var nav = document.querySelector("nav.mpdp-toc");
  if (nav) {
    // follow the table of contents to every study's claims: the target scrolls into view
    var links = Array.prototype.slice.call(nav.querySelectorAll('a[href$="-claims"]'));
    links.forEach(function (a) {
      a.click();
      var target = document.getElementById(a.getAttribute("href").slice(1));
      var top = target ? target.getBoundingClientRect().top : null;
      result.claims[a.getAttribute("href")] = {
        hash: location.hash,
        inView: top !== null && top >= 0 && top < window.innerHeight,
        navTop: nav.getBoundingClientRect().top,
        open: target ? !!target.closest("details") && target.closest("details").open : false,
        scrolled: window.scrollY
      };
    });
    result.nav = {position: getComputedStyle(nav).position, sections: Array.prototype.map.call(
      nav.querySelectorAll(":scope > ul > li > a"), function (a) { return a.getAttribute("href"); })};
  }
  // every in-page link leads somewhere
  Array.prototype.forEach.call(document.querySelectorAll('a[href^="#"]'), function (a) {
    var id = decodeURIComponent(a.getAttribute("href").slice(1));
    if (!document.getElementById(id)) { result.broken.push(id); }
  });
  var pre = document.createElement("pre");
  pre.id = "mpdp-probe";
  pre.textContent = JSON.stringify(result);
  document.body.appendChild(pre);
});
</script>"""


def context_studies(page: str) -> list[str]:
    """Keys of the study sections that ran (they have a claims part)."""
    return re.findall(r'<h3[^>]*\bid="(\w+)-claims"', page)


#: the window's height: a laptop's first screen (issue 59: 1 400 × 900)
HEIGHT = 900


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _run_chromium(browser: str, tmp_path: Path, width: int, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
            "--hide-scrollbars",
            f"--window-size={width},{HEIGHT}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.mark.parametrize("width", [1400, 800])
def test_report_renders_in_headless_chromium(report, context, tmp_path, width):
    """At 1 400 px the contents stay in view at the left; at 800 px they sit above the text.

    Both widths, in a 900 px high window: the verdict matrix starts on the first screen, each of its
    cells inside the window with readable text and its composition bar (a segment per kind of cell,
    its count on hover); at 1 400 px the whole matrix and the first paper's conclusion are on the first
    screen (issue 59). Every image decodes, a click enlarges
    a figure, every in-page link has its anchor, the contents lead to every study's claims (their
    collapsed part opens), no table runs out of the window, and a screenshot is taken (copied to
    $MPDP_SCREENSHOTS when set, for a reviewer to look at).
    """
    browser = _chromium()
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed but CI is set: install Debian's `chromium`")
        pytest.skip("chromium is not installed (apt-get install -y chromium); CI runs this check")
    page = tmp_path / "probe.html"
    text = report.read_text(encoding="utf-8")
    page.write_text(text.replace("<head>", "<head>" + _PROBE, 1), encoding="utf-8")
    done = _run_chromium(browser, tmp_path, width, "--dump-dom", page.as_uri())
    match = re.search(r'<pre id="mpdp-probe">(.*?)</pre>', done.stdout, re.S)
    assert match, f"probe did not run (rc {done.returncode}); stderr tail:\n{done.stderr[-2000:]}"
    probe = json.loads(match.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert probe["images"] == len(context["figures"])
    assert probe["loaded"] == probe["images"], probe  # every figure decodes (naturalWidth > 0)
    assert probe["displayed"] == probe["images"], probe  # and takes space on the page
    assert probe["errors"] == [], probe["errors"]
    assert probe["broken"] == [], probe["broken"]  # every in-page link has its anchor
    verdicts = probe["verdicts"]
    assert verdicts and verdicts["cells"] > 0, probe  # the verdict matrix, one cell per claim
    assert probe["supports"] == verdicts["cells"], probe  # each with its composition bar
    for cell in probe["cellboxes"]:  # issue 59: every cell's composition drawn, counted on hover, readable
        assert cell["bar"] > 0 and cell["segments"], cell
        assert all(seg["width"] > 0 and re.fullmatch(r"\d+ [a-z ]+", seg["title"]) for seg in cell["segments"]), cell
        assert "can decide" in cell["tip"] or "cell" in cell["tip"], cell
        assert cell["left"] >= 0 and cell["right"] <= width, (cell, width)  # nothing runs out of the window
        assert cell["font"] >= 9.5, cell
    assert verdicts["top"] < verdicts["screen"], verdicts  # the matrix starts on the first screen
    if width >= 900:  # issue 59: the whole matrix and the first paper's conclusion on the first screen
        assert verdicts["bottom"] is not None and verdicts["bottom"] <= verdicts["screen"], verdicts
        assert max(c["bottom"] for c in probe["cellboxes"]) <= verdicts["screen"], verdicts
        assert probe["conclusion"] and probe["conclusion"]["top"] + 24 < verdicts["screen"], (probe["conclusion"],
                                                                                             verdicts)
    zoom = probe["zoom"]
    assert zoom["zoomed"] and zoom["position"] == "fixed" and zoom["closed"], zoom  # click: full size
    assert zoom["width"] >= min(zoom["natural"], width) - 40, zoom
    assert probe["tables"] == [], probe["tables"]  # wide tables scroll inside the column
    sections = probe["nav"]["sections"]
    assert sections[:2] == ["#verdicts-heading", "#findings"]
    assert {"#wddp", "#admm", "#voting", "#ls", "#benchmark", "#audit"} <= set(sections)
    if width >= 900:
        assert probe["nav"]["position"] == "fixed"  # the table of contents stays in view
        assert probe["content"]["left"] >= 250, probe["content"]
    else:
        assert probe["nav"]["position"] == "static"  # above the text, covering nothing
        assert probe["content"]["left"] < 40 and probe["content"]["width"] > 0.9 * width - 40, probe["content"]
    ran = context_studies(text)
    assert "wddp" in ran
    assert sorted(probe["claims"]) == sorted(f"#{key}-claims" for key in ran)
    for href, seen in probe["claims"].items():
        assert seen["hash"] == href and seen["inView"] and seen["open"], (href, seen)
        if width >= 900:
            assert seen["navTop"] == 0 and seen["scrolled"] > 0, (href, seen)
    console = [
        line for line in done.stderr.splitlines() if "CONSOLE" in line and "mpdp-probe" not in line
    ]
    assert console == [], console
    shot = tmp_path / f"report-{width}.png"
    _run_chromium(browser, tmp_path, width, f"--screenshot={shot}", report.as_uri())
    assert shot.is_file() and shot.stat().st_size > 10_000
    if os.environ.get("MPDP_SCREENSHOTS"):
        shutil.copy(shot, Path(os.environ["MPDP_SCREENSHOTS"]) / shot.name)


_TOY_CLAIMS = """
import json, sys
from pathlib import Path
from mpdp import config
from mpdp.claims import tables
from mpdp.studies import claims_build, registry
cfg = config.load(Path(sys.argv[1]))
cells, verdicts = claims_build.build(claims_build.Paths({"toy": [sys.argv[2]]}), cfg)
tables.write(cells, sys.argv[3] + "/cells.parquet")
tables.write(verdicts, sys.argv[3] + "/verdicts.parquet")
# the report context's studies as workflow/scripts/report.py builds them (issue 57)
files = registry.report_files(cfg, ["adult"], {"toy": ["reports/figures/toy.png"]})
Path(sys.argv[3], "studies.json").write_text(json.dumps(registry.report_context(files)))
"""


@pytest.mark.slow
def test_a_toy_study_of_the_registry_is_reported(tmp_path, context, monkeypatch):
    """A study added by its package plus one registry line (tests/toy_study.py) gets its section,
    its row of the verdict matrix and its claim in the report, with no edit of the notebook; its
    section reads its own context, ``ctx["studies"]["toy"]`` (issue 57)."""
    import sys

    from toy_study import toy_package, toy_rows

    src = toy_package(tmp_path)
    toy_rows(tmp_path / "toy.parquet")
    env = {**os.environ, "PYTHONPATH": str(src)}
    subprocess.run([sys.executable, "-c", _TOY_CLAIMS, str(ROOT / "config" / "smoke.yaml"), str(tmp_path / "toy.parquet"),
                    str(tmp_path)], env=env, check=True, cwd=tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(src))  # the report's kernel imports the copy with the toy study
    out = tmp_path / "report" / "report.html"
    out.parent.mkdir()
    ctx = {**context, "claims": {"cells": str(tmp_path / "cells.parquet"),
                                 "verdicts": str(tmp_path / "verdicts.parquet"), "maps": {}},
           "studies": json.loads((tmp_path / "studies.json").read_text())}
    render_report(NOTEBOOK, ctx, out, ROOT)
    text = out.read_text(encoding="utf-8")
    assert "The toy study of the registry test" in text and 'id="toy"' in text
    assert "Toy paper" in text and "A beats B" in text and "its figures: toy.png." in text
