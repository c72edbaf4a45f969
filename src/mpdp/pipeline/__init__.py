"""The pipeline layer: what the Snakemake workflow calls around the studies.

:mod:`~mpdp.pipeline.planning` (config checks at planning time, spec E8),
:mod:`~mpdp.pipeline.rule_keys` (the config keys each rule reads: its rerun params),
:mod:`~mpdp.pipeline.code_hash` (code hashes from the import graph: an edit reruns the rules
whose scripts import it) and
:mod:`~mpdp.pipeline.runner` (a job's logging and one-line errors). The top layer: it may
import the studies; no study or shared layer imports it.
"""
