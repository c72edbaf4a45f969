# Config validation, data-set availability and input functions (no rules here).
import contextlib
import os
import sys
from pathlib import Path

from mpdp import config as mpdp_config
from mpdp import io as mpdp_io
from mpdp.pipeline import planning as mpdp_planning
from mpdp.multiverse import spec as multiverse_spec
from mpdp.data import fetch as mpdp_fetch
from mpdp.data import prepare as mpdp_prepare
from mpdp.data import registry as mpdp_registry
from mpdp.errors import MpdpError
from mpdp.studies.wddp.figure_spec import FIGURES, variants_for
from mpdp.pipeline import code_hash
from mpdp.report.provenance import invocation
from mpdp.pipeline.runner import job_environment
from mpdp.pipeline import rule_keys
from mpdp.studies.wddp import plan
from mpdp.studies import scheduling
from mpdp.studies import registry as study_registry
from mpdp.studies.benchmark import registry as benchmark_registry

for _var, _value in job_environment().items():  # inherited by every job
    os.environ.setdefault(_var, _value)
if workflow.is_main_process:  # jobs are bound to this run: they write nothing once it is gone (mpdp.io)
    os.environ[mpdp_io.RUN_ENV] = mpdp_io.run_token()
# the checkout holding this Snakefile: workflow/envs/mpdp.post-deploy.sh installs mpdp from it
os.environ.update(MPDP_SOURCE_DIR=str(Path(workflow.main_snakefile).resolve().parent))

def cli_targets():
    """The targets of this call's command line, read by Snakemake's own parser (Snakemake reads the
    Snakefile before it hands its DAG settings, the targets among them, to the workflow); None when
    the call is not Snakemake's command line (its API called from Python): then the multiverse counts
    as built (mpdp.multiverse.spec.in_build), the safe side."""
    if Path(sys.argv[0]).name not in ("snakemake", "__main__.py"):
        return None
    from snakemake.cli import parse_args

    try:
        with open(os.devnull, "w") as null, contextlib.redirect_stdout(null), contextlib.redirect_stderr(null):
            _, args = parse_args(sys.argv[1:])
    except (Exception, SystemExit):
        return None
    return [str(t) for t in args.targets or ()]


try:
    CFG = mpdp_config.validate(config)
    MIRROR = mpdp_config.data_mirror(CFG)
except MpdpError as exc:
    sys.stderr.write(f"\nmpdp: {exc}\n\n")
    sys.exit(1)

# the config files and --config overrides of this call, for the report's reproduce command
INVOCATION = invocation(
    workflow.configfiles, workflow.config_settings.config_args, Path.cwd(), os.environ.get(mpdp_config.MIRROR_ENV)
).to_dict()
RAW_DIR = Path("data/raw")
ALLOW_DOWNLOAD = mpdp_config.allow_download(CFG)
SOURCES = {ds: mpdp_fetch.locate(ds, RAW_DIR, MIRROR, ALLOW_DOWNLOAD) for ds in CFG["datasets"]}
AVAILABLE = [ds for ds in CFG["datasets"] if SOURCES[ds] is not None]
UNAVAILABLE = {
    ds: f"raw data not available offline; put it in data/raw/{ds}/ (see docs/offline-and-slurm.md)"
    for ds in CFG["datasets"]
    if SOURCES[ds] is None
}
for _ds in UNAVAILABLE:
    sys.stderr.write(
        f"mpdp: data set '{_ds}' is skipped: its raw files are neither in data/raw/{_ds}/ nor in "
        f"the mirror, and downloading is off (mirror set or allow_download: false). Run "
        f"`snakemake data/raw/{_ds}/manifest.json` for the exact file names and checksums.\n"
    )
if not AVAILABLE:  # nothing to train on: stop instead of planning empty figures
    sys.stderr.write(f"\nmpdp: {mpdp_fetch.none_available_message(CFG['datasets'], RAW_DIR, MIRROR)}\n\n")
    sys.exit(1)

# what the schema cannot see (grids, settings against data-set sizes, writable output
# folders), before any job runs
try:
    mpdp_planning.check_writable()
    for _ds in AVAILABLE:  # a raw file lost or damaged after its fetch was verified
        mpdp_fetch.check_fetched(_ds, RAW_DIR)
    # the multiverse's universes are checked (and warn) only when this call builds it (issue 58);
    # a job's own process (not the main one) plans nothing it would build
    MULTIVERSE_BUILD = "multiverse" in CFG and workflow.is_main_process and multiverse_spec.in_build(
        cli_targets(), Path(multiverse_spec.TABLE_PATH).is_file())
    PLANNING_WARNINGS = mpdp_planning.check(CFG, AVAILABLE, {ds: f"data/processed/{ds}/card.json" for ds in AVAILABLE},
                                            multiverse=MULTIVERSE_BUILD)
except MpdpError as exc:
    sys.stderr.write(f"\nmpdp: {exc}\n\n")
    sys.exit(1)
for _line in PLANNING_WARNINGS:
    sys.stderr.write(f"mpdp: WARNING: {_line}\n")

SCRIPTS = Path(workflow.main_snakefile).resolve().parent / "workflow" / "scripts"


#: files a script executes besides itself (repository paths): their imports are its code too
SCRIPT_RUNS = {"report.py": ("notebooks/report.py",)}
#: files the package imports at run time by the config's say (mpdp.pipeline.code_hash "Files loaded
#: at run time"): the benchmark's plug-in mechanism modules, imported by its registry; an edit of
#: one reruns every rule whose script can import the registry
try:
    RUNTIME_LOADS = (("mpdp.studies.benchmark.registry", benchmark_registry.module_files(CFG)),) if CFG.get("benchmark") else ()
except MpdpError as exc:
    sys.stderr.write(f"\nmpdp: {exc}\n\n")
    sys.exit(1)


def code(script):
    """The ``code`` param for ``workflow/scripts/<script>`` (the script a rule runs), a hash of the package
    sources the script (and what it executes, SCRIPT_RUNS) imports, transitively
    (mpdp.pipeline.code_hash; an edit reruns exactly the rules whose scripts import it).
    check_code_params() holds every rule with a script to it."""
    root = SCRIPTS.parents[1]
    return code_hash.script_hash(SCRIPTS / script, *(root / f for f in SCRIPT_RUNS.get(script, ())), loads=RUNTIME_LOADS)


EXPERIMENTS = ("eps_sweep", "u_sweep")
VARIANTS = variants_for(CFG)


wildcard_constraints:
    dataset=mpdp_registry.pattern(),
    experiment="eps_sweep|u_sweep",
    job=plan.JOB_ID_PATTERN,
    figname=r"fig\d\d(-pr|-exact|-eq)?",


PROCESSED_ARRAYS = tuple(f"{name}.npy" for name in mpdp_prepare.ARRAYS)
# KDDCup99's 5-class label arrays (voting study, spec M13): outputs of rule prepare_multiclass
CLASS_ARRAY_FILES = tuple(f"{name}.npy" for name in mpdp_prepare.CLASS_ARRAYS)
MULTICLASS_DATA = mpdp_registry.pattern(mpdp_registry.multiclass())
BINARY_DATA = mpdp_registry.pattern(tuple(ds for ds in mpdp_registry.DATASETS if ds not in mpdp_registry.multiclass()))


def card(ds):
    return f"data/processed/{ds}/card.json"


def processed_arrays(wildcards):
    """The arrays next to a data card: declared inputs of every job that loads the data set
    (on a cluster a job may read only what it declares; no hidden reads of data/)."""
    return processed_arrays_of(wildcards.dataset)


def partition_file(ds, experiment):
    return f"data/partitions/{ds}/{experiment}.npz"


def job_file(ds, job_id):
    return f"data/results/wddp/runs/{ds}/{job_id}.parquet"


def job_partition_input(wildcards):
    job = plan.parse_job_id(wildcards.dataset, wildcards.job)
    return [] if job.m is None else [partition_file(wildcards.dataset, job.experiment)]


def job_priority(wildcards):
    """Longest training jobs first (mpdp.studies.wddp.plan.job_priority)."""
    return plan.job_priority(CFG, wildcards.dataset, wildcards.job)


def data_priority(wildcards):
    """A data set's fetch and preparation as early as the longest job reading it
    (mpdp.studies.scheduling.data_priority)."""
    return scheduling.data_priority(CFG, AVAILABLE, wildcards.dataset)


def setup_priority(wildcards):
    """θ* and CV before the training jobs they gate (mpdp.studies.wddp.plan.setup_priority)."""
    return plan.setup_priority(CFG, wildcards.dataset)


def job_settings(wildcards):
    """The config keys a training job reads (a param: changes rerun the job; mpdp.pipeline.rule_keys)."""
    experiment = plan.parse_job_id(wildcards.dataset, wildcards.job).experiment
    return rule_keys.param(CFG, "train_job", dataset=wildcards.dataset, experiment=experiment)


def all_job_files(ds):
    return [job_file(ds, j.job_id) for j in plan.jobs(CFG, ds)]


#: ``benchmark:`` files of the other studies' jobs; each study's rule file appends its own
STUDY_BENCHMARKS = []
#: study id -> every figure and table of the study: the inputs of its collect target (`snakemake
#: <id>`, and its older names; workflow/rules/studies.smk); each study's rule file sets its own
STUDY_OUTPUTS = {}


def processed_arrays_of(ds):
    """The arrays of data set ``ds`` (declared inputs of a job that loads it, see below)."""
    return [f"data/processed/{ds}/{name}" for name in mpdp_prepare.array_files(ds)]


def benchmark_files():
    """The ``benchmark:`` files of the jobs the report sums wall times over (declared inputs of
    the report rule, so it reads exactly this run's files and nothing else under data/)."""
    files = list(STUDY_BENCHMARKS)
    for ds in AVAILABLE:
        files += [f"data/benchmarks/{stage}/{ds}.tsv" for stage in ("prepare", "optimum", "learning_rates")]
        files += [f"data/benchmarks/train/{ds}/{j.job_id}.tsv" for j in plan.jobs(CFG, ds)]
    return files


def figure_jobs(fig_id):
    """Training-job outputs figure ``fig_id`` reads: its own setting only, never the others."""
    spec = FIGURES[fig_id]
    files = []
    for ds in AVAILABLE:
        for job in plan.jobs(CFG, ds):
            if spec.uses_job(job):
                files.append(job_file(ds, job.job_id))
    return files


def all_figure_files():
    return [
        f"reports/figures/{fig}{variant}.{ext}"
        for fig in FIGURES
        for variant in VARIANTS
        for ext in ("png", "pdf")
    ]


def figure_variant(figname):
    """'' for the main reading, else the suffix without its dash ('pr', 'exact')."""
    return figname.split("-", 1)[1] if "-" in figname else ""


#: rules whose job runs the whole workflow again (a multiverse universe's nested Snakemake): their
#: code is every source of the package
WHOLE_PACKAGE_RULES = ("multiverse_universe", "reseeding_universe")


def whole_package_code():
    """The ``code`` param of a WHOLE_PACKAGE_RULES rule: every source of the package and the files
    it loads at run time (the main config's plug-ins)."""
    return code_hash.package_hash(loads=RUNTIME_LOADS)


def check_code_params():
    """Stop planning unless every rule with a script declares as param ``code`` the hash of the
    package code its script runs (code(), issue 44): a rule without it would not rerun after
    an edit of the code it runs. Call it after every rule file is included (in the Snakefile)."""
    for r in workflow.rules:
        if not r.script:
            continue
        expected = whole_package_code() if r.name in WHOLE_PACKAGE_RULES else code(Path(str(r.script)).name)
        declared = r.params.get("code") if "code" in r.params.keys() else None
        if declared != expected:
            sys.exit(f"mpdp: rule {r.name!r} runs a script but its param 'code' is {declared!r}, not "
                     f"the hash of the code its script imports; add code=code({Path(str(r.script)).name!r})")


def study_targets():
    """Every input of every target (the rules without output, e.g. `figures`, `hamm`, `ls_1`,
    `audit_eps`), so that the default target rebuilds any missing figure or table of any
    study; a figure added to a study's target list is included without further edits. Call it
    after every rule file is included (in the Snakefile's default target)."""
    files = set()
    for target in workflow.rules:
        if target.output or target.name == "all":
            continue
        for path in target.input:
            if callable(path):
                sys.exit(f"mpdp: the target {target.name!r} has an input function; list its files "
                         "instead, so that the default target can include them")
            files.add(str(path))
    return sorted(files)


# ---- the multiverse (issue 38; workflow/rules/multiverse.smk): its universes and their raw data

#: the universes that run; an alternative equal to the default is not run (a planning warning; the
#: robustness table lists it, issue 48)
MULTIVERSE = {u.id: u for u in multiverse_spec.to_run(CFG)}
MULTIVERSE_SKIPPED = [u.id for u in multiverse_spec.universes(CFG) if u.id not in MULTIVERSE]


def multiverse_raw(wildcards):
    """The raw data of a universe's data sets, fetched once here: the universes share data/raw
    (linked), so none of their nested runs fetches (or replaces) a file another one reads."""
    ucfg = multiverse_spec.universe_config(CFG, MULTIVERSE[wildcards.universe])
    return [f"data/raw/{ds}/manifest.json" for ds in ucfg["datasets"] if ds in AVAILABLE]


def multiverse_base(wildcards):
    """The default universe's status, which an alternative universe waits for and seeds from
    (nothing for the default universe itself)."""
    if wildcards.universe == multiverse_spec.DEFAULT:
        return []
    return [f"{multiverse_spec.ROOT}/{multiverse_spec.DEFAULT}/status.json"]


def multiverse_headline():
    """The main build's claims verdicts and cells (the headline the reduced default is compared
    with, issue 48) when this checkout has built them; nothing otherwise. With
    `multiverse.full_grid` always: the default universe is the main build, built first."""
    paths = [claims_tables_mod.VERDICTS_PATH, claims_tables_mod.CELLS_PATH]
    if "multiverse" in CFG and multiverse_spec.full_grid(CFG):
        return paths
    return paths if all(Path(p).is_file() for p in paths) else []


def multiverse_main(wildcards):
    """The main build's claims tables, which the default universe of `multiverse.full_grid` is
    (issue 48); nothing for any other universe or on the reduced grid."""
    if wildcards.universe != multiverse_spec.DEFAULT or not multiverse_spec.full_grid(CFG):
        return []
    return [claims_tables_mod.VERDICTS_PATH, claims_tables_mod.CELLS_PATH]


def multiverse_runtime(wildcards):
    """Minutes a universe job may run (a Slurm time limit; docs/multiverse.md): the reduced base
    16 min measured for the default universe from scratch on 2 cores and about 35 min estimated
    for the costliest alternative (cv_scope), the full grid a whole pipeline run (~51 min on 2
    cores, README), with headroom like the other jobs' requests; the main build as the default
    universe only writes its status."""
    if multiverse_spec.full_grid(CFG):
        return 10 if wildcards.universe == multiverse_spec.DEFAULT else 600
    return 240


def multiverse_report_files():
    """The multiverse table and figures once `snakemake multiverse` has built the table (issue 48):
    the report then depends on them, so that it is rebuilt, with its robustness section, after
    every multiverse run (and a stale table is brought up to date before the report). Nothing
    without the table, or when this config has no `multiverse` section."""
    if "multiverse" not in CFG or not Path(multiverse_spec.TABLE_PATH).is_file():
        return []
    return [multiverse_spec.TABLE_PATH, *multiverse_spec.FIGURES]


def report_study_files():
    """Every running study's tables and outputs, from the study registry (called at DAG time,
    once every rule file has added its study's STUDY_OUTPUTS)."""
    return study_registry.report_files(CFG, AVAILABLE, STUDY_OUTPUTS)


# The reseeding check's reseeds and cores (workflow/rules/reseeding.smk)
import re

from snakemake.exceptions import WorkflowError

from mpdp.multiverse import reseeding as reseeding_mod

#: the reseeds that run (one equal to the main config's seeds would repeat the headline: left out)
RESEEDING = {u.id: u for u in reseeding_mod.reseeds(CFG)}


def reseeding_threads():
    """Cores of a reseeded run: every core this call has (a whole study on its full grid; the
    reseeds run one after the other), at most 64 (a cluster call's cores may be unbounded)."""
    try:
        cores = workflow.cores
    except WorkflowError:  # a cluster call (--jobs, no --cores): its nodes' cores are unknown here
        return 2
    return max(1, min(int(cores), 64)) if isinstance(cores, int) else 2
