"""Snakemake script: one cross-paper benchmark figure (xp_eps, xp_m, xp_u, xp_rank: png + pdf)."""
from pathlib import Path

from mpdp.pipeline.rule_keys import rule_config
from mpdp.pipeline.runner import run_step
from mpdp.studies.benchmark.figures import build

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = rule_config(sm.config, "benchmark_figure")
run_step(lambda log: build(sm.wildcards.xpfig, cfg, [Path(p) for p in sm.input.tables], Path(sm.output.png),
                           Path(sm.output.pdf), log, [Path(p) for p in sm.input.ranking]),
         sm.log[0], f"benchmark figure {sm.wildcards.xpfig}")
