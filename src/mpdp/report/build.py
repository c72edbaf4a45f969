"""Render the HTML report from its jupytext source (``notebooks/report.py``).

The notebook reads a *context* JSON (its path is in the environment variable
:data:`CONTEXT_ENV`) that says where the config, results tables, data cards, figures and
benchmark files are. :func:`render_report` converts the percent-format source to a
notebook in memory, executes it in a fresh ``python3`` kernel and exports one
self-contained HTML file: code hidden, images embedded as ``data:`` URIs, and no script,
style or font loaded from the network (the MathJax, require.js and mermaid loaders of
nbconvert's lab template are removed). The file is written atomically.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jupytext
import nbformat
from jinja2 import DictLoader
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
from nbconvert import HTMLExporter

from mpdp.errors import MpdpError
from mpdp.io import atomic_path

#: environment variable holding the path of the context JSON
CONTEXT_ENV = "MPDP_REPORT_CONTEXT"

#: keys the report notebook reads from the context
CONTEXT_KEYS = (
    "config",
    "invocation",
    "results",
    "cards",
    "unavailable",
    "figures",
    "benchmarks_dir",
    "repo_root",
    # per running study, its own context (mpdp.studies: each study's ``context`` of its files)
    "studies",
)

#: seconds one cell may run before the build fails
CELL_TIMEOUT = 900

_TEMPLATE_NAME = "mpdp_report.html.j2"
#: nbconvert's lab template without any <script src=...> loader (self-contained output);
#: PNG outputs are always inlined as data: URIs and carry their ``alt`` metadata
_TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{% block data_png scoped %}
<div class="jp-RenderedImage jp-OutputArea-output {{ extra_class }}">
<img src="data:image/png;base64,{{ output.data['image/png'] | escape_html }}"
alt="{{ ((output | get_metadata('alt', 'image/png')) or 'figure') | escape_html }}"
style="max-width: 100%; height: auto;">
</div>
{%- endblock data_png %}
"""


#: the report's title (``<title>`` and the notebook's first heading)
TITLE = "Replication report: multi-party differentially private ERM"

#: an entry of the table of contents: any element with ``data-toc="2|3|4"`` (headings, figures);
#: the exporter may reorder the attributes
_TOC_ENTRY = re.compile(r'<(h[234]|figure)\b([^>]*\bdata-toc="([234])"[^>]*)>(.*?)(?=</\1>|<)', re.S)
_ID = re.compile(r'\bid="([^"]+)"')
_LABEL = re.compile(r'\bdata-toc-label="([^"]*)"')

#: the table of contents stays in view at the left; below 900 px it sits above the report (static)
_TOC_CSS = """<style>
nav.mpdp-toc { position: fixed; top: 0; left: 0; bottom: 0; width: 17rem; overflow-y: auto;
  padding: 0.8rem 0.6rem 2rem 1rem; box-sizing: border-box; background: #f7f7f9;
  border-right: 1px solid #ddd; font: 13px/1.35 system-ui, sans-serif; z-index: 10; }
nav.mpdp-toc ul { list-style: none; margin: 0; padding-left: 0; }
nav.mpdp-toc ul ul { padding-left: 0.9rem; margin-bottom: 0.3rem; }
nav.mpdp-toc details > summary { cursor: pointer; color: #555; font-size: 0.95em; }
nav.mpdp-toc a { color: #1f5fa8; text-decoration: none; display: block; padding: 1px 0; }
nav.mpdp-toc a:hover { text-decoration: underline; }
body > main, body > .jp-Notebook { margin-left: 17rem; }
[id] { scroll-margin-top: 0.6rem; }
:target { outline: 2px solid #e0a800; outline-offset: 2px; }
details.mpdp-part { border-top: 1px solid #e2e2e2; margin: 0.2rem 0; }
details.mpdp-part > summary { cursor: pointer; padding: 0.2rem 0; }
details.mpdp-part > summary > h3 { display: inline; margin: 0; font-size: 1.15em; }
.mpdp-count { color: #666; font-size: 0.9em; }
.mpdp-part-body { padding: 0.2rem 0 0.8rem 0.2rem; }
figure.mpdp-figure { margin: 0.6rem 0 1.2rem 0; }
figure.mpdp-figure img { max-width: 100%; height: auto; display: block; cursor: zoom-in; }
figure.mpdp-figure figcaption { font-size: 0.95em; color: #333; margin-top: 0.3rem; }
.mpdp-figlinks { color: #555; }
figure.mpdp-figure.mpdp-zoomed { position: fixed; inset: 0; margin: 0; z-index: 100;
  background: #fff; overflow: auto; padding: 0.5rem; box-sizing: border-box; }
figure.mpdp-figure.mpdp-zoomed img { max-width: none; cursor: zoom-out; }
@media (max-width: 900px) {
  nav.mpdp-toc { position: static; width: auto; max-height: 20vh; border-right: 0;
    border-bottom: 1px solid #ddd; padding-top: 0.4rem; padding-bottom: 0.4rem; }
  body > main, body > .jp-Notebook { margin-left: 0; }
}
</style>"""

#: open the collapsed part that holds a link's target, and show a figure full size on click
#: (inline: the report loads nothing)
_SCRIPT = """<script>
(function () {
  function open(id) {
    var el = id && document.getElementById(id);
    for (var p = el; p; p = p.parentElement) { if (p.tagName === "DETAILS") { p.open = true; } }
    return el;
  }
  function reveal() {
    var el = open(decodeURIComponent(location.hash.slice(1)));
    if (el) { el.scrollIntoView(); }
  }
  window.addEventListener("hashchange", reveal);
  document.addEventListener("DOMContentLoaded", function () {
    if (location.hash) { reveal(); }
    document.addEventListener("click", function (e) {
      var img = e.target.closest && e.target.closest("img.mpdp-zoomable");
      if (img) { img.parentElement.classList.toggle("mpdp-zoomed"); }
      var a = e.target.closest && e.target.closest('a[href^="#"]');
      if (a) { open(decodeURIComponent(a.getAttribute("href").slice(1))); }
    });
    document.addEventListener("keydown", function (e) {
      if (e.key === "Escape") {
        Array.prototype.forEach.call(document.querySelectorAll(".mpdp-zoomed"),
          function (f) { f.classList.remove("mpdp-zoomed"); });
      }
    });
  });
})();
</script>"""


def table_of_contents(page: str) -> str:
    """A ``<nav>`` listing the page's ``data-toc`` entries: sections (2) with their parts (3)
    nested, and each part's figures (4) in a collapsed list under it."""
    entries = []
    for _tag, attributes, level, text in _TOC_ENTRY.findall(page):
        ident = _ID.search(attributes)
        if not ident:
            continue
        label = _LABEL.search(attributes)
        entries.append((int(level), ident[1], label[1] if label else text.strip()))
    out: list[str] = []
    index = 0

    def block(level: int) -> None:
        nonlocal index
        while index < len(entries) and entries[index][0] >= level:
            lvl, ident, text = entries[index]
            if lvl > level:  # a deeper entry without its parent: list it at this level
                lvl = level
            index += 1
            out.append(f'<li><a href="#{ident}">{text}</a>')
            if index < len(entries) and entries[index][0] > level:
                deeper = entries[index][0]
                if deeper == 4:
                    start = len(out)
                    out.append("<ul>")
                    block(4)
                    out.append("</ul>")
                    n = sum(item.startswith("<li>") for item in out[start:])
                    out[start] = f"<details><summary>{n} figure{'s' if n != 1 else ''}</summary><ul>"
                    out[-1] = "</ul></details>"
                else:
                    out.append("<ul>")
                    block(deeper)
                    out.append("</ul>")
            out.append("</li>")

    while index < len(entries):
        block(entries[index][0])
    return ('<nav class="mpdp-toc" aria-label="Contents"><p><b><a href="#top">Contents</a></b></p><ul>'
            + "".join(out) + "</ul></nav>")


def add_navigation(page: str) -> str:
    """``page`` with the table of contents (stays in view), an anchor ``#top`` on the body and the
    inline script that opens collapsed parts on navigation and enlarges figures."""
    nav = table_of_contents(page)
    page = page.replace("</head>", _TOC_CSS + _SCRIPT + "</head>", 1)
    return re.sub(r"(<body[^>]*>)", lambda m: m[1] + '<a id="top"></a>' + nav,
                  page, count=1)


class ReportBuildError(MpdpError):
    """The report notebook failed; the message names the cell and the error."""


def check_context(context: Mapping[str, Any]) -> None:
    """Raise :class:`MpdpError` if ``context`` lacks a key the notebook reads."""
    missing = [key for key in CONTEXT_KEYS if key not in context]
    if missing:
        raise MpdpError(f"report context lacks the keys {missing}; expected {list(CONTEXT_KEYS)}")


def load_notebook(path: str | Path) -> nbformat.NotebookNode:
    """Read the jupytext percent-format source as a notebook (python3 kernel)."""
    path = Path(path)
    if not path.is_file():
        raise MpdpError(f"report notebook {path} does not exist")
    nb = jupytext.read(path)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def _failure_message(nb: nbformat.NotebookNode, notebook: Path, exc: Exception) -> str:
    """Which cell failed and why, without the kernel's full traceback."""
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                first = next((line for line in cell.source.splitlines() if line.strip()), "")
                return (
                    f"report notebook {notebook} failed in cell {index} ({first.strip()[:80]!r}): "
                    f"{output.get('ename')}: {output.get('evalue')}"
                )
    return f"report notebook {notebook} failed: {type(exc).__name__}: {str(exc).strip()[:500]}"


def execute_notebook(
    nb: nbformat.NotebookNode,
    context: Mapping[str, Any],
    workdir: Path,
    notebook: Path,
    timeout: int,
) -> None:
    """Execute ``nb`` in place with ``context`` passed through :data:`CONTEXT_ENV`."""
    with tempfile.TemporaryDirectory(prefix="mpdp-report-") as tmp:
        context_path = Path(tmp) / "context.json"
        context_path.write_text(json.dumps(context, indent=2, sort_keys=True, default=str))
        client = NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            resources={"metadata": {"path": str(workdir)}},
        )
        try:
            client.execute(env={**os.environ, CONTEXT_ENV: str(context_path)})
        except (CellExecutionError, CellTimeoutError, DeadKernelError) as exc:
            raise ReportBuildError(_failure_message(nb, notebook, exc)) from None
    for line in move_stderr(nb):
        LOG.warning("report notebook: %s", line)


#: the job's logger (:func:`mpdp.pipeline.runner.get_logger` names it ``mpdp``): what the notebook
#: wrote to stderr goes there, not into the report
LOG = logging.getLogger("mpdp")


def move_stderr(nb: nbformat.NotebookNode) -> list[str]:
    """Remove every stderr output (Python warnings of the figure and table code, with their
    absolute source paths) from the executed notebook and return its lines, for the job log
    (issue 46: no warning or machine path reaches the report)."""
    lines: list[str] = []
    for cell in nb.cells:
        kept = []
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stderr":
                lines += [line for line in str(output.get("text", "")).splitlines() if line.strip()]
            else:
                kept.append(output)
        if "outputs" in cell:
            cell["outputs"] = kept
    return lines


def export_html(nb: nbformat.NotebookNode, title: str) -> str:
    """Self-contained HTML of an executed notebook: outputs only, images inline, and a table of
    contents of its ``data-toc`` headings (:func:`add_navigation`)."""
    exporter = HTMLExporter(
        template_name="lab",
        extra_loaders=[DictLoader({_TEMPLATE_NAME: _TEMPLATE})],
        template_file=_TEMPLATE_NAME,
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        exclude_anchor_links=True,
        embed_images=True,
    )
    nb.metadata["title"] = title
    body, _ = exporter.from_notebook_node(nb)
    return add_navigation(body)


def machine_paths_removed(page: str, context: Mapping[str, Any]) -> str:
    """``page`` with no absolute path of the machine that built it (issue 59): the data mirror
    (``invocation.mirror``) named relative to the project folder (``repo_root``), and any path inside
    the project folder relative to it. A safety net under the sections, which print relative paths."""
    root = context.get("repo_root")
    if not root:
        return page
    roots = list(dict.fromkeys([os.path.abspath(root), os.path.realpath(root)]))
    mirror = (context.get("invocation") or {}).get("mirror")
    if mirror and os.path.isabs(str(mirror)):
        for path in dict.fromkeys([os.path.abspath(mirror), os.path.realpath(mirror)]):
            page = _absolute(path).sub(Path(os.path.relpath(path, roots[0])).as_posix().replace("\\", "\\\\"),
                                       page)
    for path in sorted(roots, key=len, reverse=True):
        page = _absolute(path + os.sep).sub("", page)
        page = _absolute(path).sub(".", page)
    return page


def _absolute(path: str) -> re.Pattern[str]:
    """``path`` where it stands as an absolute path, not inside a relative one (``../../work/x`` holds
    ``/work/x`` after its dots: a relative path already printed is left alone)."""
    return re.compile(r"(?<![\w.\-/])" + re.escape(path))


def render_report(
    notebook: str | Path,
    context: Mapping[str, Any],
    out_html: str | Path,
    workdir: str | Path,
    timeout: int = CELL_TIMEOUT,
    title: str = TITLE,
) -> None:
    """Execute the report notebook with ``context`` and write one self-contained HTML file.

    ``context`` holds the keys of :data:`CONTEXT_KEYS` (see ``notebooks/report.py``);
    ``workdir`` is the kernel's working directory. Raises :class:`ReportBuildError` naming
    the failing cell if the notebook fails; ``out_html`` is then left untouched.
    """
    check_context(context)
    notebook = Path(notebook)
    nb = load_notebook(notebook)
    execute_notebook(nb, context, Path(workdir), notebook, timeout)
    html = machine_paths_removed(export_html(nb, title), context)
    with atomic_path(out_html) as tmp:
        tmp.write_text(html, encoding="utf-8")
