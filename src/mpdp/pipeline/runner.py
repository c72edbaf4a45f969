"""Run one pipeline step with logging and readable failures (no traceback dumps for users).

Workflow scripts call :func:`run_step`; a :class:`~mpdp.errors.MpdpError` is printed as its
message and the process exits with status 1. Any other exception is a bug or a damaged input:
its full traceback goes to the job's log file and the console gets one line naming the error
and the log file. BLAS is limited to one thread per job: two
thread pools in one process slow small problems badly, and Snakemake runs jobs in parallel.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path

from threadpoolctl import threadpool_limits

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


def run_step(step: Callable[[logging.Logger], None], log_path: str | Path | None, name: str) -> None:
    """Run ``step(logger)`` single-threaded; exit 1 with the message on a user-facing error."""
    log = get_logger(log_path)
    start = time.perf_counter()
    log.info("%s: start", name)
    try:
        with threadpool_limits(limits=1):
            step(log)
    except MpdpError as exc:
        log.error("%s failed:\n%s", name, exc)
        sys.exit(1)
    except Exception as exc:  # anything else: the traceback to the log file, one line to the console
        where = f"; traceback in {log_path}" if log_path else ""
        summary = f"{name} failed with an unexpected {type(exc).__name__}: {exc}{where}"
        for handler in log.handlers:
            detailed = isinstance(handler, logging.FileHandler) or not log_path
            handler.handle(log.makeRecord(log.name, logging.ERROR, __file__, 0, "%s", (summary,),
                                          sys.exc_info() if detailed else None))
        sys.exit(1)
    log.info("%s: done in %.1f s", name, time.perf_counter() - start)
