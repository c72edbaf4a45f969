"""Figures shared by the studies (each study's figure table lives in its own package).

* :mod:`mpdp.studies.wddp.figures`: rendering of the WD-DP figures, noise diagnostics and Table 1
  (figure tables: :mod:`mpdp.studies.wddp.figure_spec`);
* :mod:`mpdp.figures.style`: the shared palette, legend names and deterministic output.
"""
