"""The study registry (mpdp.studies.registry, issue 44): every study is one entry, and a toy study
added by its own package plus one registry line is planned, claimed and reported
(tests/figures/test_report.py::test_a_toy_study_of_the_registry_is_reported)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from toy_study import toy_package

from mpdp import config
from mpdp.errors import ConfigError
from mpdp.studies import registry

ROOT = Path(__file__).resolve().parents[1]


def test_every_study_package_is_registered_once_under_its_own_id():
    ids = [s.id for s in registry.STUDIES]
    assert ids == ["wddp", "admm", "voting", "ls", "benchmark"]
    packages = sorted(p.parent.name for p in (ROOT / "src" / "mpdp" / "studies").glob("*/study.py"))
    assert sorted(ids) == packages
    assert {a for s in registry.STUDIES for a in s.aliases} == {"zz", "hamm"}
    assert registry.get("voting").aliases == ("hamm",)
    with pytest.raises(ConfigError, match="unknown study 'nope'"):
        registry.get("nope")


def test_the_registry_decides_which_studies_run():
    cfg = config.load(ROOT / "config" / "smoke.yaml")
    assert [s.id for s in registry.running(cfg, ["adult", "kddcup99"])] == ["wddp", "admm", "voting", "ls"]
    assert [s.id for s in registry.running(cfg, ["breast_cancer"])] == ["wddp", "ls", "benchmark"]
    assert registry.get("admm").tables(cfg, ["kddcup99"]) == []


_PROBE = """
import json, sys
from pathlib import Path
from mpdp import config
from mpdp.errors import ConfigError
from mpdp.pipeline import planning
from mpdp.studies import claims_build, registry
cfg = config.load(Path(sys.argv[1]))
out = {"ids": [s.id for s in registry.STUDIES]}
try:
    planning.check(cfg, ["kddcup99"], {})
except ConfigError as exc:
    out["planning"] = str(exc)
cells, verdicts = claims_build.build(claims_build.Paths({"toy": [sys.argv[2]]}), cfg)
out["verdicts"] = verdicts[["study", "claim_id", "verdict"]].values.tolist()
out["report"] = registry.report_files(cfg, ["kddcup99"], {"toy": ["reports/figures/toy.png", "data/results/toy/toy.parquet"]})
print(json.dumps(out))
"""


@pytest.mark.slow
def test_a_toy_study_is_planned_and_claimed(tmp_path):
    from toy_study import toy_rows

    src = toy_package(tmp_path)
    toy_rows(tmp_path / "toy.parquet")
    proc = subprocess.run([sys.executable, "-c", _PROBE, str(ROOT / "config" / "smoke.yaml"), str(tmp_path / "toy.parquet")],
                          env={**os.environ, "PYTHONPATH": str(src)}, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["ids"] == ["wddp", "admm", "voting", "ls", "benchmark", "toy"]
    assert out["planning"] == "config key 'datasets': the toy study needs adult"  # its check ran at planning
    assert out["verdicts"] == [["toy", "T1", "HOLDS"]]
    # the report reads its table and its collect target's outputs, each once (rule report_html)
    assert list(out["report"]) == ["wddp", "voting", "ls", "toy"]
    assert out["report"]["toy"] == {"tables": ["data/results/toy/toy.parquet"],
                                    "files": ["data/results/toy/toy.parquet", "reports/figures/toy.png"]}


_CONTEXT_PROBE = """
import json, sys
from pathlib import Path
from mpdp import config
from mpdp.report.claims_view import EMPTY
from mpdp.studies import explore, registry
cfg = config.load(Path(sys.argv[1]))
report = registry.report_context(registry.report_files(cfg, ["adult"], {"toy": ["reports/figures/toy.png"]}))
explored = explore.build_context(Path(sys.argv[2]), cfg)
print(json.dumps({"report": report["toy"], "explored": explored["studies"]["toy"],
                  "report_intro": registry.get("toy").section({"studies": report}, cfg, EMPTY).intro,
                  "explore": {s.id: s.section(explored, cfg, EMPTY).intro for s in registry.STUDIES}}))
"""


def test_a_toy_study_s_section_reads_its_context_in_the_report_and_in_explore(tmp_path):
    """Issue 57: the report context's ``studies`` is built by one function
    (:func:`mpdp.studies.registry.report_context`, which workflow/scripts/report.py calls) from the
    study's own ``context``; explore.build_context (notebooks/explore.py) builds the same from the
    files a build holds, so a section reading ``ctx["studies"][id]`` renders in both."""
    from toy_study import toy_rows

    src = toy_package(tmp_path)
    build = tmp_path / "build"
    toy_rows(build / "data" / "results" / "toy" / "toy.parquet")
    (build / "reports" / "figures").mkdir(parents=True)
    (build / "reports" / "figures" / "toy_found.png").write_bytes(b"")
    proc = subprocess.run([sys.executable, "-c", _CONTEXT_PROBE, str(ROOT / "config" / "smoke.yaml"), str(build)],
                          env={**os.environ, "PYTHONPATH": str(src)}, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["report"] == {"figures": ["toy.png"]}  # the toy study's context, not its files as given
    assert out["report_intro"].endswith("its figures: toy.png.")
    assert out["explored"] == {"figures": ["toy_found.png"]}  # found in the build by its pattern
    assert out["explore"]["toy"].endswith("its figures: toy_found.png.")
    assert len(out["explore"]) == len(registry.STUDIES) + 1  # every study's section on explore's context


@pytest.mark.slow
def test_the_report_rule_takes_a_toy_study_s_tables_from_the_registry(tmp_path):
    """Rule ``report_html`` reads the toy study's table with no edit of report.smk (the dry run
    lists it among the rule's inputs); without the registry's loop it would not."""
    from toy_study import toy_rows
    from workflow_helpers import mirror_path, run_snakemake, workflow_dir

    src = toy_package(tmp_path)
    (tmp_path / "work").mkdir()
    work = workflow_dir(tmp_path / "work")
    toy_rows(work / "data" / "results" / "toy" / "toy.parquet")
    # no rule draws a verdict map of a study without a rule file (claims.smk): stand in for it
    (work / "reports" / "figures").mkdir(parents=True)
    (work / "reports" / "figures" / "claims_map_toy.png").write_bytes(b"")
    proc = run_snakemake(work, "reports/report.html", "-n", "--configfile", "config/smoke.yaml", "--cores", "1",
                         "--config", "datasets=[adult]",
                         env={"PYTHONPATH": str(src), "MPDP_DATA_MIRROR": str(mirror_path())})
    job = proc.stdout.split("rule report_html:", 1)[1].split("\n\n", 1)[0]
    inputs = job.split("input:", 1)[1].split("output:", 1)[0]
    assert "data/results/toy/toy.parquet" in inputs, job
