"""Every output goes through mpdp.io.atomic_path: an interrupted write leaves the old file or none."""

from __future__ import annotations

import pandas as pd
import pytest

from mpdp import results


def _frame(n: int) -> pd.DataFrame:
    return results.to_frame([{"dataset": "adult", "experiment": "eps_sweep", "mechanism": "wyx",
                              "mode": "central", "epsilon": 0.1, "rep": r, "T": 5, "n": 10, "p": 3,
                              "delta": 1e-3, "eta": 0.1, "lambda": 1e-3, "G": 1.0} for r in range(n)])


def test_failed_results_write_keeps_the_old_table_and_leaves_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "t.parquet"
    results.write(_frame(2), path)

    def broken(self, target, **kwargs):
        with open(target, "wb") as out:
            out.write(b"PAR1 half a table")
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", broken)
    with pytest.raises(OSError, match="disk full"):
        results.write(_frame(3), path)
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.parquet"]
    assert len(results.read(path)) == 2


def test_results_write_uses_a_unique_temporary(tmp_path, monkeypatch):
    seen = []
    original = pd.DataFrame.to_parquet

    def spy(self, target, **kwargs):
        seen.append(target)
        return original(self, target, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_parquet", spy)
    path = tmp_path / "t.parquet"
    (tmp_path / "t.parquet.tmp").write_text("another writer's file")  # the old fixed name
    results.write(_frame(1), path)
    results.write(_frame(1), path)
    assert seen[0] != seen[1] and all(p.parent == tmp_path for p in seen)
    assert (tmp_path / "t.parquet.tmp").read_text() == "another writer's file"
    assert len(results.read(path)) == 1
