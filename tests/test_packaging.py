"""The conda environment files list the dependencies of pyproject.toml, with the same bounds.

``environment.yml`` (users) has the run-time dependencies and every extra (test, slurm); the job environment
``workflow/envs/mpdp.yaml`` (``--sdm conda``) only the run-time ones, without Snakemake, and
installs the package itself from the workflow's checkout (post-deploy script).
"""

import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
JOB_ENV = ROOT / "workflow" / "envs" / "mpdp.yaml"
#: conda-only entries: the interpreter, pip, and what the editable install needs to build
TOOLING = {"python", "pip", "setuptools", "wheel"}


def _requirements(deps: list[str]) -> dict[str, str]:
    """name -> normalised version specifier (e.g. 'numpy' -> '>=2.0')."""
    out = {}
    for dep in deps:
        req = Requirement(dep)
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        assert name not in out, f"{name} listed twice"
        out[name] = str(req.specifier)
    return out


def _conda_requirements(path: Path) -> tuple[dict[str, str], list[str]]:
    env = yaml.safe_load(path.read_text())
    conda, pip = [], []
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            pip += dep["pip"]
        else:
            conda.append(dep)
    specs = _requirements([d for d in conda if Requirement(d).name not in TOOLING])
    pip_specs = _requirements([d for d in pip if not d.startswith("-")])
    assert not set(specs) & set(pip_specs)
    return specs | pip_specs, [d for d in pip if d.startswith("-")]


def test_user_environment_matches_pyproject_names_and_bounds():
    extras = [d for group in PROJECT["optional-dependencies"].values() for d in group]
    expected = _requirements(PROJECT["dependencies"] + extras)  # every extra (test, slurm)
    found, options = _conda_requirements(ROOT / "environment.yml")
    assert found == expected
    assert options == ["-e ."]  # created from the project root (README)


def test_job_environment_has_the_runtime_dependencies_only():
    runtime = _requirements(PROJECT["dependencies"])
    runtime.pop("snakemake")  # the job's script reaches Snakemake through the path Snakemake adds
    found, options = _conda_requirements(JOB_ENV)
    assert found == runtime
    assert options == []  # no '-e .': the env file is copied under .snakemake/conda/
    env = yaml.safe_load(JOB_ENV.read_text())
    assert "name" not in env  # Snakemake names it by its hash
    python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python"))
    assert Requirement(python).specifier == Requirement(f"python{PROJECT['requires-python']}").specifier
    for dev in ("pytest", "pytest-xdist", "ruff", "hypothesis", "snakemake"):
        assert dev not in found


def test_every_rule_uses_the_job_environment():
    rules = "".join(p.read_text() for p in (ROOT / "workflow" / "rules").glob("*.smk"))
    envs = re.findall(r"conda:\s*\n\s*\"([^\"]+)\"", rules)
    assert envs and set(envs) == {"../envs/mpdp.yaml"}
    assert len(envs) == len(re.findall(r"\n\s+script:", rules))  # every script rule has one


def test_post_deploy_installs_this_checkout_editable_without_dependencies(tmp_path):
    script = ROOT / "workflow" / "envs" / "mpdp.post-deploy.sh"
    assert script.with_name("mpdp.yaml") == JOB_ENV  # Snakemake pairs them by name
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "python").write_text('#!/bin/sh\necho "$@" > "$SHIM_LOG"\n')
    (shim / "python").chmod(0o755)
    env = {**os.environ, "PATH": f"{shim}:{os.environ['PATH']}", "SHIM_LOG": str(tmp_path / "args"),
           "MPDP_SOURCE_DIR": str(ROOT)}
    subprocess.run(["bash", str(script)], env=env, check=True, cwd=tmp_path)
    args = (tmp_path / "args").read_text().split()
    assert args[:3] == ["-m", "pip", "install"] and "--no-deps" in args
    assert args[-2:] == ["-e", str(ROOT)]
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"] == "mpdp"
    env.pop("MPDP_SOURCE_DIR")
    proc = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode != 0 and "MPDP_SOURCE_DIR" in proc.stderr
    proc = subprocess.run(["bash", str(script)], env={**env, "MPDP_SOURCE_DIR": str(tmp_path)},
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode != 0 and "no pyproject.toml" in proc.stderr


@pytest.mark.parametrize("path", ["environment.yml", "workflow/envs/mpdp.yaml"])
def test_environment_files_parse(path):
    env = yaml.safe_load((ROOT / path).read_text())
    assert env["channels"] == ["conda-forge"] and env["dependencies"]


def test_license_file_is_the_declared_mit_license():
    assert PROJECT["license"] == "MIT" and PROJECT["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n") and "Permission is hereby granted, free of charge" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text
