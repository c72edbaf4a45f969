# Figures (spec E3.4, bounds.md B10): one file per paper figure and variant, read from the
# training jobs of that figure's setting only; plotting never retrains.


rule figures:
    input:
        all_figure_files(),
        "reports/figures/noise_diagnostics.png",
        "reports/figures/noise_diagnostics.pdf",


# the WD-DP study's collect target `wddp` (workflow/rules/studies.smk): its tables (`train`) and figures
STUDY_OUTPUTS["wddp"] = [*rules.train.input, *rules.figures.input]


rule figure:
    input:
        lambda wc: figure_jobs(wc.figname.split("-")[0]),
    output:
        png="reports/figures/{figname}.png",
        pdf="reports/figures/{figname}.pdf",
    log:
        "logs/figures/{figname}.log",
    params:
        code=code("figure.py"),
        unavailable=UNAVAILABLE,
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/figure.py"


rule noise_diagnostics:
    input:
        [f"data/results/wddp/{ds}.parquet" for ds in AVAILABLE],
    output:
        png="reports/figures/noise_diagnostics.png",
        pdf="reports/figures/noise_diagnostics.pdf",
    log:
        "logs/figures/noise_diagnostics.log",
    params:
        code=code("noise_diagnostics.py"),
        unavailable=UNAVAILABLE,
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/noise_diagnostics.py"


for _fig in FIGURES:

    rule:
        name:
            _fig
        input:
            [f"reports/figures/{_fig}{variant}.{ext}" for variant in VARIANTS for ext in ("png", "pdf")],
