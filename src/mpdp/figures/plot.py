"""Panel helpers every study's figures use: deterministic saving, message panels, axes texts.

Output is byte-reproducible: fixed DPI, no dates or versions in the PNG/PDF metadata
(:data:`mpdp.figures.style.PNG_METADATA`, guides/tooling.md).
"""

from __future__ import annotations

import logging
import textwrap
import warnings
from collections.abc import Callable
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from mpdp.figures import check, style  # noqa: E402
from mpdp.io import atomic_path  # noqa: E402


def save_figure(fig: Figure, out_png: str | Path, out_pdf: str | Path) -> None:
    """Save ``fig`` as PNG and PDF, atomically and without dates or versions in the files.

    The layout is checked first and recorded next to the PNG (:func:`mpdp.figures.check.run`;
    ``$MPDP_FIGURE_CHECK=strict`` raises on a problem).
    """
    style.readable_log_ticks(fig)
    layout = check.run(fig, out_png, write=False)
    with atomic_path(out_png) as tmp:
        fig.savefig(tmp, format="png", dpi=style.DPI, metadata=style.PNG_METADATA)
    with atomic_path(out_pdf) as tmp:
        fig.savefig(tmp, format="pdf", dpi=style.DPI, metadata=style.PDF_METADATA)
    layout.png_sha256 = check.png_digest(Path(out_png).read_bytes())
    check.record(layout, check.record_path(out_png))


def png_bytes(fig: Figure, record_as: str | Path | None = None) -> bytes:
    """A figure the report draws in memory, as PNG bytes, checked like a saved one: with
    ``record_as`` (the path its PNG would have) its layout record is written next to that path
    (:func:`mpdp.figures.check.run`)."""
    import io

    style.readable_log_ticks(fig)
    layout = check.run(fig, record_as, write=False) if record_as is not None else None
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=style.DPI, metadata=style.PNG_METADATA)
    if layout is not None and record_as is not None:
        layout.png_sha256 = check.png_digest(buffer.getvalue())
        check.record(layout, check.record_path(record_as))
    return buffer.getvalue()


def logged_warnings(step: Callable[[logging.Logger], None]) -> Callable[[logging.Logger], None]:
    """``step`` with every Python warning it raises written to its job's log (one line each, the
    source file's name without its folder) instead of the console (issue 46: a figure warning with
    an absolute machine path reached the report). For the figure scripts' ``run_step``."""

    def logged(log: logging.Logger) -> None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("default")
            try:
                step(log)
            finally:
                for w in caught:
                    log.warning("%s:%d: %s: %s", Path(w.filename).name, w.lineno, w.category.__name__, w.message)

    return logged


def legend_below(fig: Figure, axes: list[Axes], ncol: int = 3, extra: tuple[list, list] = ([], [])) -> None:
    """One legend for ``axes`` (their twins included) under the panels, outside every axes, so it
    never covers data; duplicate labels are shown once. Then :meth:`Figure.tight_layout` leaves it
    room (``extra``: more handles and labels, e.g. line-style keys)."""
    handles, labels = list(extra[0]), list(extra[1])
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in labels and not label.startswith("_"):
                handles.append(handle)
                labels.append(label)
    legend = fig.legend(handles, labels, loc="lower center", ncol=ncol, frameon=False,
                        bbox_to_anchor=(0.5, 0.0))
    height = legend.get_window_extent(fig.canvas.get_renderer()).height / fig.bbox.height
    fig.tight_layout(rect=(0.0, height + 0.01, 1.0, 1.0))


def wrap_title(text: str, width: int = 110) -> str:
    """A (sup)title wrapped line by line at ``width`` characters, so that it is not cut."""
    return "\n".join(textwrap.fill(line, width) for line in text.splitlines())


def message_panel(ax: Axes, title: str, message: str, width: int = 42) -> None:
    """Replace a panel's curves by a readable explanation (wrapped at ``width`` characters)."""
    ax.set_title(title, loc="left")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)
    for spine in ax.spines.values():
        spine.set_linestyle(":")
        spine.set_color("#999999")
    ax.text(
        0.5,
        0.5,
        "\n".join(textwrap.wrap(message, width)),
        ha="center",
        va="center",
        transform=ax.transAxes,
        color="#444444",
    )


def axes_texts(ax: Axes) -> tuple[str, ...]:
    """Every non-empty text of an axes: titles and free text."""
    texts = [ax.get_title(loc) for loc in ("left", "center", "right")]
    texts += [t.get_text() for t in ax.texts]
    return tuple(t for t in texts if t)
