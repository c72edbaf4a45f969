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
        audit_table="data/results/audit/audit.parquet",
        audit_figure="reports/figures/audit_eps.png",
        benchmarks=lambda wc: benchmark_files(),  # after every study has added its own
        notebook="notebooks/report.py",
        # every running study's tables and figures (mpdp.studies.registry.report_files)
        studies=lambda wc: [p for files in report_study_files().values() for p in files["files"]],
        # the claims tables and verdict maps (issue 33): every section's verdicts come from them
        claims_cells=claims_tables_mod.CELLS_PATH,
        claims_verdicts=claims_tables_mod.VERDICTS_PATH,
        claims_maps=CLAIMS_MAPS,
        claims_forests=CLAIMS_FORESTS,
        # the robustness table and its figures, once `snakemake multiverse` has built them (issue 48)
        multiverse=lambda wc: multiverse_report_files(),
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
        studies=lambda wc: report_study_files(),
        # the report shows the whole validated config: any change reruns it (a hash, so that the
        # rerun reason is one short line, not the config twice)
        settings=mpdp_config.config_hash(CFG),
        # the reseeding check's tables on disk (issue 60): read, not inputs (the check is not part of `all`,
        # and a stale check would rebuild a whole study); a check run after the report reruns the report
        reseeding=lambda wc: reseeding_mod.tables_stamp(".", CLAIMS_STUDIES),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/report.py"
