"""Data layer: registry of the WD-DP data sets, verified fetching, parsing and preparation.

Spec experiments.md E1 (data sets), E1.1 (raw files), E1.2 (split), E1.3 (encoding and
normalisation). Use the submodules in this order: :mod:`mpdp.data.registry` pins the raw
files, :mod:`mpdp.data.fetch` obtains and verifies them (``fetch.locate``,
``fetch.fetch``), :mod:`mpdp.data.parsers` reads them, and :mod:`mpdp.data.prepare` writes
and reads ``data/processed/<id>/`` (``prepare.prepare``, ``prepare.load``).
"""

from mpdp.data.registry import DATASETS

__all__ = ["DATASETS"]
