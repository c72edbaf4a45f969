"""Run one pipeline step with logging and readable failures (no traceback dumps for users).

Workflow scripts call :func:`run_step`; a :class:`~mpdp.errors.MpdpError` is printed as its
message and the process exits with status 1. A full disk or a permission error is one line
naming the file and the fix (:func:`disk_error`). Any other exception is a bug or a damaged
input: its full traceback goes to the job's log file and the console gets one line naming the
error and the log file. BLAS is limited to one thread per job: two
thread pools in one process slow small problems badly, and Snakemake runs jobs in parallel.
"""

from __future__ import annotations

import _thread
import errno
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from threadpoolctl import threadpool_limits

from mpdp import io
from mpdp.errors import MpdpError


def job_environment(cpuinfo: str | None = None) -> dict[str, str]:
    """Environment for training jobs: one BLAS/OpenMP thread, and OpenBLAS's AVX-512 kernels
    where the CPU has them (OpenBLAS 0.3.x picks its slower AVX2 "Haswell" kernels on some
    AVX-512 CPUs; the AVX-512 ones were 1.7x faster on this workload). Deterministic for a
    given machine, so results stay bit-reproducible there.
    """
    env = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            cpuinfo = ""
    flags = set()
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"} <= flags:
        env["OPENBLAS_CORETYPE"] = "SKYLAKEX"
    return env


#: errno -> what to do, for the disk errors a user fixes (not bugs)
DISK_ERRORS: dict[int, str] = {
    errno.ENOSPC: "free space on that disk (df -h {folder}) and run snakemake again; the partial output was removed",
    errno.EDQUOT: "free space within your quota (quota -s) and run snakemake again; the partial output was removed",
    errno.EACCES: "make it writable (chmod -R u+w {folder}) or run in a writable copy of the checkout",
    errno.EPERM: "make it writable (chmod -R u+w {folder}) or run in a writable copy of the checkout",
    errno.EROFS: "the file system is read-only: run in a writable copy of the checkout",
}


def disk_error(name: str, exc: BaseException) -> str | None:
    """One line for a full disk or a permission error, naming the file and the fix; else None.
    (:func:`mpdp.io.atomic_path` names the output when the failed write did not.)"""
    if not isinstance(exc, OSError) or exc.errno not in DISK_ERRORS:
        return None
    path = exc.filename if exc.filename is not None else "an unnamed file"
    folder = Path(str(path)).parent if exc.filename is not None else "."
    return f"{name} failed: {exc.strerror} ({path}); " + DISK_ERRORS[exc.errno].format(folder=folder)


def get_logger(log_path: str | Path | None, name: str = "mpdp") -> logging.Logger:
    """A logger writing timestamped lines to ``log_path`` (if given) and to stderr."""
    logger = logging.getLogger(name)
    logger.setLevel(logging.INFO)
    logger.handlers.clear()
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(message)s", "%Y-%m-%d %H:%M:%S")
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_path:
        Path(log_path).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_path, mode="w"))
    for handler in handlers:
        handler.setFormatter(fmt)
        logger.addHandler(handler)
    logger.propagate = False
    return logger


def die_with_snakemake(poll_s: float = 1.0, grace_s: float = 60.0) -> threading.Thread | None:
    """Stop this job when the Snakemake run that started it is gone (issues 37, 47).

    After ``kill -9`` of Snakemake its running jobs live on (the job's shell and this process are
    re-parented) and would finish writing their outputs into a build that no longer tracks them.
    The run is the one named in the environment (:data:`mpdp.io.RUN_ENV`: its pid *and* start
    time, set by ``workflow/rules/common.smk``; not found by walking the parents, which a
    re-parented job no longer has). A daemon thread polls it; when it is gone it interrupts the
    step (KeyboardInterrupt: :func:`mpdp.io.atomic_path` removes the temporary) and after
    ``grace_s`` (a long native call) kills the process. Whatever the step is doing then,
    :func:`mpdp.io.atomic_path` checks the run again before every write, so no output appears
    after the kill. ``PR_SET_PDEATHSIG`` cannot do this: the job's parent is Snakemake's shell,
    which outlives Snakemake.
    """
    run = io.bound_run()
    if run is None:
        return None
    pid, _ = run

    def watch() -> None:
        while io.run_alive(run):
            time.sleep(poll_s)
        sys.stderr.write(f"mpdp: Snakemake (process {pid}) is gone; stopping this job without output\n")
        _thread.interrupt_main()
        time.sleep(grace_s)
        os.kill(os.getpid(), signal.SIGKILL)

    thread = threading.Thread(target=watch, name="die-with-snakemake", daemon=True)
    thread.start()
    return thread


def restore_sigint() -> None:
    """Give SIGINT back its Python handler (KeyboardInterrupt). A run started with ``&`` from a
    script has SIGINT ignored, and its jobs inherit that; :func:`_thread.interrupt_main` (used by
    :func:`die_with_snakemake`) does nothing while SIGINT is ignored, and Ctrl-C could not stop a
    job. Only the main thread may set a handler; elsewhere this does nothing."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)


def schedstat() -> tuple[float, float] | None:
    """(seconds on a CPU, seconds runnable but waiting for a CPU) of this process's main thread
    since it started (Linux ``/proc/self/schedstat``); None where the kernel does not expose it."""
    try:
        on_cpu, waiting, _ = Path("/proc/self/schedstat").read_text().split()
    except (OSError, ValueError):
        return None
    return int(on_cpu) / 1e9, int(waiting) / 1e9


def process_age() -> float | None:
    """Seconds since this process started (Linux ``/proc``), or None."""
    try:
        start_ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return max(uptime - start_ticks / os.sysconf("SC_CLK_TCK"), 0.0)


def time_split(wall: float, before: tuple[float, float] | None, after: tuple[float, float] | None) -> str:
    """Where a step's wall time went: on a CPU, waiting for a free core (other processes had the
    cores), or neither (sleeping, reading, waiting for a child). The job benchmarks' ``cpu_time``
    is sampled every 30 s by Snakemake; this split is exact (issue 36: the learning-rate jobs'
    wall time was 2.6x their recorded CPU time)."""
    if before is None or after is None:
        return ""
    on_cpu, waiting = after[0] - before[0], after[1] - before[1]
    return (f" (on a CPU {on_cpu:.1f} s, waiting for a free core {waiting:.1f} s, "
            f"neither {max(wall - on_cpu - waiting, 0.0):.1f} s)")


def run_step(step: Callable[[logging.Logger], None], log_path: str | Path | None, name: str) -> None:
    """Run ``step(logger)`` single-threaded; exit 1 with the message on a user-facing error.
    The job stops, writing nothing, if the Snakemake process that runs it is killed
    (:func:`die_with_snakemake`), and SIGINT stops it even when the run was started with ``&``
    (:func:`restore_sigint`). The handler and the watchdog are installed inside the ``try:``, so
    an interrupt at any moment of the step (the watchdog's own included, issue 58) is one line."""
    log: logging.Logger | None = None
    try:
        restore_sigint()
        log = get_logger(log_path)
        die_with_snakemake()
        start = time.perf_counter()
        sched = schedstat()
        log.info("%s: start", name)
        with threadpool_limits(limits=1):
            step(log)
    except MpdpError as exc:
        _logger(log, log_path).error("%s failed:\n%s", name, exc)
        sys.exit(1)
    except KeyboardInterrupt:  # Ctrl-C, or die_with_snakemake: one line, no traceback
        gone = not io.run_alive(io.bound_run())
        _logger(log, log_path).error("%s stopped: %s; its output was not written", name,
                                     "the Snakemake run that started it is gone" if gone else "interrupted")
        sys.exit(1 if gone else 130)
    except Exception as exc:  # anything else: the traceback to the log file, one line to the console
        log = _logger(log, log_path)
        where = f"; traceback in {log_path}" if log_path else ""
        summary = disk_error(name, exc) or f"{name} failed with an unexpected {type(exc).__name__}: {exc}{where}"
        for handler in log.handlers:
            detailed = isinstance(handler, logging.FileHandler) or not log_path
            handler.handle(log.makeRecord(log.name, logging.ERROR, __file__, 0, "%s", (summary,),
                                          sys.exc_info() if detailed else None))
        sys.exit(1)
    wall, end = time.perf_counter() - start, schedstat()
    age = process_age()
    whole = f"; the process since it started: {age:.1f} s{time_split(age, (0.0, 0.0), end)}" if age else ""
    log.info("%s: done in %.1f s%s%s", name, wall, time_split(wall, sched, end), whole)


def _logger(log: logging.Logger | None, log_path: str | Path | None) -> logging.Logger:
    """The step's logger, or one made now when the step stopped before it had one."""
    if log is not None:
        return log
    try:
        return get_logger(log_path)
    except OSError:  # the log file cannot be opened: the console only
        return get_logger(None)
