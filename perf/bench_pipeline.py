"""Whole-pipeline benchmark (issue 36): build a config from a clean clone and say where the time went.

```bash
MPDP_DATA_MIRROR=../shared/datasets python perf/bench_pipeline.py                  # full config, ~1 h
python perf/bench_pipeline.py --configfile config/smoke.yaml --config 'datasets=[breast_cancer]'
python perf/bench_pipeline.py --analyse-only DIR   # re-read a finished build in DIR
```

1. ``git clone`` of HEAD into a temporary folder (or ``--workdir``), the compiled kernel built
   there (``setup.py build_ext --inplace``) and ``PYTHONPATH=<clone>/src``, so the build runs
   the committed code, not the working tree; the raw data from the mirror (``--mirror`` or
   ``$MPDP_DATA_MIRROR``), untimed.
2. ``snakemake --cores N --configfile ...`` in the clone, timed (wall clock), output in
   ``<clone>/bench_pipeline.snakemake.log``.
3. Reads what the build left:

   * **job times** (start, end, rule, threads, inputs, outputs of *every* job) from
     Snakemake's own log, ``.snakemake/log/*.snakemake.log``: each job is announced with a
     ``[date]`` line, its rule and ``jobid:``, and ``Finished jobid: N`` follows with its own
     ``[date]`` line. This covers the jobs without a ``benchmark:`` file too (figures, collects,
     the report), but only to the second;
   * **CPU seconds and peak memory** from the ``benchmark:`` files ``data/benchmarks/**.tsv``
     (rule by folder, grouped into stages). Snakemake samples a job's CPU time every 0.5 s for
     its first 15 s, then every 30 s, and keeps the last sample: the ``cpu_time`` column misses
     up to 30 s of every longer job (``s``, the wall time, is exact). Both are printed.

4. Prints the wall time, CPU and job wall time per stage, the critical path, the idle core time
   and a timeline of idle cores, and writes ``bench_pipeline.json`` and ``bench_pipeline.md``
   (``--out``, default: the clone).

**Critical path.** Two readings, both from the log: *dependency path*, the longest chain of
jobs through the DAG (edges: a job's input is another job's output) weighted by the measured
job wall times, i.e. the wall time with unlimited cores; *as-run chain*, from the last job
backwards, each job's predecessor being the dependency that finished last before it started,
or, where none finished within ``--slack`` seconds of its start, the job that freed its core
(the job waited for a core, not for data).

**Idle cores.** ``cores x wall - sum(threads x job wall)``: the core-seconds no job used
(Snakemake's own planning before the first job included), and every interval in which fewer
than ``cores`` threads ran.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MIRROR_ENV = "MPDP_DATA_MIRROR"
#: rule -> stage of the issue-36 table (rules not named here are their own stage)
STAGES = {
    "fetch_raw": "data", "prepare": "data", "prepare_multiclass": "data", "partition": "data",
    "optimum": "θ*", "learning_rates": "learning rates",
    "train_job": "WD-DP training", "collect_results": "WD-DP training",
    "voting_train": "voting", "admm_job": "ADMM study", "admm_collect": "ADMM study",
    "benchmark_budgets": "cross-paper benchmark", "benchmark_job": "cross-paper benchmark",
    "benchmark_collect": "cross-paper benchmark",
    "benchmark_ranking": "cross-paper benchmark",
    "ls_experiment": "ls", "ls_experiment_1": "ls", "ls_negative_closed_form": "ls",
    "audit_table": "audit",
    "figure": "figures", "noise_diagnostics": "figures", "voting_figure": "figures",
    "admm_figure": "figures", "admm_fit_table": "figures", "benchmark_figure": "figures",
    "ls_figure": "figures", "audit_figure": "figures", "figures_batch": "figures",
    "report_html": "report",
}
#: folder under data/benchmarks/ -> the rule whose ``benchmark:`` files it holds
BENCHMARK_DIRS = {
    "prepare": "prepare", "optimum": "optimum", "learning_rates": "learning_rates",
    "train": "train_job", "voting": "voting_train", "admm_job": "admm_job",
    "benchmark": "benchmark_job", "ls": "ls_experiment", "audit": "audit_table",
}
_DATE = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
_RULE = re.compile(r"^(?:local)?(?:rule|checkpoint) (\w+):$")
_FINISHED = re.compile(r"^Finished jobid: (\d+)")
_FIELD = re.compile(r"^\s+(\w+): (.*)$")


@dataclass
class Job:
    """One job of the build, as Snakemake's log reports it (times in seconds since the start)."""

    jobid: int
    rule: str
    start: float
    end: float | None = None
    threads: int = 1
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    wildcards: str = ""
    log: str = ""
    #: from the job's own log (mpdp.pipeline.runner.run_step's last line): exact, unlike cpu_time
    on_cpu: float | None = None
    waiting: float | None = None
    neither: float | None = None

    @property
    def wall(self) -> float:
        return (self.end if self.end is not None else self.start) - self.start

    @property
    def name(self) -> str:
        return f"{self.rule}[{self.wildcards}]" if self.wildcards else self.rule


def _files(value: str) -> list[str]:
    return [f.strip() for f in value.split(",") if f.strip()]


def parse_log(text: str) -> tuple[float, list[Job]]:
    """(epoch of the log's first timestamp, the jobs) from a Snakemake log's text."""
    jobs: dict[int, Job] = {}
    now = origin = None
    pending: Job | None = None
    for line in text.splitlines():
        date = _DATE.match(line.strip())
        if date:
            now = dt.datetime.strptime(date.group(1), "%a %b %d %H:%M:%S %Y").timestamp()
            origin = now if origin is None else origin
            pending = None
            continue
        rule = _RULE.match(line.strip())
        if rule and now is not None:
            pending = Job(jobid=-1, rule=rule.group(1), start=now - origin)
            continue
        fin = _FINISHED.match(line.strip())
        if fin and now is not None:
            job = jobs.get(int(fin.group(1)))
            if job is not None:
                job.end = now - origin
            continue
        fld = _FIELD.match(line)
        if pending is not None and fld:
            key, value = fld.groups()
            if key == "jobid":
                pending.jobid = int(value)
                jobs[pending.jobid] = pending
            elif key == "input":
                pending.inputs = _files(value)
            elif key == "output":
                pending.outputs = _files(value)
            elif key == "threads":
                pending.threads = int(value)
            elif key == "wildcards":
                pending.wildcards = value.strip()
            elif key == "log":
                pending.log = _files(value)[0] if _files(value) else ""
    return (origin or 0.0), [j for j in jobs.values() if j.end is not None]


_SPLIT = re.compile(r"done in [\d.]+ s \(on a CPU ([\d.]+) s, waiting for a free core ([\d.]+) s, neither ([\d.]+) s\)")
_PROCESS_SPLIT = re.compile(r"the process since it started: [\d.]+ s \(on a CPU ([\d.]+) s, waiting for a free core "
                            r"([\d.]+) s, neither ([\d.]+) s\)")


def read_job_splits(root: Path, jobs: list[Job]) -> None:
    """Fill each job's on-CPU / waiting-for-a-core / neither seconds from its log file's last
    ``done in`` line (mpdp.pipeline.runner.run_step; /proc/self/schedstat of the job's process): the
    whole process's split where the line has it (imports included), else the step's. Child
    processes of a job (the report's notebook kernel) count as ``neither``."""
    for job in jobs:
        path = root / job.log if job.log else None
        if path is None or not path.is_file():
            continue
        text = path.read_text(errors="replace")
        found = _PROCESS_SPLIT.findall(text) or _SPLIT.findall(text)
        if found:
            job.on_cpu, job.waiting, job.neither = map(float, found[-1])


def dependencies(jobs: list[Job]) -> dict[int, list[int]]:
    """jobid -> the jobids whose outputs it reads (jobs of this build only)."""
    producer = {out: j.jobid for j in jobs for out in j.outputs}
    return {j.jobid: sorted({producer[f] for f in j.inputs if f in producer} - {j.jobid}) for j in jobs}


def dependency_path(jobs: list[Job]) -> list[Job]:
    """The longest chain through the DAG, weighted by job wall time (wall with unlimited cores)."""
    by_id = {j.jobid: j for j in jobs}
    deps = dependencies(jobs)
    best: dict[int, tuple[float, int | None]] = {}
    for job in sorted(jobs, key=lambda j: (j.end, j.start)):  # a dependency ends before its job
        prev = max(((best[d][0], d) for d in deps[job.jobid] if d in best), default=(0.0, None))
        best[job.jobid] = (prev[0] + job.wall, prev[1])
    if not best:
        return []
    cur: int | None = max(best, key=lambda k: best[k][0])
    path = []
    while cur is not None:
        path.append(by_id[cur])
        cur = best[cur][1]
    return path[::-1]


def as_run_chain(jobs: list[Job], slack: float = 2.0) -> list[tuple[Job, str]]:
    """From the last job back, in running order: each job with what it started after — 'data'
    (its input's job had just finished), 'core' (a job had just freed a core) or 'start'
    (nothing finished just before it: the first jobs of the build)."""
    if not jobs:
        return []
    by_id = {j.jobid: j for j in jobs}
    deps = dependencies(jobs)
    cur = max(jobs, key=lambda j: (j.end, j.wall))
    chain = [(cur, "start")]
    seen = {cur.jobid}
    while True:
        waited = [by_id[d] for d in deps[cur.jobid] if by_id[d].end <= cur.start + slack]
        data = max(waited, key=lambda j: j.end, default=None)
        if data is not None and data.end >= cur.start - slack:
            nxt, why = data, "data"
        else:
            freed = [j for j in jobs if j.jobid not in seen and cur.start - slack <= j.end <= cur.start + slack]
            if not freed:
                break
            nxt, why = max(freed, key=lambda j: j.end), "core"
        chain[-1] = (cur, why)
        chain.append((nxt, "start"))
        seen.add(nxt.jobid)
        cur = nxt
    return chain[::-1]


def busy_profile(jobs: list[Job]) -> list[tuple[float, float, int]]:
    """(from, to, threads running) intervals covering the first start to the last end."""
    events = sorted([(j.start, j.threads) for j in jobs] + [(j.end, -j.threads) for j in jobs])
    out, running, last = [], 0, None
    for t, delta in events:
        if last is not None and t > last:
            out.append((last, t, running))
        running += delta
        last = t
    return out


def idle_intervals(jobs: list[Job], cores: int, wall: float, min_seconds: float = 1.0) -> list[dict]:
    """Intervals (merged) in which fewer than ``cores`` threads ran, with idle core-seconds."""
    intervals = list(busy_profile(jobs))
    if jobs:
        first, last = min(j.start for j in jobs), max(j.end for j in jobs)
        intervals = [(0.0, first, 0), *intervals, (last, max(wall, last), 0)]
    out: list[dict] = []
    for a, b, running in intervals:
        if b <= a or running >= cores:
            continue
        idle = (cores - running) * (b - a)
        if out and abs(out[-1]["to"] - a) < 1e-9:
            out[-1]["to"] = b
            out[-1]["idle_core_s"] += idle
            out[-1]["min_running"] = min(out[-1]["min_running"], running)
        else:
            out.append({"from": a, "to": b, "idle_core_s": idle, "min_running": running})
    return [o for o in out if o["to"] - o["from"] >= min_seconds]


def read_benchmarks(root: Path, since: float = 0.0) -> list[dict]:
    """Rows of ``root/data/benchmarks/**.tsv`` written since ``since`` (epoch), with their rule."""
    rows = []
    base = root / "data" / "benchmarks"
    for path in sorted(base.rglob("*.tsv")):
        if path.stat().st_mtime < since:
            continue
        folder = path.relative_to(base).parts[0]
        rule = BENCHMARK_DIRS.get(folder, folder)
        with path.open() as fh:
            for rec in csv.DictReader(fh, delimiter="\t"):
                rows.append({"file": str(path.relative_to(root)), "rule": rule, "stage": STAGES.get(rule, rule),
                             "s": _num(rec.get("s")), "cpu_time": _num(rec.get("cpu_time")),
                             "max_rss_mb": _num(rec.get("max_rss"))})
    return rows


def _num(value: str | None) -> float | None:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def summarise(jobs: list[Job], bench_rows: list[dict], cores: int, wall: float, slack: float = 2.0) -> dict:
    """Everything the report prints, as plain data (JSON)."""
    stages: dict[str, dict] = defaultdict(lambda: {"jobs": 0, "job_wall_s": 0.0, "cpu_s": None,
                                                   "bench_wall_s": None, "max_rss_mb": None,
                                                   "on_cpu_s": None, "waiting_s": None, "neither_s": None})
    for job in jobs:
        st = stages[STAGES.get(job.rule, job.rule)]
        st["jobs"] += 1
        st["job_wall_s"] += job.wall * job.threads
        for key, value in (("on_cpu_s", job.on_cpu), ("waiting_s", job.waiting), ("neither_s", job.neither)):
            if value is not None:
                st[key] = (st[key] or 0.0) + value
    for row in bench_rows:
        st = stages[row["stage"]]
        for key, col in (("cpu_s", "cpu_time"), ("bench_wall_s", "s")):
            if row[col] is not None:
                st[key] = (st[key] or 0.0) + row[col]
        if row["max_rss_mb"] is not None:
            st["max_rss_mb"] = max(st["max_rss_mb"] or 0.0, row["max_rss_mb"])
    used = sum(j.wall * j.threads for j in jobs)
    dep = dependency_path(jobs)
    chain = as_run_chain(jobs, slack)
    idle = idle_intervals(jobs, cores, wall)
    return {
        "cores": cores,
        "wall_s": wall,
        "jobs": len(jobs),
        "job_core_s": used,
        "idle_core_s": cores * wall - used,
        "idle_fraction": (cores * wall - used) / (cores * wall) if wall > 0 else 0.0,
        "stages": dict(sorted(stages.items(), key=lambda kv: -kv[1]["job_wall_s"])),
        "peak_rss_mb": max((r["max_rss_mb"] for r in bench_rows if r["max_rss_mb"] is not None), default=None),
        "dependency_path": [{"job": j.name, "start": j.start, "end": j.end, "wall": j.wall} for j in dep],
        "dependency_path_s": sum(j.wall for j in dep),
        "as_run_chain": [{"job": j.name, "start": j.start, "end": j.end, "wall": j.wall, "after": why}
                         for j, why in chain],
        "idle_intervals": idle,
    }


def _mmss(seconds: float) -> str:
    return f"{int(seconds // 60)}:{seconds % 60:04.1f}"


def markdown(summary: dict, header: list[str], tail_minutes: float = 15.0) -> str:
    """The summary as the markdown printed and written to bench_pipeline.md."""
    s = summary
    lines = [*header, "",
             f"**wall {s['wall_s'] / 60:.1f} min** on {s['cores']} cores; {s['jobs']} jobs, "
             f"{s['job_core_s'] / 60:.1f} core-min in jobs; **idle {s['idle_core_s'] / 60:.1f} core-min** "
             f"({100 * s['idle_fraction']:.0f} % of cores x wall); peak job RSS "
             + (f"{s['peak_rss_mb']:.0f} MB" if s["peak_rss_mb"] is not None else "n/a")
             + " (benchmarked jobs only)", "",
             *([f"Snakemake's own process: {s['snakemake_process_cpu_s']:.0f} CPU s (jobs not included)"]
               if s.get("snakemake_process_cpu_s") is not None else []),
             *([("machine-wide during the run (/proc/stat, every process, CPU s): "
                 + ", ".join(f"{k} {v:.0f}" for k, v in s["machine_cpu_s"].items() if v >= 0.5))]
               if s.get("machine_cpu_s") else []),
             "",
             "| stage | jobs | job wall (core-s, log) | wall (s, benchmark files) | CPU s (benchmark files) "
             "| max RSS MB | on a CPU s (job logs) | waiting for a core s | neither s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, st in s["stages"].items():
        fmt = [f"{st[k]:.0f}" if st[k] is not None else "–"
               for k in ("bench_wall_s", "cpu_s", "max_rss_mb", "on_cpu_s", "waiting_s", "neither_s")]
        lines.append(f"| {name} | {st['jobs']} | {st['job_wall_s']:.0f} | {' | '.join(fmt)} |")
    lines += ["", f"Dependency path (wall with unlimited cores): **{s['dependency_path_s'] / 60:.1f} min**", "",
              "| job | start | end | wall s |", "|---|---|---|---|"]
    lines += [f"| {j['job']} | {_mmss(j['start'])} | {_mmss(j['end'])} | {j['wall']:.0f} |" for j in s["dependency_path"]]
    lines += ["", "As-run chain (from the last job backwards; started after: `data`, its input's job "
              "finished; `core`, a job freed a core; `start`, nothing finished just before):", "",
              "| job | started after | start | end | wall s |", "|---|---|---|---|---|"]
    lines += [f"| {j['job']} | {j['after']} | {_mmss(j['start'])} | {_mmss(j['end'])} | {j['wall']:.0f} |"
              for j in s["as_run_chain"]]
    since = s["wall_s"] - 60 * tail_minutes
    tail = [i for i in s["idle_intervals"] if i["to"] >= since]
    lines += ["", f"Idle cores in the last {tail_minutes:.0f} min (intervals of ≥ 1 s with fewer than "
              f"{s['cores']} threads running):", "", "| from | to | threads running (min) | idle core-s |",
              "|---|---|---|---|"]
    lines += [f"| {_mmss(i['from'])} | {_mmss(i['to'])} | {i['min_running']} | {i['idle_core_s']:.0f} |" for i in tail]
    return "\n".join(lines) + "\n"


def snakemake_log(workdir: Path, since: float = 0.0) -> Path:
    """The newest ``.snakemake/log/*.snakemake.log`` of ``workdir`` (written since ``since``)."""
    logs = [p for p in (workdir / ".snakemake" / "log").glob("*.snakemake.log") if p.stat().st_mtime >= since]
    if not logs:
        raise SystemExit(f"bench_pipeline: no Snakemake log under {workdir}/.snakemake/log")
    return max(logs, key=lambda p: p.stat().st_mtime)


#: what the compiled kernel is built from (setup.py)
KERNEL_SOURCES = ("setup.py", "src/mpdp/engine/_gd_kernel.c", "src/mpdp/engine/_gd_kernel_simd.h",
                  "src/mpdp/engine/_normal_stream.c", "src/mpdp/engine/_ziggurat_tables.h")


def kernel_dir(workdir: Path) -> Path:
    """Where a checkout keeps the compiled kernel: the engine package (``src/mpdp/engine/``), or
    ``src/mpdp/`` in checkouts from before the engine became a package (e.g. a ``--commit``
    baseline)."""
    engine = workdir / "src" / "mpdp" / "engine"
    return engine if (engine / "kernel.py").is_file() else workdir / "src" / "mpdp"


def build_kernel(workdir: Path) -> None:
    """Put the compiled kernel into the clone's ``src/mpdp``: the installed one where it was built
    from the same sources (byte-identical files), else a fresh build by ``pip wheel``."""
    import mpdp.engine.kernel as fk

    installed = Path(fk.__file__).with_name(fk.LIBRARY)
    here = Path(fk.__file__).resolve().parents[3]
    if installed.is_file() and all((here / f).is_file() and (here / f).read_bytes() == (workdir / f).read_bytes()
                         for f in KERNEL_SOURCES):
        shutil.copy2(installed, kernel_dir(workdir) / fk.LIBRARY)
        return
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", tmp, str(workdir)],
                       check=True, capture_output=True)
        import zipfile

        (wheel,) = Path(tmp).glob("*.whl")
        with zipfile.ZipFile(wheel) as zf:
            (name,) = [n for n in zf.namelist() if n.rsplit("/", 1)[-1].startswith("libmpdp_kernel")]
            (kernel_dir(workdir) / name.rsplit("/", 1)[-1]).write_bytes(zf.read(name))


def prepare_clone(workdir: Path, env: dict[str, str], commit: str | None = None) -> str:
    """Clone HEAD into ``workdir`` (unless it is already a checkout), check out ``commit`` if
    given (e.g. the baseline before a change), and build the kernel there."""
    if not (workdir / "Snakefile").exists():
        subprocess.run(["git", "clone", "--quiet", str(REPO), str(workdir)], check=True)
    if commit:
        subprocess.run(["git", "-C", str(workdir), "checkout", "--quiet", commit], check=True)
    commit = subprocess.run(["git", "-C", str(workdir), "rev-parse", "HEAD"], check=True,
                            capture_output=True, text=True).stdout.strip()
    build_kernel(workdir)
    where = subprocess.run([sys.executable, "-c", "import mpdp, mpdp.engine.provenance as e; print(mpdp.__file__)"],
                           cwd=workdir, env=env, check=True, capture_output=True, text=True).stdout.strip()
    if not Path(where).resolve().is_relative_to(workdir.resolve()):
        raise SystemExit(f"bench_pipeline: mpdp imports from {where}, not from the clone {workdir}")
    return commit


def cpu_times() -> dict[str, float]:
    """Machine-wide CPU seconds by state from ``/proc/stat`` (user, system, idle, iowait, steal):
    ``steal`` is time the hypervisor gave this VM's vCPUs to others, ``idle`` time no process ran."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return {}
    tick = os.sysconf("SC_CLK_TCK")
    names = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
    return {n: int(v) / tick for n, v in zip(names, fields, strict=False)}


def run_watched(cmd: list[str], cwd: Path, env: dict[str, str], log: Path) -> tuple[int, float, float | None]:
    """Run ``cmd``; return (exit status, wall seconds, CPU seconds of the Snakemake process itself,
    its jobs not included: sampled every second with psutil, so up to 1 s short)."""
    try:
        import psutil
    except ImportError:  # pragma: no cover - Snakemake depends on psutil
        psutil = None
    t0 = time.monotonic()
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        own = None
        handle = psutil.Process(proc.pid) if psutil else None
        while proc.poll() is None:
            if handle is not None:
                try:
                    t = handle.cpu_times()
                    own = t.user + t.system
                except psutil.Error:
                    pass
            time.sleep(1.0)
    return proc.returncode, time.monotonic() - t0, own


def machine() -> str:
    name = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{name}, {os.cpu_count()} logical CPUs, load average before the run {os.getloadavg()[0]:.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--configfile", default="config/config.yaml", help="relative to the clone (default: full)")
    ap.add_argument("--config", nargs="*", default=[], help="passed to snakemake --config")
    ap.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--workdir", type=Path, help="clone here (kept) instead of a temporary folder")
    ap.add_argument("--commit", help="build this commit of the clone instead of HEAD (e.g. a baseline)")
    ap.add_argument("--mirror", default=os.environ.get(MIRROR_ENV), help=f"raw-data mirror (default ${MIRROR_ENV})")
    ap.add_argument("--out", type=Path, help="folder of bench_pipeline.json/.md (default: the clone if kept, else .)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary clone")
    ap.add_argument("--slack", type=float, default=2.0, help="seconds: 'waited for' tolerance (log is to 1 s)")
    ap.add_argument("--analyse-only", type=Path, metavar="DIR", help="only read the finished build in DIR")
    ap.add_argument("targets", nargs="*", help="snakemake targets (default: the default target)")
    args = ap.parse_args(argv)

    env = dict(os.environ)
    if args.mirror:
        env[MIRROR_ENV] = str(Path(args.mirror).resolve())
    if args.analyse_only:
        workdir, commit, started = args.analyse_only, "?", 0.0
        log_path = snakemake_log(workdir)
        origin, jobs = parse_log(log_path.read_text())
        wall = max((j.end for j in jobs), default=0.0)
        header = [f"# bench_pipeline: {workdir} (re-read; wall = last job's end)"]
    else:
        workdir = args.workdir or Path(tempfile.mkdtemp(prefix="mpdp-bench-"))
        env["PYTHONPATH"] = str((workdir / "src").resolve()) + os.pathsep + env.get("PYTHONPATH", "")
        commit = prepare_clone(workdir, env, args.commit)
        cmd = [sys.executable, "-m", "snakemake", *args.targets, "--cores", str(args.cores),
               "--configfile", args.configfile]
        if args.config:  # last: --config takes every word after it
            cmd += ["--config", *args.config]
        header = [f"# bench_pipeline: commit {commit[:12]}", "",
                  f"machine: {machine()}", f"command: {' '.join(cmd[1:])} (in a clone; mirror {env.get(MIRROR_ENV)})"]
        print("\n".join(header), flush=True)
        started = time.time()
        before = cpu_times()
        code, wall, snakemake_cpu = run_watched(cmd, workdir, env, workdir / "bench_pipeline.snakemake.log")
        after = cpu_times()
        if code != 0:
            tail = (workdir / "bench_pipeline.snakemake.log").read_text()[-3000:]
            print(f"bench_pipeline: snakemake exited {code}; its output's end:\n{tail}", file=sys.stderr)
            return code
        log_path = snakemake_log(workdir, since=started - 1)
        origin, jobs = parse_log(log_path.read_text())
        shift = origin - started  # the log's first timestamp after our clock's start (planning time)
        for job in jobs:
            job.start += shift
            job.end = (job.end or job.start) + shift
    if not jobs:
        raise SystemExit(f"bench_pipeline: no finished job found in {log_path}")
    read_job_splits(workdir, jobs)
    summary = summarise(jobs, read_benchmarks(workdir, since=started - 1), args.cores, wall, args.slack)
    if not args.analyse_only:
        summary["snakemake_process_cpu_s"] = snakemake_cpu
        summary["machine_cpu_s"] = {k: after[k] - before.get(k, 0.0) for k in after}
    summary.update(commit=commit, machine=machine(), snakemake_log=str(log_path),
                   job_list=[{**asdict(j), "inputs": None, "outputs": None} for j in jobs])
    text = markdown(summary, header)
    print(text)
    kept = args.workdir or args.keep or args.analyse_only
    out = args.out or (workdir if kept else Path.cwd())
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_pipeline.json").write_text(json.dumps(summary, indent=1, default=str))
    (out / "bench_pipeline.md").write_text(text)
    print(f"written: {out / 'bench_pipeline.json'}, {out / 'bench_pipeline.md'}")
    if not kept:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
