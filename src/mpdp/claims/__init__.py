"""Claims engine (issue 33; docs/claims.md): claims declared as data, one engine for every study.

* :mod:`mpdp.claims.declare`: :class:`Claim` (a declaration), the metrics and the frames a study hands over;
* :mod:`mpdp.claims.engine`: per-cell statistics, informativeness, Holm, cell and claim verdicts;
* :mod:`mpdp.claims.summaries`: mean / median / trimmed-mean intervals and one-sided p-values;
* :mod:`mpdp.claims.intervals`: the interval helpers (t, median, Clopper–Pearson, ratio);
* :mod:`mpdp.claims.tables`: cells.parquet / verdicts.parquet (the contract), readers and the
  worst-first ordering of a paper's summary;
* :mod:`mpdp.claims.maps`: the verdict map figure of a study.

A shared layer: it never imports :mod:`mpdp.studies`.

Import names from their modules: this package module imports nothing, so no module of the
package imports a package that imports it back (tests/test_import_graph.py).
"""
