"""Jobs bound to the Snakemake run that started them (issue 47; mpdp.io run binding,
mpdp.pipeline.runner.die_with_snakemake): after ``kill -9`` of a backgrounded run no job, and no
figure drawn by the warm renderer, writes an output."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mpdp import io
from mpdp.figures import warm
from mpdp.pipeline import runner

SRC = Path(io.__file__).resolve().parents[1]
LINUX = Path("/proc/self/stat").exists()


def test_the_token_names_this_host_pid_and_start():
    token = io.run_token()
    if not LINUX:
        assert token == ""
        return
    host, pid, start = token.split()
    assert int(pid) == os.getpid() and int(start) == io.process_start(os.getpid())
    assert io.bound_run({io.RUN_ENV: token}) == (os.getpid(), int(start))
    assert io.bound_run({io.RUN_ENV: f"another-host-{host} {pid} {start}"}) is None  # a cluster node
    assert io.bound_run({}) is None and io.bound_run({io.RUN_ENV: "garbage"}) is None


@pytest.mark.skipif(not LINUX, reason="Linux /proc needed")
def test_a_write_for_a_run_that_is_gone_is_refused(tmp_path, monkeypatch):
    """The check before every write: a dead pid, and a live pid with another start time (a pid
    reused after the kill), both refuse; the temporary is removed."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    start = io.process_start(os.getpid())
    host = io.run_token().split()[0]
    for token in (f"{host} {dead.pid} 1", f"{host} {os.getpid()} {start + 1}"):
        monkeypatch.setenv(io.RUN_ENV, token)
        with pytest.raises(io.RunGoneError, match="is gone; .*out.json is not written"):
            io.write_json({"a": 1}, tmp_path / "out.json")
        assert list(tmp_path.iterdir()) == []
    monkeypatch.setenv(io.RUN_ENV, io.run_token())  # the live run: written
    io.write_json({"a": 1}, tmp_path / "out.json")
    assert (tmp_path / "out.json").exists()


def test_run_step_restores_sigint(monkeypatch):
    """A run started with ``&`` from a script ignores SIGINT and its jobs inherit that; run_step
    gives SIGINT its Python handler back, so the watchdog's interrupt reaches the step."""
    monkeypatch.delenv(io.RUN_ENV, raising=False)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    seen = []
    try:
        runner.run_step(lambda log: seen.append(signal.getsignal(signal.SIGINT)), None, "sigint test")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert seen == [signal.default_int_handler]


SNAKEFILE = """
import os
from mpdp import io as mpdp_io
if workflow.is_main_process:
    os.environ[mpdp_io.RUN_ENV] = mpdp_io.run_token()

rule all:
    input: "train.out", "fig.png"

rule train:
    output: "train.out"
    script: "train.py"

rule fig:
    output: "fig.png"
    script: "fig.py"
"""

#: a training job: a Python loop, then its output (unless the run is gone)
TRAIN = """
import time
from pathlib import Path
from mpdp import io
from mpdp.pipeline.runner import run_step

def step(log):
    Path("train.started").write_text(str(__import__("os").getpid()))
    with io.atomic_path(snakemake.output[0]) as tmp:
        for _ in range(300):
            time.sleep(0.05)
        tmp.write_text("trained")

run_step(step, "train.log", "train")
"""

#: a figure job, drawn in the warm renderer
FIG = """
__real_file__ = __file__
from mpdp.figures import warm
warm.delegate(globals())
import os, time
from pathlib import Path
from mpdp import io
from mpdp.pipeline.runner import run_step

def step(log):
    Path("fig.started").write_text(f"{os.getpid()} {os.environ.get('MPDP_WARM_CHILD')}")
    with io.atomic_path(snakemake.output[0]) as tmp:
        for _ in range(300):
            time.sleep(0.05)
        tmp.write_bytes(b"png")

run_step(step, "fig.log", "fig")
"""


def _processes_in(folder: Path) -> list[int]:
    """Processes whose command line or working directory is in ``folder`` (this test's only)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            cwd = os.readlink(proc / "cwd")
        except OSError:
            continue
        if str(folder).encode() in cmdline or cwd.startswith(str(folder)):
            found.append(int(proc.name))
    return found


@pytest.mark.slow
@pytest.mark.skipif(not (LINUX and warm.enabled({})), reason="Linux /proc, fork and send_fds needed")
def test_kill_9_of_a_backgrounded_run_leaves_no_output(tmp_path, socket_dir):
    """Issue 47: Snakemake started with ``&`` from a script (SIGINT ignored), killed with SIGKILL
    while a training job and a figure job drawn by the warm renderer run: neither output appears,
    then or later, and the jobs are gone."""
    work = tmp_path / "work"
    work.mkdir()
    for name, text in (("Snakefile", SNAKEFILE), ("train.py", TRAIN), ("fig.py", FIG)):
        (work / name).write_text(text)
    env = {**os.environ, "PYTHONPATH": str(SRC), warm.DIR_ENV: str(socket_dir), warm.IDLE_ENV: "5",
           warm.ENABLE_ENV: "1", "SLURM_JOB_ID": ""}
    env.pop(io.RUN_ENV, None)
    script = (f"{sys.executable} -m snakemake --cores 2 --snakefile Snakefile --quiet > snakemake.out 2>&1 & "
              "echo $! > snakemake.pid; wait")
    shell = subprocess.Popen(["bash", "-c", script], cwd=work, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not ((work / "train.started").exists() and (work / "fig.started").exists()):
            assert time.monotonic() < deadline, (work / "snakemake.out").read_text()
            assert shell.poll() is None, (work / "snakemake.out").read_text()
            time.sleep(0.1)
        # the background job really ignores SIGINT (bash's rule for & in a script) ...
        pid = int((work / "snakemake.pid").read_text())
        sigign = int(Path(f"/proc/{pid}/status").read_text().split("SigIgn:")[1].split()[0], 16)
        assert sigign & (1 << (signal.SIGINT - 1))
        # ... and the figure is drawn in the renderer's forked child
        assert (work / "fig.started").read_text().split()[1] == "1"
        os.kill(pid, signal.SIGKILL)
        shell.wait(timeout=30)
        time.sleep(20)  # the jobs would have finished (15 s) and written by now
        assert not (work / "train.out").exists() and not (work / "fig.png").exists()
        assert [p.name for p in work.iterdir() if p.name.endswith(".tmp")] == []
        jobs = [int((work / f).read_text().split()[0]) for f in ("train.started", "fig.started")]
        assert [p for p in jobs if io.process_start(p) is not None] == []
        assert "the Snakemake run that started it is gone" in (work / "train.log").read_text()
    finally:
        for pid in {*_processes_in(tmp_path), *_processes_in(socket_dir)}:  # this test's own (renderer included)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
