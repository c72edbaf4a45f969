"""The ADMM study end to end on the smoke profile (`snakemake zz`), offline with the mirror."""

import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from workflow_helpers import mirror_path, run_snakemake, workflow_dir

from mpdp.studies.admm.train import read_table

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ["--configfile", "config/smoke.yaml", "--cores", "2"]

pytestmark = pytest.mark.slow


def _snakemake(workdir: Path, *args: str) -> subprocess.CompletedProcess:
    return run_snakemake(workdir, *args, env={"MPDP_DATA_MIRROR": str(mirror_path())})


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, mirror) -> Path:
    return workflow_dir(tmp_path_factory.mktemp("workflow_admm"))


def test_one_figure_target_schedules_only_that_figure(workdir):
    proc = _snakemake(workdir, "zz_f4", "-n", *SMOKE)
    figures = re.findall(r"zz_fig=(\w+)", proc.stdout + proc.stderr)
    assert figures == ["zz_f4"]
    assert "admm_job" in proc.stdout + proc.stderr


def test_a_run_without_adult_plans_no_admm_job(workdir):
    proc = _snakemake(workdir, "-n", *SMOKE, "--config", "datasets=[breast_cancer]")
    text = proc.stdout + proc.stderr
    assert "report_html" in text and "admm_job" not in text


@pytest.fixture(scope="module")
def built(workdir) -> Path:
    """The smoke profile's `snakemake zz`, run once for the tests below."""
    _snakemake(workdir, "zz", *SMOKE)
    return workdir


def test_zz_builds_table_figures_and_fit_table(built):
    workdir = built
    for name in ("zz_f3", "zz_f4", "zz_f5"):
        for ext in ("png", "pdf"):
            assert (workdir / "reports" / "figures" / f"{name}.{ext}").stat().st_size > 5_000
    fits = pd.read_csv(workdir / "reports" / "figures" / "zz_table.csv")
    assert set(fits["mechanism"]) == {"dvp", "pvp"} and fits["alpha_star"].notna().any()
    table = read_table(workdir / "data" / "results" / "admm" / "adult.parquet")
    assert set(table["mechanism"]) == {"admm", "dvp", "pvp", "admm_ref"}
    admm = table[table["mechanism"].isin(["admm", "admm_ref"])]
    private = table[table["mechanism"].isin(["dvp", "pvp"])]
    assert admm["alpha"].isna().all() and private["alpha"].notna().all()
    np.testing.assert_allclose(private["eps_cumulative_basic"], private["iteration"] * private["alpha"])
    assert (private["eps_cumulative_exact"] <= private["eps_cumulative_basic"] + 1e-9).all()
    assert (private["eps_cumulative_pld"] >= private["eps_cumulative_exact"] - 1e-6).all()
    assert private["noise_norm"].gt(0).all() and private["zeta"].gt(0).all()
    assert table[["train_loss", "mer", "rho", "admm_penalty"]].notna().all().all()
    # PVP's real ε (spec I-20): α at its first release, above α after it; DVP's is α
    pvp = private[private["mechanism"] == "pvp"]
    assert np.allclose(pvp.loc[pvp["iteration"] == 1, "eps_real"], pvp.loc[pvp["iteration"] == 1, "alpha"])
    assert (pvp.loc[pvp["iteration"] > 1, "eps_real"] > pvp.loc[pvp["iteration"] > 1, "alpha"]).all()
    dvp = private[private["mechanism"] == "dvp"]
    np.testing.assert_allclose(dvp["eps_real"], dvp["alpha"])
    assert np.isfinite(private["eps_cumulative_pld"]).all()
    # the smoke profile's split per repetition (issue 60): non-private ADMM and its references in every
    # repetition, each repetition's own L(θ*); within a repetition one (ρ, η) per mechanism, η tuned at
    # tune_alpha, ρ the fixed config value, DVP and PVP on equal footing
    reps = set(private["rep"])
    assert len(reps) == 2 and set(table.loc[table["mechanism"] == "admm", "rep"]) == reps
    assert table.groupby("rep")["optimal_loss"].nunique().eq(1).all() and table["optimal_loss"].nunique() == 2
    assert set(table["rho"]) == {5e-3}
    for _, one in table.groupby("rep"):
        tuned = one[one["mechanism"] != "admm_ref"]
        assert (tuned.groupby("mechanism")[["rho", "admm_penalty"]].nunique() == 1).all().all()
        priv = one[one["mechanism"].isin(["dvp", "pvp"])]
        eta = priv.groupby("mechanism")["admm_penalty"].first()
        foot = set(priv["footing"])
        assert foot in ({"shared"}, {"per_method_stable"}) and (foot != {"shared"} or eta["dvp"] == eta["pvp"])
        # the Z5 references: non-private ADMM at exactly the repetition's private η, labelled
        ref = one[one["mechanism"] == "admm_ref"]
        assert set(ref["admm_penalty"]) == set(eta) and set(ref["footing"]) == foot
        assert set(ref["reference_for"]) == ({"dvp+pvp"} if eta["dvp"] == eta["pvp"] else {"dvp", "pvp"})
    # reproducible: a rerun with nothing changed does nothing
    proc = _snakemake(workdir, "zz", "-n", *SMOKE)
    assert "admm_job" not in proc.stdout + proc.stderr


def test_report_section_renders_from_the_built_outputs(built):
    """The report's ADMM section (mpdp.studies.admm.section) on the built outputs, and without them."""
    from mpdp import config
    from mpdp.report import claims_view, scaffold
    from mpdp.studies import claims_build
    from mpdp.studies.admm import report as zz_report
    from mpdp.studies.admm import section as zz_section

    workdir = built
    figures = workdir / "reports" / "figures"
    cfg = config.load(workdir / "config" / "smoke.yaml")
    table = str(workdir / "data" / "results" / "admm" / "adult.parquet")
    ctx = zz_report.context({"tables": [table], "files": [
        table, *(str(figures / f"{n}.png") for n in ("zz_f3", "zz_f4", "zz_f5")), str(figures / "zz_table.csv")]})
    # the claims engine's tables of this build's ADMM table (what rule claims_tables writes)
    cells, verdicts = claims_build.build(claims_build.Paths(
        {"admm": [table]}, cards={"adult": str(workdir / "data" / "processed" / "adult" / "card.json")}),
        config.validate(cfg))
    section = zz_section.build(ctx, cfg, claims_view.ClaimsTables(verdicts, cells))
    html = " ".join(item.data or "" for item in scaffold.render(section))
    assert 'id="admm-claims"' in html and 'id="claim-admm-z3"' in html and "I-11" in html
    assert 'id="claim-admm-z6"' in html and "real ε" in html and "centralised optimum" in html
    assert "on an edge of" in html  # the tuning-edge sentence of zz_report.edges (mpdp.tuning.edge_sentence)
    assert html.count("data:image/webp;base64,") == 3
    assert all(f'id="fig-{n}"' in html for n in ("zz_f3", "zz_f4", "zz_f5"))
    assert "Z3" in scaffold.paper_summary(section)
    missing = " ".join(item.data or "" for item in scaffold.render(zz_section.build(None, cfg)))
    assert "did not run" in missing and 'id="admm-claims"' not in missing
