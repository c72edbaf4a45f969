# Cross-paper benchmark (spec E10, issue 10): the FIGURES xp_eps, xp_m, xp_u, xp_rank, xp_glance (issue 56) from the
# tables of workflow/rules/benchmark.smk, and the umbrella target `benchmark` (tables + figures;
# the report section reads both), and the per-cell ranking table that xp_rank and the report read.
# Logic in src/mpdp/studies/benchmark/{figures,ranking}.py.
from mpdp.studies.benchmark import ranking as benchmark_ranking_mod

BENCHMARK_FIGURES = ("xp_eps", "xp_m", "xp_u", "xp_rank", "xp_glance")
BENCHMARK_RANKING = [benchmark_ranking_mod.ranking_path()] if BENCHMARK_DATASETS else []
BENCHMARK_FIGURE_FILES = (
    [f"reports/figures/{f}.{ext}" for f in BENCHMARK_FIGURES for ext in ("png", "pdf")]
    if BENCHMARK_DATASETS
    else []
)


wildcard_constraints:
    xpfig="|".join(BENCHMARK_FIGURES),


# its collect target `benchmark` (workflow/rules/studies.smk)
STUDY_OUTPUTS["benchmark"] = [*benchmark_table_paths(), *(p.replace(".parquet", ".hparams.json") for p in benchmark_table_paths()),
                              *BENCHMARK_RANKING, *BENCHMARK_FIGURE_FILES]


rule benchmark_ranking:
    input:
        tables=benchmark_table_paths(),
    output:
        benchmark_ranking_mod.ranking_path(),
    log:
        "logs/benchmark_ranking.log",
    params:
        code=code("benchmark_ranking.py"),
        settings=lambda wc: rule_keys.param(CFG, "benchmark_ranking"),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/benchmark_ranking.py"


rule benchmark_figure:
    input:
        tables=benchmark_table_paths(),
        ranking=lambda wc: BENCHMARK_RANKING if wc.xpfig == "xp_rank" else [],
    output:
        png="reports/figures/{xpfig}.png",
        pdf="reports/figures/{xpfig}.pdf",
    log:
        "logs/benchmark_figure/{xpfig}.log",
    params:
        code=code("benchmark_figure.py"),
        settings=lambda wc: rule_keys.param(CFG, "benchmark_figure"),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/benchmark_figure.py"


for _xpfig in BENCHMARK_FIGURES:

    rule:
        name:
            _xpfig
        input:
            [f"reports/figures/{_xpfig}.{ext}" for ext in ("png", "pdf")],
