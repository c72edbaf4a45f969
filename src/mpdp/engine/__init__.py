"""The batched noisy gradient-descent engine (spec M2, M3.1, M3.2, M4; docs/engine.md).

Modules, imported one way only: :mod:`~mpdp.engine.kernel` (the compiled fused kernel)
-> :mod:`~mpdp.engine.noise` (NumPy's normal streams, compiled) -> :mod:`~mpdp.engine.layout`
(the block layout rule) -> :mod:`~mpdp.engine.path` (which path this machine takes) ->
:mod:`~mpdp.engine.gd` (:func:`~mpdp.engine.gd.noisy_gd`, the trainer);
:mod:`~mpdp.engine.provenance` reads what the trainer used into the results rows and is never
imported back. The C sources of the kernel live beside them.

Import names from their modules (``from mpdp.engine.gd import noisy_gd``): this package module
imports nothing, so no module of the package imports a package that imports it back
(tests/test_import_graph.py).
"""
