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


# ---- issue 47: every intermediate kind, not only parquet tables


def _truncate(path: Path) -> Path:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def _optimum(path: Path) -> Path:
    import numpy as np

    from mpdp import io

    io.save_npz(path, theta=np.ones(3), loss=np.array(0.5), eigval=np.ones(3), eigvec=np.eye(3))
    return path


def _partition(path: Path) -> Path:
    import numpy as np

    from mpdp.data.partition import PartitionSet, save_partitions

    save_partitions(path, {(2, None): PartitionSet(order=np.arange(10)[None, :], sizes=np.array([[5, 5]]))})
    return path


def _json(path: Path) -> Path:
    from mpdp import io

    io.write_json({"ok": True, "n_train": 10, "scores": [], "files": []}, path)
    return path


def _npy(path: Path) -> Path:
    import numpy as np

    from mpdp import io

    io.save_npy(path, np.arange(1000, dtype=np.float64))
    return path


def _read_optimum(path):
    from mpdp.studies.wddp.job import load_optimum

    return load_optimum(path)


def _read_partition(path):
    from mpdp.data.partition import load_partition

    return load_partition(path, 2, None)


def _read_status(path):
    from mpdp.multiverse import universe

    return universe.load(None, path)


def _read_npy(path):
    from mpdp import io

    return io.load_npy(path, "prepared array", mmap_mode="r")


def _read_etas(path):
    from mpdp import io

    return io.read_json(path, "η table")


@pytest.mark.parametrize(
    ("name", "write", "reader", "what"),
    [
        ("optimum.npz", _optimum, _read_optimum, "optimum file"),
        ("partitions.npz", _partition, _read_partition, "partition file"),
        ("status.json", _json, _read_status, "universe status file"),
        ("etas.json", _json, _read_etas, "η table"),
        ("X_train.npy", _npy, _read_npy, "prepared array"),
    ],
)
def test_a_truncated_intermediate_names_the_file_and_the_rebuild_command(tmp_path, name, write, reader, what):
    path = _truncate(write(tmp_path / "data" / name))
    with pytest.raises(InputDataError) as err:
        reader(path)
    message = str(err.value)
    assert message.startswith(f"{what} {path} is unreadable (") and "\n" not in message
    assert f"rebuild it with `snakemake --force {path}`" in message


def test_a_damaged_prepared_data_set_names_the_rebuild_command(tmp_path):
    """The prepare step's arrays: the message names the card, whose forced rebuild rewrites them."""
    from mpdp.data import prepare

    folder = tmp_path / "data" / "processed" / "adult"
    folder.mkdir(parents=True)
    _json(folder / prepare.CARD)  # readable, but not the card of these arrays
    for name in prepare.ARRAYS:
        _npy(folder / f"{name}.npy")
    with pytest.raises(InputDataError, match=rf"snakemake --force {folder / prepare.CARD}"):
        prepare.load(folder)


def test_every_json_and_array_read_goes_through_the_one_line_readers():
    """Issue 47: a truncated optimum .npz gave "unexpected BadZipFile" without the file. Every
    JSON, CSV, .npz and .npy read of the pipeline goes through mpdp.io.read_json, read_csv, load_npz
    or load_npy."""
    root = Path(__file__).resolve().parents[1]
    # the readers; the renderer's socket protocol; the raw-data parsers (raw files are verified by SHA-256)
    allowed = {"src/mpdp/io.py", "src/mpdp/figures/warm.py", "src/mpdp/data/parsers.py"}
    direct = [f"{p.relative_to(root)}:{i}" for folder in ("src/mpdp", "notebooks", "workflow")
              for p in sorted((root / folder).rglob("*.py")) if str(p.relative_to(root)) not in allowed
              for i, line in enumerate(p.read_text().splitlines(), 1)
              if "np.load(" in line or ("json.loads(" in line and "read_text" in line) or "json.load(" in line
              or "pd.read_csv(" in line]
    assert direct == []
