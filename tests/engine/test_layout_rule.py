"""The fused engine lays out a block by its shape only (``mpdp.engine.layout.fused_transposed``): the same
inputs give bit-identical results whatever CPU the process believes it runs on (vendor, cache
sizes, instruction set), so tables are the same on every x86-64 CPU with AVX2 and FMA.

Each simulated CPU is a fresh Python process in which ``/proc/cpuinfo`` and the sysfs cache
folders read as another machine's (or are missing), with the kernel build forced by
``MPDP_ENGINE``; the runs cover both layouts (transposed small and wide blocks, row-major large
skinny ones).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap

from test_fused_kernel import require

from mpdp.engine import gd as engine
from mpdp.engine import layout as engine_layout

#: (vendor_id, L2 size as sysfs writes it) of the simulated machines; None: files missing
MACHINES = {
    "intel_2m": ("GenuineIntel", "2048K"),
    "amd_1m": ("AuthenticAMD", "1024K"),
    "amd_512k": ("AuthenticAMD", "512K"),
    "no_sysfs": None,
}

#: run in the child: fake CPU files, then train three blocks and print their hashes and layouts
CHILD = textwrap.dedent('''
    import builtins, hashlib, io, json, pathlib, sys
    machine = json.loads(sys.argv[1])

    def fake(path):
        path = str(path)
        if not (path.startswith("/proc/cpuinfo") or path.startswith("/sys/devices/system/cpu")):
            return None
        if machine is None:
            raise FileNotFoundError(path)
        vendor, l2 = machine
        if path == "/proc/cpuinfo":
            return f"processor\\t: 0\\nvendor_id\\t: {vendor}\\nflags\\t\\t: fpu avx2 fma\\n"
        if path.endswith("/level"):
            return "2\\n"
        if path.endswith("/type"):
            return "Unified\\n"
        if path.endswith("/size"):
            return l2 + "\\n"
        raise FileNotFoundError(path)

    real_open, real_read_text = builtins.open, pathlib.Path.read_text
    def fake_open(file, mode="r", *args, **kwargs):
        text = fake(file) if isinstance(file, (str, pathlib.PurePath)) else None
        return io.StringIO(text) if text is not None else real_open(file, mode, *args, **kwargs)
    def fake_read_text(self, *args, **kwargs):
        text = fake(self)
        return text if text is not None else real_read_text(self, *args, **kwargs)
    builtins.open = io.open = fake_open
    pathlib.Path.read_text = fake_read_text

    import numpy as np
    from mpdp.engine import layout as engine_layout
    from mpdp.engine.gd import Block, noisy_gd

    rng = np.random.default_rng(7)
    out = {}
    # (rows, features, columns): small (transposed), large skinny (row-major), large wide
    for n, p, K in ((900, 105, 6), (2600, 105, 6), (2600, 105, 16)):
        X = rng.standard_normal((n, p))
        y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
        w = rng.random((n, K)) / n
        seeds = [np.random.SeedSequence([11, k]) for k in range(K)]
        theta = noisy_gd([Block(X, y, w, np.arange(K))], 0.1 * rng.standard_normal((p, K)),
                         rng.uniform(0.5, 2.0, K), 1e-3, np.full(K, 0.05), seeds, 8)
        P = -(-p // 8) * 8
        out[f"{n}x{p}x{K}"] = [hashlib.sha256(theta.tobytes()).hexdigest(),
                               engine_layout.fused_transposed(n, P, K)]
    print(json.dumps(out))
''')


def run_as(machine: tuple[str, str] | None, isa: str) -> dict[str, list]:
    env = {**os.environ, "MPDP_ENGINE": isa}
    done = subprocess.run([sys.executable, "-c", CHILD, json.dumps(machine)], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_tables_are_bit_identical_on_every_simulated_cpu():
    isas = ["avx2"]
    require("avx2")
    if any(kernel.isa == "avx512" for kernel in engine.fused_kernel.available()):
        isas.append("avx512")
    results = {(name, isa): run_as(machine, isa) for name, machine in MACHINES.items() for isa in isas}
    first = next(iter(results.values()))
    # both layouts are exercised: a small and a wide block transposed, a large skinny one not
    assert [layout for _, layout in first.values()] == [True, False, True]
    for key, got in results.items():
        assert got == first, f"{key} differs from {next(iter(results))}"


def test_layout_rule_takes_only_the_shape():
    # the decision is a pure function of (rows, padded features, columns) and the rule's version
    # is recorded: changing a constant without bumping LAYOUT_RULE would go unnoticed otherwise
    assert engine_layout.fused_transposed(1, 8, 1)
    limit_rows = engine_layout.FUSED_TRANSPOSED_MAX_BYTES // (4 * 112)
    assert engine_layout.fused_transposed(limit_rows, 112, 6)
    assert not engine_layout.fused_transposed(limit_rows + 1, 112, 6)
    assert engine_layout.fused_transposed(10**6, 112, engine_layout.FUSED_TRANSPOSED_WIDE_COLUMNS)
    rule = (engine_layout.LAYOUT_RULE, engine_layout.FUSED_TRANSPOSED_MAX_BYTES, engine_layout.FUSED_TRANSPOSED_WIDE_COLUMNS)
    digest = hashlib.sha256(repr(rule).encode()).hexdigest()[:12]
    assert digest == LAYOUT_RULE_DIGEST, (
        f"layout constants changed ({rule}): bump engine_layout.LAYOUT_RULE and update LAYOUT_RULE_DIGEST "
        f"to {digest!r}")


#: digest of (LAYOUT_RULE, FUSED_TRANSPOSED_MAX_BYTES, FUSED_TRANSPOSED_WIDE_COLUMNS)
LAYOUT_RULE_DIGEST = "80db744ee781"
