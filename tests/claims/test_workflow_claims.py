"""`snakemake claims` end to end on the smoke profile, one data set (Breast Cancer): the rule writes both
claims tables with the contract's columns (issue 33) and one verdict map per study that ran."""

from __future__ import annotations

import pandas as pd
import pytest

from mpdp.claims import forest, tables
from mpdp.studies.wddp import claims as wddp_claims
from tests.workflow_helpers import require_mirror, run_snakemake, workflow_dir

pytestmark = pytest.mark.slow

SMOKE = ["--configfile", "config/smoke.yaml", "--cores", "2", "--config", "datasets=[breast_cancer]"]


def test_snakemake_claims_writes_the_contract_tables(tmp_path):
    mirror = require_mirror()
    work = workflow_dir(tmp_path)
    run_snakemake(work, *SMOKE, "--", "claims", env={"MPDP_DATA_MIRROR": str(mirror)})
    cells = tables.read_cells(work / tables.CELLS_PATH)
    verdicts = tables.read_verdicts(work / tables.VERDICTS_PATH)
    assert list(cells.columns[: len(tables.CELL_COLUMNS)]) == list(tables.CELL_COLUMNS)
    assert list(verdicts.columns[: len(tables.VERDICT_COLUMNS)]) == list(tables.VERDICT_COLUMNS)
    # the studies that run on Breast Cancer alone: WD-DP, least squares, the benchmark
    assert set(verdicts["study"]) == {"wddp", "ls", "benchmark"}
    assert set(verdicts["verdict"]) <= set(tables.VERDICT_ORDER)
    assert set(cells["cell_verdict"]) <= set(tables.CELL_VERDICTS)
    wddp = verdicts[verdicts["study"] == "wddp"]
    assert set(wddp["reading"]) == {"paper", "equal_privacy", "per_round"}
    assert len(wddp) == len(wddp_claims.CLAIMS) * 3  # C1–C7 (C6 as C6a, C6b) and the -gap claims × readings
    counts = cells.groupby(["study", "claim_id", "reading"]).size().rename("n").reset_index()
    merged = verdicts.merge(counts, on=["study", "claim_id", "reading"], how="left").fillna({"n": 0})
    assert (merged["n_cells"] == merged["n"]).all()  # every verdict counts exactly its cells
    assert (verdicts["n_informative"] >= verdicts["n_for"] + verdicts["n_against"]).all()
    for study in ("wddp", "ls", "benchmark"):
        assert (work / f"reports/figures/claims_map_{study}.png").stat().st_size > 0
        assert (work / f"reports/figures/claims_map_{study}.pdf").read_bytes().startswith(b"%PDF")
        forests = {p.stem for p in (work / f"reports/figures/forest_{study}").glob("*.pdf")}  # issue 46
        mine = verdicts[verdicts["study"] == study]
        assert forests == {forest.name(study, r, c) for r, c in zip(mine["reading"], mine["claim_id"], strict=True)}
    assert not (work / "reports/figures/claims_map_voting.png").exists()
    # the table is what the report reads: a second run has nothing to do
    again = run_snakemake(work, *SMOKE, "-n", "--", "claims", env={"MPDP_DATA_MIRROR": str(mirror)})
    assert "Nothing to be done" in again.stdout + again.stderr
    assert isinstance(pd.read_parquet(work / tables.VERDICTS_PATH), pd.DataFrame)
