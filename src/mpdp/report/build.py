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

#: a heading of the table of contents (the exporter may reorder the attributes)
_TOC_HEADING = re.compile(r'<h([23])\b([^>]*\bdata-toc="[23]"[^>]*)>(.*?)</h\1>', re.S)
_ID = re.compile(r'\bid="([^"]+)"')

#: the table of contents stays in view at the left; below 900 px it sits above the report
_TOC_CSS = """<style>
nav.mpdp-toc { position: fixed; top: 0; left: 0; bottom: 0; width: 17rem; overflow-y: auto;
  padding: 0.8rem 0.6rem 2rem 1rem; box-sizing: border-box; background: #f7f7f9;
  border-right: 1px solid #ddd; font: 13px/1.35 system-ui, sans-serif; z-index: 10; }
nav.mpdp-toc ul { list-style: none; margin: 0; padding-left: 0; }
nav.mpdp-toc ul ul { padding-left: 0.9rem; margin-bottom: 0.3rem; }
nav.mpdp-toc a { color: #1f5fa8; text-decoration: none; display: block; padding: 1px 0; }
nav.mpdp-toc a:hover { text-decoration: underline; }
body > main, body > .jp-Notebook { margin-left: 17rem; }
[id] { scroll-margin-top: 0.6rem; }
:target { outline: 2px solid #e0a800; outline-offset: 2px; }
figure.mpdp-figure { margin: 0.6rem 0 1.2rem 0; }
figure.mpdp-figure img { max-width: 100%; height: auto; display: block; }
figure.mpdp-figure figcaption { font-size: 0.9em; color: #333; margin-top: 0.3rem; }
@media (max-width: 900px) {
  nav.mpdp-toc { position: fixed; width: auto; border-right: 0; border-bottom: 1px solid #ddd; }
  body > main, body > .jp-Notebook { margin-left: 0; }
}
</style>"""


def table_of_contents(page: str) -> str:
    """A ``<nav>`` listing the page's ``data-toc`` headings (h2, with their h3 nested)."""
    items: list[str] = []
    open_sub = False
    for level, attributes, text in _TOC_HEADING.findall(page):
        link = f'<a href="#{_ID.search(attributes)[1]}">{text}</a>'
        if level == "2":
            items.append(("</ul></li>" if open_sub else "</li>" if items else "") + f"<li>{link}")
            open_sub = False
        else:
            items.append(("" if open_sub else "<ul>") + f"<li>{link}</li>")
            open_sub = True
    if items:
        items.append("</ul></li>" if open_sub else "</li>")
    return ('<nav class="mpdp-toc" aria-label="Contents"><p><b><a href="#top">Contents</a></b></p><ul>'
            + "".join(items) + "</ul></nav>")


def add_navigation(page: str) -> str:
    """``page`` with the table of contents (stays in view) and an anchor ``#top`` on the body."""
    nav = table_of_contents(page)
    page = page.replace("</head>", _TOC_CSS + "</head>", 1)
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
    html = export_html(nb, title)
    with atomic_path(out_html) as tmp:
        tmp.write_text(html, encoding="utf-8")
