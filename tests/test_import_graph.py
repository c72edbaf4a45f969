"""``src/mpdp`` has no import circle, and its layers import one way (issues 36, 44).

The graph is read from the source with :mod:`ast` (imports inside functions count too, since a
lazy import only hides a circle): an edge ``a -> b`` for every ``import`` or ``from ... import``
of module ``b`` (or of a name of package ``b``) in module ``a``. A package's ``__init__`` is the
package's own node, and its edges count: a package module that re-exports its submodules'
names while they import the package is a package-level circle.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "mpdp"


def _name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the modules of the package it imports (resolved to existing modules)."""
    modules = {_name(p, root): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base_parts = module.split(".")[: len(module.split(".")) - node.level + is_package]
                    base = ".".join([*base_parts, *([node.module] if node.module else [])])
                else:
                    base = node.module or ""
                targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
            for target in targets:
                # the longest existing module the target names (a submodule, or the package of a name)
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != module:
                    graph[module].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _parent_package_edges(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph without the implicit edge of a submodule to its own package's ``__init__``
    (Python runs a package's ``__init__`` first; a re-exporting ``__init__`` is not a circle)."""
    return {m: {t for t in targets if not m.startswith(t + ".")} for m, targets in graph.items()}


def test_no_import_circle_in_the_package():
    circles = cycles(_parent_package_edges(import_graph()))
    assert not circles, "import circles: " + "; ".join(" <-> ".join(c) for c in circles)


def test_no_import_circle_through_a_package_module():
    """With the package ``__init__`` edges (``from mpdp.engine import kernel`` imports the package
    ``mpdp.engine`` too): no package module imports a module that imports the package back."""
    circles = cycles(import_graph())
    assert not circles, "package-level import circles: " + "; ".join(" <-> ".join(c) for c in circles)


def test_the_package_circle_finder_finds_a_re_exporting_init(tmp_path):
    pkg = tmp_path / "mpdp"
    (pkg / "engine").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "engine" / "__init__.py").write_text("from mpdp.engine.gd import run\n")
    (pkg / "engine" / "gd.py").write_text("from mpdp.engine import kernel\n\ndef run():\n    pass\n")
    (pkg / "engine" / "kernel.py").write_text("")
    assert cycles(import_graph(pkg)) == [["mpdp.engine", "mpdp.engine.gd"]]
    assert cycles(_parent_package_edges(import_graph(pkg))) == []


#: the shared layers (docs/development.md): they never import a study, the audit, the multiverse
#: or the pipeline
SHARED = ("mpdp.errors", "mpdp.io", "mpdp.seeding", "mpdp.config", "mpdp.data", "mpdp.privacy",
          "mpdp.models", "mpdp.engine", "mpdp.mechanisms", "mpdp.bounds", "mpdp.claims", "mpdp.results",
          "mpdp.tuning", "mpdp.figures", "mpdp.report")
#: the layers above the studies
ABOVE_STUDIES = ("mpdp.audit", "mpdp.multiverse", "mpdp.pipeline")


def _under(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _study(module: str, studies: set[str]) -> str | None:
    """The study package (``mpdp.studies.<id>``) that ``module`` belongs to, None outside one."""
    parts = module.split(".")
    package = ".".join(parts[:3])
    return package if parts[:2] == ["mpdp", "studies"] and package in studies else None


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """The imports against the layers: a shared layer importing a study or an upper layer, a study
    importing an upper layer, a study importing another study (what two studies share lives in a
    shared layer: e.g. the batch trainer in :mod:`mpdp.mechanisms.gradient_batch`, the voting
    models in :mod:`mpdp.models.voting_erm`)."""
    studies = {m for m in graph if m.count(".") == 2 and m.startswith("mpdp.studies.")
               and any(other.startswith(m + ".") for other in graph)}
    bad = []
    for module, targets in graph.items():
        own = _study(module, studies)
        for target in targets:
            if _under(module, SHARED) and _under(target, ("mpdp.studies", *ABOVE_STUDIES)):
                bad.append(f"{module} -> {target}")
            if _under(module, ("mpdp.studies",)) and _under(target, ABOVE_STUDIES):
                bad.append(f"{module} -> {target}")
            if own is not None and _study(target, studies) not in (None, own):
                bad.append(f"{module} -> {target} (another study)")
    return sorted(bad)


def test_layers_import_one_way():
    """Shared layers -> no study or upper layer; a study -> shared layers (and its own package)
    only, never another study; the audit reads the benchmark's registry, never the other way
    (issue 44)."""
    graph = import_graph()
    assert _under("mpdp.studies.wddp.plan", ("mpdp.studies",)) and set(SHARED) <= set(graph)
    bad = layer_violations(graph)
    assert not bad, "imports against the layers: " + "; ".join(bad)


def test_a_study_importing_another_study_is_caught(tmp_path):
    """The checker itself: a planted study -> study import (lazy, inside a function) is reported;
    the registry and the studies' shared modules (``mpdp.studies.interface``) may import studies."""
    pkg = tmp_path / "mpdp"
    for folder in ("studies/alpha", "studies/beta"):
        (pkg / folder).mkdir(parents=True)
    for init in ("__init__.py", "studies/__init__.py", "studies/alpha/__init__.py", "studies/beta/__init__.py"):
        (pkg / init).write_text("")
    (pkg / "studies" / "interface.py").write_text("")
    (pkg / "studies" / "registry.py").write_text("from mpdp.studies.alpha import study\nfrom mpdp.studies.beta import study\n")
    (pkg / "studies" / "alpha" / "study.py").write_text("from mpdp.studies import interface\n")
    (pkg / "studies" / "beta" / "study.py").write_text("def f():\n    from mpdp.studies.alpha import study\n")
    assert layer_violations(import_graph(pkg)) == ["mpdp.studies.beta.study -> mpdp.studies.alpha (another study)",
                                                   "mpdp.studies.beta.study -> mpdp.studies.alpha.study (another study)"]
    (pkg / "studies" / "beta" / "study.py").write_text("from mpdp.studies import interface\n")
    assert layer_violations(import_graph(pkg)) == []


def test_the_engine_imports_one_way():
    graph = _parent_package_edges(import_graph())
    order = ["mpdp.engine.kernel", "mpdp.engine.noise", "mpdp.engine.layout", "mpdp.engine.path",
             "mpdp.engine.gd", "mpdp.engine.provenance"]
    for i, module in enumerate(order):
        later = set(order[i + 1:])
        assert not graph[module] & later, f"{module} imports {graph[module] & later}"
    for module, targets in graph.items():
        if module != "mpdp.engine.provenance" and not module.startswith("mpdp.engine"):
            continue
        assert "mpdp.engine.provenance" not in targets or module == "mpdp.engine.provenance"


def test_the_circle_finder_finds_a_planted_circle(tmp_path):
    pkg = tmp_path / "mpdp"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from mpdp.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from mpdp import a\n")
    assert cycles(import_graph(pkg)) == [["mpdp.a", "mpdp.sub.b"]]
