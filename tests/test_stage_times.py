"""``perf/stage_times.py``: the work per stage of two builds and its ratio (issue 60 item 3)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def _module():
    spec = importlib.util.spec_from_file_location("stage_times", REPO_ROOT / "perf" / "stage_times.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build(root: Path, jobs: dict[str, list[float]]) -> Path:
    for stage, times in jobs.items():
        for i, t in enumerate(times):
            path = root / "data" / "benchmarks" / stage / f"job{i}.tsv"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"s\tcpu_time\n{t / 2}\t{t}\n")
    return root


def test_sums_per_stage_and_ratios(tmp_path, capsys):
    st = _module()
    before = _build(tmp_path / "a", {"train": [10.0, 20.0], "optimum": [1.0]})
    after = _build(tmp_path / "b", {"train": [15.0, 30.0, 15.0], "optimum": [10.0], "cv": [4.0]})
    table = st.compare(st.stage_sums(before, "cpu_time"), st.stage_sums(after, "cpu_time"))
    assert table.loc["train", "ratio"] == pytest.approx(2.0)
    assert table.loc["optimum", "ratio"] == pytest.approx(10.0)
    assert table.loc["total", "sum_before"] == pytest.approx(31.0)
    assert table.loc["total", "ratio"] == pytest.approx(74.0 / 31.0)
    assert st.main([str(before), str(after), "--column", "s"]) == 0
    out = capsys.readouterr().out
    assert "| train | 15.0 | 30.0 | 2.00 | 2 → 3 |" in out and "| cv |" in out


def test_a_build_without_benchmarks_is_one_line(tmp_path):
    st = _module()
    with pytest.raises(SystemExit, match="holds no benchmark file"):
        st.stage_sums(tmp_path, "cpu_time")
