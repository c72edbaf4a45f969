"""run_step: readable failures; unexpected exceptions leave their traceback in the job log."""

from __future__ import annotations

import pytest

from mpdp.errors import InputDataError
from mpdp.pipeline.runner import run_step


def _corrupt_parquet_step(tmp_path):
    def step(log):
        import pandas as pd

        bad = tmp_path / "job.parquet"
        bad.write_bytes(b"PAR1 this is not a parquet file")
        log.info("reading %s", bad)
        pd.read_parquet(bad)

    return step


def test_unexpected_exception_traceback_goes_to_the_log_and_one_line_to_the_console(tmp_path, capsys):
    log_path = tmp_path / "logs" / "job.log"
    with pytest.raises(SystemExit) as exit_info:
        run_step(_corrupt_parquet_step(tmp_path), log_path, "train adult/eps_m2")
    assert exit_info.value.code == 1
    log = log_path.read_text()
    assert "train adult/eps_m2: start" in log and "reading" in log
    assert "Traceback (most recent call last)" in log and "read_parquet" in log
    assert "train adult/eps_m2 failed with an unexpected" in log
    err = capsys.readouterr().err
    assert "Traceback" not in err
    failure = [line for line in err.splitlines() if "failed" in line]
    assert len(failure) == 1 and f"traceback in {log_path}" in failure[0]


def test_user_facing_error_is_its_message_only(tmp_path, capsys):
    def step(log):
        raise InputDataError("adult.data: checksum mismatch")

    log_path = tmp_path / "job.log"
    with pytest.raises(SystemExit):
        run_step(step, log_path, "fetch_raw adult")
    assert "checksum mismatch" in log_path.read_text() and "Traceback" not in log_path.read_text()
    assert "Traceback" not in capsys.readouterr().err


def test_without_a_log_file_the_traceback_goes_to_the_console(capsys):
    def step(log):
        raise ZeroDivisionError("boom")

    with pytest.raises(SystemExit):
        run_step(step, None, "x")
    assert "Traceback" in capsys.readouterr().err
