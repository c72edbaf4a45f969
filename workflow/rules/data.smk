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
    # as early as the longest job that reads the data set (mpdp.studies.scheduling)
    priority: data_priority
    # only the code as a param: where the files come from (the mirror, $MPDP_DATA_MIRROR,
    # downloads) does not change them (verified SHA-256), so moving the mirror reruns nothing;
    # the job finds the mirror itself (mpdp.config.data_mirror)
    params:
        code=code("fetch_raw.py"),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/fetch_raw.py"


rule prepare:
    input:
        "data/raw/{dataset}/manifest.json",
    output:
        card="data/processed/{dataset}/card.json",
        arrays=multiext("data/processed/{dataset}/", *PROCESSED_ARRAYS),
    wildcard_constraints:
        dataset=BINARY_DATA,
    log:
        "logs/prepare/{dataset}.log",
    priority: data_priority
    benchmark:
        "data/benchmarks/prepare/{dataset}.tsv"
    params:
        code=code("prepare.py"),
        settings=lambda wc: rule_keys.param(CFG, "prepare", dataset=wc.dataset),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/prepare.py"


# Data sets with a multiclass label (KDDCup99) also write its class arrays; declaring them here
# lets the jobs that read them declare them as inputs (no hidden reads under data/).
use rule prepare as prepare_multiclass with:
    output:
        card="data/processed/{dataset}/card.json",
        arrays=multiext("data/processed/{dataset}/", *PROCESSED_ARRAYS, *CLASS_ARRAY_FILES),
    wildcard_constraints:
        dataset=MULTICLASS_DATA,


rule partition:
    input:
        card="data/processed/{dataset}/card.json",
        # the labels each repetition's split draws on (issue 60; mpdp.data.splits)
        y_train="data/processed/{dataset}/y_train.npy",
        y_test="data/processed/{dataset}/y_test.npy",
    output:
        "data/partitions/{dataset}/{experiment}.npz",
    log:
        "logs/partition/{dataset}_{experiment}.log",
    priority: setup_priority
    params:
        code=code("partition.py"),
        settings=lambda wc: rule_keys.param(CFG, "partition"),
        layouts=lambda wc: plan.partition_settings(CFG, wc.dataset, wc.experiment),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/partition.py"
