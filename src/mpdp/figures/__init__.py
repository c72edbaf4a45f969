"""The WD-DP paper's figures (spec experiments.md E3.4, bounds.md B9, B10).

* :mod:`mpdp.figures.spec`: the figure table as data, variants, data-set panels, targets;
* :mod:`mpdp.figures.plot`: rendering of figures, noise diagnostics and Table 1;
* :mod:`mpdp.figures.style`: the shared palette, legend names and deterministic output.
"""
