# Training stage (spec E3): theta*, learning rates by CV, coarse training jobs, one table per data set.


rule train:
    input:
        [f"data/results/wddp/{ds}.parquet" for ds in AVAILABLE],
        # read by the report next to each table (CV curves, θ*)
        [f"data/results/wddp/eta/{ds}.json" for ds in AVAILABLE],
        [f"data/results/wddp/optimum/{ds}.npz" for ds in AVAILABLE],


rule optimum:
    input:
        card="data/processed/{dataset}/card.json",
        arrays=processed_arrays,
    output:
        "data/results/wddp/optimum/{dataset}.npz",
    log:
        "logs/optimum/{dataset}.log",
    benchmark:
        "data/benchmarks/optimum/{dataset}.tsv"
    priority: setup_priority
    params:
        code=code("optimum.py"),
        settings=lambda wc: rule_keys.param(CFG, "optimum"),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/optimum.py"


rule learning_rates:
    input:
        card="data/processed/{dataset}/card.json",
        arrays=processed_arrays,
    output:
        "data/results/wddp/eta/{dataset}.json",
    log:
        "logs/learning_rates/{dataset}.log",
    benchmark:
        "data/benchmarks/learning_rates/{dataset}.tsv"
    priority: setup_priority
    params:
        code=code("learning_rates.py"),
        settings=lambda wc: rule_keys.param(CFG, "learning_rates"),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/learning_rates.py"


rule train_job:
    input:
        card="data/processed/{dataset}/card.json",
        arrays=processed_arrays,
        partitions=job_partition_input,
        optimum="data/results/wddp/optimum/{dataset}.npz",
        etas="data/results/wddp/eta/{dataset}.json",
    output:
        "data/results/wddp/runs/{dataset}/{job}.parquet",
    log:
        "logs/train/{dataset}/{job}.log",
    benchmark:
        "data/benchmarks/train/{dataset}/{job}.tsv"
    priority: job_priority
    params:
        code=code("train_job.py"),
        settings=job_settings,
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/train_job.py"


rule collect_results:
    input:
        lambda wc: all_job_files(wc.dataset),
    output:
        table="data/results/wddp/{dataset}.parquet",
        # the non-private reference's gap to θ* against wddp.reference_gap_tol (issue 33 §5)
        reference="data/results/wddp/reference/{dataset}.csv",
    log:
        "logs/collect_results/{dataset}.log",
    params:
        code=code("collect_results.py"),
        settings=rule_keys.param(CFG, "collect_results"),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/collect_results.py"
