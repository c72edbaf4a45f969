"""Snakemake script: the partitions of one data set and experiment (spec E2), each repetition's
within its own training records of the pool (issue 60, mpdp.data.splits)."""
import numpy as np

from mpdp import io
from mpdp.data import partition, splits
from mpdp.pipeline.rule_keys import rule_config
from mpdp.pipeline.runner import run_step

sm = snakemake  # noqa: F821  (injected by Snakemake)
cfg = rule_config(sm.config, "partition")


def step(log):
    ds, experiment = sm.wildcards.dataset, sm.wildcards.experiment
    n = io.read_json(sm.input.card, "data card")["n_train"]
    # the pool's labels (the fixed split's training rows first): each repetition's split draws on them
    y_pool = np.concatenate([io.load_npy(sm.input.y_train, "prepared array"),
                             io.load_npy(sm.input.y_test, "prepared array")])
    reps = cfg["wddp"]["reps"]
    rows = [splits.repetition_split(y_pool, n, ds, rep, cfg)[0] for rep in range(reps)]
    log.info("split: %s", splits.describe(cfg))
    design = "random" if experiment == "eps_sweep" else "two_group"
    sets = {}
    for m, u in sm.params.layouts:  # plan.partition_settings, computed when the DAG is built
        ps = partition.make_partitions(n, design, m, u, reps, cfg["root_seed"], ds,
                                       cfg["wddp"]["tau_frac"], cfg["wddp"]["leftover"],
                                       cfg["wddp"]["small_group_frac"], rows=rows)
        sets[(m, u)] = ps
        log.info("%s m=%d u=%s: n_eff=%d, n_(1) in [%d, %d], n/(m n_(1)) up to %.2f", experiment, m, u,
                 ps.n_eff, ps.n_min.min(), ps.n_min.max(), (ps.n_eff / (m * ps.n_min)).max())
    partition.save_partitions(sm.output[0], sets)


run_step(step, sm.log[0], f"partition {sm.wildcards.dataset} {sm.wildcards.experiment}")
