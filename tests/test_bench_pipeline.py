"""``perf/bench_pipeline.py``: job times from Snakemake's log, critical path, idle cores (issue 36)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from workflow_helpers import REPO_ROOT, require_mirror

BENCH = REPO_ROOT / "perf" / "bench_pipeline.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_pipeline", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass resolves annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def _log(*entries: str) -> str:
    return "Building DAG of jobs...\nProvided cores: 2\n" + "\n".join(entries) + "\n"


def _start(t: str, rule: str, jobid: int, output: str, inputs: str = "", local: bool = False) -> str:
    lines = [f"[Thu Nov 26 10:{t} 2026]", f"{'local' if local else ''}rule {rule}:"]
    if inputs:
        lines.append(f"    input: {inputs}")
    lines += [f"    output: {output}", f"    log: logs/{rule}.log", f"    jobid: {jobid}",
              f"    reason: Missing output files: {output}", "    resources: tmpdir=/tmp", ""]
    return "\n".join(lines)


def _end(t: str, jobid: int, rule: str) -> str:
    return f"[Thu Nov 26 10:{t} 2026]\nFinished jobid: {jobid} (Rule: {rule})\n1 of 3 steps (33%) done"


# a (0-10 s) and b (0-30 s) at once; c reads a's output and runs 10-60 s: one core idles 30-60 s
LOG = _log(_start("00:00", "a", 1, "x.txt"), _start("00:00", "b", 2, "y.txt, y2.txt", local=True),
           _end("00:10", 1, "a"), _start("00:10", "c", 3, "z.txt", inputs="x.txt, raw.txt"),
           _end("00:30", 2, "b"), _end("01:00", 3, "c"))


def test_jobs_dependencies_and_critical_path_from_the_log(bench) -> None:
    origin, jobs = bench.parse_log(LOG)
    by_rule = {j.rule: j for j in jobs}
    assert {r: (j.start, j.end) for r, j in by_rule.items()} == {"a": (0, 10), "b": (0, 30), "c": (10, 60)}
    assert by_rule["b"].outputs == ["y.txt", "y2.txt"] and by_rule["c"].inputs == ["x.txt", "raw.txt"]
    assert bench.dependencies(jobs) == {1: [], 2: [], 3: [1]}
    assert [j.rule for j in bench.dependency_path(jobs)] == ["a", "c"]
    assert [(j.rule, why) for j, why in bench.as_run_chain(jobs)] == [("a", "start"), ("c", "data")]

    summary = bench.summarise(jobs, [], cores=2, wall=60.0)
    assert summary["job_core_s"] == pytest.approx(90.0)
    assert summary["idle_core_s"] == pytest.approx(30.0)
    assert summary["dependency_path_s"] == pytest.approx(60.0)
    assert summary["idle_intervals"] == [{"from": 30.0, "to": 60.0, "idle_core_s": 30.0, "min_running": 1}]
    text = bench.markdown(summary, ["# test"])
    assert "idle 0.5 core-min" in text and "| c | data | 0:10.0 | 1:00.0 | 50 |" in text


def test_a_job_that_waited_for_a_core_is_chained_to_the_job_that_freed_it(bench) -> None:
    log = _log(_start("00:00", "a", 1, "x.txt"), _end("00:10", 1, "a"), _start("00:10", "b", 2, "y.txt"),
               _end("00:30", 2, "b"))
    _, jobs = bench.parse_log(log)
    assert [(j.rule, why) for j, why in bench.as_run_chain(jobs)] == [("a", "start"), ("b", "core")]
    assert bench.dependency_path(jobs)[0].rule == "b"  # no edge: the longest single job
    summary = bench.summarise(jobs, [], cores=1, wall=35.0)  # 5 s after the last job: Snakemake's own
    assert summary["idle_core_s"] == pytest.approx(5.0)


def test_benchmark_files_grouped_by_stage(bench, tmp_path: Path) -> None:
    base = tmp_path / "data" / "benchmarks"
    rows = {"train/adult/eps_m2.tsv": (100.0, 80.0), "train/bank/u_m8.tsv": (50.0, 45.0),
            "learning_rates/adult.tsv": (60.0, 20.0), "admm_job/ring.tsv": (700.0, 690.0)}
    for rel, (s, cpu) in rows.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"s\th:m:s\tmax_rss\tcpu_time\n{s}\t0:01:00\t300.5\t{cpu}\n")
    stale = base / "optimum" / "adult.tsv"
    stale.parent.mkdir(parents=True)
    stale.write_text("s\th:m:s\tmax_rss\tcpu_time\n9\t0:00:09\t1\t9\n")
    os.utime(stale, (1000.0, 1000.0))  # an earlier build's file is not counted
    read = bench.read_benchmarks(tmp_path, since=2000.0)
    summary = bench.summarise([], read, cores=2, wall=1.0)
    stages = summary["stages"]
    assert stages["WD-DP training"]["cpu_s"] == pytest.approx(125.0)
    assert stages["WD-DP training"]["bench_wall_s"] == pytest.approx(150.0)
    assert stages["learning rates"]["cpu_s"] == pytest.approx(20.0)
    assert stages["ADMM study"]["bench_wall_s"] == pytest.approx(700.0)
    assert "θ*" not in stages and summary["peak_rss_mb"] == pytest.approx(300.5)


@pytest.mark.slow
def test_smoke_build_of_one_data_set_from_a_clone(tmp_path: Path) -> None:
    # the real thing, cheaply: a clone of HEAD, the smoke profile on one data set, 2 cores
    mirror = require_mirror()
    work, out = tmp_path / "clone", tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--configfile", "config/smoke.yaml", "--config", "datasets=[breast_cancer]",
         "--cores", "2", "--workdir", str(work), "--out", str(out), "--mirror", str(mirror)],
        capture_output=True, text=True, timeout=3600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = json.loads((out / "bench_pipeline.json").read_text())
    rules = {j["rule"] for j in summary["job_list"]}
    assert {"prepare", "train_job", "figure", "report_html"} <= rules
    assert summary["wall_s"] > 0 and summary["job_core_s"] > 0
    assert summary["idle_core_s"] == pytest.approx(2 * summary["wall_s"] - summary["job_core_s"])
    assert summary["dependency_path"][-1]["job"].startswith("report_html")
    assert summary["stages"]["WD-DP training"]["cpu_s"] > 0
    assert (out / "bench_pipeline.md").read_text().startswith("# bench_pipeline: commit")


def test_exact_cpu_split_from_the_job_logs(bench, tmp_path: Path) -> None:
    # mpdp.pipeline.runner.run_step's last line: on a CPU / waiting for a core / neither (schedstat)
    _, jobs = bench.parse_log(LOG)
    assert [j.log for j in jobs] == ["logs/a.log", "logs/b.log", "logs/c.log"]
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "c.log").write_text(
        "x INFO c: start\nx INFO c: done in 50.0 s (on a CPU 20.5 s, waiting for a free core 29.0 s, neither 0.5 s)\n")
    (tmp_path / "logs" / "b.log").write_text(  # with the process's totals (imports included): those count
        "x INFO b: done in 5.0 s (on a CPU 5.0 s, waiting for a free core 0.0 s, neither 0.0 s); the process since "
        "it started: 7.0 s (on a CPU 6.5 s, waiting for a free core 0.2 s, neither 0.3 s)\n")
    bench.read_job_splits(tmp_path, jobs)
    stages = bench.summarise(jobs, [], cores=2, wall=60.0)["stages"]
    assert (stages["c"]["on_cpu_s"], stages["c"]["waiting_s"], stages["c"]["neither_s"]) == (20.5, 29.0, 0.5)
    assert (stages["b"]["on_cpu_s"], stages["b"]["waiting_s"], stages["b"]["neither_s"]) == (6.5, 0.2, 0.3)
    assert stages["a"]["on_cpu_s"] is None  # no log line: unknown, not zero


def test_compare_builds_ignores_only_the_wall_time_columns(tmp_path: Path, capsys) -> None:
    import pandas as pd

    spec = importlib.util.spec_from_file_location("compare_builds", REPO_ROOT / "perf" / "compare_builds.py")
    compare = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compare)
    for name, seconds, acc in (("a", 1.0, 0.5), ("b", 2.0, 0.5), ("c", 1.0, 0.6)):
        table = tmp_path / name / "data" / "results" / "wddp" / "adult.parquet"
        table.parent.mkdir(parents=True)
        pd.DataFrame({"accuracy": [acc], "seconds": [seconds]}).to_parquet(table)
        fig = tmp_path / name / "reports" / "figures" / "fig01.png"
        fig.parent.mkdir(parents=True)
        fig.write_bytes(b"png")
    assert compare.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 0  # only the time differs
    assert compare.main([str(tmp_path / "a"), str(tmp_path / "c")]) == 1  # an accuracy differs
    (tmp_path / "b" / "reports" / "figures" / "fig01.png").write_bytes(b"png2")
    assert compare.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 1  # a figure's bytes differ
    assert "DIFFERENT: reports/figures/fig01.png" in capsys.readouterr().out
