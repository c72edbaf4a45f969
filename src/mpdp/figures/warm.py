"""A forked warm renderer for the figure scripts (issue 36: one Python process per figure paid
the interpreter and the imports of pandas, SciPy, matplotlib and seaborn ~80 times).

Every figure keeps its own Snakemake rule, so a named target (``snakemake fig07``, ``zz_f4``)
still redraws only its own files. What changes is *where* a figure script runs: its first
statement, :func:`delegate`, hands the script to a renderer process that has already imported
the heavy modules, and exits with the script's exit status. The renderer ``fork()``\\ s one child
per request; the child takes over the job's stdin/stdout/stderr (passed over a Unix socket),
working directory, environment, ``sys.path`` and ``sys.argv``, and runs the very file Snakemake
wrote (preamble with the pickled ``snakemake`` object, then the script) with :mod:`runpy`. So
the script's code, inputs, outputs and log are the job's own; only the imports were done
before. Two requests run in two children at once (both cores).

**Lifetime.** The first figure job starts the renderer (a lock file serialises the start), the
renderer exits after :data:`IDLE_ENV` seconds (default 120) without a request. Its socket's name
is a hash of the interpreter, ``sys.path`` and the modification times of the ``mpdp`` sources,
and of the environment variables that matter at import (:data:`KEY_ENV`): edited code or another
environment starts a fresh renderer, never reuses a stale one.

**Privacy** (issue 47). The socket lies in a folder of this user's own, ``mpdp-warm-<uid>``,
created with mode 0700 and refused if it is a link, belongs to someone else or is open to the
group or others (:func:`private_dir`); both ends check the other's uid (``SO_PEERCRED``,
:func:`peer_uid`) and talk only to themselves; a job sends only the environment variables a
script reads (:func:`sent_environment`: :data:`KEY_ENV`, :data:`SENT_ENV`, ``MPDP_*``,
``LC_*``), never the rest of its environment (tokens, credentials), and the renderer itself is
started with that subset only. A killed Snakemake run writes nothing through the renderer
either: the run's identity is one of the variables sent, and :func:`mpdp.io.atomic_path` checks it
in the child before every write.

**Off switch and fallback.** ``MPDP_WARM=0`` runs every script in its own process as before; so
does a job under Slurm (``SLURM_JOB_ID`` set: a renderer would outlive the job on the node), and
a platform without ``fork`` or ``socket.send_fds``. If the renderer cannot be reached or
started, or dies before answering, the script runs in its own process (its outputs are
written atomically, so a half-finished attempt leaves nothing behind); a script that *fails*
in the renderer fails the job with its exit status, it is not run twice.

Only the standard library is imported here: the client side must stay cheap.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib
import json
import os
import runpy
import select
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

#: ``0`` switches the renderer off (each figure script in its own process)
ENABLE_ENV = "MPDP_WARM"
#: seconds the renderer waits for a request before it exits
IDLE_ENV = "MPDP_WARM_IDLE"
#: set in a forked child: :func:`delegate` then lets the script run
CHILD_ENV = "MPDP_WARM_CHILD"
#: folder of the sockets (default: the system's temporary folder)
DIR_ENV = "MPDP_WARM_DIR"
#: environment variables read at import time by NumPy/OpenBLAS/matplotlib: part of the key
KEY_ENV = ("PYTHONPATH", "PYTHONHASHSEED", "MPLBACKEND", "MPLCONFIGDIR", "OMP_NUM_THREADS",
           "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_CORETYPE", "MPDP_ENGINE", "LANG", "LC_ALL")
#: further variables a figure script (or its libraries) reads; ``MPDP_*`` and ``LC_*`` are sent too
SENT_ENV = ("PATH", "HOME", "USER", "TMPDIR", "TZ", "SOURCE_DATE_EPOCH", "SNAKEMAKE_PROFILE", "CONDA_PREFIX")
#: seconds a client waits for a renderer it started to accept connections
START_TIMEOUT = 120.0
#: what Snakemake's preamble of every script imports (the child runs the preamble again)
SNAKEMAKE_PRELOAD = ("snakemake.logging", "snakemake.iocontainers")
DEFAULT_IDLE = 120.0


def _key(sys_path: Iterable[str], env: Mapping[str, str]) -> str:
    """Name of the renderer fit for this interpreter, search path, code and environment."""
    h = hashlib.sha256()
    h.update(sys.executable.encode())
    h.update(json.dumps(list(sys_path)).encode())
    h.update(json.dumps({k: env.get(k) for k in KEY_ENV}).encode())
    package = Path(__file__).resolve().parents[1]  # src/mpdp
    for path in sorted(package.rglob("*.py")) + sorted(package.glob("*.so")):
        st = path.stat()
        h.update(f"{path}:{st.st_mtime_ns}:{st.st_size}".encode())
    return h.hexdigest()[:20]


def private_dir(base: str | Path | None = None) -> Path | None:
    """This user's folder of renderer sockets under ``base`` (default :data:`DIR_ENV` or the
    system's temporary folder), created 0700; None (render in-process) if it is a link, not a
    folder, someone else's, or open to the group or others."""
    base = Path(base or os.environ.get(DIR_ENV) or tempfile.gettempdir())
    folder = base / f"mpdp-warm-{os.getuid()}"
    try:
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
        st = os.lstat(folder)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return folder


def socket_path(key: str, folder: Path) -> Path:
    return folder / f"{key}.sock"


def peer_uid(sock: socket.socket) -> int:
    """The uid of the process at the other end of the Unix socket ``sock`` (``SO_PEERCRED``)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def sent_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``env`` a figure script needs (module docstring, "Privacy")."""
    return {k: v for k, v in env.items()
            if k in KEY_ENV or k in SENT_ENV or k.startswith(("MPDP_", "LC_"))}


def enabled(env: Mapping[str, str] | None = None) -> bool:
    """Whether :func:`delegate` may hand a script to the renderer here."""
    env = os.environ if env is None else env
    return (env.get(ENABLE_ENV, "1") != "0" and not env.get(CHILD_ENV) and not env.get("SLURM_JOB_ID")
            and hasattr(os, "fork") and hasattr(socket, "send_fds") and hasattr(socket, "SO_PEERCRED"))


def _send(sock: socket.socket, payload: dict[str, Any], fds: list[int] | None = None) -> None:
    data = json.dumps(payload).encode()
    header = struct.pack("!I", len(data))
    if fds:
        socket.send_fds(sock, [header], fds)
    else:
        sock.sendall(header)
    sock.sendall(data)


def _recv(sock: socket.socket, with_fds: int = 0) -> tuple[dict[str, Any] | None, list[int]]:
    fds: list[int] = []
    if with_fds:
        header, fds, _, _ = socket.recv_fds(sock, 4, with_fds)
    else:
        header = sock.recv(4)
    while header and len(header) < 4:
        more = sock.recv(4 - len(header))
        if not more:
            break
        header += more
    if len(header) < 4:
        return None, fds
    (size,) = struct.unpack("!I", header)
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            return None, fds
        data += chunk
    return json.loads(data), fds


def _connect(path: Path) -> socket.socket | None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
        if peer_uid(sock) != os.getuid():  # someone else listens there: tell it nothing
            raise OSError(f"the renderer socket {path} is served by another user")
        return sock
    except OSError:
        sock.close()
        return None


def _start(path: Path) -> socket.socket | None:
    """Connect to the renderer at ``path``, starting it first if nobody serves there."""
    sock = _connect(path)
    if sock is not None:
        return sock
    with open(f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one client starts it, the others wait and connect
        sock = _connect(path)
        if sock is not None:
            return sock
        server = subprocess.Popen(
            [sys.executable, "-c", "import sys; from mpdp.figures import warm; warm.serve(sys.argv[1])", str(path)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
            env={**sent_environment(os.environ), "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
        )
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline and server.poll() is None:  # a renderer that died: give up
            sock = _connect(path)
            if sock is not None:
                return sock
            time.sleep(0.05)
    return None


def delegate(namespace: Mapping[str, Any], preload: Iterable[str] = ()) -> None:
    """Run the calling Snakemake script in the warm renderer and exit with its status.

    Call it first in a figure script: ``warm.delegate(globals(), ("mpdp.studies.x.figures",))``.
    Returns (and the script goes on in its own process) when the renderer is off, unreachable,
    or this already is the renderer's child. ``preload``: modules the renderer imports before it
    forks (kept for every later request).
    """
    script = namespace.get("__real_file__")  # the file Snakemake runs: preamble + script
    if not enabled() or not script:
        return
    folder = private_dir()
    if folder is None:
        sys.stderr.write("mpdp: no private folder for the warm renderer's socket; rendering in this process\n")
        return
    path = socket_path(_key(sys.path, os.environ), folder)
    if len(os.fsencode(path)) > 100:  # the limit of a Unix socket's name (108 bytes on Linux)
        return
    try:
        sock = _start(path)
        if sock is None:
            return
        with sock:
            _send(sock, {"script": str(script), "argv": sys.argv, "cwd": os.getcwd(), "env": sent_environment(os.environ),
                         "sys_path": sys.path, "preload": [*SNAKEMAKE_PRELOAD, *preload]}, [0, 1, 2])
            answer, _ = _recv(sock)
    except OSError as exc:
        sys.stderr.write(f"mpdp: warm renderer unavailable ({exc}); rendering in this process\n")
        return
    if answer is None or "exit" not in answer:
        sys.stderr.write("mpdp: warm renderer gave no answer; rendering in this process\n")
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(answer["exit"]))  # the script ran; skip this process's imports and clean-up


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    sys.stderr.write(f"{exc.code}\n")
    return 1


def _child(request: dict[str, Any], fds: list[int]) -> int:
    """In the forked child: become the job's process and run its script."""
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)
        os.close(fd)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the process's own streams
    sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    os.environ[CHILD_ENV] = "1"
    sys.path[:] = request["sys_path"]
    sys.argv = list(request["argv"])
    try:
        runpy.run_path(request["script"], run_name="__main__")
        code = 0
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException:  # noqa: BLE001 - reported like an uncaught exception
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return code


def serve(path: str | Path, idle: float | None = None) -> None:
    """The renderer: accept requests on the Unix socket ``path``, fork a child for each, answer
    each with its child's exit status; exit after ``idle`` seconds without a request."""
    idle = float(os.environ.get(IDLE_ENV, DEFAULT_IDLE)) if idle is None else idle
    path = Path(path)
    path.unlink(missing_ok=True)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(64)
    children: dict[int, socket.socket] = {}
    last = time.monotonic()
    try:
        while True:
            ready, _, _ = select.select([server], [], [], 0.05)
            if ready:
                conn, _ = server.accept()
                if peer_uid(conn) != os.getuid():  # only this user's jobs are served
                    conn.close()
                    continue
                conn.settimeout(10.0)  # a client killed before it sent its request blocks no one
                try:
                    request, fds = _recv(conn, with_fds=3)
                except OSError:
                    request, fds = None, []
                conn.settimeout(None)
                if request is None or len(fds) != 3:
                    conn.close()
                    for fd in fds:
                        os.close(fd)
                    continue
                for module in request.get("preload", []):
                    # a failing import is reported by the child, when the script imports it
                    with contextlib.suppress(Exception):
                        importlib.import_module(module)
                pid = os.fork()
                if pid == 0:
                    server.close()
                    conn.close()
                    os._exit(_child(request, fds))
                for fd in fds:
                    os.close(fd)
                children[pid] = conn
            for pid in list(children):
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    conn = children.pop(pid)
                    with contextlib.suppress(OSError):  # the client is gone
                        _send(conn, {"exit": os.waitstatus_to_exitcode(status) % 256})
                    conn.close()
                    last = time.monotonic()
            if ready:
                last = time.monotonic()
            elif not children and time.monotonic() - last > idle:
                break
    finally:
        server.close()
        path.unlink(missing_ok=True)
