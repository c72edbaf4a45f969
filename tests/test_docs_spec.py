"""The spec ships with the repository as docs/spec/ (issue 46: a clone had only a pointer to the
workspace's ../shared/spec/). Where the workspace copy exists, the two agree file by file, except for
the shipped copy's amendments: whole-line blocks ``<!-- amendment issue N -->`` ... ``<!-- /amendment -->``
inserted by an issue (the workspace copy is read-only); without them the two are byte-identical."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "docs" / "spec"
#: the workspace's spec: ``shared/spec`` in the first folder above the repository that has one
WORKSPACE = next((p / "shared" / "spec" for p in ROOT.parents if (p / "shared" / "spec").is_dir()), None)
FILES = ("README.md", "mechanisms.md", "bounds.md", "experiments.md", "audit.md")
#: an amendment of the shipped spec: whole lines, opened with the issue that made it
AMENDMENT = re.compile(r"^<!-- amendment issue (\d+) -->\n(.*?)^<!-- /amendment -->\n", re.MULTILINE | re.DOTALL)


def without_amendments(text: str) -> str:
    """``text`` with its amendment blocks removed (what the workspace copy must equal)."""
    return AMENDMENT.sub("", text)


def test_the_spec_the_code_cites_is_shipped():
    assert sorted(p.name for p in SHIPPED.glob("*.md")) == sorted(FILES)
    cited = set()
    for path in (ROOT / "src").rglob("*.py"):
        cited |= set(re.findall(r"\b(mechanisms|bounds|experiments|audit)\.md\b", path.read_text(encoding="utf-8")))
    assert cited and all((SHIPPED / f"{name}.md").is_file() for name in cited)


@pytest.mark.skipif(WORKSPACE is None, reason="no workspace copy of the spec (shared/spec) above the repository")
def test_the_shipped_spec_is_the_workspace_spec():
    assert WORKSPACE is not None
    for name in FILES:
        shipped = without_amendments((SHIPPED / name).read_text(encoding="utf-8")).encode("utf-8")
        assert shipped == (WORKSPACE / name).read_bytes(), (
            f"docs/spec/{name} differs from {WORKSPACE / name} outside its amendment blocks: copy it again")


def test_amendments_are_whole_blocks_that_say_what_they_amend():
    for name in FILES:
        text = (SHIPPED / name).read_text(encoding="utf-8")
        opened, closed = text.count("<!-- amendment"), text.count("<!-- /amendment -->")
        blocks = AMENDMENT.findall(text)
        assert opened == closed == len(blocks), f"docs/spec/{name}: an amendment block is not closed or malformed"
        for issue, body in blocks:
            assert body.strip() and f"Amended (issue {issue})" in body, (
                f"docs/spec/{name}: an amendment of issue {issue} does not say 'Amended (issue {issue})'")


def test_without_amendments_removes_exactly_the_blocks():
    text = "a\n<!-- amendment issue 7 -->\n- **Amended (issue 7):** b\n<!-- /amendment -->\nc\n"
    assert without_amendments(text) == "a\nc\n"
    assert without_amendments("a\n<!-- amendment issue 7 -->\nb\n") == "a\n<!-- amendment issue 7 -->\nb\n"
