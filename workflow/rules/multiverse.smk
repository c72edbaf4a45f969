# Robustness of the claims' verdicts to the reconstructed choices (issue 38; docs/multiverse.md):
# the claims tables once per universe (the base config, then each alternative of
# `multiverse.choices` alone, and the reseeded defaults of `multiverse.reseeds`; with
# `multiverse.full_grid` no base, and the default universe is the main build), each in its own
# folder data/multiverse/<universe>/ by a nested Snakemake; then one table (beside the main build's
# verdicts, when it has them) and its figures. Not part of `all`: run `snakemake multiverse`.
# Logic in src/mpdp/multiverse; every universe is validated at planning when the call builds the multiverse (common.smk, issue 58).
import re


rule multiverse:
    input:
        status=expand("data/multiverse/{universe}/status.json", universe=list(MULTIVERSE)),
        # the headline: the main build's own verdicts, beside the reduced default (issue 48), when
        # this checkout has them (`snakemake multiverse` does not build the full grid for them)
        headline=lambda wc: multiverse_headline(),
    output:
        table=multiverse_spec.TABLE_PATH,
        png=multiverse_spec.FIGURE_PNG,
        pdf=multiverse_spec.FIGURE_PDF,
        curves_png=multiverse_spec.CURVES_PNG,
        curves_pdf=multiverse_spec.CURVES_PDF,
    log:
        "logs/multiverse/collect.log",
    params:
        code=code("multiverse_collect.py"),
        settings=lambda wc: rule_keys.param(CFG, "multiverse"),  # a universe has no multiverse section
        universes=list(MULTIVERSE),
        skipped=MULTIVERSE_SKIPPED,  # equal to the default: not run, listed in the table
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/multiverse_collect.py"


rule multiverse_universe:
    input:
        raw=multiverse_raw,
        # an alternative starts from the default universe's results (mpdp.multiverse.universe.seed)
        base=multiverse_base,
        # multiverse.full_grid: the default universe is the main build's claims tables (issue 48)
        main=multiverse_main,
    output:
        status="data/multiverse/{universe}/status.json",
    log:
        "logs/multiverse/{universe}.log",
    wildcard_constraints:
        universe="|".join(re.escape(u) for u in MULTIVERSE),
    # cores of the nested run (fewer when snakemake is given fewer)
    threads: 2
    resources:
        # minutes (a Slurm time limit): the reduced base or the full grid (multiverse.full_grid)
        runtime=multiverse_runtime,
    params:
        # a hash of the universe's whole config: any change of it reruns the universe (one short
        # line as the rerun reason; the script rebuilds the config itself)
        settings=lambda wc: mpdp_config.config_hash(multiverse_spec.universe_config(CFG, MULTIVERSE[wc.universe])),
        code=whole_package_code(),
        root=str(Path(workflow.main_snakefile).resolve().parent),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/multiverse_universe.py"
