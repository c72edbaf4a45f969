"""Build step of mpdp's optional compiled kernel (the rest of the metadata is in pyproject.toml).

``src/mpdp/engine/_gd_kernel.c`` (the fused step kernel, for AVX2 + FMA and AVX-512) and
``src/mpdp/engine/_normal_stream.c`` (NumPy's normal stream) are built into a plain shared library,
``mpdp/engine/libmpdp_kernel.so``, which :mod:`mpdp.engine.kernel` loads with ctypes: it is not a
Python extension module (no ``PyInit_`` function, no Python headers used). The build is
optional: without a C compiler the install still succeeds, the engine takes its NumPy path, and
``python -m mpdp.engine.provenance`` (run by scripts/setup-venv.sh) prints a WARNING.
"""

from __future__ import annotations

import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

#: the library's name inside the package (mpdp.engine.kernel.LIBRARY)
LIBRARY = "mpdp.engine.libmpdp_kernel"
#: -ffp-contract=off: no multiply and add fused by the compiler, so that the normal stream
#: rounds as NumPy's does and the two kernel builds stay bit-identical (they fuse explicitly);
#: -Wall -Wextra: the sources build warning-free (tests/engine/test_kernel_build.py: -Werror)
FLAGS = ["-O3", "-fno-strict-aliasing", "-ffp-contract=off", "-Wall", "-Wextra"]


class BuildPlainLibrary(build_ext):
    """``build_ext`` that names the kernel ``libmpdp_kernel.so`` (not a Python module name)."""

    def get_ext_filename(self, fullname: str) -> str:
        # called with the dotted name, or (get_ext_fullpath) with its last component only
        if fullname in (LIBRARY, LIBRARY.rpartition(".")[2]):
            return fullname.replace(".", "/") + (".dll" if sys.platform == "win32" else ".so")
        return super().get_ext_filename(fullname)

    def get_export_symbols(self, ext: Extension) -> list[str]:
        return list(ext.export_symbols or [])  # no PyInit_ function to export


setup(
    ext_modules=[
        Extension(
            LIBRARY,
            sources=["src/mpdp/engine/_gd_kernel.c", "src/mpdp/engine/_normal_stream.c"],
            depends=["src/mpdp/engine/_gd_kernel_simd.h", "src/mpdp/engine/_ziggurat_tables.h"],
            extra_compile_args=FLAGS,
            optional=True,
        )
    ],
    cmdclass={"build_ext": BuildPlainLibrary},
)
