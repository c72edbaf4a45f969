"""Code hashes of the workflow's rules, derived from the import graph (issue 44), over code, not text.

Snakemake does not track code imported from ``src/``. Each rule with a script declares as its
``code`` param the hash of exactly the package sources its script can run
(:func:`script_hash`): the script's transitive imports of :mod:`mpdp`, read from the source with
:mod:`ast`, never listed by hand. So an edit of a module reruns exactly the rules whose scripts
import it, directly or through other modules (docs/reruns.md "When does a step rerun?").

What counts as an import of module ``a`` (:func:`import_graph`):

- every ``import`` and ``from ... import`` in ``a``, at any depth (a lazy import inside a function
  counts: it runs when the function does); ``from mpdp.engine import kernel`` names the module
  ``mpdp.engine.kernel``, ``from mpdp.results import read`` the module ``mpdp.results``;
- a string constant that names a module of the package (``"mpdp.studies.wddp.figures"``: a
  module imported by name, e.g. the warm renderer's preloads);
- the ``__init__`` of every package above a module (Python runs it first).

A module's sources (:func:`module_sources`) are its file, the non-Python files beside it (the
engine's C sources, compiled into the kernel it loads) and the files of the package it names by a
relative path in a string constant (``"schemas/config.schema.yaml"``).

**What is hashed is the code, not the text** (:func:`code_digest`). A Python file counts by its
syntax tree without docstrings (the first string statement of a module, class or function body)
and without comments, which the tree does not hold; line numbers and formatting do not count
either. So an edit of comments, docstrings, blank lines or line breaks reruns nothing, while any
edit of the code (a changed constant included) reruns exactly the rules whose closure holds the
module. Nothing in the package reads a docstring at run time (``__doc__``), so a docstring is
never an input of a job. A YAML file counts by its parsed content (its comments do not); any
other file (the engine's C sources and headers) by its bytes, as the compiler reads them.

**Files loaded at run time** (issue 58). A module may import a file the config names
(``importlib``), which no import statement shows: the benchmark registry imports the plug-in
mechanism modules of ``benchmark.mechanisms``. The caller passes them as ``loads``, pairs
(module of the package, files it loads): where that module is among those the scripts can run,
each file (outside the package: its code, named by its path relative to the project) and the
package modules it imports count too, so that an edit of a plug-in reruns the rules whose jobs
import it. Files a plug-in itself imports from outside the package are not followed.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml

#: src/mpdp: the package whose sources the hashes cover
PACKAGE_ROOT = Path(__file__).resolve().parents[1]
#: ``loads`` of :func:`script_hash` (module docstring): (module, files it loads at run time) pairs
Loads = tuple[tuple[str, tuple[Path, ...]], ...]
#: files next to a module that are build products or caches, not sources
_NOT_SOURCES = frozenset({".pyc", ".so", ".pyd", ".dll", ".dylib"})


def module_name(path: Path, root: Path = PACKAGE_ROOT) -> str:
    """``src/mpdp/engine/gd.py`` -> ``mpdp.engine.gd``; a package's ``__init__`` is the package."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def modules(root: Path = PACKAGE_ROOT) -> dict[str, Path]:
    """Every module of the package under ``root``: dotted name -> file."""
    return {module_name(p, root): p for p in sorted(root.rglob("*.py")) if "__pycache__" not in p.parts}


def _resolve(target: str, known: Mapping[str, Path]) -> str | None:
    """The longest module of ``known`` that ``target`` names (a submodule, or the module of a name)."""
    while target and target not in known:
        target = target.rpartition(".")[0]
    return target or None


def imports_of(tree: ast.AST, module: str, is_package: bool, known: Mapping[str, Path]) -> set[str]:
    """The modules of ``known`` that the parsed module ``module`` imports (module docstring)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = module.split(".")
                base_parts = parts[: len(parts) - node.level + is_package]
                base = ".".join([*base_parts, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in known:
            targets = [node.value]
        for target in targets:
            resolved = _resolve(target, known)
            if resolved and resolved != module:
                found.add(resolved)
    return found


@functools.cache
def import_graph(root: Path = PACKAGE_ROOT) -> dict[str, frozenset[str]]:
    """module -> the package's modules it imports (the edges of the module docstring, without
    the implicit ones to the packages above it: :func:`closure` adds those)."""
    known = modules(root)
    return {
        name: frozenset(imports_of(_parsed(path), name, path.name == "__init__.py", known))
        for name, path in known.items()
    }


def closure(start: Iterable[str], root: Path = PACKAGE_ROOT) -> set[str]:
    """``start`` and every module it imports, transitively, with the packages above each."""
    graph = import_graph(root)
    seen: set[str] = set()
    todo = list(start)
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        parent = module.rpartition(".")[0]
        todo.extend([*graph[module], *([parent] if parent else [])])
    return seen


def script_modules(*scripts: str | Path, root: Path = PACKAGE_ROOT) -> set[str]:
    """Every module of the package that ``scripts`` (files outside it: a rule's script and the
    notebook it executes) can run."""
    direct: set[str] = set()
    for script in scripts:
        path = Path(script)
        direct |= imports_of(ast.parse(path.read_text(), filename=str(path)), "__main__", False, modules(root))
    return closure(direct, root)


@functools.cache
def _parsed(path: Path) -> ast.AST:
    """A module's syntax tree, parsed once per process (a Snakemake run hashes every rule's
    script: without it each module was parsed again for every script that imports it)."""
    return _tree(path.read_bytes(), str(path))


@functools.cache
def _tree(data: bytes, name: str) -> ast.AST:
    """The syntax tree of source ``data``, parsed once per content (never modified: shared)."""
    return ast.parse(data, filename=name)


@functools.cache
def _named_files(path: Path, root: Path) -> frozenset[Path]:
    """Files of the package that ``path`` names by a relative path in a string constant."""
    found = set()
    for node in ast.walk(_parsed(path)):
        value = node.value if isinstance(node, ast.Constant) else None
        if (isinstance(value, str) and "/" in value and len(value) < 200 and not any(c.isspace() for c in value)
                and not value.startswith(("/", "~")) and ".." not in value):
            for base in (path.parent, root):
                candidate = base / value
                if candidate.suffix and candidate.is_file():
                    found.add(candidate.resolve())
    return frozenset(found)


def module_sources(names: Iterable[str], root: Path = PACKAGE_ROOT) -> list[Path]:
    """The source files of modules ``names`` (module docstring), sorted, each once."""
    known = modules(root)
    files: set[Path] = set()
    for name in names:
        path = known[name]
        files.add(path.resolve())
        files.update(p.resolve() for p in path.parent.iterdir()
                     if p.is_file() and p.suffix not in _NOT_SOURCES and p.suffix != ".py"
                     and not p.name.startswith("."))
        files.update(_named_files(path, root))
    return sorted(files)


#: the nodes whose body may open with a docstring
_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _is_docstring(statement: ast.stmt) -> bool:
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str))


def _canonical(node: object) -> object:
    """A syntax tree as nested lists of node types and field values, without positions and
    without the docstring of its module, classes and functions; fields that are empty or None
    are left out, so the form does not depend on the fields a Python version adds
    (``type_params``) or on how its ``ast.dump`` prints empty ones."""
    if isinstance(node, ast.AST):
        out: list[object] = [type(node).__name__]
        for name in node._fields:
            value = getattr(node, name, None)
            if name == "body" and isinstance(node, _DOCUMENTED) and value and _is_docstring(value[0]):
                value = value[1:]
            value = _canonical(value)
            if value is not None and value != []:
                out.append((name, value))
        return out
    if isinstance(node, list):
        return [_canonical(item) for item in node]
    return node


@functools.cache
def _code_of(data: bytes, suffix: str, name: str) -> bytes:
    """:func:`code_digest` of file contents ``data`` (cached by content: a Snakemake run hashes
    every rule's closure, and most modules are in many)."""
    if suffix == ".py":
        form = b"python-ast\0" + repr(_canonical(_tree(data, name))).encode()
    elif suffix in (".yaml", ".yml"):
        form = b"yaml\0" + json.dumps(yaml.safe_load(data), default=str).encode()
    else:
        form = b"bytes\0" + data
    return hashlib.sha256(form).digest()


def code_digest(file: Path) -> bytes:
    """SHA-256 of what the code hash of ``file`` covers (module docstring "What is hashed"): a
    Python file's syntax tree without docstrings, comments and positions; a YAML file's parsed
    content; the bytes of any other file."""
    return _code_of(file.read_bytes(), file.suffix, str(file))


def _digest(files: Iterable[Path], root: Path, outside: Iterable[Path] = ()) -> str:
    digest = hashlib.sha256()
    for file in files:
        digest.update(str(file.relative_to(root.resolve())).encode() + b"\0" + code_digest(file))
    project = root.resolve().parents[1]  # src/mpdp -> the checkout: the same name in every copy of it
    for file in outside:
        digest.update(b"\0loaded\0" + os.path.relpath(file, project).encode() + b"\0" + code_digest(file))
    return digest.hexdigest()[:12]


def loaded(names: set[str], loads: Loads, root: Path = PACKAGE_ROOT) -> tuple[set[str], list[Path]]:
    """The package modules and the files outside it that modules ``names`` load at run time
    (``loads``, module docstring), transitively through the package modules the files import."""
    package = root.resolve()
    more: set[str] = set()
    outside: set[Path] = set()
    for module, files in loads:
        if module not in names:
            continue
        for file in (Path(f).resolve() for f in files):
            if file.is_relative_to(package):
                more |= closure([module_name(file, package)], root)
            else:
                outside.add(file)
                more |= script_modules(file, root=root)
    return more, sorted(outside)


@functools.cache
def script_hash(*scripts: str | Path, root: Path = PACKAGE_ROOT, loads: Loads = ()) -> str:
    """SHA-256 (12 hex digits) over the package sources ``scripts`` can run, in a stable order,
    and the files their modules load at run time (``loads``: module docstring): the ``code``
    param of the rule whose script (and notebook) they are."""
    names = script_modules(*scripts, root=root)
    more, outside = loaded(names, loads, root)
    return _digest(module_sources(names | more, root), root, outside)


@functools.cache
def package_hash(root: Path = PACKAGE_ROOT, loads: Loads = ()) -> str:
    """SHA-256 (12 hex digits) over every source of the package and the files it loads at run
    time (``loads``): the ``code`` param of a rule whose job runs the whole workflow again (a
    multiverse universe's nested run)."""
    names = set(modules(root))
    _, outside = loaded(names, loads, root)
    return _digest(module_sources(names, root), root, outside)
