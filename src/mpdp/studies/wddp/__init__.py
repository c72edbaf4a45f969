"""The WD-DP study (spec experiments.md E3): plan, evaluate, cross-validate, figure table.

* :mod:`~mpdp.studies.wddp.plan`: training jobs and their runs;
* :mod:`~mpdp.studies.wddp.evaluate`, :mod:`~mpdp.studies.wddp.cv`, :mod:`~mpdp.studies.wddp.job`:
  training (spec E3.3) on the batch trainer :mod:`mpdp.mechanisms.gradient_batch`;
* :mod:`~mpdp.studies.wddp.figure_spec`: the figure table as data, variants, panels, targets.
"""
