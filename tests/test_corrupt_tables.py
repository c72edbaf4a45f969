"""A truncated results table: every reader names the file and the command that rebuilds it,
in one line (no Arrow message on its own, no traceback)."""

from pathlib import Path

import pandas as pd
import pytest

from mpdp import results
from mpdp.audit import table as audit_table
from mpdp.errors import InputDataError
from mpdp.studies.benchmark.tables import read_tables as read_benchmark_tables
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


def test_every_table_reader_goes_through_the_one_line_reader():
    """Issue 37: the benchmark figure and report read ranking.parquet with pd.read_parquet, so a
    truncated file gave an ArrowInvalid traceback. Every parquet read of the pipeline goes
    through mpdp.results.read_parquet (one line naming the file and the rebuild command)."""
    root = Path(__file__).resolve().parents[1]
    direct = [f"{p.relative_to(root)}:{i}" for folder in ("src/mpdp", "notebooks", "workflow")
              for p in sorted((root / folder).rglob("*.py")) if p.name != "results.py"
              for i, line in enumerate(p.read_text().splitlines(), 1)
              if "pd.read_parquet(" in line or "pq.read_table(" in line]
    assert direct == []


def test_a_truncated_ranking_table_names_the_file(tmp_path):
    from mpdp.studies.benchmark import tables as benchmark_tables

    path = _truncated(tmp_path / "data" / "results" / "benchmark" / "ranking.parquet")
    with pytest.raises(InputDataError) as err:
        benchmark_tables.read_ranking(path)
    assert str(err.value).startswith(f"benchmark ranking table {path} is unreadable (")
    assert f"snakemake --force {path}" in str(err.value) and "\n" not in str(err.value)
