"""Empirical privacy audit: lower bounds ε̂ on the privacy loss of every mechanism (spec audit.md).

- :mod:`mpdp.audit.many_draws`: distinguishing test over many noise draws between worst-case
  neighbours, Clopper–Pearson intervals (A1; Jagielski, Ullman, Oprea 2020; Nasr et al. 2021).
- :mod:`mpdp.audit.one_run`: the one-run audit of Steinke, Nasr, Jagielski 2023 (A2).
- :mod:`mpdp.audit.gdp`: exact ε of a Gaussian pair (the ceiling ε_up) and a Gaussian-DP point
  estimate (a diagnostic, never a bound, A6.10).
- :mod:`mpdp.audit.adapters`, :mod:`mpdp.audit.registry`: how each mechanism family is run
  under attack, reusing its own code; new families register one adapter each.
- :mod:`mpdp.audit.table`, :mod:`mpdp.audit.figure`, :mod:`mpdp.audit.report`: the audit
  table, figure ``audit_eps`` and report-section helpers.
"""
