# Empirical privacy audit (spec audit.md, experiments.md E10): lower bounds ε̂ on the privacy
# loss of every mechanism on main, next to its claimed and accounted ε. Logic in mpdp.audit.
from mpdp.audit.table import settings_to_run as _audit_settings_to_run

AUDIT_TABLE = "data/results/audit/audit.parquet"
AUDIT_FIGURE = "reports/figures/audit_eps.png"
AUDIT_DATASETS = sorted(
    {s["dataset"] for s in _audit_settings_to_run(CFG["audit"], AVAILABLE)[0] if s.get("dataset")}
)
STUDY_BENCHMARKS.append("data/benchmarks/audit/audit_table.tsv")


rule audit:
    input:
        AUDIT_TABLE,
        AUDIT_FIGURE,
        "reports/figures/audit_eps.pdf",


rule audit_eps:
    input:
        AUDIT_FIGURE,
        "reports/figures/audit_eps.pdf",


rule audit_table:
    input:
        cards=[card(ds) for ds in AUDIT_DATASETS],
        arrays=[a for ds in AUDIT_DATASETS for a in processed_arrays_of(ds)],
    output:
        AUDIT_TABLE,
    log:
        "logs/audit/audit_table.log",
    benchmark:
        "data/benchmarks/audit/audit_table.tsv"
    # one long single job: started early (mpdp.studies.scheduling)
    priority: lambda wc: scheduling.audit_priority(CFG, AVAILABLE)
    params:
        code=code("audit_table.py"),
        datasets=AUDIT_DATASETS,
        settings=lambda wc: rule_keys.param(CFG, "audit_table"),
        available=AVAILABLE,
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/audit_table.py"


rule audit_figure:
    input:
        AUDIT_TABLE,
    output:
        png=AUDIT_FIGURE,
        pdf="reports/figures/audit_eps.pdf",
    log:
        "logs/audit/audit_figure.log",
    params:
        code=code("audit_figure.py"),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/audit_figure.py"
