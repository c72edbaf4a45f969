# Zhang–Zhu ADMM study (spec E4): one training job per topology (all mechanisms), one table, figures.
# Logic in src/mpdp/studies/admm; adapters in workflow/scripts/admm_*.py.

ADMM = CFG.get("admm") or {}
ADMM_ON = bool(ADMM) and ADMM["dataset"] in AVAILABLE
if ADMM and not ADMM_ON:
    sys.stderr.write(
        f"mpdp: the ADMM study (config section 'admm') is skipped: data set '{ADMM['dataset']}' is "
        "not among the available data sets (config key 'datasets', or its raw files are missing).\n"
    )
ADMM_DATASET = ADMM.get("dataset")  # None: the study is off and its rules are never asked for
ADMM_TABLE = f"data/results/admm/{ADMM_DATASET}.parquet"
if ADMM_ON:
    STUDY_BENCHMARKS.extend(f"data/benchmarks/admm_job/{top}.tsv" for top in ADMM["topologies"])
ADMM_FIGURES = ("zz_f3", "zz_f4", "zz_f5")
ADMM_OUTPUTS = (
    [f"reports/figures/{f}.{ext}" for f in ADMM_FIGURES for ext in ("png", "pdf")]
    + ["reports/figures/zz_table.csv"]
    if ADMM_ON
    else []
)


wildcard_constraints:
    topology="ring|complete",
    zz_fig="zz_f3|zz_f4|zz_f5",


# its collect target `admm` (older name `zz`; workflow/rules/studies.smk)
STUDY_OUTPUTS["admm"] = ADMM_OUTPUTS + ([ADMM_TABLE] if ADMM_ON else [])


rule zz_f3:
    input:
        [f"reports/figures/zz_f3.{ext}" for ext in ("png", "pdf")] if ADMM_ON else [],


rule zz_f4:
    input:
        [f"reports/figures/zz_f4.{ext}" for ext in ("png", "pdf")] if ADMM_ON else [],


rule zz_f5:
    input:
        [f"reports/figures/zz_f5.{ext}" for ext in ("png", "pdf")] if ADMM_ON else [],


rule zz_table:
    input:
        ["reports/figures/zz_table.csv"] if ADMM_ON else [],


rule admm_job:
    input:
        card=lambda wc: card(ADMM_DATASET),
        arrays=lambda wc: processed_arrays_of(ADMM_DATASET),
    output:
        table="data/results/admm/runs/{topology}.parquet",
        tuning="data/results/admm/tuning/{topology}.json",
    log:
        "logs/admm_job/{topology}.log",
    benchmark:
        "data/benchmarks/admm_job/{topology}.tsv"
    # a long single job: started before every WD-DP job (mpdp.studies.scheduling)
    priority: lambda wc: scheduling.admm_priority(CFG, AVAILABLE, wc.topology)
    params:
        code=code("admm_job.py"),
        settings=lambda wc: rule_keys.param(CFG, "admm_job"),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/admm_job.py"


rule admm_collect:
    input:
        lambda wc: [f"data/results/admm/runs/{top}.parquet" for top in ADMM["topologies"]],
    output:
        ADMM_TABLE,
    log:
        "logs/admm_collect.log",
    params:
        code=code("admm_collect.py"),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/admm_collect.py"


rule admm_figure:
    input:
        table=ADMM_TABLE,
    output:
        png="reports/figures/{zz_fig}.png",
        pdf="reports/figures/{zz_fig}.pdf",
    log:
        "logs/admm_figure/{zz_fig}.log",
    params:
        code=code("admm_figure.py"),
        settings=lambda wc: rule_keys.param(CFG, "admm_figure"),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/admm_figure.py"


rule admm_fit_table:
    input:
        table=ADMM_TABLE,
    output:
        "reports/figures/zz_table.csv",
    log:
        "logs/admm_figure/zz_table.log",
    params:
        code=code("admm_figure.py"),
        settings=lambda wc: rule_keys.param(CFG, "admm_figure"),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/admm_figure.py"
