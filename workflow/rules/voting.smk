# Voting study (Hamm, Cao, Belkin; output-perturbation baselines; spec E5): one coarse job per
# table (data set, or <data set>_multiclass), then the figures H-1..H-4, the B5 figure and the
# test-error-vs-λ trade-off (hamm_lambda, from the λ-sweep rows of the same tables).
from mpdp.studies.voting import plan as voting_plan
from mpdp.studies.voting.figures import FIGURE_IDS as VOTING_FIGURES
from mpdp.studies.voting.figures import figure_files as voting_figure_files
from mpdp.studies.voting.figures import figure_tables as voting_figure_tables

VOTING_TABLES = voting_plan.tables(CFG, AVAILABLE)
STUDY_BENCHMARKS.extend(f"data/benchmarks/voting/{table}.tsv" for table in VOTING_TABLES)

# its collect target `voting` (older name `hamm`; workflow/rules/studies.smk)
STUDY_OUTPUTS["voting"] = [*(voting_plan.table_path(t) for t in VOTING_TABLES), *voting_figure_files()]


rule voting_train:
    input:
        card=lambda wc: card(voting_plan.dataset_of(wc.table)[0]),
        arrays=lambda wc: processed_arrays_of(voting_plan.dataset_of(wc.table)[0]),
    output:
        "data/results/voting/{table}.parquet",
    log:
        "logs/voting/{table}.log",
    benchmark:
        "data/benchmarks/voting/{table}.tsv"
    # the multiclass tables are long single jobs: started early (mpdp.studies.scheduling)
    priority: lambda wc: scheduling.voting_priority(CFG, AVAILABLE, *voting_plan.dataset_of(wc.table))
    wildcard_constraints:
        table=voting_plan.table_pattern(),
    params:
        code=code("voting_train.py"),
        settings=lambda wc: rule_keys.param(CFG, "voting_train"),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/voting_train.py"


rule voting_figure:
    input:
        lambda wc: [voting_plan.table_path(t) for t in voting_figure_tables(wc.vfig, VOTING_TABLES)],
    output:
        png="reports/figures/{vfig}.png",
        pdf="reports/figures/{vfig}.pdf",
    log:
        "logs/figures/{vfig}.log",
    wildcard_constraints:
        vfig="|".join(VOTING_FIGURES),
    params:
        code=code("voting_figure.py"),
        settings=lambda wc: rule_keys.param(CFG, "voting_figure"),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/voting_figure.py"


for _vfig in VOTING_FIGURES:

    rule:
        name:
            _vfig
        input:
            [f"reports/figures/{_vfig}.{ext}" for ext in ("png", "pdf")],
