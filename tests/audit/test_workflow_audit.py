"""`snakemake audit` end to end on the smoke profile (breast_cancer only), offline."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mpdp import config
from mpdp.audit import report as audit_report
from mpdp.audit import table as audit_table
from mpdp.studies.benchmark import registry as benchmark_registry

ROOT = Path(__file__).resolve().parents[2]
MIRROR = Path(os.environ.get("MPDP_DATA_MIRROR", ROOT.parent / "shared" / "datasets"))

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not MIRROR.is_dir(), reason=f"raw-data mirror {MIRROR} not found"),
]


def test_snakemake_audit_on_smoke_profile(tmp_path):
    for name in ("Snakefile", "workflow", "config", "notebooks", "environment.yml"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = {**os.environ, "MPDP_DATA_MIRROR": str(MIRROR)}
    cmd = [sys.executable, "-m", "snakemake", "audit", "--configfile", "config/smoke.yaml",
           "--cores", "2", "--config", "datasets=[breast_cancer]"]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    table = audit_table.read(tmp_path / "data" / "results" / "audit" / "audit.parquet")
    required = {"mechanism", "setting", "eps_claimed", "eps_accounted", "delta", "eps_lower",
                "method", "planted_bug"}
    assert required <= set(table.columns)
    assert set(table["method"]) == {"many_draws", "one_run", "canary_draws"}
    honest = table[~table["planted_bug"]]
    assert (honest["eps_lower"] <= honest["eps_accounted"]).all()
    bugs = table[table["planted_bug"]]
    smoke_cfg = config.load(ROOT / "config" / "smoke.yaml")
    declared = [*smoke_cfg["audit"]["settings"], *benchmark_registry.audit_settings(smoke_cfg)]
    assert len(bugs) == sum(bool(s.get("planted_bug")) for s in declared)
    assert (bugs["eps_lower"] > bugs["eps_claimed"]).all()
    # noise × ¼ (one run), × ½ (canary draws, N-L2, PVP noise stage), the per-party σ mapping
    assert {"noise_factor", "largest_party_sigma"} <= set(bugs["bug"])
    # the benchmark's mechanisms bring their own audit settings (DP-SGD: honest and planted bug)
    assert {"dpsgd"} <= set(table["mechanism"])
    # every mechanism of the benchmark is audited, through the study's and the benchmark's runs
    assert {"wyx", "wddp_per_round", "wddp_literal", "jayaraman_per_round", "jayaraman_literal",
            "xp_wddp_literal", "xp_wddp_per_round", "jayaraman_output", "pathak", "param_avg",
            "hamm_vote", "hamm_soft", "pvp", "pvp_history", "dvp"} <= set(table["mechanism"])
    # spec A0: the Gaussian audits and the DVP/PVP transcripts use the benchmark's δ; single
    # pure-DP releases δ = 0
    smoke = config.load(ROOT / "config" / "smoke.yaml")
    gaussian = table["method"].isin(["one_run", "canary_draws"]) | table["mechanism"].isin(["pvp", "dvp"])
    assert (table.loc[gaussian, "delta"] == smoke["benchmark"]["delta"]).all()
    assert (table.loc[table["mechanism"].isin(["hamm_vote", "pvp_history"]), "delta"] == 0).all()
    # PVP's hidden state: the per-release claim is refuted, and the report says so
    assert "PVP's privacy claim is false" in audit_report.pvp_headline(table)
    for ext in ("png", "pdf"):
        assert (tmp_path / "reports" / "figures" / f"audit_eps.{ext}").stat().st_size > 10_000
