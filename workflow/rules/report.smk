# The HTML report (reports/report.html), rendered from notebooks/report.py.


rule report_html:
    input:
        results=[f"data/results/wddp/{ds}.parquet" for ds in AVAILABLE],
        cards=[card(ds) for ds in AVAILABLE],
        # read next to each results table (CV curves, θ* accuracy and its λ-sensitivity)
        etas=[f"data/results/wddp/eta/{ds}.json" for ds in AVAILABLE],
        optima=[f"data/results/wddp/optimum/{ds}.npz" for ds in AVAILABLE],
        figures=all_figure_files(),
        diagnostics="reports/figures/noise_diagnostics.png",
        ls=ls_plan.all_outputs(CFG),  # least-squares study (empty when the config has no ls:)
        audit_table="data/results/audit/audit.parquet",
        audit_figure="reports/figures/audit_eps.png",
        benchmarks=lambda wc: benchmark_files(),  # after every study has added its own
        admm=ADMM_OUTPUTS + ([ADMM_TABLE] if ADMM_ON else []),
        notebook="notebooks/report.py",
        voting_tables=[voting_plan.table_path(t) for t in VOTING_TABLES],
        voting_figures=voting_figure_files(("png",)),
        benchmark_tables=benchmark_table_paths(),
        benchmark_hparams=[p.replace(".parquet", ".hparams.json") for p in benchmark_table_paths()],
        benchmark_figures=[f for f in BENCHMARK_FIGURE_FILES if f.endswith(".png")],
        benchmark_ranking=BENCHMARK_RANKING,
        # the claims tables and verdict maps (issue 33): every section's verdicts come from them
        claims_cells=claims_tables_mod.CELLS_PATH,
        claims_verdicts=claims_tables_mod.VERDICTS_PATH,
        claims_maps=CLAIMS_MAPS,
        claims_forests=CLAIMS_FORESTS,
    output:
        "reports/report.html",
        # the validated config of this build (notebooks/explore.py reads it: its profile)
        config="reports/config.yaml",
    log:
        "logs/report.log",
    params:
        code=code("report.py"),
        unavailable=UNAVAILABLE,
        available=AVAILABLE,
        invocation=INVOCATION,
        claims_studies=CLAIMS_STUDIES,
        # the report shows the whole validated config: any change reruns it (a hash, so that the
        # rerun reason is one short line, not the config twice)
        settings=mpdp_config.config_hash(CFG),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/report.py"
