"""Snakemake script: one study's claims tables rebuilt under one reseed (mpdp.multiverse.reseeding)."""
from pathlib import Path

from mpdp.errors import InputDataError
from mpdp.multiverse import reseeding, universe
from mpdp.pipeline.rule_keys import rule_config
from mpdp.pipeline.runner import run_step

sm = snakemake  # noqa: F821  (injected by Snakemake)


def step(log):
    cfg = rule_config(sm.config, "reseeding_universe")  # the whole config (rule_keys.WHOLE_CONFIG)
    study, reseed = sm.wildcards.claims_study, {u.id: u for u in reseeding.reseeds(cfg)}[sm.wildcards.reseed]
    status_path = Path(sm.output.status)
    nested_log = Path(sm.log[0]).with_suffix(".snakemake.log")
    log.info("study %s under %s on the full grid, %d cores; nested run's output: %s", study, reseed.value_label,
             sm.threads, nested_log)
    cells, verdicts = reseeding.targets(study)
    status = universe.run(reseed, status_path.parent, Path(sm.params.root), reseeding.reseed_config(cfg, reseed),
                          sm.threads, status_path, nested_log, targets=(cells, verdicts), verdicts_path=verdicts)
    for line in status["warnings"]:  # the nested run's planning warnings, kept in this job's log
        log.warning("%s: %s", reseed.id, line)
    if not status["ok"]:  # the status is not kept (a failed job's output): the next call retries
        raise InputDataError(f"study {study} under {reseed.value_label}: {status['error']} (log: {nested_log})")
    log.info("study %s under %s: %d jobs wrote results", study, reseed.value_label, status["jobs_run"])


run_step(step, sm.log[0], "reseeding_universe")
