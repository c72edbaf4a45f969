"""Snakemake script: build one universe's claims tables in its folder (mpdp.multiverse.universe)."""
from pathlib import Path

from mpdp.multiverse import spec, universe
from mpdp.pipeline.rule_keys import rule_config
from mpdp.pipeline.runner import run_step

sm = snakemake  # noqa: F821  (injected by Snakemake)


def step(log):
    cfg = rule_config(sm.config, "multiverse_universe")  # the whole config (rule_keys.WHOLE_CONFIG)
    u = {x.id: x for x in spec.universes(cfg)}[sm.wildcards.universe]
    status_path = Path(sm.output.status)
    if u.choice is None and spec.full_grid(cfg):  # the default universe is the main build (issue 48)
        universe.adopt_main_build(u, status_path, Path.cwd(), Path(sm.input.main[0]))
        log.info("universe %s: the main build's claims tables (multiverse.full_grid)", u.id)
        return
    base = universe.seed_source([str(f) for f in sm.input.base])  # the default universe, if it ran
    status = universe.run(u, status_path.parent, Path(sm.params.root), spec.universe_config(cfg, u), sm.threads,
                          status_path, Path(sm.log[0]).with_suffix(".snakemake.log"), base=base)
    for line in status["warnings"]:  # the nested run's planning warnings, kept in this job's log
        log.warning("universe %s: %s", u.id, line)
    log.info("universe %s%s: %s", u.id, " (from the default universe's results)" if status["seeded"] else "",
             "ok" if status["ok"] else f"FAILED: {status['error']}")


run_step(step, sm.log[0], "multiverse_universe")
