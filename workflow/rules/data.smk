# Data stages (spec E1, E2): fetch + verify raw files, prepare, partition.


rule data:
    input:
        [card(ds) for ds in AVAILABLE],
        [partition_file(ds, ex) for ds in AVAILABLE for ex in EXPERIMENTS],


rule fetch_raw:
    output:
        "data/raw/{dataset}/manifest.json",
    log:
        "logs/fetch_raw/{dataset}.log",
    params:
        mirror=str(MIRROR) if MIRROR else None,
        allow_download=ALLOW_DOWNLOAD,
    conda:
        "../../environment.yml"
    script:
        "../scripts/fetch_raw.py"


rule prepare:
    input:
        "data/raw/{dataset}/manifest.json",
    output:
        card="data/processed/{dataset}/card.json",
        arrays=multiext("data/processed/{dataset}/", *PROCESSED_ARRAYS),
    log:
        "logs/prepare/{dataset}.log",
    benchmark:
        "data/benchmarks/prepare/{dataset}.tsv"
    params:
        code=CODE["data"],
        settings=lambda wc: {k: CFG[k] for k in ("root_seed", "max_records", "split", "preprocess")},
    conda:
        "../../environment.yml"
    script:
        "../scripts/prepare.py"


rule partition:
    input:
        card="data/processed/{dataset}/card.json",
    output:
        "data/partitions/{dataset}/{experiment}.npz",
    log:
        "logs/partition/{dataset}_{experiment}.log",
    params:
        code=CODE["partition"],
        settings=lambda wc: {
            "root_seed": CFG["root_seed"],
            "reps": CFG["wddp"]["reps"],
            "tau_frac": CFG["wddp"]["tau_frac"],
            "settings": plan.partition_settings(CFG, wc.dataset, wc.experiment),
        },
    conda:
        "../../environment.yml"
    script:
        "../scripts/partition.py"
