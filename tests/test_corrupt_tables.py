"""A truncated results table: every reader names the file and the command that rebuilds it,
in one line (no Arrow message on its own, no traceback)."""

from pathlib import Path

import pandas as pd
import pytest

from mpdp import results
from mpdp.audit import table as audit_table
from mpdp.errors import InputDataError
from mpdp.studies.benchmark.figures import read_tables as read_benchmark_tables
from mpdp.studies.ls.report import read_table as read_ls_table


def _truncated(path: Path) -> Path:
    path.parent.mkdir(parents=True)
    pd.DataFrame({"rep": range(100), "accuracy": 0.8}).to_parquet(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


@pytest.mark.parametrize(
    ("reader", "what"),
    [
        (results.read, "results table"),
        (audit_table.read, "audit table"),
        (read_ls_table, "least-squares table"),
        (lambda p: read_benchmark_tables([p]), "benchmark table"),
    ],
)
def test_a_truncated_table_names_the_file_and_the_rebuild_command(tmp_path, reader, what):
    path = _truncated(tmp_path / "data" / "results" / "x" / "adult.parquet")
    with pytest.raises(InputDataError) as err:
        reader(path)
    message = str(err.value)
    assert message.startswith(f"{what} {path} is unreadable (")
    assert f"rebuild it with `snakemake --force {path}`" in message
    assert "\n" not in message


def test_a_missing_table_says_how_to_build_it(tmp_path):
    path = tmp_path / "data" / "results" / "voting" / "adult.parquet"
    with pytest.raises(InputDataError, match=rf"does not exist; build it with `snakemake {path}`"):
        results.read(path)


def test_an_intact_table_still_reads(tmp_path):
    path = tmp_path / "t.parquet"
    pd.DataFrame({"rep": [1]}).to_parquet(path)
    assert results.read_parquet(path)["rep"].tolist() == [1]
