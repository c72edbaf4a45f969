"""Snakemake script: one ADMM-study figure (zz_f3, zz_f4, zz_f5: png + pdf) or zz_table.csv."""
from mpdp.figures import warm

# rendered by the warm renderer where it runs (one process's imports for every figure; mpdp.figures.warm)
warm.delegate(globals(), ("mpdp.studies.admm.figures", "mpdp.pipeline.rule_keys"))

from pathlib import Path  # noqa: E402

from mpdp.figures.plot import logged_warnings  # noqa: E402
from mpdp.pipeline.rule_keys import rule_config  # noqa: E402
from mpdp.pipeline.runner import run_step  # noqa: E402
from mpdp.studies.admm.figures import build  # noqa: E402

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = rule_config(sm.config, "admm_figure")
outputs = [Path(p) for p in sm.output]
run_step(logged_warnings(lambda log: build(cfg, Path(sm.input.table), outputs, log)), sm.log[0], f"admm {outputs[0].name}")
