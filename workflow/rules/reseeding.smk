# The reseeding check (issue 60 item 5; docs/claims.md "Reseeding check"): one study rebuilt on its
# full grid under each reseed of multiverse.check_reseeds (default one: another root_seed and another
# split.seed at once), each by a nested Snakemake in data/multiverse/reseeding/<study>/<reseed>/ (the
# multiverse's machinery: mpdp.multiverse.universe.run), building that study's claims tables only;
# then the comparison with the main build's tables. Not part of `all`:
#   snakemake --cores all data/results/claims/reseeding_wddp.parquet
# or  python -m mpdp.pipeline.reseeding --study wddp
# Logic in src/mpdp/multiverse/reseeding.py.
# RESEEDING and reseeding_threads(): workflow/rules/common.smk


rule reseeding:
    input:
        # the headline: the main build's claims tables of this study alone (rule claims_tables_of_study:
        # the rows claims_tables holds for it), so the check builds one study, not every one
        headline=lambda wc: [f"data/results/claims/by_study/{wc.claims_study}/cells.parquet",
                             f"data/results/claims/by_study/{wc.claims_study}/verdicts.parquet"],
        status=lambda wc: [f"{reseeding_mod.ROOT}/{wc.claims_study}/{r}/status.json" for r in RESEEDING],
    output:
        table=reseeding_mod.TABLE.format(study="{claims_study}"),
        markdown=reseeding_mod.MARKDOWN.format(study="{claims_study}"),
    log:
        "logs/reseeding/{claims_study}.log",
    wildcard_constraints:
        claims_study="|".join(CLAIMS_STUDIES),
    params:
        code=code("reseeding_collect.py"),
        labels=[u.value_label for u in RESEEDING.values()],
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/reseeding_collect.py"


rule reseeding_universe:
    input:
        # the raw data, fetched once here: the reseeded runs link data/raw
        raw=[f"data/raw/{ds}/manifest.json" for ds in AVAILABLE],
    output:
        status=f"{reseeding_mod.ROOT}/{{claims_study}}/{{reseed}}/status.json",
    log:
        "logs/reseeding/{claims_study}/{reseed}.log",
    wildcard_constraints:
        claims_study="|".join(CLAIMS_STUDIES),
        reseed="|".join(re.escape(r) for r in RESEEDING) or "(?!)",
    # a whole study on its full grid: every core snakemake is given (the reseeds run one after the other)
    threads: reseeding_threads()
    resources:
        runtime=600,  # minutes (a Slurm time limit): a full-grid study, like a full-grid universe
    params:
        # a hash of the reseeded run's whole config (mpdp.multiverse.reseeding.reseed_config)
        settings=lambda wc: mpdp_config.config_hash(reseeding_mod.reseed_config(CFG, RESEEDING[wc.reseed])),
        code=whole_package_code(),
        root=str(Path(workflow.main_snakefile).resolve().parent),
    conda:
        "../envs/mpdp.yaml"
    script:
        "../scripts/reseeding_universe.py"
