"""How the fused kernel lays out a block of rows: the layout rule recorded in every results row.

A function of the block's shape only (never of the CPU), so that the fused path adds every sum
in the same order, and gives bit-identical results, on every x86-64 CPU with AVX2 and FMA
(``docs/engine.md``; spec E8). Imported by :mod:`mpdp.engine.gd` and :mod:`mpdp.engine.path`.
"""

from __future__ import annotations

#: Bytes of a row tile of the fused kernel: it stays in the L1 data cache between the products
#: and the coefficients of a step.
FUSED_TILE_BYTES = 16 * 1024
#: Bytes of a row tile, per copy, of a block the fused kernel also holds transposed, by the
#: kernel's lanes (8: AVX2, 16: AVX-512; its tiles are a multiple of that many rows). Measured
#: best per build (both copies of the tile in L1 for AVX2, in L2 for AVX-512). The tile size
#: changes no result: every sum is ordered by rows and features only (``_gd_kernel.c``).
FUSED_TRANSPOSED_TILE_BYTES = {8: 8 * 1024, 16: 48 * 1024}
#: Version of the rule that lays out a fused block (:func:`fused_transposed`): recorded in every
#: results row (:mod:`mpdp.engine.provenance`). Change it whenever the rule or its constants
#: change, since the layout decides the rounding.
LAYOUT_RULE = "shape-v1"
#: Largest block (``n_b · P`` float32 bytes) that the fused kernel also keeps transposed, tile by
#: tile, for its products (no horizontal sums). 0.9 MiB: both copies fit a 2 MiB L2 with room
#: for the rest of a step. Measured (``perf/README.md``): on an Intel Xeon (2 MiB L2) party
#: blocks of 4–6 columns run transposed at 92–123 GFLOP/s and row-major at 83–97 up to
#: 0.85 MiB, but beyond 0.97 MiB transposed fall to 56–85 while row-major hold 72–97; on AMD
#: Zen 3/5 the transposed copy gains 6–12 % up to 3 MiB, which this rule forgoes between 0.9 and
#: 3 MiB so that every CPU lays out (and rounds) a block the same way. These are the limits the
#: last measured full-config run used (Intel Xeon, ratio 1.31 to the dense-GEMM bound).
FUSED_TRANSPOSED_MAX_BYTES = 943_718
#: The fewest columns for which a block over that size is transposed too: with enough columns
#: the products outweigh the second copy's traffic. Measured with the AVX-512 build: Intel Xeon
#: at 3.9 MiB 94 vs 80 GFLOP/s at 16 columns, 82 vs 76 at 12, 69 vs 71 at 8; AMD Zen 5 pooled
#: blocks 131 → 139 at 24 columns, 130 → 172 at 50, a loss at 12. The AVX2 build (Zen 3) was
#: about 7 % slower transposed at 50 columns (89 → 83): the price of one layout for both builds.
FUSED_TRANSPOSED_WIDE_COLUMNS = 16


def fused_transposed(n_b: int, P: int, k_b: int) -> bool:
    """Whether the fused kernel also keeps a block of ``n_b`` rows of ``P`` (padded) features
    and ``k_b`` columns transposed, tile by tile (rule :data:`LAYOUT_RULE`).

    A function of the block's shape only — never of the CPU, its caches or the instruction set
    — so that the fused path adds every sum in the same order, and gives bit-identical results,
    on every x86-64 CPU with AVX2 and FMA (``docs/engine.md``).
    """
    return 4 * n_b * P <= FUSED_TRANSPOSED_MAX_BYTES or k_b >= FUSED_TRANSPOSED_WIDE_COLUMNS


def fused_layout_description() -> str:
    """A few words for job logs on which blocks the fused kernel also keeps transposed."""
    return (f"layout rule {LAYOUT_RULE}: blocks of up to {FUSED_TRANSPOSED_MAX_BYTES / 2**20:.2f} "
            f"MiB or at least {FUSED_TRANSPOSED_WIDE_COLUMNS} columns kept transposed too")
