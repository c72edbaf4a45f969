"""The shared layers are study-agnostic: no module of them imports ``mpdp.studies``.

Each study (``src/mpdp/studies/<study>/``) owns its figures and report section and builds on
the shared layers; the reverse dependency would put one study's code back into what every
study uses. Checked by parsing the source (imports inside functions count too).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "mpdp"

#: the layers every study uses (paths relative to src/mpdp)
SHARED_LAYERS = ("figures", "report", "claims", "multiverse", "results.py", "privacy", "engine", "data",
                 "models", "mechanisms", "bounds.py", "seeding.py", "io.py", "tuning.py", "errors.py")


def _modules() -> list[Path]:
    files: list[Path] = []
    for rel in SHARED_LAYERS:
        path = PACKAGE / rel
        assert path.exists(), f"shared layer {rel} is gone: update SHARED_LAYERS"
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return files


def _absolute(node: ast.ImportFrom, module: Path) -> str:
    """The absolute dotted name of a ``from ... import`` (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    package = list(module.relative_to(PACKAGE.parent).with_suffix("").parts)[: -node.level]
    return ".".join([*package, *([node.module] if node.module else [])])


def study_imports(source: str, module: Path) -> list[str]:
    """Every import of ``mpdp.studies`` in ``source`` (the text of ``module``), as ``line: name``."""
    hits = []
    for node in ast.walk(ast.parse(source, filename=str(module))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, module)
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in {"import_module", "__import__"} and isinstance(node.args[0].value, str):
                names = [node.args[0].value]
        hits += [f"{node.lineno}: {n}" for n in names if n == "mpdp.studies" or n.startswith("mpdp.studies.")]
    return hits


@pytest.mark.parametrize("module", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_shared_module_imports_no_study(module):
    hits = study_imports(module.read_text(), module)
    assert not hits, f"{module.relative_to(PACKAGE)} imports a study (move the code into the study): {hits}"


def test_the_check_sees_every_import_form():
    """The parser catches absolute, from-, relative, nested and dynamic imports of a study."""
    where = PACKAGE / "report" / "sections.py"  # relative imports resolve from here
    sources = {
        "import mpdp.studies.wddp.report": True,
        "from mpdp.studies.wddp import report": True,
        "from mpdp import studies": True,
        "from ..studies.wddp import figures": True,
        "import importlib\nimportlib.import_module('mpdp.studies.admm.report')": True,
        "def f():\n    from mpdp.studies import ls": True,
        "from mpdp import claims\nimport mpdp.figures.style\nfrom . import build": False,
    }
    for source, imports_a_study in sources.items():
        assert bool(study_imports(source, where)) == imports_a_study, source
