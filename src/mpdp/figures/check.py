"""Layout checks of a drawn figure: boxes that cover data, text cut at the edge, text too small to
read where the report shows it (issue 35).

Measured on the figure's own artists after a draw, in display coordinates (pixels of the saved
PNG at :data:`mpdp.figures.style.DPI`):

* **covered data**: a data point of an axes (the vertices of its lines and markers, and points
  along each line segment) inside a legend or an annotation box (a text with a box, an anchored
  box) of that axes or of the figure;
* **text over a legend**: a free text (a note, an annotation) overlapping a legend;
* **cut text**: a text (title, label, tick label, legend, free text) reaching beyond the figure;
* **text over text**: two texts written over each other — the figure's title, titles, axis labels,
  tick labels, free texts and legend entries of any axes (e.g. a title overprinted by the column
  headings, the x-label of one panel over its neighbour's, crowded tick labels);
* **stacked markers**: more than :data:`STACK_SHARE` of an axes' markers (and at least
  :data:`STACK_MIN`) drawn on top of another marker (centres closer than half a marker);
* **small text**: the smallest glyphs (a mathtext exponent counts at :data:`SCRIPT_SHRINK` of its
  font), at the width the report shows the figure (:data:`COLUMN_PX`, never enlarged), below
  :data:`MIN_SHARE` of the report's body text (:data:`BODY_PX`), or below :data:`NARROW_MIN_PX` in
  an 800 px window (:data:`NARROW_COLUMN_PX`).

:func:`save_figure` (mpdp.figures.plot) runs the check on every figure and records the result next
to the PNG (``<folder>/.layout/<name>.json``, :func:`run`); ``$MPDP_FIGURE_CHECK`` = ``strict``
raises :class:`FigureLayoutError`, a folder path writes a copy of each record there. A figure the
report draws in memory is checked by :func:`mpdp.figures.plot.png_bytes` the same way.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backend_bases import RendererBase
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.offsetbox import AnchoredOffsetbox
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from mpdp.errors import MpdpError

#: environment variable switching the check on (``strict`` or a folder for the JSON records)
CHECK_ENV = "MPDP_FIGURE_CHECK"
#: width of the report's text column at a 1 400 px window (the contents sidebar at the left), px
COLUMN_PX = 1050
#: the report's body text, px (JupyterLab's content font size)
BODY_PX = 14.0
#: the smallest text must be at least this share of the body text where the figure is shown
MIN_SHARE = 0.8
#: the report's column in an 800 px window (no sidebar), px, and the least text size there
NARROW_COLUMN_PX = 760
NARROW_MIN_PX = 8.0
#: matplotlib's mathtext draws sub- and superscripts (the exponent of a log axis' "10⁻²") at this share
SCRIPT_SHRINK = 0.7
#: points sampled along each line segment, so that a box between two vertices is seen too
SEGMENT_SAMPLES = 12


class FigureLayoutError(MpdpError):
    """A figure has a box over its data, text cut at the edge, or text too small to read."""


@dataclass
class Layout:
    """What :func:`check` found; ``problems`` is empty for a figure that passes."""

    name: str
    width_px: float
    smallest_pt: float
    shown_px: float  # the smallest text as shown in the report's column, px
    problems: list[str] = field(default_factory=list)
    #: SHA-256 of the PNG the record belongs to (a record of an older drawing does not match it)
    png_sha256: str = ""


def _boxes(fig: Figure) -> list[tuple[str, Bbox]]:
    """Every legend and annotation box of the figure and its axes (any of them may cover the data
    of any axes: a twin axes, a neighbouring panel)."""
    renderer = fig.canvas.get_renderer()
    boxes: list[tuple[str, Bbox]] = []
    axes = [ax for ax in fig.axes if ax.get_visible()]
    legends = [a for a in (*(ax.get_legend() for ax in axes), *fig.legends) if a is not None and a.get_visible()]
    boxes += [("legend", legend.get_window_extent(renderer)) for legend in legends]
    for text in [*(t for ax in axes for t in ax.texts), *fig.texts]:
        if text.get_visible() and text.get_bbox_patch() is not None and text.get_text().strip():
            boxes.append((f"box {text.get_text()[:30]!r}", text.get_bbox_patch().get_window_extent(renderer)))
    for ax in axes:
        for child in ax.get_children():
            if isinstance(child, AnchoredOffsetbox) and child.get_visible():
                boxes.append(("anchored box", child.get_window_extent(renderer)))
    return boxes


def _points(ax: Axes) -> np.ndarray:
    """Display coordinates of ``ax``'s data: line and marker vertices and points along segments."""
    out = []
    for line in ax.get_lines():
        if not line.get_visible():
            continue
        xy = np.column_stack([np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)])
        if xy.size == 0 or _is_reference(line):
            continue
        disp = line.get_transform().transform(xy)
        disp = disp[np.isfinite(disp).all(axis=1)]
        if len(disp) > 1 and line.get_linestyle() not in ("None", "", " "):
            t = np.linspace(0, 1, SEGMENT_SAMPLES, endpoint=False)[1:]
            starts, ends = disp[:-1], disp[1:]
            disp = np.vstack([disp, *(starts + (ends - starts) * s for s in t)])
        out.append(disp)
    for collection in ax.collections:  # scatter markers (bands and arrows are not data points)
        offsets = np.asarray(collection.get_offsets(), float)
        if (type(collection).__name__ == "PathCollection" and collection.get_visible()
                and offsets.ndim == 2 and len(offsets)):
            disp = collection.get_offset_transform().transform(offsets)
            out.append(disp[np.isfinite(disp).all(axis=1)])
    inside = [p[_in(ax.get_window_extent(), p, 0.5)] for p in out if len(p)]
    return np.vstack(inside) if inside else np.empty((0, 2))


def _is_reference(line: Line2D) -> bool:
    """A horizontal or vertical reference line spanning the axes (axhline/axvline): not data."""
    x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
    return len(x) == 2 and line.get_transform() is not line.axes.transData and (x[0] == x[1] or y[0] == y[1])


def _in(box: Bbox, points: np.ndarray, margin: float) -> np.ndarray:
    return ((points[:, 0] > box.x0 + margin) & (points[:, 0] < box.x1 - margin)
            & (points[:, 1] > box.y0 + margin) & (points[:, 1] < box.y1 - margin))


def drawn_size(text: Text) -> float:
    """The size (pt) of the smallest glyphs of ``text``: a mathtext sub- or superscript is drawn at
    :data:`SCRIPT_SHRINK` of the font size (issue 59: log-axis exponents at 7 pt)."""
    raw = text.get_text()
    script = raw.count("$") >= 2 and ("^" in raw or "_" in raw)
    return float(text.get_fontsize()) * (SCRIPT_SHRINK if script else 1.0)


def _texts(fig: Figure) -> list[Text]:
    """Every drawn, non-empty text of the figure (titles, labels, tick labels of the ticks inside
    the view, legends, free text)."""
    all_ticks, drawn = set(), set()
    for ax in fig.axes:
        for axis in ax._axis_map.values():  # x, y (and z)
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                all_ticks |= {id(tick.label1), id(tick.label2)}
            if ax.axison:  # the ticks matplotlib draws (inside the view, of an axes with its axis on)
                for tick in axis._update_ticks():
                    drawn |= {id(tick.label1), id(tick.label2)}
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()
            and (t.axes is None or t.axes.get_visible())
            and (id(t) not in all_ticks or id(t) in drawn)]


#: two labels overlapping by less than this (px, each way) are not counted (glyph boxes touch)
OVERLAP_PX = 1.0


def _labels(fig: Figure) -> list[Text]:
    """The titles, axis labels and drawn tick labels of every visible axes (no legend or free text)."""
    out: list[Text] = []
    for ax in fig.axes:
        if not ax.get_visible() or not ax.axison:
            continue
        out += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis._update_ticks():
                out += [tick.label1, tick.label2]
    return [t for t in out if t.get_visible() and t.get_text().strip()]


def _written(fig: Figure) -> list[Text]:
    """Every text whose box may not meet another's (issue 59): :func:`_labels`, the figure's title and
    super labels, free texts of the figure and its axes, and each legend's title and entries."""
    out = _labels(fig)
    out += [t for t in (getattr(fig, "_suptitle", None), getattr(fig, "_supxlabel", None),
                        getattr(fig, "_supylabel", None)) if t is not None]
    out += list(fig.texts)
    for ax in fig.axes:
        if ax.get_visible():
            out += list(ax.texts)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    for legend in [*(ax.get_legend() for ax in axes), *fig.legends]:
        if legend is not None and legend.get_visible():
            out += [legend.get_title(), *legend.get_texts()]
    seen: set[int] = set()
    return [t for t in out if t.get_visible() and t.get_text().strip() and not (id(t) in seen or seen.add(id(t)))]


def _overlapping_labels(fig: Figure, renderer) -> list[tuple[str, str]]:
    """Pairs of texts (:func:`_written`) whose boxes overlap by more than :data:`OVERLAP_PX` each way:
    a title overprinted by column headings, crowded tick labels, a note over an axis label."""
    labels = _written(fig)
    extents = [t.get_window_extent(renderer) for t in labels]
    found = []
    for i, (a, box_a) in enumerate(zip(labels, extents, strict=True)):
        for b, box_b in zip(labels[i + 1:], extents[i + 1:], strict=True):
            dx = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
            dy = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
            same = a.get_text() == b.get_text() and abs(box_a.x0 - box_b.x0) < 1 and abs(box_a.y0 - box_b.y0) < 1
            if dx > OVERLAP_PX and dy > OVERLAP_PX and not same:  # (one label drawn twice: a twin axes')
                found.append((a.get_text(), b.get_text()))
    return found


#: markers whose centres are closer than this share of their size are drawn on top of each other
STACK_DISTANCE = 0.5
#: an axes fails when more than this share of its markers (and at least :data:`STACK_MIN` of them)
#: lie on top of another one
STACK_SHARE = 0.25
STACK_MIN = 6


def _markers(ax: Axes) -> tuple[np.ndarray, float]:
    """Display coordinates of the free-standing markers of ``ax`` (markers drawn without a joining line,
    scatter points; two curves running together are seen as lines) and their typical size in px."""
    from mpdp.figures import style

    points, sizes = [], []
    for line in ax.get_lines():
        if (not line.get_visible() or line.get_marker() in (None, "None", "", " ", ",") or _is_reference(line)
                or line.get_linestyle() not in ("None", "", " ")  # a curve's markers are joined: not a cloud
                or isinstance(line.get_marker(), int) or line.get_marker() in ("_", "|")):  # error-bar caps
            continue
        xy = np.column_stack([np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)])
        if xy.size:
            points.append(line.get_transform().transform(xy))
            sizes.append(line.get_markersize() * style.DPI / 72)
    for collection in ax.collections:
        offsets = np.asarray(collection.get_offsets(), float)
        if (type(collection).__name__ == "PathCollection" and collection.get_visible()
                and offsets.ndim == 2 and len(offsets)):
            points.append(collection.get_offset_transform().transform(offsets))
            area = np.asarray(collection.get_sizes(), float)
            sizes.append(float(np.sqrt(area.mean())) * style.DPI / 72 if area.size else 6.0)
    if not points:
        return np.empty((0, 2)), 0.0
    xy = np.vstack(points)
    keep = np.isfinite(xy).all(axis=1) & _in(ax.get_window_extent(), xy, -1.0) if len(xy) else np.array([], bool)
    return xy[keep], float(np.median(sizes))


def stacked(ax: Axes) -> tuple[int, int]:
    """(markers on top of another marker, markers) of ``ax``: centres closer than
    :data:`STACK_DISTANCE` of the marker size (issue 59: about 40 markers at ε = 1)."""
    xy, size = _markers(ax)
    if len(xy) < 2:
        return 0, len(xy)
    from scipy.spatial import cKDTree

    nearest, _ = cKDTree(xy).query(xy, k=2)  # the point itself, then its nearest other marker
    return int((nearest[:, 1] < STACK_DISTANCE * max(size, 1.0)).sum()), len(xy)


def renderer_of(fig: Figure) -> RendererBase:
    """The renderer that measures ``fig``'s artists; a Figure made without pyplot gets Agg's canvas."""
    if not hasattr(fig.canvas, "get_renderer"):
        FigureCanvasAgg(fig)
    return fig.canvas.get_renderer()


def check(fig: Figure, name: str = "figure") -> Layout:
    """The :class:`Layout` of ``fig`` as saved (see the module docstring)."""
    from mpdp.figures import style

    fig.set_dpi(style.DPI)
    style.readable_log_ticks(fig)  # as save_figure writes it (idempotent)
    renderer = renderer_of(fig)
    fig.canvas.draw()
    width = fig.get_figwidth() * style.DPI
    height = fig.get_figheight() * style.DPI
    texts = _texts(fig)
    smallest = min((drawn_size(t) for t in texts), default=float("nan"))
    scale = min(1.0, COLUMN_PX / width)
    shown = smallest * style.DPI / 72 * scale
    layout = Layout(name, width, float(smallest), float(shown))
    if np.isfinite(shown) and shown < MIN_SHARE * BODY_PX - 1e-9:
        layout.problems.append(f"smallest text {smallest:g} pt is {shown:.1f} px where the report shows the "
                               f"figure, below {MIN_SHARE:.0%} of the {BODY_PX:g} px body text")
    narrow = smallest * style.DPI / 72 * min(1.0, NARROW_COLUMN_PX / width)
    if np.isfinite(narrow) and shown >= MIN_SHARE * BODY_PX - 1e-9 and narrow < NARROW_MIN_PX - 1e-9:
        layout.problems.append(f"smallest text {smallest:g} pt is {narrow:.1f} px in an 800 px window, below "
                               f"{NARROW_MIN_PX:g} px")
    for t in texts:
        box = t.get_window_extent(renderer)
        if box.x0 < -1 or box.y0 < -1 or box.x1 > width + 1 or box.y1 > height + 1:
            layout.problems.append(f"text {t.get_text()[:40]!r} is cut at the figure's edge")
    for a, b in _overlapping_labels(fig, renderer):
        layout.problems.append(f"text {a[:40]!r} overlaps {b[:40]!r}")
    boxes = _boxes(fig)
    legends = [box for what, box in boxes if what == "legend"]
    for t in texts:  # free text (notes, labels) written over a legend
        if t.axes is not None and t in t.axes.texts or t in fig.texts:
            extent = t.get_window_extent(renderer)
            if any(extent.overlaps(box) for box in legends):
                layout.problems.append(f"text {t.get_text()[:40]!r} overlaps a legend")
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        n_stacked, n_markers = stacked(ax)
        if n_stacked >= STACK_MIN and n_stacked > STACK_SHARE * n_markers:
            title = ax.get_title() or ax.get_title(loc="left") or "an axes"
            layout.problems.append(f"{n_stacked} of {n_markers} markers of {title[:40]!r} lie on top of another "
                                   f"marker (more than {STACK_SHARE:.0%})")
        points = _points(ax)
        if not len(points):
            continue
        for what, box in boxes:
            covered = int(_in(box, points, 1.0).sum())
            if covered:
                title = ax.get_title() or ax.get_title(loc="left") or "an axes"
                layout.problems.append(f"{what} covers {covered} data points of {title[:40]!r}")
    return layout


#: the folder, next to a figure's PNG, where :func:`record` keeps its layout record
RECORD_DIR = ".layout"


def record_path(out_png: str | Path) -> Path:
    """Where the layout record of the figure saved as ``out_png`` is kept (next to it, hidden)."""
    out_png = Path(out_png)
    return out_png.parent / RECORD_DIR / f"{out_png.stem}.json"


def png_digest(png: bytes) -> str:
    """The SHA-256 a layout record keeps of its figure's PNG."""
    import hashlib

    return hashlib.sha256(png).hexdigest()


def record(layout: Layout, path: str | Path) -> None:
    """Write a layout record (JSON of :class:`Layout`) atomically."""
    from mpdp.io import atomic_path

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(asdict(layout), indent=1))


def read_record(path: str | Path) -> Layout:
    """A layout record written by :func:`record`."""
    from mpdp.io import read_json

    return Layout(**read_json(path, "figure layout record"))


def run(fig: Figure, out_png: str | Path, write: bool = True) -> Layout:
    """The check :func:`mpdp.figures.plot.save_figure` runs on every figure it saves (issue 46).

    The layout is always recorded next to the PNG (:func:`record_path`), so that the figures of any
    build, full or smoke, can be checked after the fact (tests/figures/test_built_figures.py). With
    ``$MPDP_FIGURE_CHECK`` = ``strict`` a problem raises :class:`FigureLayoutError`; set to a
    folder, the record is also written there.
    """
    layout = check(fig, Path(out_png).stem)
    if write:  # save_figure writes it after the PNG, so that a record is never older than its figure
        record(layout, record_path(out_png))
    mode = os.environ.get(CHECK_ENV, "")
    if mode == "strict":
        if layout.problems:
            raise FigureLayoutError(f"{Path(out_png).name}: " + "; ".join(layout.problems))
    elif mode:
        record(layout, Path(mode) / f"{Path(out_png).stem}.json")
    return layout
