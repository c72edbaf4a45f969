# Config validation, data-set availability and input functions (no rules here).
import os
import sys
from pathlib import Path

from mpdp import config as mpdp_config
from mpdp.data import fetch as mpdp_fetch
from mpdp.errors import MpdpError
from mpdp.studies.wddp.figure_spec import FIGURES, variants_for
from mpdp.provenance_hash import source_hash
from mpdp.runner import job_environment
from mpdp.studies.wddp import plan

for _var, _value in job_environment().items():  # inherited by every job
    os.environ.setdefault(_var, _value)

try:
    CFG = mpdp_config.validate(config)
    MIRROR = mpdp_config.data_mirror(CFG)
except MpdpError as exc:
    sys.stderr.write(f"\nmpdp: {exc}\n\n")
    sys.exit(1)

CONFIG_FILES = [str(p) for p in getattr(workflow, "configfiles", [])] or ["config/config.yaml"]
RAW_DIR = Path("data/raw")
ALLOW_DOWNLOAD = mpdp_config.allow_download(CFG)
SOURCES = {ds: mpdp_fetch.locate(ds, RAW_DIR, MIRROR, ALLOW_DOWNLOAD) for ds in CFG["datasets"]}
AVAILABLE = [ds for ds in CFG["datasets"] if SOURCES[ds] is not None]
UNAVAILABLE = {
    ds: f"raw data not available offline; put it in data/raw/{ds}/ (see README)"
    for ds in CFG["datasets"]
    if SOURCES[ds] is None
}
for _ds in UNAVAILABLE:
    sys.stderr.write(
        f"mpdp: data set '{_ds}' is skipped: its raw files are neither in data/raw/{_ds}/ nor in "
        f"the mirror, and downloading is off (mirror set or allow_download: false). Run "
        f"`snakemake data/raw/{_ds}/manifest.json` for the exact file names and checksums.\n"
    )

CODE = {stage: source_hash(stage) for stage in ("data", "partition", "train", "figures", "report",
                                               "admm_train", "admm_figures")}
EXPERIMENTS = ("eps_sweep", "u_sweep")
VARIANTS = variants_for(CFG)


wildcard_constraints:
    dataset="|".join(["kddcup99", "adult", "bank", "breast_cancer", "credit_card"]),
    experiment="eps_sweep|u_sweep",
    job=r"eps_central|eps_m\d+|u_m\d+_e[0-9.]+_u\d+",
    figname=r"fig\d\d(-pr|-exact)?",


def card(ds):
    return f"data/processed/{ds}/card.json"


def partition_file(ds, experiment):
    return f"data/partitions/{ds}/{experiment}.npz"


def job_file(ds, job_id):
    return f"data/results/wddp/runs/{ds}/{job_id}.parquet"


def job_partition_input(wildcards):
    job = plan.parse_job_id(wildcards.dataset, wildcards.job)
    return [] if job.m is None else [partition_file(wildcards.dataset, job.experiment)]


def job_settings(wildcards):
    """The config subset a training job depends on (a param: changes rerun the job)."""
    w = CFG["wddp"]
    keys = ("T", "delta", "G", "lambda", "reps", "dtype", "eps_grid", "modes", "noise_sharing",
            "accountants", "extra_accountant_modes", "init_std", "dedup", "nonprivate_reference")
    return {"root_seed": CFG["root_seed"], **{k: w[k] for k in keys}}


def all_job_files(ds):
    return [job_file(ds, j.job_id) for j in plan.jobs(CFG, ds)]


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
