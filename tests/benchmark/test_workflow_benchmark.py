"""`snakemake benchmark_tables` end to end on the smoke profile with Breast Cancer.

Offline: the raw files come from the mirror ($MPDP_DATA_MIRROR, default ../shared/datasets).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from workflow_helpers import mirror_path, run_snakemake, workflow_dir

from mpdp import config, results
from mpdp.studies.benchmark import registry
from mpdp.studies.benchmark.schema import EXTRA_COLUMNS

SMOKE = ["--configfile", "config/smoke.yaml", "--cores", "2", "--config", "datasets=[breast_cancer]"]
KEY = ["mechanism", "epsilon", "m", "u", "rep"]

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def _snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    return run_snakemake(workdir, *args, env={"MPDP_DATA_MIRROR": str(mirror_path())})


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, mirror) -> Path:
    return workflow_dir(tmp_path_factory.mktemp("benchmark_workflow"))


def test_the_selection_budgets_are_one_job_that_every_benchmark_job_reads(workdir):
    """Issue 45: the private selection's budget search runs once (rule benchmark_budgets), not in
    every data set's job; every benchmark_job takes its file as an input, and none waits behind it
    at a lower priority."""
    two = workdir / "two_benchmark_datasets.yaml"  # merged over the smoke profile key by key
    two.write_text("datasets: [breast_cancer, adult]\nbenchmark:\n  datasets: [breast_cancer, adult]\n")
    proc = _snakemake(workdir, "benchmark_tables", "-n", "--forceall", "--configfile", "config/smoke.yaml", str(two),
                      "--cores", "2")
    blocks = re.findall(r"^rule (\w+):\n(.*?)(?=^\S|\Z)", proc.stdout, re.S | re.M)
    budgets = [body for rule, body in blocks if rule == "benchmark_budgets"]
    jobs = [body for rule, body in blocks if rule == "benchmark_job"]
    assert len(budgets) == 1
    assert "output: data/results/benchmark/budgets.json" in budgets[0]
    assert len(jobs) == 2 * len(registry.job_groups(config.load(ROOT / "config" / "smoke.yaml"))) >= 8
    assert all(re.search(r"^\s+input: .*data/results/benchmark/budgets\.json", j, re.M) for j in jobs)
    prio = [int(re.search(r"priority: (\d+)", j)[1]) if "priority:" in j else 0 for j in jobs]
    assert int(re.search(r"priority: (\d+)", budgets[0])[1]) == max(prio) > 0


def test_benchmark_tables_end_to_end(workdir):
    proc = _snakemake(workdir, "benchmark_tables", "-n", *SMOKE)
    out = proc.stdout + proc.stderr
    assert "benchmark_job" in out and "train_job" not in out and "voting_train" not in out
    _snakemake(workdir, "benchmark_tables", *SMOKE)
    table = results.read(workdir / "data/results/benchmark/breast_cancer.parquet", EXTRA_COLUMNS)
    assert list(table.columns) == list(results.columns(EXTRA_COLUMNS))
    assert set(table["mechanism"]) == {m.id for m in registry.BUILTIN}
    assert table["test_logloss"].notna().all() and table["calibration"].notna().all()
    assert table.loc[table["mechanism"] == "pvp", "calibration"].str.contains("Δp/(1−r)", regex=False).all()
    assert (table["experiment"] == "benchmark").all() and (table["dataset"] == "breast_cancer").all()
    assert not table.duplicated([*KEY, "selection"]).any()
    # 2 protocols (private headline, oracle reading) × 13 mechanisms × 2 ε × (m ∈ {2, 4}) × (u ∈ {1, 3}) × R = 2
    assert set(table["selection"]) == {"private", "oracle"}
    assert len(table) == 2 * len(registry.BUILTIN) * 2 * 4 * 2
    assert set(table["m"]) == {2, 4} and set(table["u"]) == {1.0, 3.0} and set(table["rep"]) == {0, 1}
    private = table[(table["mechanism"] != "nonprivate") & (table["selection"] == "oracle")]
    np.testing.assert_allclose(private["eps_total"], private["epsilon"], rtol=1e-3)
    e2e = table[(table["mechanism"] != "nonprivate") & (table["selection"] == "private")]
    assert (e2e["eps_end_to_end"] <= e2e["epsilon"] * (1 + 1e-9)).all()
    assert (private["delta_total"].isin([0.0, 1e-5])).all() and private["accountant"].notna().all()
    # paired repetitions: the same partition for every mechanism of a (m, u, rep) and privacy unit; under the
    # private protocol the party-level mechanisms hold the validation records out of every party (issue 43)
    assert (table.groupby(["selection", "privacy_unit", "m", "u", "rep"])[["n", "n_min", "n_max", "partition"]]
            .nunique() == 1).all().all()
    sizes = table[table["selection"] == "private"].groupby(["privacy_unit", "m", "u", "rep"])["n"].first().unstack(0)
    assert (sizes["party"] < sizes["record"]).all()
    assert table.groupby(["selection", "privacy_unit", "m", "u"])["partition"].nunique().eq(2).all()
    assert (table["optimal_gap"] >= -1e-7).all()
    assert (table.loc[table["mechanism"] == "nonprivate", "optimal_gap"] == 0).all()
    hp = json.loads((workdir / "data/results/benchmark/breast_cancer.hparams.json").read_text())
    assert hp["selection"] == "private"
    assert hp["privacy_cost_of_selection"] == {"private": "included (end-to-end)", "oracle": "excluded"}
    assert set(hp["mechanisms"]["oracle"]) == {m.id for m in registry.BUILTIN}
    assert all(v["trials_drawn"] >= 2 for k, v in hp["mechanisms"]["private"].items()  # >= 1 per ε
               if k != "nonprivate")
    # a second run has nothing to do
    proc = _snakemake(workdir, "benchmark_tables", "-n", *SMOKE)
    assert "benchmark_job" not in proc.stdout


def test_benchmark_target_draws_the_five_figures_from_the_tables(workdir):
    """`snakemake benchmark` = tables + xp_eps, xp_m, xp_u, xp_rank, xp_glance (png and pdf)."""
    _snakemake(workdir, "benchmark", *SMOKE)
    for name in ("xp_eps", "xp_m", "xp_u", "xp_rank", "xp_glance"):
        for ext in ("png", "pdf"):
            assert (workdir / f"reports/figures/{name}.{ext}").stat().st_size > 10_000, (name, ext)
    proc = _snakemake(workdir, "xp_rank", "-n", *SMOKE)
    assert "benchmark_figure" not in proc.stdout  # up to date
    from mpdp.studies.benchmark import ranking

    ranked = pd.read_parquet(workdir / ranking.ranking_path())
    assert list(ranked.columns) == ranking.RANKING_COLUMNS
    assert len(ranked) == 2 * 2 * 4 and not ranked.duplicated(["privacy_reading", "epsilon", "m", "u"]).any()
    assert set(ranked["privacy_reading"]) == {"end_to_end", "final_run"}
    assert (ranked["primary_metric"] == "test_logloss").all() and ranked["uninformative"].dtype == bool
    assert all(b in t.split(",") for b, t in zip(ranked["best_mechanism"], ranked["tied"], strict=True))


def test_report_section_numbers_come_from_the_tables(workdir):
    from mpdp.studies.benchmark import ranking
    from mpdp.studies.benchmark import report as xp_report

    tables = [str(workdir / "data/results/benchmark/breast_cancer.parquet")]
    hparams = [str(workdir / "data/results/benchmark/breast_cancer.hparams.json")]
    bench = xp_report.load({"tables": tables, "hparams": hparams, "figures": {},
                            "ranking": [str(workdir / ranking.ranking_path())]})
    assert bench is not None and xp_report.load({"tables": []}) is None
    cfg = config.load(workdir / "config" / "smoke.yaml")
    footing = "\n".join(xp_report.footing(bench, cfg))
    assert "excluded" in footing and "replace one record" in footing and "Δp/(1−r)" in footing
    assert "Equal end-to-end privacy" in footing and "trials were drawn" in footing
    changes = ranking.winner_changes(bench.ranking)
    assert changes["cells"].tolist() == [8] and 0 <= int(changes["changed"].iloc[0]) <= 8
    assert f"{int(changes['changed'].iloc[0])} of 8 cells" in xp_report.reading_sentence(bench)
    assert "uninformative" in xp_report.leader_sentence(bench)
    assert "grid" in xp_report.edge_sentence(bench)
    assert all("n = " in c for c in xp_report.captions(bench, cfg).values())
    assert "protocol `private`" in xp_report.captions(bench, cfg)["xp_glance"]
    # issue 56: the tables carry θ*(λ)'s test log-loss, and the oracle reading ran
    tuning = xp_report.tuning_rule_sentence(bench)
    assert "Measured here" in tuning and "do not carry" not in tuning
    assert bench.rows["optimal_logloss"].notna().all()
    assert "`oracle` (penalty" in xp_report.dvp_plateau_sentence(bench, xp_report.reference_cell(bench, cfg))
    assert "DP-SGD" in xp_report.baseline_sentence(bench)
    standing = xp_report.baseline_standing(bench)
    assert len(standing) == 2 * 2 and (standing["competitors"] == len(registry.BUILTIN) - 1).all()
    board = xp_report.leaderboard(bench)
    cells = bench.table.groupby(["epsilon", "m", "u"]).ngroups
    assert set(bench.table["selection"]) == {"private"}  # the report's table: the headline rows
    assert (board["cells"] == cells).all()
    assert board["best"].sum() == cells  # exactly one best mechanism per cell
    ranked = ranking.cell_ranking(bench.table)
    assert "nonprivate" not in set(ranked["mechanism"])
    # each paper's comparison is a declared claim of the claims engine, on the primary metric per cell
    import json

    from scipy import stats

    from mpdp.claims import engine
    from mpdp.studies.benchmark import claims as xp_claims

    cards = {ds: json.loads((workdir / f"data/processed/{ds}/card.json").read_text())
             for ds in bench.table["dataset"].unique()}
    cells = engine.evaluate(xp_claims.CLAIMS, engine.Inputs(xp_claims.observations(bench.table),
                                                            xp_claims.baselines(cards)))
    verdicts = engine.verdicts(xp_claims.CLAIMS, cells)
    assert set(verdicts["claim_id"]) == {c[0] for c in xp_claims.PAPER_CLAIMS}
    assert verdicts["verdict"].isin(["HOLDS", "FAILS", "MIXED", "UNDERPOWERED", "IDENTICAL", "UNINFORMATIVE"]).all()
    # the estimate of a cell is the 20 % trimmed mean over repetitions of log10(log-loss DVP / PVP)
    t = bench.table
    a = t[t["mechanism"] == "dvp"].set_index(["epsilon", "m", "u", "rep"])["test_logloss"]
    b = t[t["mechanism"] == "pvp"].set_index(["epsilon", "m", "u", "rep"])["test_logloss"]
    ratio = np.log10(a / b)
    first = ratio.index.droplevel("rep")[0]
    key = f"ε={first[0]:g}, m={int(first[1])}, u={first[2]:g}"
    zz = cells[(cells["claim_id"] == "XP-ZZ") & (cells["cell"] == key)].iloc[0]
    assert zz["estimate"] == pytest.approx(stats.trim_mean(ratio.loc[first].to_numpy(), 0.2))
