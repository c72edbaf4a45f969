"""Grid-edge warnings of the CV-chosen η (mpdp.studies.wddp.tuning_report)."""

import json
from pathlib import Path

import pandas as pd

from mpdp import config
from mpdp.studies.wddp.cv import cross_validate
from mpdp.studies.wddp.report import cv_scores
from mpdp.studies.wddp.tuning_report import eta_edge_sentence, eta_edge_warnings

ROOT = Path(__file__).resolve().parents[2]
GRID = [0.01, 0.1, 1.0]


def _chosen(*etas: float) -> pd.DataFrame:
    return pd.DataFrame([{"dataset": "adult", "mechanism": "wyx", "mode": "central", "accountant": acc,
                          "eta": eta} for acc, eta in zip(("ma16", "exact", "rdp"), etas, strict=False)])


def test_only_a_chosen_eta_on_an_edge_is_warned_about():
    warnings = eta_edge_warnings(_chosen(0.01, 0.1, 1.0), GRID)
    assert warnings[["setting", "value", "edge"]].values.tolist() == [
        ["adult, wyx/central, ma16", 0.01, "low"], ["adult, wyx/central, rdp", 1.0, "high"]]
    sentence = eta_edge_sentence(_chosen(0.01, 0.1), {"wddp": {"eta_grid": GRID}})
    assert sentence.startswith("**Warning") and "η = 0.01 (adult, wyx/central, ma16; low edge" in sentence
    assert eta_edge_sentence(_chosen(0.1), {"wddp": {"eta_grid": GRID}}).startswith("No tuned value")
    assert eta_edge_warnings(pd.DataFrame(), GRID).empty  # η fixed by the config: nothing tuned


def test_the_report_reads_the_warnings_from_a_real_eta_table(tmp_path, problem):
    X, y = problem
    cfg = config.load(ROOT / "config" / "smoke.yaml")
    cfg["wddp"].update(T=5, eta=None, eta_grid=GRID)
    cfg["wddp"]["cv"].update(folds=2, seeds=1, ref_m=2)
    (tmp_path / "eta").mkdir()
    (tmp_path / "eta" / "adult.json").write_text(json.dumps(cross_validate(cfg, "toy", X, y)))
    _, chosen = cv_scores({"adult": str(tmp_path / "adult.parquet")})
    warnings = eta_edge_warnings(chosen, GRID)
    on_edge = chosen[chosen["eta"].isin([GRID[0], GRID[-1]])]
    assert len(on_edge) and len(warnings) == len(on_edge) and set(warnings["value"]) == set(on_edge["eta"])
