"""The batched noisy gradient-descent engine (spec M2, M3.1, M3.2, M4; docs/engine.md).

Modules, imported one way only: :mod:`~mpdp.engine.kernel` (the compiled fused kernel)
-> :mod:`~mpdp.engine.noise` (NumPy's normal streams, compiled) -> :mod:`~mpdp.engine.layout`
(the block layout rule) -> :mod:`~mpdp.engine.path` (which path this machine takes) ->
:mod:`~mpdp.engine.gd` (:func:`noisy_gd`, the trainer); :mod:`~mpdp.engine.provenance` reads
what the trainer used into the results rows and is never imported back. The C sources of the
kernel live beside them. This module re-exports the trainer's public names.
"""

from mpdp.engine.gd import Block, column_flops, deduplicate, noisy_gd, row_keys, tile_rows

__all__ = ["Block", "column_flops", "deduplicate", "noisy_gd", "row_keys", "tile_rows"]
