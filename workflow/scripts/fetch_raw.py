"""Snakemake script: fetch and verify one data set's raw files (spec E1.1)."""
from pathlib import Path

from mpdp import config, io
from mpdp.data import fetch
from mpdp.pipeline.rule_keys import rule_config
from mpdp.pipeline.runner import run_step

sm = snakemake  # noqa: F821  (injected by Snakemake)
out = Path(sm.output[0])


def step(log):
    # the mirror and the download switch are not params (moving the mirror must not rerun the
    # fetch: rule_keys.UNTRACKED_KEYS): read them here, from $MPDP_DATA_MIRROR or the config
    cfg = rule_config(sm.config, "fetch_raw")
    paths = fetch.fetch(sm.wildcards.dataset, out.parent.parent, config.data_mirror(cfg),
                        config.allow_download(cfg), log=log.info)
    io.write_json({"dataset": sm.wildcards.dataset,
                   "files": {p.name: fetch.sha256_file(p) for p in paths}}, out)


run_step(step, sm.log[0], f"fetch_raw {sm.wildcards.dataset}")
