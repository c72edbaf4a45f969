"""Snakemake script: prepare one data set (spec E1, E1.2, E1.3)."""
from pathlib import Path

from mpdp import io
from mpdp.data import prepare
from mpdp.pipeline.rule_keys import rule_config
from mpdp.pipeline.runner import run_step

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = rule_config(sm.config, "prepare", dataset=sm.wildcards.dataset)


def step(log):
    manifest = Path(sm.input[0])
    raw_paths = [manifest.parent / name for name in io.read_json(manifest, "raw-file manifest")["files"]]
    card = prepare.prepare(sm.wildcards.dataset, raw_paths, Path(sm.output.card).parent, cfg)
    log.info("%s: n_train = %d, n_test = %d, p = %d, positive rate %.4f", sm.wildcards.dataset,
             card["n_train"], card["n_test"], card["n_features"], card["positive_rate"])


run_step(step, sm.log[0], f"prepare {sm.wildcards.dataset}")
