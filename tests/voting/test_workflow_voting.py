"""`snakemake hamm` end to end on the smoke profile (KDDCup99 only: binary and 5-class tables).

Offline: the raw files come from the mirror ($MPDP_DATA_MIRROR, default ../shared/datasets).
"""

import subprocess
from pathlib import Path

import numpy as np
import pytest
from workflow_helpers import mirror_path, run_snakemake, workflow_dir

from mpdp import results
from mpdp.studies.voting.figures import FIGURE_IDS
from mpdp.studies.voting.plan import EXTRA_COLUMNS

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ["--configfile", "config/smoke.yaml", "--cores", "2", "--config", "datasets=[kddcup99]"]

pytestmark = pytest.mark.slow


def _snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    return run_snakemake(workdir, *args, env={"MPDP_DATA_MIRROR": str(mirror_path())})


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, mirror) -> Path:
    return workflow_dir(tmp_path_factory.mktemp("voting_workflow"))


def test_one_figure_target_schedules_only_voting_jobs(workdir):
    proc = _snakemake(workdir, "hamm_h3", "-n", *SMOKE)
    out = proc.stdout + proc.stderr
    assert "voting_train" in out and "train_job" not in out
    assert "table=kddcup99_multiclass" in out and "table=kddcup99," not in out and "table=kddcup99\n" not in out


def test_hamm_builds_tables_and_figures(workdir):
    _snakemake(workdir, "hamm", *SMOKE)
    for fig in FIGURE_IDS:
        for ext in ("png", "pdf"):
            assert (workdir / "reports" / "figures" / f"{fig}.{ext}").stat().st_size > 5_000
    binary = results.read(workdir / "data/results/voting/kddcup99.parquet", EXTRA_COLUMNS)
    multi = results.read(workdir / "data/results/voting/kddcup99_multiclass.parquet", EXTRA_COLUMNS)
    assert set(binary["n_classes"]) == {2} and set(multi["n_classes"]) == {5}
    assert set(binary["mechanism"]) >= {"hamm_vote", "hamm_soft", "param_avg", "pathak", "jayaraman_output",
                                        "pooled_lr", "local_mean", "ensemble"}
    for table in (binary, multi):
        private = table[table["privacy_unit"] != "none"]
        np.testing.assert_allclose(private["beta"], private["eps_accounted"] / private["sensitivity"])
        final = private[private["selection"] != "private"]  # the release alone is accounted at the target
        np.testing.assert_allclose(final["eps_accounted"], final["epsilon"])
        assert set(table["M"].dropna()) == {10, 30} and set(table["rep"]) == {0, 1}
        assert table["test_error"].between(0, 1).all()
        main = table[(table["experiment"] == "voting") & (table["privacy_unit"] != "none")]
        assert set(main["lambda_source"]) == {"private"}  # smoke: λ chosen privately with the noise in the loop
        assert (main["eps_end_to_end"] <= main["epsilon"] * (1 + 1e-12)).all()
        oracle = table[(table["experiment"] == "voting_final_run") & (table["privacy_unit"] != "none")]
        assert set(oracle["lambda_source"]) == {"tuned"} and len(oracle) == len(main)  # the papers' convention
        assert set(table.loc[table["experiment"] == "voting_lambda_sweep", "M"]) == {30}  # the sweep at h1_M
    # a second run has nothing to do
    proc = _snakemake(workdir, "hamm", "-n", *SMOKE)
    assert "voting_train" not in proc.stdout
