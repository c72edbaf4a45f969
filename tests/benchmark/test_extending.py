"""docs/extending.md's example and a toy mechanism from a test module, end to end on the smoke
profile: trained, in the tables, ranked, in the figures, and audited (spec E10)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from workflow_helpers import REPO_ROOT, mirror_path, run_snakemake, workflow_dir

from mpdp import config, results
from mpdp.studies.benchmark import ranking, registry
from mpdp.studies.benchmark.schema import EXTRA_COLUMNS

EXAMPLE = REPO_ROOT / "docs" / "examples" / "central_output.py"
TOY = Path(__file__).with_name("toy_mechanism.py")
MECHANISMS = ["nonprivate", "pathak", "dvp", str(EXAMPLE), str(TOY)]
SMOKE = ["--configfile", "config/smoke.yaml", "extension.yaml", "--cores", "2", "--config",
         "datasets=[breast_cancer]"]

pytestmark = pytest.mark.slow


def test_the_page_shows_the_example_file_verbatim():
    page = (REPO_ROOT / "docs" / "extending.md").read_text()
    block = re.search(r"```python\n(.*?)```", page, re.S).group(1)
    assert block == EXAMPLE.read_text()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, mirror) -> Path:
    path = workflow_dir(tmp_path_factory.mktemp("benchmark_extension"))
    (path / "extension.yaml").write_text(yaml.safe_dump({"benchmark": {"mechanisms": MECHANISMS}}))
    return path


def _snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    return run_snakemake(workdir, *args, env={"MPDP_DATA_MIRROR": str(mirror_path())})


def test_added_mechanisms_reach_tables_ranking_and_figures(workdir):
    proc = _snakemake(workdir, "benchmark", "-n", *SMOKE)
    out = proc.stdout + proc.stderr
    assert "bgroup=central_output" in out and "bgroup=toy_first_party" in out
    _snakemake(workdir, "benchmark", *SMOKE)
    table = results.read(workdir / "data/results/benchmark/breast_cancer.parquet", EXTRA_COLUMNS)
    ids = ["nonprivate", "pathak", "dvp", "central_output", "toy_first_party"]
    assert list(pd.unique(table["mechanism"])) == ids  # config order = legend order
    added = table[table["mechanism"].isin(ids[3:])]
    assert len(added) == 2 * 2 * 2 * 4 * 2  # 2 protocols × 2 mechanisms × 2 ε × 4 cells × R = 2
    private = added[added["selection"] == "private"]  # accounted end to end through their rdp_curve
    assert len(private) == len(added) / 2 and (private["eps_end_to_end"] <= private["epsilon"] * (1 + 1e-9)).all()
    added = added[added["selection"] == "oracle"]
    np.testing.assert_allclose(added["eps_total"], added["epsilon"])
    assert (added["delta_total"] == 0).all() and added["test_logloss"].notna().all()
    example = added[added["mechanism"] == "central_output"]
    # β = ε nλ/2 (Δ₂ = 2/(nλ)) with n the pooled private records of the cell
    np.testing.assert_allclose(example["beta"], example["epsilon"] * example["n"] * example["lambda"] / 2)
    ranked = pd.read_parquet(workdir / ranking.ranking_path())
    assert all({"central_output", "toy_first_party"} <= set(r.split(",")) for r in ranked["ranked"])
    assert set(ranked["privacy_reading"]) == {"end_to_end", "final_run"}
    for name in ("xp_eps", "xp_m", "xp_u", "xp_rank"):
        assert (workdir / f"reports/figures/{name}.png").stat().st_size > 10_000


def test_the_example_is_audited_through_its_own_adapter(workdir, monkeypatch):
    from mpdp.audit import registry as audit_registry
    from mpdp.audit.table import context_from_config

    monkeypatch.setattr(audit_registry, "ADAPTERS", dict(audit_registry.ADAPTERS))
    cfg = config.load(workdir / "config" / "smoke.yaml")
    cfg["benchmark"]["mechanisms"] = MECHANISMS
    assert "central_output" in audit_registry.register_benchmark(cfg)
    settings = registry.audit_settings(cfg)
    assert [s["mechanism"] for s in settings] == ["central_output"]
    ctx = context_from_config(cfg["audit"], cfg["root_seed"], {})
    row = audit_registry.get("central_output").run(settings[0], ctx)
    assert row["mechanism"] == "central_output" and row["method"] == "many_draws"
    # sound: the lower bound never exceeds the claim, nor the ceiling of the pair
    assert 0 < row["eps_lower"] <= row["eps_up"] <= settings[0]["epsilon"] + 1e-12
    assert row["eps_accounted"] == pytest.approx(settings[0]["epsilon"])
