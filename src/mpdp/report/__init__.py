"""The HTML report of the replication (spec experiments.md E3.4; notebooks/report.py).

* :mod:`mpdp.report.build`: execute the jupytext notebook and export self-contained HTML;
* :mod:`mpdp.report.provenance`: git commit, package versions, machine, checksums, wall times;
* :mod:`mpdp.studies.wddp.report`: every table and sentence the report shows, computed from the
  results, cards, config and claims check.
"""
