# The claims tables (issue 33; docs/claims.md): every declared claim of every study through the one
# engine -> data/results/claims/{cells,verdicts}.parquet, and one verdict map per study. Logic in
# src/mpdp/claims (engine) and src/mpdp/studies/<study>/claims.py (declarations, observations).
from mpdp.claims import tables as claims_tables_mod

CLAIMS_STUDIES = (
    (["wddp"] if AVAILABLE else [])
    + (["admm"] if ADMM_ON else [])
    + (["voting"] if VOTING_TABLES else [])
    + (["ls"] if ls_plan.enabled(CFG) else [])
    + (["benchmark"] if BENCHMARK_DATASETS else [])
)
CLAIMS_MAPS = [f"reports/figures/claims_map_{s}.png" for s in CLAIMS_STUDIES]
# one forest plot per claim and reading (issue 46), PNG and PDF, in one folder per study
CLAIMS_FORESTS = [f"reports/figures/forest_{s}" for s in CLAIMS_STUDIES]


rule claims:
    input:
        claims_tables_mod.CELLS_PATH,
        claims_tables_mod.VERDICTS_PATH,
        CLAIMS_MAPS,
        [p.replace(".png", ".pdf") for p in CLAIMS_MAPS],
        CLAIMS_FORESTS,


rule claims_tables:
    input:
        wddp=[f"data/results/wddp/{ds}.parquet" for ds in AVAILABLE],
        admm=[ADMM_TABLE] if ADMM_ON else [],
        voting=[voting_plan.table_path(t) for t in VOTING_TABLES],
        ls=[ls_plan.table(e) for e in LS_EXPERIMENTS] if ls_plan.enabled(CFG) else [],
        benchmark=benchmark_table_paths(),
        cards=[card(ds) for ds in AVAILABLE],
    output:
        cells=claims_tables_mod.CELLS_PATH,
        verdicts=claims_tables_mod.VERDICTS_PATH,
    log:
        "logs/claims/tables.log",
    params:
        code=source_hash("claims"),
        settings=rule_keys.param(CFG, "claims_tables"),
        voting_tables=list(VOTING_TABLES),
        available=AVAILABLE,
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/claims_tables.py"


rule claims_map:
    input:
        cells=claims_tables_mod.CELLS_PATH,
        verdicts=claims_tables_mod.VERDICTS_PATH,
    output:
        png="reports/figures/claims_map_{claims_study}.png",
        pdf="reports/figures/claims_map_{claims_study}.pdf",
    log:
        "logs/claims/map_{claims_study}.log",
    wildcard_constraints:
        claims_study="|".join(claims_tables_mod.STUDIES),
    params:
        code=source_hash("claims_map"),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/claims_map.py"


rule claims_forest:
    input:
        cells=claims_tables_mod.CELLS_PATH,
        verdicts=claims_tables_mod.VERDICTS_PATH,
    output:
        directory("reports/figures/forest_{claims_study}"),
    log:
        "logs/claims/forest_{claims_study}.log",
    wildcard_constraints:
        claims_study="|".join(claims_tables_mod.STUDIES),
    params:
        code=source_hash("claims_forest"),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/claims_forest.py"
