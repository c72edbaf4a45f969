# Cross-paper benchmark (spec E10): the TABLES. One coarse job per (data set, job group of the
# configured mechanisms: gradient | output | admm | one per added mechanism), then one collect per
# data set. Logic in
# src/mpdp/studies/benchmark; adapters in workflow/scripts/benchmark_*.py. The figures, the
# report section and the umbrella target `benchmark` are defined elsewhere (not here).
from mpdp.studies.benchmark import plan as benchmark_plan
from mpdp.studies.benchmark import registry as benchmark_registry

BENCHMARK = CFG.get("benchmark") or {}
BENCHMARK_DATASETS = benchmark_plan.datasets(CFG, AVAILABLE) if BENCHMARK else []
#: one job per (data set, job group); groups come from the mechanisms named in benchmark.mechanisms
BENCHMARK_GROUPS = tuple(benchmark_registry.job_groups(CFG)) if BENCHMARK else ()
_BENCHMARK_ABSENT = [ds for ds in BENCHMARK.get("datasets", []) if ds not in BENCHMARK_DATASETS]
if BENCHMARK and _BENCHMARK_ABSENT:
    sys.stderr.write(
        f"mpdp: benchmark tables skip data sets {_BENCHMARK_ABSENT}: not among the available data "
        "sets (config key 'datasets', or their raw files are missing).\n"
    )
STUDY_BENCHMARKS.extend(
    f"data/benchmarks/benchmark/{ds}/{group}.tsv" for ds in BENCHMARK_DATASETS for group in BENCHMARK_GROUPS
)
if BENCHMARK_DATASETS:  # the selection budgets every job reads (rule benchmark_budgets)
    STUDY_BENCHMARKS.append("data/benchmarks/benchmark_budgets/budgets.tsv")


#: benchmark_table_paths(config=None) -> the configured data/results/benchmark/{ds}.parquet
#: paths of the available data sets (for the figure/report rules of the analysis)
benchmark_table_paths = benchmark_plan.table_paths_function(CFG, AVAILABLE)


wildcard_constraints:
    bgroup="|".join(BENCHMARK_GROUPS),


rule benchmark_tables:
    input:
        benchmark_table_paths(),
        [p.replace(".parquet", ".hparams.json") for p in benchmark_table_paths()],


rule benchmark_budgets:
    # the private selection's per-trial ε search of every mechanism at every ε of the grid, once
    # for every benchmark_job (mpdp.studies.benchmark.budgets); on the critical path of each
    output:
        budgets="data/results/benchmark/budgets.json",
    log:
        "logs/benchmark_budgets.log",
    benchmark:
        "data/benchmarks/benchmark_budgets/budgets.tsv"
    priority: scheduling.benchmark_budgets_priority(CFG, AVAILABLE) if BENCHMARK else 0
    params:
        code=code("benchmark_budgets.py"),
        settings=rule_keys.param(CFG, "benchmark_budgets") if BENCHMARK else "",
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/benchmark_budgets.py"


rule benchmark_job:
    input:
        card=lambda wc: card(wc.ds),
        arrays=lambda wc: processed_arrays_of(wc.ds),
        budgets="data/results/benchmark/budgets.json",
    output:
        table="data/results/benchmark/parts/{ds}/{bgroup}.parquet",
        hparams="data/results/benchmark/parts/{ds}/{bgroup}.hparams.json",
    log:
        "logs/benchmark_job/{ds}/{bgroup}.log",
    benchmark:
        "data/benchmarks/benchmark/{ds}/{bgroup}.tsv"
    # the ADMM group's jobs are long single jobs: started early (mpdp.studies.scheduling)
    priority: lambda wc: scheduling.benchmark_priority(CFG, AVAILABLE, wc.ds, wc.bgroup)
    params:
        code=code("benchmark_job.py"),
        settings=lambda wc: rule_keys.param(CFG, "benchmark_job"),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/benchmark_job.py"


rule benchmark_collect:
    input:
        tables=lambda wc: [f"data/results/benchmark/parts/{wc.ds}/{g}.parquet" for g in BENCHMARK_GROUPS],
        hparams=lambda wc: [f"data/results/benchmark/parts/{wc.ds}/{g}.hparams.json" for g in BENCHMARK_GROUPS],
    output:
        table="data/results/benchmark/{ds}.parquet",
        hparams="data/results/benchmark/{ds}.hparams.json",
    log:
        "logs/benchmark_collect/{ds}.log",
    params:
        code=code("benchmark_collect.py"),
        settings=lambda wc: rule_keys.param(CFG, "benchmark_collect"),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/benchmark_collect.py"
