# The claims tables (issue 33; docs/claims.md): every declared claim of every study through the one
# engine -> data/results/claims/{cells,verdicts}.parquet, and one verdict map per study. Logic in
# src/mpdp/claims (engine) and src/mpdp/studies/<study>/claims.py (declarations, observations).
from mpdp.claims import tables as claims_tables_mod

#: the studies of the registry (mpdp.studies.registry) that this config runs and that declare claims
CLAIMS_STUDIES = [s.id for s in study_registry.running(CFG, AVAILABLE) if s.claims is not None]
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
        # each study's results tables, named by its id (empty: the study does not run)
        **{s.id: s.tables(CFG, AVAILABLE) for s in study_registry.STUDIES},
        cards=[card(ds) for ds in AVAILABLE],
    output:
        cells=claims_tables_mod.CELLS_PATH,
        verdicts=claims_tables_mod.VERDICTS_PATH,
    log:
        "logs/claims/tables.log",
    params:
        code=code("claims_tables.py"),
        settings=rule_keys.param(CFG, "claims_tables"),
        studies=[s.id for s in study_registry.STUDIES],
        available=AVAILABLE,
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/claims_tables.py"


rule claims_tables_of_study:
    # one study's claims tables (the reseeding check's reseeded runs build these only: workflow/rules/reseeding.smk);
    # the same rows as that study's rows of claims_tables (the engine scores each study on its own)
    input:
        **{s.id: (lambda wc, s=s: s.tables(CFG, AVAILABLE) if wc.claims_study == s.id else [])
           for s in study_registry.STUDIES},
        cards=[card(ds) for ds in AVAILABLE],
    output:
        cells="data/results/claims/by_study/{claims_study}/cells.parquet",
        verdicts="data/results/claims/by_study/{claims_study}/verdicts.parquet",
    log:
        "logs/claims/tables_{claims_study}.log",
    wildcard_constraints:
        claims_study="|".join(CLAIMS_STUDIES),
    params:
        code=code("claims_tables.py"),
        settings=rule_keys.param(CFG, "claims_tables"),
        studies=[s.id for s in study_registry.STUDIES],
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
        claims_study="|".join(s.id for s in study_registry.STUDIES),
    params:
        code=code("claims_map.py"),
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
        claims_study="|".join(s.id for s in study_registry.STUDIES),
    params:
        code=code("claims_forest.py"),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/claims_forest.py"
