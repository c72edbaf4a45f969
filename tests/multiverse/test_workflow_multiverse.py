"""End to end (issue 38): `snakemake multiverse` on the smoke profile with one data set. A
choice that does not change the data (a key no claim reads) leaves every verdict unchanged, and
the universes' claims tables are identical, statistic for statistic."""

import pandas as pd
import pytest
from workflow_helpers import require_mirror, run_snakemake, workflow_dir

from mpdp.claims import tables
from mpdp.multiverse import spec

TEST_CONFIG = """
multiverse:
  base:
    datasets: [breast_cancer]
    voting.datasets: [breast_cancer]
    benchmark.datasets: [breast_cancer]
  choices:
    - {choice: audit_beta, key: audit.beta, values: [0.1],
       source: "the audit's failure probability: no claim of the claims target reads it"}
"""


@pytest.mark.slow
def test_a_choice_that_does_not_change_the_data_leaves_every_verdict_unchanged(tmp_path):
    mirror = require_mirror()
    work = workflow_dir(tmp_path)
    (work / "multiverse.yaml").write_text(TEST_CONFIG)
    run_snakemake(work, "--cores", "2", "multiverse", "--configfile", "config/smoke.yaml", "multiverse.yaml",
                  env={"MPDP_DATA_MIRROR": str(mirror)})
    table = pd.read_parquet(work / spec.TABLE_PATH)
    default = tables.read_verdicts(work / spec.ROOT / "default" / tables.VERDICTS_PATH)
    alt = tables.read_verdicts(work / spec.ROOT / "audit_beta=0.1" / tables.VERDICTS_PATH)
    assert len(table) == len(default) > 0 and set(table["study"]) == set(default["study"])
    assert (table["verdict"] == table["default_verdict"]).all()
    assert (table["n_informative"] == table["default_n_informative"]).all()
    assert set(table["outcome"]) <= {"holds", "unchanged"}
    pd.testing.assert_frame_equal(alt, default)
    cells = [tables.read_cells(work / spec.ROOT / u / tables.CELLS_PATH) for u in ("default", "audit_beta=0.1")]
    pd.testing.assert_frame_equal(*cells)
    assert (work / spec.FIGURE_PNG).stat().st_size > 0
    for u in ("default", "audit_beta=0.1"):  # the universes share the outer run's raw data, nothing else
        assert (work / spec.ROOT / u / "data" / "raw").resolve() == (work / "data" / "raw").resolve()
