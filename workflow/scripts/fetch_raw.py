"""Snakemake script: fetch and verify one data set's raw files (spec E1.1)."""
from pathlib import Path

from mpdp import io
from mpdp.data import fetch
from mpdp.pipeline.runner import run_step

sm = snakemake  # noqa: F821  (injected by Snakemake)
out = Path(sm.output[0])


def step(log):
    paths = fetch.fetch(sm.wildcards.dataset, out.parent.parent, Path(sm.params.mirror) if sm.params.mirror else None,
                        sm.params.allow_download, log=log.info)
    io.write_json({"dataset": sm.wildcards.dataset,
                   "files": {p.name: fetch.sha256_file(p) for p in paths}}, out)


run_step(step, sm.log[0], f"fetch_raw {sm.wildcards.dataset}")
