"""Snakemake script: run one universe's `claims` target in its folder (mpdp.multiverse.universe)."""
from pathlib import Path

from mpdp import config
from mpdp.multiverse import spec, universe
from mpdp.pipeline.runner import run_step

sm = snakemake  # noqa: F821  (injected by Snakemake)


def step(log):
    cfg = config.validate(dict(sm.config))
    u = {x.id: x for x in spec.universes(cfg)}[sm.wildcards.universe]
    status_path = Path(sm.output.status)
    status = universe.run(u, status_path.parent, Path(sm.params.root), spec.universe_config(cfg, u), sm.threads,
                          status_path, Path(sm.log[0]).with_suffix(".snakemake.log"))
    log.info("universe %s: %s", u.id, "ok" if status["ok"] else f"FAILED: {status['error']}")


run_step(step, sm.log[0], "multiverse_universe")
