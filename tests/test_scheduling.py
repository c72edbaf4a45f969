"""Priorities across the studies: the long single jobs start first (issue 36, mpdp.studies.scheduling)."""

import re
from pathlib import Path

from mpdp import config
from mpdp.studies import scheduling
from mpdp.studies.benchmark import registry
from mpdp.studies.voting import plan as voting_plan
from mpdp.studies.wddp import plan

ROOT = Path(__file__).resolve().parents[1]
AVAILABLE = ["kddcup99", "adult", "bank", "breast_cancer"]  # the mirrored data sets


def _full():
    return config.load(ROOT / "config" / "config.yaml")


def test_long_single_jobs_come_before_every_wddp_job_longest_first():
    # LPT order measured on the full config (bench_pipeline, 2026-11-26): the 5-class voting table
    # (748 s), the benchmark's ADMM groups (472 / 396 / 366 s), the ADMM topologies (355 / 349 s),
    # the binary voting tables (KDDCup99 295 s), the audit, then the WD-DP setup (θ*, CV,
    # priority = the GFLOP they gate) and training jobs; a long job started last leaves every
    # other core idle while it runs alone
    cfg = _full()
    wddp = [plan.setup_priority(cfg, ds) for ds in AVAILABLE]
    wddp += [plan.job_priority(cfg, ds, j.job_id) for ds in AVAILABLE for j in plan.jobs(cfg, ds)]
    admm = [scheduling.admm_priority(cfg, AVAILABLE, t) for t in cfg["admm"]["topologies"]]
    tables = voting_plan.tables(cfg, AVAILABLE)
    voting = {t: scheduling.voting_priority(cfg, AVAILABLE, *voting_plan.dataset_of(t)) for t in tables}
    multi = [v for t, v in voting.items() if voting_plan.dataset_of(t)[1]]
    binary = [v for t, v in voting.items() if not voting_plan.dataset_of(t)[1]]
    groups = registry.job_groups(cfg)
    assert scheduling.BENCHMARK_ADMM_GROUP in groups
    bench = {(ds, g): scheduling.benchmark_priority(cfg, AVAILABLE, ds, g) for ds in AVAILABLE for g in groups}
    bench_admm = [v for (_, g), v in bench.items() if g == scheduling.BENCHMARK_ADMM_GROUP]

    assert multi and binary and len(admm) == 2
    assert min(multi) > max(bench_admm)
    assert min(bench_admm) > max(admm)
    assert min(admm) > max(binary)
    audit = scheduling.audit_priority(cfg, AVAILABLE)
    assert min(binary) > audit > max(wddp)
    # the complete graph's job (more messages per iteration) first
    assert scheduling.admm_priority(cfg, AVAILABLE, "complete") > scheduling.admm_priority(cfg, AVAILABLE, "ring")
    # the benchmark's ADMM jobs and the binary voting tables: larger data set first
    assert bench[("kddcup99", "admm")] > bench[("adult", "admm")] > bench[("breast_cancer", "admm")]
    assert voting["kddcup99"] > voting["adult"]
    # everything else keeps the default priority and fills the cores at the end
    assert all(v == 0 for (_, g), v in bench.items() if g != scheduling.BENCHMARK_ADMM_GROUP)


def test_the_rules_declare_these_priorities():
    # the functions above only schedule anything if the rules name them
    expected = (("admm.smk", "admm_job", "scheduling.admm_priority"),
                ("voting.smk", "voting_train", "scheduling.voting_priority"),
                ("benchmark.smk", "benchmark_job", "scheduling.benchmark_priority"),
                ("benchmark.smk", "benchmark_budgets", "scheduling.benchmark_budgets_priority"),
                ("audit.smk", "audit_table", "scheduling.audit_priority"),
                ("data.smk", "fetch_raw", "data_priority"),
                ("train.smk", "train_job", "job_priority"))
    for name, rule, func in expected:
        text = (ROOT / "workflow" / "rules" / name).read_text()
        body = re.search(rf"^rule {rule}:\n(.*?)(?=^\S)", text, re.S | re.M)
        assert body, f"rule {rule} not in {name}"
        assert re.search(rf"^\s+priority: .*{re.escape(func)}", body.group(1), re.M), f"{rule}: no priority {func}"


def test_a_data_set_is_fetched_and_prepared_as_early_as_its_longest_reader():
    # Snakemake does not pass priorities upstream: KDDCup99's fetch at priority 0 held its 5-class
    # voting table (the longest single job) behind Adult's WD-DP training (issue 36, full config)
    cfg = _full()
    multi = scheduling.voting_priority(cfg, AVAILABLE, "kddcup99", multiclass=True)
    assert scheduling.data_priority(cfg, AVAILABLE, "kddcup99") >= multi > plan.setup_priority(cfg, "kddcup99")
    admm = max(scheduling.admm_priority(cfg, AVAILABLE, t) for t in cfg["admm"]["topologies"])
    assert scheduling.data_priority(cfg, AVAILABLE, cfg["admm"]["dataset"]) == max(
        admm, scheduling.data_priority({**cfg, "admm": None}, AVAILABLE, cfg["admm"]["dataset"]))
    # a data set only WD-DP reads keeps WD-DP's setup priority
    only = {k: v for k, v in cfg.items() if k not in ("admm", "voting", "benchmark")}
    assert scheduling.data_priority(only, AVAILABLE, "bank") == plan.setup_priority(cfg, "bank")
    # prepare (and prepare_multiclass, which reuses it) and partition name their functions too
    text = (ROOT / "workflow" / "rules" / "data.smk").read_text()
    for rule, func in (("prepare", "data_priority"), ("partition", "setup_priority")):
        body = re.search(rf"^rule {rule}:\n(.*?)(?=^\S|\Z)", text, re.S | re.M)
        assert body and re.search(rf"^\s+priority: {func}", body.group(1), re.M), rule


def test_the_selection_budgets_start_as_early_as_the_first_benchmark_job_that_waits_for_them():
    # every benchmark_job reads rule benchmark_budgets' file (issue 45); Snakemake does not pass
    # priorities upstream, so the budgets take the highest priority of their readers
    cfg = _full()
    datasets = [ds for ds in cfg["benchmark"]["datasets"] if ds in AVAILABLE]
    readers = [scheduling.benchmark_priority(cfg, AVAILABLE, ds, g) for ds in datasets for g in registry.job_groups(cfg)]
    assert scheduling.benchmark_budgets_priority(cfg, AVAILABLE) == max(readers) > plan.setup_priority(cfg, "adult")
