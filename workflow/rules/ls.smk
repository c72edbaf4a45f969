# Least-squares write-up study (spec M14, M15, B8, E6; issue 9). Logic in mpdp.studies.ls.
# Targets: ls (everything), ls_1, ls_2, ls_3 (one experiment's table and figure).
from mpdp.studies.ls import EXPERIMENTS as LS_EXPERIMENTS
from mpdp.studies.ls import plan as ls_plan

# its config cross-checks run at planning with every study's (mpdp.studies.ls.study, common.smk)
if ls_plan.enabled(CFG):
    STUDY_BENCHMARKS.extend(f"data/benchmarks/ls/{exp}.tsv" for exp in LS_EXPERIMENTS)


wildcard_constraints:
    ls_exp="ls_1|ls_2|ls_3",


rule ls_experiment_1:
    output:
        table=ls_plan.table("ls_1"),
        tail=ls_plan.tail_table(),
    log:
        "logs/ls/ls_1.log",
    benchmark:
        "data/benchmarks/ls/ls_1.tsv"
    params:
        code=code("ls_experiment.py"),
        settings=lambda wc: rule_keys.param(CFG, "ls_experiment:ls_1"),
        experiment="ls_1",
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/ls_experiment.py"


rule ls_experiment:
    output:
        table="data/results/ls/{ls_exp}.parquet",
    wildcard_constraints:
        ls_exp="ls_2|ls_3",
    log:
        "logs/ls/{ls_exp}.log",
    benchmark:
        "data/benchmarks/ls/{ls_exp}.tsv"
    params:
        code=code("ls_experiment.py"),
        settings=lambda wc: rule_keys.param(CFG, f"ls_experiment:{wc.ls_exp}"),
        experiment=lambda wc: wc.ls_exp,
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/ls_experiment.py"


rule ls_figure:
    input:
        lambda wc: ls_plan.figure_inputs(wc.ls_exp),
    output:
        png="reports/figures/{ls_exp}.png",
        pdf="reports/figures/{ls_exp}.pdf",
    log:
        "logs/ls/figure_{ls_exp}.log",
    params:
        code=code("ls_figure.py"),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/ls_figure.py"


rule ls_negative_closed_form:
    input:
        [ls_plan.table(e) for e in LS_EXPERIMENTS],
    output:
        **ls_plan.derived_tables(),
    log:
        "logs/ls/negative_closed_form.log",
    params:
        code=code("ls_negative_closed_form.py"),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/ls_negative_closed_form.py"


STUDY_OUTPUTS["ls"] = ls_plan.all_outputs(CFG)  # its collect target `ls` (studies.smk)


for _ls_exp in LS_EXPERIMENTS:

    rule:
        name:
            _ls_exp
        input:
            [ls_plan.figure(_ls_exp, ext) for ext in ("png", "pdf")],
