"""Every results table says how each row was computed (mpdp.engine.provenance): engine path,
instruction set, layout rule, noise source, filled at the tables' one writer; a fallback from
the fused path is a WARNING in the job log and in the line scripts/reproduce.sh prints."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_engine_noisy_gd import make_data, seeds

from mpdp import results
from mpdp.audit import table as audit_table
from mpdp.engine import gd as engine_gd
from mpdp.engine import kernel as fused_kernel
from mpdp.engine import layout as engine_layout
from mpdp.engine import path as engine_path
from mpdp.engine import provenance as engine_provenance
from mpdp.engine.gd import Block, noisy_gd
from mpdp.report import provenance as report_provenance
from mpdp.studies.benchmark.schema import EXTRA_COLUMNS as BENCHMARK_EXTRA
from mpdp.studies.ls import experiment as ls_experiment

PROVENANCE = list(engine_provenance.COLUMNS)


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process in which the engine has not run yet."""
    monkeypatch.setattr(engine_gd, "_USED", {})


def train(dtype=np.float32) -> None:
    X, y = make_data(40, 5, seed=1)
    noisy_gd([Block(X, y, np.full(40, 1 / 40), np.arange(2))], np.zeros((5, 2)), np.ones(2), 0.0,
             np.full(2, 0.1), seeds(2), 3, dtype=dtype)


def test_results_tables_written_through_the_writer_carry_the_provenance(fresh, tmp_path: Path):
    train(np.float32)
    train(np.float64)
    fused, _ = engine_path.current("float32")
    rows = [
        {"mechanism": "wyx", "dtype": "float32", "rep": 0, "T": 3, "n": 40, "p": 5},  # engine
        {"mechanism": "wddp", "dtype": "float64", "rep": 0, "T": 3, "n": 40, "p": 5},  # engine
        {"mechanism": "dvp", "dtype": "float64", "rep": 0, "T": 3, "n": 40, "p": 5},  # ADMM
    ]
    path = tmp_path / "table.parquet"
    results.write(results.to_frame(rows), path)
    table = pd.read_parquet(path)
    assert list(table.columns) == list(results.COLUMNS) and set(PROVENANCE) <= set(table.columns)
    assert table[PROVENANCE].notna().all().all()
    assert table.loc[0, PROVENANCE].tolist() == list(fused.values().values())
    assert table.loc[1, PROVENANCE].tolist() == ["numpy-float64", "none", "n/a", "numpy"]
    assert table.loc[2, PROVENANCE].tolist() == list(engine_path.NOT_ENGINE.values().values())
    # a table read back keeps what was recorded, even in a process where the engine did not run
    engine_gd._USED.clear()
    again = results.read(path)
    pd.testing.assert_frame_equal(again[PROVENANCE], table[PROVENANCE].astype("string"))


def test_benchmark_rows_follow_their_family(fresh):
    train(np.float32)
    frame = results.to_frame([
        {"mechanism": "wyx", "family": "gradient", "dtype": "float32", "rep": 0, "T": 1, "n": 1, "p": 1},
        {"mechanism": "nonprivate", "family": "reference", "dtype": "float64", "rep": 0, "T": 0,
         "n": 1, "p": 1},
    ], BENCHMARK_EXTRA)
    assert list(frame.columns) == list(results.columns(BENCHMARK_EXTRA))
    assert frame.loc[0, "engine_path"] == engine_path.current("float32")[0].engine_path
    # the benchmark's θ* is solved exactly, although WD-DP's "nonprivate" is engine-trained
    assert frame.loc[1, "engine_path"] == "not-engine-float64"


def test_engine_rows_of_a_process_without_the_engine_say_so(fresh):
    frame = results.to_frame([{"mechanism": "wyx", "dtype": "float32", "rep": 0, "T": 1, "n": 1, "p": 1}])
    assert frame.loc[0, PROVENANCE].tolist() == ["unrecorded"] * 4


def test_audit_and_least_squares_tables_carry_the_provenance(fresh):
    train(np.float64)  # the audit's gradient canaries train in float64
    audit = audit_table.conform(pd.DataFrame([{"mechanism": "wyx", "T": 1, "trials": 1},
                                                {"mechanism": "nl2_output", "T": 1, "trials": 1}]))
    assert audit["engine_path"].tolist() == ["numpy-float64", "not-engine-float64"]
    assert list(audit.columns) == [*audit_table.COLUMNS, *PROVENANCE]
    engine_gd._USED.clear()  # read back in another process: kept as recorded
    assert audit_table.conform(audit)["engine_path"].tolist() == ["numpy-float64", "not-engine-float64"]
    example = {"string": "ls_sgd", "bool": True, "boolean": True, "Int64": 1, "int64": 1,
               "float64": 0.5, "object": [0.5]}
    ls = ls_experiment.conform([{name: example[dtype] for name, dtype in ls_experiment.COLUMNS.items()
                                 if name not in PROVENANCE}])
    assert list(ls.columns) == list(ls_experiment.COLUMNS)
    assert ls.loc[0, PROVENANCE].tolist() == list(engine_path.NOT_ENGINE.values().values())


def test_row_builders_may_set_the_provenance_themselves(fresh):
    frame = results.to_frame([{"mechanism": "wyx", "dtype": "float32", "rep": 0, "T": 1, "n": 1,
                               "p": 1, "engine_path": "fused", "isa": "avx2",
                               "layout_rule": engine_layout.LAYOUT_RULE, "noise_source": "numpy"}])
    assert frame.loc[0, PROVENANCE].tolist() == ["fused", "avx2", engine_layout.LAYOUT_RULE, "numpy"]


def test_a_missing_kernel_is_a_warning_in_the_job_log(fresh, monkeypatch, caplog):
    monkeypatch.delenv(fused_kernel.ENGINE_VARIABLE, raising=False)
    monkeypatch.setattr(fused_kernel, "_load_library", lambda: None)
    monkeypatch.setattr(fused_kernel, "_library_path", lambda: None)
    monkeypatch.setattr(fused_kernel.platform, "machine", lambda: "x86_64")
    with caplog.at_level(logging.INFO, logger="mpdp"):
        train(np.float32)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "not built" in warnings[0]
    assert engine_gd.used()["float32"].engine_path == "numpy-float32"
    line, fallback = engine_provenance.summary()
    assert fallback and line.startswith("WARNING") and "not built" in line
    # logged once per process and path, not once per call
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="mpdp"):
        train(np.float32)
    assert not caplog.records


def test_turning_the_kernel_off_is_no_fallback(fresh, monkeypatch, caplog):
    monkeypatch.setenv(fused_kernel.ENGINE_VARIABLE, "numpy")
    with caplog.at_level(logging.INFO, logger="mpdp"):
        train(np.float32)
    assert [r.levelno for r in caplog.records] == [logging.INFO]
    assert "numpy-float32" in caplog.records[0].getMessage()
    assert engine_provenance.summary() == (caplog.records[0].getMessage(), False)


def test_the_command_line_prints_the_engine_path(monkeypatch):
    monkeypatch.setenv(fused_kernel.ENGINE_VARIABLE, "numpy")
    done = subprocess.run([sys.executable, "-m", "mpdp.engine.provenance"], capture_output=True,
                          text=True, check=True, timeout=120)
    assert done.stdout.startswith("engine: numpy-float32") and "MPDP_ENGINE=numpy" in done.stdout


def test_the_report_counts_the_engine_paths_of_every_table(fresh):
    train(np.float32)
    wddp = results.to_frame([{"mechanism": "wyx", "dtype": "float32", "rep": r, "T": 1, "n": 1, "p": 1}
                             for r in range(3)])
    admm = results.to_frame([{"mechanism": "dvp", "dtype": "float64", "rep": 0, "T": 1, "n": 1, "p": 1}])
    old = wddp.drop(columns=PROVENANCE)
    paths = report_provenance.engine_paths({"wddp": wddp, "admm": admm, "old": old, "absent": None})
    assert paths.groupby("table")["rows"].sum().to_dict() == {"wddp": 3, "admm": 1, "old": 3}
    assert paths.set_index("table").loc["old", "engine_path"] == "not recorded"
    text = report_provenance.engine_sentence(paths)
    assert "1 of 7 rows: `not-engine-float64`" in text and "do not record" in text
    path = engine_path.current("float32")[0].engine_path
    assert f"3 of 7 rows: `{path}`" in text
    assert ("bit-identical" in text) == (path == "fused")
