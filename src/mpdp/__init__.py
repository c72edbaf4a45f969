"""mpdp: reference replication pipeline for multi-party differentially private ERM.

The package holds all logic of the Snakemake workflow (data, partitions, mechanisms,
privacy calibration, training engine, bounds, figures, report); the workflow rules only
call into it. Spec references (e.g. "spec M3.1") point to ``../shared/spec``.
"""

__version__ = "0.1.0"
