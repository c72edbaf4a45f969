"""The voting / output-perturbation study (Hamm, Cao, Belkin; spec experiments.md E5).

* :mod:`~mpdp.studies.voting.plan`: tables, M grid, auxiliary pool and party splits, columns;
* :mod:`~mpdp.studies.voting.train`: one table (local classifiers, votes, global ERMs, noise);
* :mod:`~mpdp.studies.voting.figures`: H-1…H-4 and the B5 figure;
* :mod:`~mpdp.studies.voting.claims`, :mod:`~mpdp.studies.voting.report`: claims and report section.

Mechanisms live in :mod:`mpdp.mechanisms.output_perturbation`, solvers in
:mod:`mpdp.models.batched_erm`, the local, vote and global models in :mod:`mpdp.models.voting_erm`.
"""
