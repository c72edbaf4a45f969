"""The HTML report of the replication (spec experiments.md E3.4; notebooks/report.py).

* :mod:`mpdp.report.build`: execute the jupytext notebook and export self-contained HTML;
* :mod:`mpdp.report.provenance`: git commit, package versions, machine, checksums, wall times;
* :mod:`mpdp.report.sections`: HTML tables, call-outs and claims summaries every section uses.

Each study's tables and sentences live in its own ``studies/<study>/report.py``; no module here
imports a study (tests/figures/test_layers.py).
"""
