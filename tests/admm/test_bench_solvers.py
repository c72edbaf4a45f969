"""``perf/bench_solvers.py`` (issue 45) runs on tiny shapes and reports every section."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

PERF = Path(__file__).resolve().parents[2] / "perf"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(PERF))  # it imports bench_engine's helpers
    try:
        spec = importlib.util.spec_from_file_location("bench_solvers", PERF / "bench_solvers.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(PERF))


def test_reports_the_solvers_against_their_bounds(bench, monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(bench, "ADULT", tmp_path)  # no Adult: the synthetic problem
    monkeypatch.setattr(sys, "argv", ["bench_solvers.py", "--rows", "120", "--m", "2", "4", "--reps", "2",
                                      "--k", "3", "--repeats", "1", "--softmax-problems", "1",
                                      "--softmax-rows", "40", "--softmax-d", "12", "--classes", "3",
                                      "--models", "4", "--aux-rows", "50"])
    bench.main()
    out = capsys.readouterr().out
    assert out.startswith("machine: ")
    assert "SYNTHETIC" in out
    assert len(re.findall(r"^\(a\) ADMM stacked Newton-CG", out, re.M)) == 2
    ratios = [float(x) for x in re.findall(r"solver at (\d+)% of it", out)]
    assert len(ratios) == 3 and all(r > 0 for r in ratios)
    assert re.search(r"\(d\) voting softmax Newton: 1 problems of 40 rows x d' = 12, K = 3", out)
    assert re.search(r"^\(e\) voting predictions: 4 models x 3 classes on 50 rows x d = 12: .* of the bound; "
                     r"einsum \(former path\)", out, re.M)


def test_admm_problems_are_the_cells_partitions(bench, tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "ADULT", tmp_path)
    problems, scale, quad, lin, _ = bench.admm_problems(100, 4, 3, 5)
    assert len(problems) == 12 and sum(len(y) for _, y in problems) == 300
    assert scale.shape == quad.shape == (12, 5) and lin.shape == (12, problems[0][0].shape[1], 5)
    assert (quad > 0).all()
