# The HTML report (reports/report.html), rendered from notebooks/report.py.


rule report_html:
    input:
        results=[f"data/results/wddp/{ds}.parquet" for ds in AVAILABLE],
        cards=[card(ds) for ds in AVAILABLE],
        figures=all_figure_files(),
        diagnostics="reports/figures/noise_diagnostics.png",
        admm=ADMM_OUTPUTS + ([ADMM_TABLE] if ADMM_ON else []),
        notebook="notebooks/report.py",
    output:
        "reports/report.html",
    log:
        "logs/report.log",
    params:
        code=CODE["report"],
        unavailable=UNAVAILABLE,
        available=AVAILABLE,
        config_files=CONFIG_FILES,
    conda:
        "../../environment.yml"
    script:
        "../scripts/report.py"
