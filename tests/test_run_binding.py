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


#: a "Snakemake" bound like common.smk binds it, running one job through bash as Snakemake's shell does
DRIVEN_RUN = """
import os, subprocess, sys
sys.path.insert(0, {src!r})
from mpdp import io
os.environ[io.RUN_ENV] = io.run_token()
subprocess.run(["bash", "-c", sys.executable + " " + sys.argv[1]])
"""

#: its job: says it started, waits for the test's "go", then writes its output (unless the run is gone)
DRIVEN_JOB = """
import os, sys, time
from pathlib import Path
sys.path.insert(0, {src!r})
from mpdp import io
from mpdp.pipeline.runner import run_step

def step(log):
    Path({started!r}).write_text(str(os.getpid()))
    while not Path({go!r}).exists():
        time.sleep(0.02)
    with io.atomic_path({out!r}) as tmp:
        tmp.write_text("written")

run_step(step, {log!r}, "driven job")
"""


def _wait_for(condition, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


@pytest.mark.skipif(not LINUX, reason="Linux /proc needed")
def test_a_zombie_run_is_gone_and_its_job_writes_nothing(tmp_path):
    """Issue 58: a driver that Popens Snakemake and does not wait() for it (a notebook, a harness,
    a stopped supervisor). After SIGKILL the run is a zombie: same pid, same start time, state Z.
    It is not alive, and its job, told to write right after the kill, writes nothing."""
    src = str(SRC)
    started, go, out, log = (tmp_path / n for n in ("started", "go", "out.txt", "job.log"))
    job = tmp_path / "job.py"
    job.write_text(DRIVEN_JOB.format(src=src, started=str(started), go=str(go), out=str(out), log=str(log)))
    (tmp_path / "run.py").write_text(DRIVEN_RUN.format(src=src))
    driven = subprocess.Popen([sys.executable, str(tmp_path / "run.py"), str(job)], start_new_session=True)
    try:
        _wait_for(started.exists, "the job did not start")
        run = (driven.pid, io.process_start(driven.pid))
        assert io.run_alive(run)
        os.kill(driven.pid, signal.SIGKILL)  # and no wait(): this test is the slow driver
        _wait_for(lambda: io.process_state(driven.pid) == "Z", "the killed run did not become a zombie", 10)
        assert io.process_start(driven.pid) == run[1]  # pid and start time alone say "alive" ...
        assert not io.run_alive(run)  # ... the state says it is gone
        go.write_text("")  # the job would now write its output at once
        job_pid = int(started.read_text())
        # gone, or a zombie where no init reaps the orphan (some containers)
        _wait_for(lambda: io.process_state(job_pid) in (None, "Z", "X"), "the job did not stop", 15)
        assert not out.exists()
        assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
        assert "the Snakemake run that started" in log.read_text() and "is gone" in log.read_text()
        assert driven.poll() == -signal.SIGKILL  # reaped only now
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(driven.pid, signal.SIGKILL)  # this test's own process group only
        driven.wait()


@pytest.mark.skipif(not LINUX, reason="Linux /proc needed")
def test_a_stopped_run_is_gone_and_a_continued_one_alive():
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        run = (sleeper.pid, io.process_start(sleeper.pid))
        assert io.run_alive(run)
        os.kill(sleeper.pid, signal.SIGSTOP)
        _wait_for(lambda: io.process_state(sleeper.pid) == "T", "not stopped", 10)
        assert not io.run_alive(run)
        os.kill(sleeper.pid, signal.SIGCONT)
        _wait_for(lambda: io.process_state(sleeper.pid) != "T", "not continued", 10)
        assert io.run_alive(run)
    finally:
        sleeper.kill()
        sleeper.wait()


#: run_step with a real SIGINT delivered while it installs its handler or its watchdog
EARLY_INTERRUPT = """
import os, signal
from mpdp.pipeline import runner

install = getattr(runner, {at!r})
def interrupted(*args):
    install(*args)
    os.kill(os.getpid(), signal.SIGINT)
setattr(runner, {at!r}, interrupted)
runner.run_step(lambda log: print("the step ran"), None, "early job")
"""


@pytest.mark.parametrize("at", ["restore_sigint", "die_with_snakemake"])
def test_an_interrupt_while_run_step_starts_is_one_line(at):
    """Issue 58: an interrupt landing before the step (while the SIGINT handler or the watchdog is
    installed: the watchdog's own interrupt when the run is already gone) gave a 24-line
    traceback; it is one line and exit status 130."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    env.pop(io.RUN_ENV, None)
    done = subprocess.run([sys.executable, "-c", EARLY_INTERRUPT.format(at=at)], env=env, capture_output=True,
                          text=True, timeout=60)
    err = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stderr and len(err) == 1, done.stderr
    assert err[0].endswith("early job stopped: interrupted; its output was not written")
    assert done.returncode == 130 and "the step ran" not in done.stdout


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
