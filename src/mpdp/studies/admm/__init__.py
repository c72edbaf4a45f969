"""The Zhang–Zhu ADMM study (spec experiments.md E4; mechanisms.md M7–M10; bounds.md B7; I-11).

* :mod:`~mpdp.studies.admm.schema`: the study's extra results columns and settings;
* :mod:`~mpdp.studies.admm.cases`: the data of each batch group: the fixed split's node split, or
  each repetition's own split and node split (issue 60);
* :mod:`~mpdp.studies.admm.train`: tuning of η, final runs, result rows;
* :mod:`~mpdp.studies.admm.tradeoff`: fitted g(α) = κ₁e^{−κ₂α} + κ₃ and α* (B7);
* :mod:`~mpdp.studies.admm.figures`: zz_f3, zz_f4, zz_f5 and zz_table;
* :mod:`~mpdp.studies.admm.claims`: the claims of S-001 declared for the claims engine (:mod:`mpdp.claims`);
* :mod:`~mpdp.studies.admm.report`: helpers of the report section.

The algorithms and their calibrations are the shared :mod:`mpdp.mechanisms.admm`; the exact
subproblem solver is :mod:`mpdp.models.newton`.
"""
