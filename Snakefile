# mpdp-repro: replication pipeline for multi-party differentially private ERM.
# Read top-down: workflow/rules/{common,data,train,figures,report}.smk -> workflow/scripts -> src/mpdp.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/ls.smk"
include: "workflow/rules/voting.smk"
include: "workflow/rules/admm.smk"
include: "workflow/rules/audit.smk"
include: "workflow/rules/benchmark.smk"
include: "workflow/rules/benchmark_figures.smk"
include: "workflow/rules/claims.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/multiverse.smk"
include: "workflow/rules/reseeding.smk"
include: "workflow/rules/studies.smk"


check_code_params()  # every rule with a script reruns when the code it imports changes (common.smk)


rule all:
    default_target: True
    input:
        "reports/report.html",
        study_targets(),  # every figure and table of every study (common.smk)
