"""Which runs the WD-DP grid contains and how they are grouped into coarse jobs (spec E3, E8).

A job trains every run of a data set and a partition layout, so one job per (data set,
ε-sweep m) plus one for the centralised baseline, and one per (data set, u-sweep setting)
that trains the setting's partition layouts one u after another (each u its own batch). That
is 9 jobs per data set for the full config: coarse enough that starting a Python job (about
1 s of imports) is a small share of each, fine enough to keep two cores busy (issue 12).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mpdp.data.registry import DATASETS
from mpdp.errors import ConfigError
from mpdp.mechanisms import RunSpec

CENTRAL = "eps_central"
#: a float as Python's shortest round-trip ``repr`` writes it (``0.05``, ``1e-05``, ``1e+20``)
FLOAT_PATTERN = r"[0-9]+(?:\.[0-9]+)?(?:e[+-][0-9]+)?"
#: every training-job id; also the Snakemake wildcard constraint of ``{job}``
JOB_ID_PATTERN = rf"{CENTRAL}|eps_m[0-9]+|u_m[0-9]+_e{FLOAT_PATTERN}"
_EPS_RE = re.compile(r"^eps_m(?P<m>[0-9]+)$")
_U_RE = re.compile(rf"^u_m(?P<m>[0-9]+)_e(?P<eps>{FLOAT_PATTERN})$")
#: accountants that only apply to the Jayaraman baseline (spec M4.2 C2)
JAYARAMAN_ONLY = {"zcdp_code"}
#: the equal-privacy reading (config ``wddp.equal_privacy``, figure variant ``-eq``): per mode,
#: the accountant under which what is released is really (ε, δ)-DP at the target ε (spec I-1).
#: Per-round runs are left out: per-round WD-DP under ``exact`` is Wang–Ye–Xu ``exact`` (M3.2),
#: which the reading has; per-round Jayaraman ``exact`` comes with
#: ``extra_accountant_modes: [..., per_round]``.
EQUAL_PRIVACY: dict[str, tuple[str, ...]] = {
    "local_then_aggregate": ("exact_per_party",),
    "central": ("exact",),
}


@dataclass(frozen=True)
class Job:
    """One training job: a data set, an experiment and its partition layout (an ε-sweep m), or
    a u-sweep setting (m, ε) with every u of the data set's grid."""

    dataset: str
    experiment: str  # eps_sweep | u_sweep
    m: int | None  # None for the centralised ε-sweep job
    eps: float | None  # fixed ε of a u-sweep setting

    @property
    def job_id(self) -> str:
        """A file-name-safe id that :func:`parse_job_id` inverts exactly (ε written with
        ``repr``, the shortest string that reads back as the same float)."""
        if self.experiment == "eps_sweep":
            return CENTRAL if self.m is None else f"eps_m{self.m}"
        return f"u_m{self.m}_e{float(self.eps)!r}"

    @property
    def design(self) -> str:
        """Partition design (spec E2): random sizes for ε-sweeps, two groups for u-sweeps."""
        return "random" if self.experiment == "eps_sweep" else "two_group"


def parse_job_id(dataset: str, job_id: str) -> Job:
    """Inverse of :attr:`Job.job_id`."""
    if job_id == CENTRAL:
        return Job(dataset, "eps_sweep", None, None)
    if match := _EPS_RE.match(job_id):
        return Job(dataset, "eps_sweep", int(match["m"]), None)
    if match := _U_RE.match(job_id):
        return Job(dataset, "u_sweep", int(match["m"]), float(match["eps"]))
    raise ConfigError(f"unknown training job id {job_id!r}")


def jobs(cfg: dict[str, Any], dataset: str) -> list[Job]:
    """Every training job of ``dataset`` under the config."""
    w = cfg["wddp"]
    out = [Job(dataset, "eps_sweep", None, None)]
    out += [Job(dataset, "eps_sweep", m, None) for m in w["m_grid"]]
    out += [Job(dataset, "u_sweep", s["m"], float(s["eps"])) for s in w["u_settings"]]
    return out


def job_unevenness(cfg: dict[str, Any], job: Job) -> list[int | None]:
    """The u values a job trains, one partition layout each: the data set's u grid for a
    u-sweep job, ``[None]`` for an ε-sweep job."""
    if job.experiment == "u_sweep":
        return [int(u) for u in cfg["wddp"]["u_grid"][job.dataset]]
    return [None]


def partition_settings(cfg: dict[str, Any], dataset: str, experiment: str) -> list[tuple[int, int | None]]:
    """The (m, u) settings whose partitions the experiment needs."""
    w = cfg["wddp"]
    if experiment == "eps_sweep":
        return [(m, None) for m in w["m_grid"]]
    return sorted({(s["m"], u) for s in w["u_settings"] for u in w["u_grid"][dataset]})


def accountants_for(cfg: dict[str, Any], mechanism: str, mode: str) -> list[str]:
    """The accountants a (mechanism, mode) is trained with.

    The first of ``wddp.accountants`` is the main one and applies to every mode; the others
    only to the modes in ``wddp.extra_accountant_modes`` (by default the paper's reading and
    the centralised baseline, which the ``-exact`` figures need). ``zcdp_code`` applies to
    Jayaraman only; the non-private reference (M1b) has no accountant.
    With ``wddp.equal_privacy`` on, the equal-privacy reading is added (figure variant
    ``-eq``, spec I-1): literal-mode runs with ``exact_per_party`` (each party calibrated to
    its own n_j) and centralised runs with ``exact``. A per-party calibration needs each party's
    own noise, so with ``wddp.noise_sharing: shared`` the literal mode has no equal-privacy runs
    (the reading's claims are then undefined: UNINFORMATIVE, :func:`equal_privacy_undefined`).
    """
    if mechanism == "nonprivate":
        return ["none"]
    w = cfg["wddp"]
    accs = [w["accountants"][0]]
    if mode in w["extra_accountant_modes"]:
        accs += w["accountants"][1:]
    if w.get("equal_privacy", False) and not (mode == "local_then_aggregate" and equal_privacy_undefined(cfg)):
        accs += list(EQUAL_PRIVACY.get(mode, ()))
    accs = list(dict.fromkeys(accs))
    return [a for a in accs if mechanism == "jayaraman" or a not in JAYARAMAN_ONLY]


def equal_privacy_undefined(cfg: Mapping[str, Any]) -> bool:
    """Whether the literal mode's equal-privacy runs (``exact_per_party``: each party's σ_j for its
    own n_j, spec I-1) are undefined: with shared noise (spec E7 #2) one draw serves every party,
    so no party can have a σ of its own."""
    return cfg["wddp"]["noise_sharing"] == "shared"


def method_keys(cfg: dict[str, Any]) -> list[tuple[str, str]]:
    """(mechanism, mode) pairs of the grid: WYX centrally, WD-DP and Jayaraman in each mode."""
    modes = cfg["wddp"]["modes"]
    return [("wyx", "central")] + [(mech, mode) for mech in ("wddp", "jayaraman") for mode in modes]


#: a per-setting η selection's setting (``wddp.cv.scope: per_setting``, spec E3.3, E7 #15):
#: (experiment, m, ε, u); m None = the centralised ε-sweep
Setting = tuple[str, int | None, float, int | None]


def eta_for(
    etas: dict[tuple[Any, ...], tuple[float, str]], mechanism: str, mode: str, accountant: str,
    setting: Setting | None = None, rep: int | None = None,
) -> tuple[float, str]:
    """(η, source) of a (mechanism, mode) under ``accountant`` at ``setting`` (the per-setting
    selection where there is one, else the (mechanism, mode)'s own, else its default); with
    ``rep``, repetition ``rep``'s own selection first (a split per repetition, issue 60)."""
    for prefix in ([("rep", rep), ()] if rep is not None else [()]):
        if setting is not None:
            found = (etas.get((*prefix, mechanism, mode, accountant, *setting))
                     or etas.get((*prefix, mechanism, mode, *setting)))
            if found is not None:
                return found
        found = etas.get((*prefix, mechanism, mode, accountant)) or etas.get((*prefix, mechanism, mode))
        if found is not None:
            return found
    if rep is not None and any(k[:1] == ("rep",) for k in etas):
        raise KeyError(f"the η table has no selection of repetition {rep} for {mechanism}/{mode}: it "
                       "was written for fewer repetitions (wddp.reps); rebuild it")
    return etas[(mechanism, mode)]


def runs_for_job(cfg: dict[str, Any], job: Job, etas: dict[tuple[Any, ...], tuple[float, str]]) -> list[RunSpec]:
    """The runs of ``job``; ``etas`` maps (mechanism, mode[, accountant][, setting]) to (η, source),
    each key preceded by ``("rep", r)`` for a repetition's own selection (issue 60)
    (:func:`mpdp.studies.wddp.cv.eta_lookup`; looked up by :func:`eta_for`, so repetition r's runs
    use η_r where the table has one).

    A u-sweep job's runs cover every u of its grid (``run.u``), u by u. Centralised jobs (the
    ε-sweep's and every u-sweep job, per u) also hold the non-private GD reference (spec M1b)
    when ``wddp.nonprivate_reference`` is on, at the step of :func:`reference_eta`.
    """
    w = cfg["wddp"]
    reps = range(w["reps"])
    eps_values = w["eps_grid"] if job.experiment == "eps_sweep" else [job.eps]
    if job.experiment == "eps_sweep":
        keys = [("wyx", "central")] if job.m is None else [k for k in method_keys(cfg) if k[0] != "wyx"]
    else:
        keys = method_keys(cfg)
    runs = []
    for u in job_unevenness(cfg, job):
        for mechanism, mode in keys:
            for accountant in accountants_for(cfg, mechanism, mode):
                for eps in eps_values:
                    # η selected at this setting (cv.scope per_setting), else for this accountant
                    # (cv.per_accountant), else for the (mechanism, mode); per repetition where selected so
                    setting = (job.experiment, job.m, float(eps), u)
                    chosen = [eta_for(etas, mechanism, mode, accountant, setting, rep) for rep in reps]
                    runs += _repetitions(cfg, job, u, mechanism, mode, accountant, float(eps), chosen)
        if w["nonprivate_reference"] and ("wyx", "central") in keys:
            chosen = [reference_eta(cfg, etas.get(("rep", rep, "wyx", "central")) or etas[("wyx", "central")])
                      for rep in reps]
            runs += _repetitions(cfg, job, u, "nonprivate", "central", "none", float("inf"), chosen)
    return runs


def reference_eta(cfg: dict[str, Any], private: tuple[float, str]) -> tuple[float, str]:
    """(η, source) of the non-private GD reference (spec M1b) [REC ``wddp.reference_step``].

    ``private``: M1b as written, WYX's η (``private``: the selected (η, source)). That η is
    chosen for noisy GD at the CV's ε and can be far too small for noise-free GD to reach θ*
    in T steps (Breast Cancer: η = 0.01, T = 1000 leaves a gap of 0.3 in L_D and the
    majority-class accuracy, issue 33 §5). ``inverse_smoothness`` (default): the step of
    B1, η = 1/L with L = R²/4 + λ the smoothness of L_D for rows of norm ≤ R = 1 (spec E1.3
    row normalisation), source ``smoothness``; gradient descent at 1/L decreases L_D
    monotonically. Its convergence is checked, not assumed: the reference rows' ``optimal_gap``
    against ``wddp.reference_gap_tol`` (:mod:`mpdp.studies.wddp.reference`).
    """
    w = cfg["wddp"]
    if w["reference_step"] == "private":
        return private
    return 1.0 / (0.25 + float(w["lambda"])), "smoothness"


#: (mechanism, mode) -> the (mechanism, mode) it is identical to in distribution (spec M3.2:
#: per-round WD-DP's aggregate gradient is the pooled one, so it is Wang–Ye–Xu). Such runs
#: draw their twin's noise stream and share its η selection (cv.py).
IDENTICAL_TO: dict[tuple[str, str], tuple[str, str]] = {("wddp", "per_round"): ("wyx", "central")}


def noise_twin(mechanism: str, mode: str, experiment: str, m: int | None) -> tuple[str, str, int | None] | None:
    """``RunSpec.noise_as`` of a run: its twin's (mechanism, mode, m), or None.

    The centralised twin of an ε-sweep has no m (it does not depend on the partition); in a
    u-sweep it has the job's m (the two-group design drops leftover records).
    """
    twin = IDENTICAL_TO.get((mechanism, mode))
    if twin is None:
        return None
    return (*twin, None if experiment == "eps_sweep" else m)


def _repetitions(
    cfg: dict[str, Any], job: Job, u: int | None, mechanism: str, mode: str, accountant: str,
    eps: float, chosen: list[tuple[float, str]],
) -> list[RunSpec]:
    """The runs of one (mechanism, mode, accountant, ε) in every repetition; ``chosen[rep]``:
    repetition rep's (η, source)."""
    w = cfg["wddp"]
    twin = noise_twin(mechanism, mode, job.experiment, job.m)
    return [
        RunSpec(
            dataset=job.dataset, experiment=job.experiment, mechanism=mechanism, mode=mode,
            accountant=accountant, epsilon=eps, delta=float(w["delta"]), rep=rep, eta=float(eta),
            T=int(w["T"]), lam=float(w["lambda"]), G=float(w["G"]), m=job.m, u=u,
            noise_sharing=w["noise_sharing"] if mode == "local_then_aggregate" else "n/a",
            eta_source=source, noise_as=twin,
        )
        for rep, (eta, source) in zip(range(w["reps"]), chosen, strict=True)
    ]


#: training-split sizes (n, p) of the paper's data sets after preparation (spec E1.2; p
#: measured on the mirrored files), used when data/processed has no card yet
PAPER_SHAPES: dict[str, tuple[int, int]] = {
    ds: info.paper_shape for ds, info in DATASETS.items() if info.paper_shape is not None
}


def job_run_count(cfg: Mapping[str, Any], job: Job) -> int:
    """The number of runs :func:`runs_for_job` gives ``job``, counted without listing them (planning
    stays fast for any ``wddp.reps``, issue 58): per u, each (mechanism, mode)'s accountants × the
    job's ε values, plus the non-private reference, times the repetitions."""
    w = cfg["wddp"]
    eps_count = len(w["eps_grid"]) if job.experiment == "eps_sweep" else 1
    if job.experiment == "eps_sweep":
        keys = [("wyx", "central")] if job.m is None else [k for k in method_keys(cfg) if k[0] != "wyx"]
    else:
        keys = method_keys(cfg)
    per_u = sum(len(accountants_for(cfg, mech, mode)) for mech, mode in keys) * eps_count
    per_u += int(bool(w["nonprivate_reference"]) and ("wyx", "central") in keys)
    return per_u * len(job_unevenness(cfg, job)) * int(w["reps"])


def job_workload(cfg: dict[str, Any], job: Job, n: int, p: int) -> tuple[int, float]:
    """Runs of a training job and the flops of their products on ``n × p`` training data
    (4·n·p per run-step, spec E8; a literal-mode run's parties together hold the n rows)."""
    count = job_run_count(cfg, job)
    return count, count * 4.0 * cfg["wddp"]["T"] * n * p


def job_priority(cfg: dict[str, Any], dataset: str, job_id: str) -> int:
    """Scheduling priority of a training job: its flops in GFLOP (:data:`PAPER_SHAPES`), so that
    Snakemake starts the longest jobs first and no long job is left running alone at the end
    (longest-processing-time order; issue 12). Data sets without a known shape get 0."""
    n, p = PAPER_SHAPES.get(dataset, (0, 0))
    return int(job_workload(cfg, parse_job_id(dataset, job_id), n, p)[1] / 1e9)


def selection_groups(cfg: dict[str, Any]) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """Representative (mechanism, mode) -> the (mechanism, mode) pairs sharing its selection."""
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for key in method_keys(cfg):
        groups.setdefault(IDENTICAL_TO.get(key, key), []).append(key)
    return groups


def reference_accountant(cfg: dict[str, Any]) -> str:
    """The accountant of the selection when ``cv.per_accountant`` is off."""
    return next(a for a in cfg["wddp"]["accountants"] if a not in JAYARAMAN_ONLY)


def selection_accountants(cfg: dict[str, Any], members: list[tuple[str, str]]) -> list[str]:
    """Accountants a group is selected under (every one its members train with, or one)."""
    if not cfg["wddp"]["cv"].get("per_accountant", False):
        return [reference_accountant(cfg)]
    accs = [a for mech, mode in members for a in accountants_for(cfg, mech, mode)]
    return list(dict.fromkeys(accs))


def cv_run_count(cfg: dict[str, Any], dataset: str | None = None) -> int:
    """Training runs of one data set's CV (all folds, :mod:`mpdp.studies.wddp.cv`): for the grid-cost
    projection. ``cv.scope: per_setting`` adds one selection per setting of ``dataset``
    (:func:`mpdp.studies.wddp.cv.cv_settings`: every group at a setting with parties, the
    Wang–Ye–Xu group alone at a centralised one)."""
    w = cfg["wddp"]
    cv = w["cv"]

    def runs(groups: list[list[tuple[str, str]]]) -> int:
        per_fold = sum(len(selection_accountants(cfg, members)) * len(members) * cv["seeds"]
                       for members in groups) * len(w["eta_grid"])
        return per_fold * cv["folds"]

    groups = list(selection_groups(cfg).values())
    total = runs(groups)
    if cv["scope"] == "per_setting":
        central = runs([members for members in groups if ("wyx", "central") in members])
        u_grid = w["u_grid"].get(dataset, []) if dataset is not None else []
        with_parties = len(w["m_grid"]) * len(w["eps_grid"]) + len(w["u_settings"]) * len(u_grid)
        total += len(w["eps_grid"]) * central + with_parties * runs(groups)
    return total


def dataset_workload(cfg: dict[str, Any], dataset: str, n: int, p: int) -> tuple[float, float]:
    """Runs and flops of one data set's training jobs and CV on ``n × p`` training data
    (4·n·p flops per run-step, E8; a CV run trains on all folds but one)."""
    w = cfg["wddp"]
    runs = flops = 0.0
    for job in jobs(cfg, dataset):
        count, job_flops = job_workload(cfg, job, n, p)
        runs += count
        flops += job_flops
    if w["eta"] is None:
        cv_runs = cv_run_count(cfg, dataset)
        runs += cv_runs
        flops += cv_runs * 4.0 * w["T"] * n * p * (1 - 1 / w["cv"]["folds"])
    return runs, flops


def setup_priority(cfg: dict[str, Any], dataset: str) -> int:
    """Scheduling priority of a data set's θ* and CV jobs: all the training work they gate, in
    GFLOP (incl. the CV's own), so that they run before any training job (whose priority is its
    own share of that work, :func:`job_priority`). Otherwise a data set's CV left for last
    keeps every core but one idle while it runs, and its jobs then finish together (issue 12)."""
    n, p = PAPER_SHAPES.get(dataset, (0, 0))
    return int(dataset_workload(cfg, dataset, n, p)[1] / 1e9)


def grid_workload(cfg: dict[str, Any], shapes: dict[str, tuple[int, int]]) -> dict[str, float]:
    """Runs and flops of the config's training grid incl. CV (4·n·p flops per run-step, E8)."""
    runs = flops = 0.0
    for ds in cfg["datasets"]:
        ds_runs, ds_flops = dataset_workload(cfg, ds, *shapes[ds])
        runs += ds_runs
        flops += ds_flops
    return {"runs": runs, "flops": flops}
