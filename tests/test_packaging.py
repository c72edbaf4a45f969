"""environment.yml (users, conda) lists the same dependencies as pyproject.toml (pip, CI),
its optional extras (test, slurm) included."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~ \[]", requirement, maxsplit=1)[0].strip().lower().replace("_", "-")


def test_environment_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = [d for group in project["optional-dependencies"].values() for d in group]
    pip_deps = {_name(d) for d in project["dependencies"] + extras}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda_deps = set()
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            conda_deps |= {_name(d) for d in dep["pip"] if not d.startswith("-e")}
        elif _name(dep) not in {"python", "pip"}:
            conda_deps.add(_name(dep))
    assert conda_deps == pip_deps
