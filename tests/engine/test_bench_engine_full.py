"""``perf/bench_engine.py --full`` sums what the training stage recorded (issue 12)."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pandas as pd
import pytest

BENCH = Path(__file__).resolve().parents[2] / "perf" / "bench_engine.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_engine", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_training_work_sums_recorded_flops_and_fresh_job_times(bench, tmp_path: Path) -> None:
    results = tmp_path / "data" / "results" / "wddp"
    (results / "eta").mkdir(parents=True)
    pd.DataFrame({"flops": [1e9, 2e9], "accuracy": [0.5, 0.6]}).to_parquet(results / "adult.parquet")
    pd.DataFrame({"flops": [4e9]}).to_parquet(results / "bank.parquet")
    (results / "eta" / "adult.json").write_text(json.dumps({"source": "cv", "arithmetic_flops": 8e9}))
    (results / "eta" / "bank.json").write_text(json.dumps({"source": "config"}))  # η fixed: no CV
    bench_dir = tmp_path / "data" / "benchmarks"
    for rule, name, seconds in (("train/adult", "eps_m2", 3.0), ("train/bank", "eps_m2", 5.0),
                                ("optimum", "adult", 2.0), ("learning_rates", "adult", 7.0),
                                ("train/adult", "stale", 100.0)):
        path = bench_dir / rule / f"{name}.tsv"
        path.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame({"s": [seconds], "h:m:s": ["0:00:01"]}).to_csv(path, sep="\t", index=False)
    os.utime(bench_dir / "train" / "adult" / "stale.tsv", (1000.0, 1000.0))  # an earlier run's
    flops, seconds = bench.training_work(tmp_path, since=2000.0)
    assert flops == pytest.approx(15e9)
    assert seconds == {"optimum": 2.0, "learning_rates": 7.0, "train_job": 8.0}


def test_measure_peak_prints_every_width_and_returns_the_best(bench, capsys) -> None:
    import argparse

    import numpy as np

    X = np.random.default_rng(0).standard_normal((256, 8)).astype(np.float32)
    args = argparse.Namespace(steps=1, repeats=2, seed=0, cores=2)
    alone, together = bench.measure_peak(X, args, "after")
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(bench.PEAK_K)
    assert all(line.split()[0] == "after" and f"K={K:4d}:" in line
               for line, K in zip(lines, bench.PEAK_K, strict=True))
    printed = [float(line.split(":")[1].split()[0]) for line in lines]  # one core alone, per K
    # printed with one decimal in GFLOP/s: equal to within half of its last digit
    assert alone > 0 and together > 0 and alone == pytest.approx(max(printed) * 1e9, abs=0.05e9)


def test_full_reports_the_provenance_of_the_timed_rows(bench, tmp_path: Path) -> None:
    results = tmp_path / "data" / "results" / "wddp"
    results.mkdir(parents=True)
    fused = {"engine_path": "fused", "isa": "avx512", "layout_rule": "shape-v1",
             "noise_source": "compiled-stream"}
    pd.DataFrame([fused, fused]).to_parquet(results / "adult.parquet")
    pd.DataFrame({"flops": [1.0]}).to_parquet(results / "bank.parquet")  # earlier code's table
    text = bench.training_provenance(tmp_path)
    assert "2 of 3 rows: `fused`" in text and "bit-identical" in text and "do not record" in text
    assert "adult          fused / avx512 / shape-v1 / compiled-stream: 2 rows" in text
