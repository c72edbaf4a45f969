"""The forked warm renderer of the figure scripts (mpdp.figures.warm, issue 36): a delegated script
runs in a child of one renderer with the job's cwd, environment, argv, streams and exit status."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from mpdp.figures import warm

SRC = Path(warm.__file__).resolve().parents[1].parent

SCRIPT = """\
__real_file__ = __file__  # as Snakemake's preamble sets it
import os, sys
from mpdp.figures import warm
warm.delegate(globals(), ["json"])
with open(sys.argv[1], "w") as fh:
    fh.write(f"{os.getpid()} {os.getppid()} {os.environ.get('MPDP_WARM_CHILD')} {os.environ.get('MPDP_JOB_VALUE')} {os.environ.get('SECRET_TOKEN')} "
             f"{os.getcwd()}")
print("out of the script", flush=True)
print("err of the script", file=sys.stderr, flush=True)
sys.exit(int(sys.argv[2]))
"""


def _run(script: Path, cwd: Path, out: Path, code: int, **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(SRC), **env}
    return subprocess.run([sys.executable, str(script), str(out), str(code)], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(not warm.enabled({}), reason="no fork or socket.send_fds here")
def test_delegated_script_runs_in_one_warm_renderer_as_the_job(tmp_path: Path, socket_dir: Path) -> None:
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    job = tmp_path / "job"
    job.mkdir()
    env = {warm.DIR_ENV: str(socket_dir), warm.IDLE_ENV: "20", "SLURM_JOB_ID": "", warm.ENABLE_ENV: "1"}
    first = _run(script, job, tmp_path / "a.txt", 0, MPDP_JOB_VALUE="one", SECRET_TOKEN="s3cr3t", **env)
    second = _run(script, job, tmp_path / "b.txt", 3, MPDP_JOB_VALUE="two", SECRET_TOKEN="s3cr3t", **env)
    a = (tmp_path / "a.txt").read_text().split()
    b = (tmp_path / "b.txt").read_text().split()
    try:
        # each ran in a forked child (flag set) of the same renderer, with its own environment
        # and the caller's working directory; the caller's streams and exit status are the job's
        assert a[2] == b[2] == "1"
        assert a[1] == b[1] and a[0] != b[0]
        assert (a[3], b[3]) == ("one", "two")
        assert a[4] == b[4] == "None"  # issue 47: a variable the renderer does not need is not sent
        assert a[5] == b[5] == str(job)
        assert first.returncode == 0 and second.returncode == 3
        assert "out of the script" in first.stdout and "err of the script" in first.stderr
        assert "out of the script" in second.stdout
    finally:
        if a[2] == "1":  # a renderer's child: its parent is the renderer this test started
            os.kill(int(a[1]), signal.SIGTERM)

    # switched off: the script runs in its own process
    off = _run(script, job, tmp_path / "c.txt", 0, **{**env, warm.ENABLE_ENV: "0"})
    c = (tmp_path / "c.txt").read_text().split()
    assert off.returncode == 0 and c[2] == "None" and c[0] != a[0]


def test_renderer_key_changes_with_code_and_environment(tmp_path: Path) -> None:
    env = {"MPLBACKEND": "Agg"}
    key = warm._key(["/x"], env)
    assert warm._key(["/x"], env) == key
    assert warm._key(["/y"], env) != key  # another search path
    assert warm._key(["/x"], {"MPLBACKEND": "pdf"}) != key  # an import-time setting
    assert not warm.enabled({warm.ENABLE_ENV: "0"})
    assert not warm.enabled({warm.CHILD_ENV: "1"})
    assert not warm.enabled({"SLURM_JOB_ID": "17"})


FIGURE = """\
__real_file__ = __file__
import sys
from mpdp.figures import warm
warm.delegate(globals(), ["mpdp.studies.wddp.figures"])
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from mpdp.figures import plot, style
rng = np.random.default_rng(7)
frame = pd.DataFrame({"x": np.repeat(np.arange(6), 5), "y": rng.standard_normal(30).cumsum(),
                      "mechanism": np.tile(["wyx", "wddp"], 15)})
with plt.rc_context(style.RC):
    fig, ax = plt.subplots(figsize=(4, 3))
    sns.lineplot(frame, x="x", y="y", hue="mechanism", errorbar=("ci", 95), n_boot=50, seed=0, ax=ax)
    ax.set_title("Δ ε σ")
    plot.save_figure(fig, sys.argv[1] + ".png", sys.argv[1] + ".pdf")
"""


@pytest.mark.skipif(not warm.enabled({}), reason="no fork or socket.send_fds here")
def test_a_figure_drawn_in_the_renderer_is_byte_identical(tmp_path: Path, socket_dir: Path) -> None:
    # the renderer's child starts from a process that imported the plotting stack before: the
    # PNG and PDF bytes must equal those of a fresh process (issue 36: identical figures)
    script = tmp_path / "figure.py"
    script.write_text(FIGURE)
    env = {warm.DIR_ENV: str(socket_dir), warm.IDLE_ENV: "20", "SLURM_JOB_ID": ""}
    fresh = _run(script, tmp_path, tmp_path / "fresh", 0, **env, **{warm.ENABLE_ENV: "0"})
    warm1 = _run(script, tmp_path, tmp_path / "warm1", 0, **env, **{warm.ENABLE_ENV: "1"})
    warm2 = _run(script, tmp_path, tmp_path / "warm2", 0, **env, **{warm.ENABLE_ENV: "1"})
    try:
        assert fresh.returncode == warm1.returncode == warm2.returncode == 0, warm1.stderr + warm2.stderr
        for ext in ("png", "pdf"):
            ref = (tmp_path / f"fresh.{ext}").read_bytes()
            assert (tmp_path / f"warm1.{ext}").read_bytes() == ref
            assert (tmp_path / f"warm2.{ext}").read_bytes() == ref
    finally:
        _stop_renderers(socket_dir)


def _stop_renderers(folder: Path) -> None:
    """Stop the renderers this test started (those serving a socket in ``folder``)."""
    for sock in folder.glob("mpdp-warm-*/*.sock"):
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if str(sock).encode() in cmdline and b"warm.serve(sys.argv[1])" in b" ".join(cmdline):
                os.kill(int(proc.name), signal.SIGTERM)


@pytest.mark.skipif(not warm.enabled({}), reason="no fork or socket.send_fds here")
def test_a_renderer_that_cannot_start_costs_no_wait(tmp_path: Path) -> None:
    # its socket folder does not exist: no renderer can serve there, and the script runs in its
    # own process without waiting for START_TIMEOUT
    import time

    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    env = {warm.DIR_ENV: str(tmp_path / "missing"), "SLURM_JOB_ID": "", warm.ENABLE_ENV: "1"}
    t0 = time.monotonic()
    proc = _run(script, tmp_path, tmp_path / "a.txt", 0, **env)
    assert proc.returncode == 0 and (tmp_path / "a.txt").read_text().split()[2] == "None"
    assert time.monotonic() - t0 < warm.START_TIMEOUT / 2


def test_the_socket_folder_is_private(tmp_path: Path) -> None:
    """Issue 47: the socket lies in a 0700 folder of this user's; a folder open to others, or a
    link planted in its place, is refused (the script then renders in its own process)."""
    import stat

    folder = warm.private_dir(tmp_path)
    assert folder is not None and folder.parent == tmp_path
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700 and folder.stat().st_uid == os.getuid()
    assert warm.socket_path("k", folder).parent == folder
    folder.chmod(0o755)
    assert warm.private_dir(tmp_path) is None
    folder.rmdir()
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    folder.symlink_to(tmp_path / "elsewhere")
    assert warm.private_dir(tmp_path) is None


def test_only_the_variables_a_script_needs_are_sent() -> None:
    env = {"MPDP_DATA_MIRROR": "/m", "MPLBACKEND": "Agg", "PATH": "/bin", "LC_ALL": "C",
           "GITHUB_TOKEN": "t", "AWS_SECRET_ACCESS_KEY": "s", "SSH_AUTH_SOCK": "/a"}
    assert warm.sent_environment(env) == {"MPDP_DATA_MIRROR": "/m", "MPLBACKEND": "Agg", "PATH": "/bin",
                                          "LC_ALL": "C"}


@pytest.mark.skipif(not hasattr(socket, "SO_PEERCRED"), reason="Linux SO_PEERCRED")
def test_both_ends_check_the_peers_uid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A socket served by another user is not talked to; a client of another user is not served."""
    import threading
    import time

    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    with server:
        assert warm.peer_uid(conn := warm._connect(path)) == os.getuid()  # same user: connected
        conn.close()
        monkeypatch.setattr(warm, "peer_uid", lambda sock: os.getuid() + 1)
        assert warm._connect(path) is None  # another user listens: refused, nothing sent

    # the renderer closes a connection from another user without reading its request
    served = tmp_path / "r.sock"
    thread = threading.Thread(target=warm.serve, args=(served, 1.0), daemon=True)
    thread.start()
    for _ in range(100):
        if served.exists():
            break
        time.sleep(0.02)
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(str(served))
    with client:
        client.settimeout(5)
        assert client.recv(4) == b""  # closed at once
    thread.join(10)
