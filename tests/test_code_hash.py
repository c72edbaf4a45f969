"""The rules' code hashes come from the import graph (mpdp.pipeline.code_hash, issue 44).

Checked against an independent computation: each script's import statements are *executed* in
a fresh interpreter, and every package module that lands in ``sys.modules`` must be covered by
the script's hash; an edit of a module changes the hash of exactly the scripts that import it.
"""

from __future__ import annotations

import ast
import io
import json
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

from mpdp.pipeline import code_hash

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "workflow" / "scripts").glob("*.py"))

_PROBE = """
import ast, json, sys
out = {}
for script in json.loads(sys.argv[1]):
    tree = ast.parse(open(script).read())
    # only the script's import statements (its body needs Snakemake's `snakemake` object)
    body = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    before = set(sys.modules)
    for stmt in body:
        exec(compile(ast.Module([stmt], []), script, "exec"), {})
    out[script] = sorted(m for m in set(sys.modules) - before if m == "mpdp" or m.startswith("mpdp."))
    for m in list(sys.modules):  # the next script imports from scratch
        if m == "mpdp" or m.startswith("mpdp."):
            del sys.modules[m]
print(json.dumps(out))
"""


def test_every_module_a_script_really_imports_is_in_its_hash():
    env_path = str(ROOT / "src")
    proc = subprocess.run([sys.executable, "-c", _PROBE, json.dumps([str(s) for s in SCRIPTS])],
                          capture_output=True, text=True, check=True, env={"PYTHONPATH": env_path, "PATH": ""},
                          cwd=ROOT)
    loaded = json.loads(proc.stdout)
    known = code_hash.modules()
    for script in SCRIPTS:
        static = code_hash.script_modules(script)
        real = {m for m in loaded[str(script)] if m in known}
        assert real, f"{script.name} imports no package module"
        assert real <= static, f"{script.name}: imported but not hashed: {sorted(real - static)}"


#: an edit of the code (a new module constant): hashes of its importers change
CODE_EDIT = "\n_CODE_HASH_PROBE = 1\n"


def _edited_copy(tmp_path: Path, rel: str, edit: str = CODE_EDIT) -> Path:
    copy = tmp_path / "mpdp"
    shutil.copytree(code_hash.PACKAGE_ROOT, copy, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    module = copy / rel
    module.write_text(module.read_text() + edit)
    return copy


def _importers(module: str) -> set[str]:
    """Scripts whose import statements reach ``module``, by a graph search of our own."""
    graph: dict[str, set[str]] = {}
    for name, path in code_hash.modules().items():
        graph[name] = code_hash.imports_of(ast.parse(path.read_text()), name, path.name == "__init__.py",
                                           code_hash.modules())
    found = set()
    for script in SCRIPTS:
        todo = list(code_hash.imports_of(ast.parse(script.read_text()), "__main__", False, code_hash.modules()))
        seen: set[str] = set()
        while todo:
            m = todo.pop()
            if m in seen:
                continue
            seen.add(m)
            todo += list(graph[m]) + ([m.rpartition(".")[0]] if "." in m else [])
        if module in seen:
            found.add(script.name)
    return found


@pytest.mark.parametrize("rel, module", [
    ("privacy/private_selection.py", "mpdp.privacy.private_selection"),
    ("studies/voting/selection.py", "mpdp.studies.voting.selection"),
    ("studies/admm/footing.py", "mpdp.studies.admm.footing"),
    ("figures/plot.py", "mpdp.figures.plot"),
])
def test_an_edit_changes_the_hash_of_exactly_the_scripts_importing_it(tmp_path, rel, module):
    copy = _edited_copy(tmp_path, rel)
    changed = {s.name for s in SCRIPTS if code_hash.script_hash(s) != code_hash.script_hash(s, root=copy)}
    expected = _importers(module)
    assert expected, f"no script imports {module}"
    assert changed == expected
    assert len(changed) < len(SCRIPTS)  # the edit does not rerun everything


def test_the_engine_c_sources_and_the_schema_are_in_the_hash(tmp_path):
    train = ROOT / "workflow" / "scripts" / "train_job.py"
    files = {p.relative_to(code_hash.PACKAGE_ROOT).as_posix()
             for p in code_hash.module_sources(code_hash.script_modules(train))}
    assert {"engine/_gd_kernel.c", "engine/_normal_stream.c", "schemas/config.schema.yaml"} <= files
    copy = _edited_copy(tmp_path, "engine/_gd_kernel.c", "\n/* only a comment: C sources count by their bytes */\n")
    assert code_hash.script_hash(train) != code_hash.script_hash(train, root=copy)
    data = ROOT / "workflow" / "scripts" / "prepare.py"  # imports no engine module
    assert code_hash.script_hash(data) == code_hash.script_hash(data, root=copy)


def test_string_named_modules_and_lazy_imports_are_edges(tmp_path):
    pkg = tmp_path / "mpdp"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from mpdp.sub import b\n")
    (pkg / "sub" / "b.py").write_text("PRELOAD = ('mpdp.c',)\n")
    (pkg / "c.py").write_text("")
    (pkg / "d.py").write_text("")
    script = tmp_path / "script.py"
    script.write_text("from mpdp import a\n")
    assert code_hash.script_modules(script, root=pkg) == {"mpdp", "mpdp.a", "mpdp.sub", "mpdp.sub.b", "mpdp.c"}


@pytest.mark.slow
def test_a_rule_with_a_script_but_no_code_hash_stops_planning(tmp_path, mirror):
    """check_code_params (common.smk): the workflow refuses a rule whose code param is missing."""
    import os

    for name in ("Snakefile", "config", "notebooks", "environment.yml"):
        (tmp_path / name).symlink_to(ROOT / name)
    shutil.copytree(ROOT / "workflow", tmp_path / "workflow")
    rules = tmp_path / "workflow" / "rules" / "admm.smk"
    text = rules.read_text()
    assert text.count('code=code("admm_collect.py"),\n') == 1
    rules.write_text(text.replace('code=code("admm_collect.py"),\n', 'unrelated="x",\n'))
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--configfile", "config/smoke.yaml"],
                          cwd=tmp_path, env={**os.environ, "MPDP_DATA_MIRROR": str(mirror)},
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert "mpdp: rule 'admm_collect' runs a script but its param 'code' is None" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_an_edit_of_a_plugin_mechanism_reruns_the_rules_that_import_it(tmp_path):
    """Issue 58: a module of ``benchmark.mechanisms`` named by path is imported by importlib, which
    no import statement shows; the workflow passes it as a run-time load of the registry
    (common.smk RUNTIME_LOADS), so its edit changes the hash of exactly the scripts that can
    import the registry, and a package module only it imports is covered."""
    from mpdp.studies.benchmark import registry

    plugin = tmp_path / "probe_mechanism.py"
    example = (ROOT / "docs" / "examples" / "central_output.py").read_text()
    plugin.write_text(example.replace('id="central_output"', 'id="code_hash_probe"')
                      + "\nfrom mpdp.figures import plot  # a module the benchmark job does not import\n")
    cfg = {"benchmark": {"mechanisms": ["nonprivate", str(plugin)]}}
    files = registry.module_files(cfg)
    assert files == (plugin.resolve(),)
    loads = (("mpdp.studies.benchmark.registry", files),)
    importers = {s.name for s in SCRIPTS if "mpdp.studies.benchmark.registry" in code_hash.script_modules(s)}
    assert {"benchmark_job.py", "benchmark_budgets.py", "benchmark_collect.py", "audit_table.py"} <= importers
    job = ROOT / "workflow" / "scripts" / "benchmark_job.py"
    assert "mpdp.figures.plot" not in code_hash.script_modules(job)
    more, outside = code_hash.loaded(code_hash.script_modules(job), loads)
    assert "mpdp.figures.plot" in more and outside == [plugin.resolve()]

    def hashes():
        code_hash.script_hash.cache_clear()  # a new Snakemake run
        return {s.name: code_hash.script_hash(s, loads=loads) for s in SCRIPTS}

    before = hashes()
    assert {s.name for s in SCRIPTS if code_hash.script_hash(s) != before[s.name]} == importers
    plugin.write_text(plugin.read_text() + "\n# a comment edit\n")
    assert hashes() == before  # a plug-in counts by its code too
    plugin.write_text(plugin.read_text() + CODE_EDIT)
    after = hashes()
    assert {name for name in before if before[name] != after[name]} == importers
    assert len(importers) < len(SCRIPTS)
    code_hash.package_hash.cache_clear()
    assert code_hash.package_hash(loads=loads) != code_hash.package_hash()  # a multiverse universe's
    code_hash.script_hash.cache_clear()
    code_hash.package_hash.cache_clear()


_TOY = '''"""A module docstring."""
# a comment
LIMIT = 3


class Box:
    """A class docstring."""

    def size(self):
        """A method docstring."""
        return LIMIT * 2  # a trailing comment
'''


def _toy_hash(tmp_path: Path, text: str, name: str) -> str:
    pkg = tmp_path / name / "mpdp"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "toy.py").write_text(text)
    script = tmp_path / name / "script.py"
    script.write_text("from mpdp import toy\n")
    return code_hash.script_hash(script, root=pkg)


@pytest.mark.parametrize("edit, same", [
    (("# a comment", "# another comment, longer\n# on two lines"), True),
    (("  # a trailing comment", ""), True),
    (('"""A module docstring."""', '"""A module docstring,\n\nrewritten."""'), True),
    (('"""A class docstring."""', "'A class docstring, edited.'"), True),
    (('        """A method docstring."""\n', ""), True),  # a docstring removed
    (("return LIMIT * 2", "return (LIMIT\n                * 2)"), True),  # a line break
    (("LIMIT = 3", "LIMIT = 4"), False),  # a changed constant
    (("LIMIT * 2", "LIMIT * 2.0"), False),
    (("return LIMIT * 2", "return LIMIT * 2 + 0"), False),
    (('"""A method docstring."""', '"""A method docstring."""\n        "a string statement after it"'), False),
])
def test_comments_and_docstrings_are_not_code(tmp_path, edit, same):
    """Issue 57: a comment or docstring edit reruns nothing, any edit of the code reruns."""
    old, new = edit
    assert old in _TOY
    assert (_toy_hash(tmp_path, _TOY, "a") == _toy_hash(tmp_path, _TOY.replace(old, new), "b")) is same


def _doc_and_comment_edit(text: str) -> str:
    """``text`` with its module docstring, one function's docstring and one comment rewritten."""
    tree = ast.parse(text)
    comment = next(t.string for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT)
    func = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and ast.get_docstring(n))
    edited = text.replace(ast.get_docstring(tree, clean=False), "A module docstring, rewritten.\n", 1)
    edited = edited.replace(ast.get_docstring(func, clean=False), "rewritten", 1)
    edited = edited.replace(comment, comment + " (edited)", 1) + "\n\n# a last comment\n"
    assert edited.count("rewritten") == 2 and "(edited)" in edited
    return edited


def test_a_comment_or_docstring_edit_of_a_real_module_changes_no_rule(tmp_path):
    """data/prepare.py (a comment in it replanned 167 of 178 smoke jobs) and the WD-DP figures (one
    redrew all 64 figures): docstrings and comments edited, no script's hash moves (a code edit
    moves exactly its importers': test_an_edit_changes_the_hash_of_exactly_the_scripts_importing_it)."""
    copy = _edited_copy(tmp_path, "data/prepare.py", "")
    for rel in ("data/prepare.py", "studies/wddp/figures.py"):
        (copy / rel).write_text(_doc_and_comment_edit((code_hash.PACKAGE_ROOT / rel).read_text()))
    assert [s.name for s in SCRIPTS if code_hash.script_hash(s) != code_hash.script_hash(s, root=copy)] == []


def test_the_schema_counts_by_its_content_not_its_comments(tmp_path):
    train = ROOT / "workflow" / "scripts" / "train_job.py"
    copy = _edited_copy(tmp_path, "schemas/config.schema.yaml", "\n# a comment\n")
    assert code_hash.script_hash(train) == code_hash.script_hash(train, root=copy)
    schema = copy / "schemas" / "config.schema.yaml"
    schema.write_text(schema.read_text() + "$comment: a new key\n")
    code_hash.script_hash.cache_clear()  # a new Snakemake run
    assert code_hash.script_hash(train) != code_hash.script_hash(train, root=copy)
    code_hash.script_hash.cache_clear()
