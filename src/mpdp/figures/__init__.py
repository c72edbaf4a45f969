"""Figure helpers every study uses; each study draws its own figures in ``studies/<study>/figures.py``.

* :mod:`mpdp.figures.style`: the shared palette, legend names and deterministic output;
* :mod:`mpdp.figures.bands`: mean and 95 % band over repetitions;
* :mod:`mpdp.figures.plot`: byte-reproducible saving, message panels, axes texts.

No module here imports a study (tests/figures/test_layers.py).
"""
