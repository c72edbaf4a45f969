"""One subpackage per replicated paper (a *study*).

A study owns its plan (which runs, which jobs), its figure table, its claims and its report
section; it reuses the shared layers (``mpdp.data``, ``mpdp.data.partition``, ``mpdp.privacy``,
``mpdp.mechanisms``, ``mpdp.engine``/``mpdp.models``, ``mpdp.results``, ``mpdp.figures.style``,
``mpdp.claims``, ``mpdp.report``) and never copies them. Each study also has its config
section, ``workflow/rules/<study>.smk``, tables under ``data/results/<study>/`` and figures
under ``reports/figures/<prefix>…``.

- :mod:`mpdp.studies.wddp`: Kang, Liu, Wang, Weighted Distributed DP ERM (spec E3).
- :mod:`mpdp.studies.voting`: Hamm, Cao, Belkin, voting ERM and output perturbation (spec E5).
- :mod:`mpdp.studies.admm`: Zhang & Zhu, dynamic DP for ADMM-based distributed classification,
  non-private ADMM, DVP and PVP (spec E4, mechanisms M8–M10, bounds B7).
"""
