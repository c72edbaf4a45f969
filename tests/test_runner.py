"""run_step: readable failures; unexpected exceptions leave their traceback in the job log."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from mpdp.errors import InputDataError
from mpdp.pipeline import runner
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


@pytest.mark.parametrize(("code", "fix"), [(28, "free space on that disk"), (13, "chmod -R u+w")])
def test_a_full_disk_or_a_permission_error_names_the_file(tmp_path, capsys, monkeypatch, code, fix):
    """Issue 37: a full disk was "an unexpected OSError" without the file. The failed write
    inside mpdp.io.atomic_path names no file; the one line names the output and the fix."""
    import errno
    import os

    import numpy as np

    from mpdp import io

    out = tmp_path / "data" / "processed" / "adult" / "X_train.npy"

    def full_disk_write(*args, **kwargs):
        raise OSError(code, os.strerror(code))  # as write(2) reports ENOSPC / EACCES: no file name

    def step(log):
        monkeypatch.setattr(np, "save", full_disk_write)
        io.save_npy(out, np.zeros(3))

    with pytest.raises(SystemExit):
        run_step(step, tmp_path / "job.log", "prepare adult")
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "failed" in line]
    assert len(lines) == 1
    assert f"prepare adult failed: {os.strerror(code)} ({out}); " in lines[0] and fix in lines[0]
    assert "unexpected" not in lines[0] and "Traceback" not in err
    assert not out.exists() and list(out.parent.iterdir()) == []  # the temporary is gone
    assert errno.errorcode[code] in ("ENOSPC", "EACCES")


CHILD = """
import sys, time
from pathlib import Path
sys.path.insert(0, {src!r})
from mpdp import io
from mpdp.pipeline.runner import run_step

def step(log):
    Path({started!r}).write_text("started")
    with io.atomic_path({out!r}) as tmp:
        tmp.write_text("partial")
        for _ in range(600):  # a long job: writes its output at the end unless stopped
            time.sleep(0.05)
        tmp.write_text("finished")

run_step(step, None, "orphan test")
"""

FAKE_SNAKEMAKE = """
import os, subprocess, sys
sys.path.insert(0, {src!r})
from mpdp import io
os.environ[io.RUN_ENV] = io.run_token()  # as workflow/rules/common.smk does
# like Snakemake's shell(): bash (not exec'd) between Snakemake and the job's python
subprocess.run(["bash", "-c", "set -euo pipefail; " + sys.executable + " " + sys.argv[1]])
"""


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="Linux /proc needed")
def test_a_job_dies_with_its_snakemake(tmp_path):
    """Issue 37: after SIGKILL of Snakemake its running job finished writing its output. With
    the watchdog of run_step the orphan stops within seconds and writes nothing."""
    import signal
    import subprocess
    import sys
    import time

    src = str(Path(__file__).resolve().parents[1] / "src")
    out, started = tmp_path / "out.txt", tmp_path / "started"
    child = tmp_path / "job.py"
    child.write_text(CHILD.format(src=src, out=str(out), started=str(started)))
    fake = tmp_path / "snakemake.py"  # the run the job is bound to, by its pid and start time
    fake.write_text(FAKE_SNAKEMAKE.format(src=src))
    parent = subprocess.Popen([sys.executable, str(fake), str(child)], start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert started.exists()
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        time.sleep(8)  # the job would run 30 s; its watchdog polls every second
        alive = subprocess.run(["pgrep", "-f", str(child)], capture_output=True, text=True).stdout.split()
        assert alive == []
        assert not out.exists()
        assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(parent.pid, signal.SIGKILL)  # the test's own process group only
@pytest.mark.skipif(runner.schedstat() is None, reason="no /proc/self/schedstat here")
def test_done_line_splits_the_wall_time(tmp_path):
    # a job's log says where its wall time went (issue 36): a sleep is neither on a CPU nor
    # waiting for one; a busy loop is on a CPU (or waiting, on a loaded machine)
    import re
    import time

    def step(log):
        time.sleep(0.4)
        t = time.process_time()
        while time.process_time() - t < 0.2:
            pass

    log_path = tmp_path / "job.log"
    run_step(step, log_path, "probe")
    line = log_path.read_text().splitlines()[-1]
    m = re.search(r"done in ([\d.]+) s \(on a CPU ([\d.]+) s, waiting for a free core ([\d.]+) s, neither ([\d.]+) s\)",
                  line)
    assert m, line
    wall, cpu, waiting, neither = map(float, m.groups())
    assert cpu >= 0.15 and neither >= 0.3
    assert cpu + waiting + neither == pytest.approx(wall, abs=0.15)
    # and the whole process's (this test's: imports and earlier tests included)
    m = re.search(r"the process since it started: ([\d.]+) s \(on a CPU ([\d.]+) s, waiting for a free core "
                  r"([\d.]+) s, neither ([\d.]+) s\)", line)
    assert m, line
    age, p_cpu, p_wait, p_neither = map(float, m.groups())
    assert age >= wall and p_cpu >= cpu and p_neither >= neither
