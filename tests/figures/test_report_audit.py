"""The report's audit section: built from an audit table, exceptions listed in red."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from mpdp import config, results
from mpdp.audit.figure import render_audit_figure
from mpdp.audit.table import conform, write
from mpdp.report.build import render_report

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "report.py"


def _audit_rows() -> pd.DataFrame:
    base = {"method": "one_run", "dataset": "breast_cancer", "privacy_unit": "record",
            "noise_factor": 1.0, "eps_accounted_scope": "aggregate", "accountant": "exact",
            "delta": 1e-5, "beta": 0.05, "T": 50, "trials": 1000, "data": "synthetic fixture"}
    rows = [
        {**base, "mechanism": "wyx", "setting": "ok", "planted_bug": False, "eps_claimed": 1.0,
         "eps_accounted": 1.0, "eps_up": 1.0, "eps_lower": 0.4},
        {**base, "mechanism": "wddp_per_round", "setting": "broken-accounting", "planted_bug": False,
         "eps_claimed": 1.0, "eps_accounted": 1.0, "eps_up": 3.0, "eps_lower": 2.5},
        {**base, "mechanism": "wyx", "setting": "bug", "planted_bug": True, "noise_factor": 0.5,
         "eps_claimed": 1.0, "eps_accounted": 1.0, "eps_up": 2.15, "eps_lower": 1.2},
    ]
    return conform(pd.DataFrame(rows))


def test_audit_section_renders_with_red_exception(tmp_path, tables, unavailable):
    paths = {}
    for ds in ("kddcup99", "adult"):
        results.write(tables[ds], tmp_path / f"{ds}.parquet")
        paths[ds] = str(tmp_path / f"{ds}.parquet")
    context = {
        "config": config.load(ROOT / "config" / "smoke.yaml"),
        "invocation": {"cli_configfiles": ["config/smoke.yaml"], "config_args": [], "mirror": None},
        "results": paths,
        "cards": {"kddcup99": None, "adult": None},
        "unavailable": dict(unavailable),
        "figures": {},
        "benchmarks_dir": str(tmp_path / "benchmarks"),
        "repo_root": str(ROOT),
        "studies": {},
    }
    table = _audit_rows()
    write(table, tmp_path / "audit.parquet")
    render_audit_figure(table, tmp_path / "audit.png", tmp_path / "audit.pdf")
    ctx = {**context, "audit": {"table": str(tmp_path / "audit.parquet"),
                                "figure": str(tmp_path / "audit.png")}}
    out = tmp_path / "report.html"
    render_report(NOTEBOOK, ctx, out, ROOT)
    html = out.read_text()
    assert "Empirical privacy audit" in html
    warning = html.split('mpdp-callout warning')
    assert any("broken-accounting" in part.split("</div>")[0] for part in warning[1:])
    assert "bug caught" in html and "EXCEPTION" in html


def test_the_audit_figure_gives_every_setting_its_own_row_and_names_every_mechanism(tmp_path, monkeypatch):
    """Issue 59: about 40 settings at ε = 1 were drawn on one spot (the figure check now flags stacked
    markers) and the legend printed the raw id "private_selection"."""
    import mpdp.audit.figure as audit_figure
    from mpdp.figures import check

    base = _audit_rows().iloc[0].to_dict()
    mechanisms = ["wyx", "wddp_literal", "hamm_soft", "pvp", "private_selection", "nl2_output"]
    rows = conform(pd.DataFrame([{**base, "mechanism": m, "setting": f"{m}-{i}", "planted_bug": bool(i % 2),
                                  "eps_lower": 1.0 if i < 3 else 0.0} for m in mechanisms for i in range(7)]))
    render_audit_figure(rows, tmp_path / "audit_eps.png", tmp_path / "audit_eps.pdf")
    layout = check.read_record(check.record_path(tmp_path / "audit_eps.png"))
    assert layout.problems == [], layout.problems
    captured = []
    monkeypatch.setattr(audit_figure, "save_figure", lambda fig, *a, **k: captured.append(fig))
    render_audit_figure(rows, tmp_path / "b.png", tmp_path / "b.pdf")
    (fig,) = captured
    ticks = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    texts = [t.get_text() for t in fig.legends[0].get_texts()] + ticks
    assert "private hyper-parameter selection" in texts
    assert not any("_" in t for t in texts if "ε_up" not in t)  # no raw id
    assert len(ticks) == len(rows)  # one row per setting
