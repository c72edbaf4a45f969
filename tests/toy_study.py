"""A toy study added the documented way (docs/development.md "How to add a study"; issue 44): its
own package ``studies/toy/`` plus one line in the study registry, in a copy of the package that a
subprocess (or the report's kernel) imports through ``PYTHONPATH``."""

from __future__ import annotations

import shutil
from pathlib import Path

from mpdp.pipeline import code_hash

STUDY_MODULE = '''"""A toy study: one claim on one table (tests/toy_study.py)."""

from pathlib import Path

import pandas as pd

from mpdp.claims.declare import Claim
from mpdp.claims.engine import Inputs
from mpdp.errors import ConfigError
from mpdp.report.claims_view import study_readings
from mpdp.report.scaffold import StudySection
from mpdp.studies.interface import Study

CLAIMS = (Claim("toy", "T1", "A beats B", "Fig. 1", "accuracy", ("a", "b"), "compare", "greater"),)


def tables(cfg, available):
    return ["data/results/toy/toy.parquet"]


def claims(paths, cfg, cards):
    base = pd.DataFrame([{"dataset": "bank", "cell": "*", "metric": "accuracy", "value": 0.5, "baseline": "coin"}])
    return CLAIMS, Inputs(pd.read_parquet(paths[0]), base)


def context(files):
    """Its entry of the report context: the names of its figures."""
    return {"figures": [Path(p).name for p in files["files"] if p.endswith(".png")]}


def section(ctx, cfg, view):
    own = ctx["studies"]["toy"]  # its own context (docs/development.md "How to add a study")
    out = StudySection("toy", "The toy study of the registry test", "Toy paper",
                       "A study added by one package; its figures: " + ", ".join(own["figures"]) + ".")
    out.claims_tables = study_readings(view, "toy")
    return out


def check(cfg, available, sizes):
    if "adult" not in available:
        raise ConfigError("config key 'datasets': the toy study needs adult")


STUDY = Study(id="toy", name="toy study", enabled=lambda cfg, available: True, tables=tables, claims=claims,
              section=section, context=context, found=("reports/figures/toy*.png",), check=check)
'''

#: the registry line that adds it
REGISTRY_LINE = '    "mpdp.studies.toy.study",\n'


def toy_package(tmp_path: Path) -> Path:
    """A copy of the package with the toy study added; returns the folder to put on PYTHONPATH."""
    src = tmp_path / "toy_src"
    shutil.copytree(code_hash.PACKAGE_ROOT, src / "mpdp", ignore=shutil.ignore_patterns("__pycache__"))
    (src / "mpdp" / "studies" / "toy").mkdir()
    (src / "mpdp" / "studies" / "toy" / "__init__.py").write_text('"""A toy study."""\n')
    (src / "mpdp" / "studies" / "toy" / "study.py").write_text(STUDY_MODULE)
    registry = src / "mpdp" / "studies" / "registry.py"
    anchor = '    "mpdp.studies.benchmark.study",\n'
    text = registry.read_text()
    assert text.count(anchor) == 1
    registry.write_text(text.replace(anchor, anchor + REGISTRY_LINE))
    return src


def toy_rows(path: Path) -> None:
    """The toy study's table: A clearly above B over four repetitions (its claim holds)."""
    import pandas as pd

    rows = [{"dataset": "bank", "reading": "-", "cell": "c", "rep": r, "method": m, "metric": "accuracy",
             "value": v + (0.002 if m == "a" else 0.001) * r, "x": float("nan"), "bound": float("nan")}
            for r in range(4) for m, v in (("a", 0.88), ("b", 0.80))]
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_parquet(path, index=False)
