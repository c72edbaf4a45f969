"""Snakemake script: one cross-paper benchmark figure (xp_eps, xp_m, xp_u, xp_rank, xp_glance: png + pdf)."""
from mpdp.figures import warm

# rendered by the warm renderer where it runs (one process's imports for every figure; mpdp.figures.warm)
warm.delegate(globals(), ("mpdp.studies.benchmark.figures", "mpdp.pipeline.rule_keys"))

from pathlib import Path  # noqa: E402

from mpdp.figures.plot import logged_warnings  # noqa: E402
from mpdp.pipeline.rule_keys import rule_config  # noqa: E402
from mpdp.pipeline.runner import run_step  # noqa: E402
from mpdp.studies.benchmark.figures import build  # noqa: E402

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = rule_config(sm.config, "benchmark_figure")
run_step(logged_warnings(lambda log: build(sm.wildcards.xpfig, cfg, [Path(p) for p in sm.input.tables],
                                           Path(sm.output.png), Path(sm.output.pdf), log,
                                           [Path(p) for p in sm.input.ranking])),
         sm.log[0], f"benchmark figure {sm.wildcards.xpfig}")
