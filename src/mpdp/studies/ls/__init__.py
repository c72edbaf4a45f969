"""The least-squares write-up study [S-002] (spec mechanisms.md M14, M15; bounds.md B8; E6).

The write-up (seed 002) proposes naive sufficient-statistics perturbation (SSP) and a
multi-party noisy SGD for least squares, and analyses SSP's expected excess risk. Its analysis
is flawed (I-15…I-18). This study measures what it gets right and wrong:

* :mod:`~mpdp.studies.ls.theory`: bounds.md B8 (the printed closed form, the delta method, the
  validity region, the SGD shape);
* :mod:`~mpdp.studies.ls.data`: LS-1/LS-2 synthetic data (synthetic by design, E6) and the
  LS-3 real data set (scikit-learn's bundled diabetes set, offline);
* :mod:`~mpdp.studies.ls.experiment`: one coarse job per experiment → one tidy table;
* :mod:`~mpdp.studies.ls.figures`, :mod:`~mpdp.studies.ls.claims`,
  :mod:`~mpdp.studies.ls.report`: figures, claims rows, report-section helpers.

Mechanisms live in :mod:`mpdp.mechanisms.least_squares`; Gaussian calibration in
:mod:`mpdp.privacy.gaussian`.
"""

#: experiment ids (config sections ``ls.ls_1`` …, tables ``data/results/ls/<id>.parquet``)
EXPERIMENTS = ("ls_1", "ls_2", "ls_3")
