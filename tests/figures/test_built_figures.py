"""Every figure of a finished build passes the layout check (issue 46), full config or smoke profile.

The check needs the drawn figure, not its PNG, so :func:`mpdp.figures.check.run` records each
figure's layout next to its PNG when it is drawn (``reports/figures/.layout/<name>.json``; the
report's in-memory figures and the claims' maps and forest plots included). Here the records of the
build in ``$MPDP_BUILD`` (default: this repository's working tree) are read: every PNG under
``reports/figures`` must have the record of its own drawing (the record keeps the PNG's SHA-256),
and no record may list a problem
(a box over data, text cut at the edge, text smaller than 80 % of the report's body text where it
is shown). Without built figures the test is skipped and says where it looked.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mpdp.figures import check

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("MPDP_BUILD", ROOT))
FIGURES = BUILD / "reports" / "figures"


def built_pngs(folder: Path = FIGURES) -> list[Path]:
    """Every figure PNG of the build (the forest plots' folders included)."""
    return sorted(p for p in folder.rglob("*.png") if check.RECORD_DIR not in p.parts) if folder.is_dir() else []


def records(folder: Path = FIGURES) -> list[Path]:
    """Every layout record of the build (in-memory figures have a record and no PNG)."""
    return sorted(folder.rglob(f"{check.RECORD_DIR}/*.json")) if folder.is_dir() else []


def _skip_if_unbuilt() -> None:
    if not built_pngs():
        pytest.skip(f"no built figures in {FIGURES} (build first, or set MPDP_BUILD to a build's folder)")


def _unchecked(pngs: list[Path]) -> list[Path]:
    """The PNGs without a layout record of their own drawing (none, or one whose digest differs)."""
    return [png for png in pngs if not check.record_path(png).is_file()
            or check.read_record(check.record_path(png)).png_sha256 != check.png_digest(png.read_bytes())]


def test_every_built_figure_was_checked_when_it_was_drawn():
    _skip_if_unbuilt()
    unchecked = [str(png.relative_to(FIGURES)) for png in _unchecked(built_pngs())]
    assert not unchecked, (f"{len(unchecked)} figures of {FIGURES} have no layout record of their drawing "
                           f"(drawn without mpdp.figures.plot.save_figure, or redrawn since): {unchecked[:20]}")


def test_every_built_figure_passes_the_layout_check():
    _skip_if_unbuilt()
    failing = {}
    for path in records():
        layout = check.read_record(path)
        if layout.problems:
            failing[str(path.relative_to(FIGURES))] = layout.problems
    assert not failing, "\n".join(f"{name}: {'; '.join(problems)}" for name, problems in failing.items())


def test_the_records_are_what_the_check_finds(tmp_path):
    """The record of a figure with a fault lists it, and the test above reads it (no build needed)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from mpdp.figures.plot import png_bytes, save_figure

    fig = Figure(figsize=(8, 3))
    ax = fig.add_subplot()
    ax.plot([0, 1], [0.5, 0.5], label="a line")
    ax.legend(loc="center", fontsize=4)
    save_figure(fig, tmp_path / "bad.png", tmp_path / "bad.pdf")
    assert built_pngs(tmp_path) == [tmp_path / "bad.png"]
    assert _unchecked([tmp_path / "bad.png"]) == []
    (tmp_path / "bad.png").write_bytes(b"\x89PNG another drawing")  # a figure redrawn since its record
    assert _unchecked([tmp_path / "bad.png"]) == [tmp_path / "bad.png"]
    problems = check.read_record(check.record_path(tmp_path / "bad.png")).problems
    assert any("legend covers" in p for p in problems) and any("smallest text 4 pt" in p for p in problems)
    assert png_bytes(fig, tmp_path / "in_memory.png").startswith(b"\x89PNG")
    assert not (tmp_path / "in_memory.png").exists()
    assert records(tmp_path) == [check.record_path(tmp_path / "bad.png"), check.record_path(tmp_path / "in_memory.png")]
