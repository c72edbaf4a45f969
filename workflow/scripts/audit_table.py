"""Snakemake script: run the audit settings and write data/results/audit/audit.parquet."""
from pathlib import Path

from mpdp.audit import registry as audit_registry
from mpdp.audit import table
from mpdp.io import read_json
from mpdp.pipeline.rule_keys import rule_config
from mpdp.pipeline.runner import run_step
from mpdp.studies.benchmark import registry as benchmark_registry

sm = snakemake  # noqa: F821  (injected by Snakemake)


def step(log):
    cfg = rule_config(sm.config, "audit_table")
    n_train = {ds: int(read_json(path, "data card")["n_train"]) for ds, path in zip(sm.params.datasets, sm.input.cards, strict=True)}
    settings, skipped = table.settings_to_run(cfg["audit"], list(sm.params.available))
    for label in skipped:
        log.warning("audit setting skipped (its data set is not available): %s", label)
    benchmark = "benchmark" in cfg  # declared (rule_keys.keys_for) where the config has the section
    if benchmark:  # the benchmark's mechanisms bring their own adapters and settings
        audit_registry.register_benchmark(cfg)
        settings = [*settings, *benchmark_registry.audit_settings(cfg)]
    processed = {ds: str(Path(path).parent) for ds, path in zip(sm.params.datasets, sm.input.cards, strict=True)}
    ctx = table.context_from_config(cfg["audit"], cfg["root_seed"], n_train, processed,
                                    cfg["benchmark"]["delta"] if benchmark else None)
    table.write(table.run_settings(settings, ctx, log.info), sm.output[0])


run_step(step, sm.log[0], "audit_table")
