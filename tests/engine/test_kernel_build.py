"""The compiled kernel's C sources build warning-free (the CI step: ``-Wall -Wextra -Werror``,
with the flags of setup.py), into a plain shared library, and its status codes become clear
errors. Without gcc this skips locally and fails under CI (``CI`` set)."""

from __future__ import annotations

import ast
import ctypes
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from test_fused_kernel import require

from mpdp.engine import kernel as fused_kernel

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "src" / "mpdp" / "engine" / "_gd_kernel.c", ROOT / "src" / "mpdp" / "engine" / "_normal_stream.c"]


def setup_flags() -> list[str]:
    """``FLAGS`` of setup.py (read, not imported: importing it would run setup())."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "FLAGS" for t in node.targets):
            return list(ast.literal_eval(node.value))
    raise AssertionError("setup.py defines no FLAGS")


def gcc() -> str:
    found = shutil.which("gcc")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("gcc is needed to check that the kernel builds warning-free")
        pytest.skip("no gcc here")
    return found


@pytest.mark.parametrize("optimisation", ["-O3", "-O0"])
def test_the_c_sources_build_without_a_single_warning(tmp_path: Path, optimisation: str):
    flags = setup_flags()
    assert {"-Wall", "-Wextra", "-ffp-contract=off"} <= set(flags)
    out = tmp_path / "libmpdp_kernel.so"
    done = subprocess.run([gcc(), *flags, optimisation, "-Werror", "-fPIC", "-shared", "-o", str(out),
                           *map(str, SOURCES)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0 and not done.stderr, done.stderr
    lib = ctypes.CDLL(str(out))
    assert hasattr(lib, "mpdp_gd_run") and hasattr(lib, "mpdp_normal_fill_scaled")


def test_the_library_is_a_plain_shared_library():
    if fused_kernel.library() is None:
        require("avx2")
    path = Path(fused_kernel._library_path())
    assert path.name == fused_kernel.LIBRARY == "libmpdp_kernel.so"
    assert not hasattr(fused_kernel.library(), "PyInit_libmpdp_kernel")


def test_status_codes_become_clear_errors():
    kernel = require("avx2")
    X = np.zeros((4, 8), dtype=np.float32)
    theta = np.zeros((1, 8), dtype=np.float32)
    coef, decay = np.ones(1, dtype=np.float32), np.ones(1, dtype=np.float32)
    noise = np.zeros((1, 1, 8), dtype=np.float32)
    args = [X.ctypes.data, None, 4, 8, 8, theta.ctypes.data, 1, coef.ctypes.data, 0,
            decay.ctypes.data, None, noise.ctypes.data, 1, 4]
    kernel.run(*args)  # a valid call returns quietly
    args[4] = 7  # P not a multiple of 8: refused, named
    with pytest.raises(fused_kernel.KernelError, match="shapes are not supported"):
        kernel.run(*args)
    assert "out of memory" in fused_kernel.STATUS[-1]
