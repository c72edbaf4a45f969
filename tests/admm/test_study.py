"""ADMM study pieces: results schema extension, trade-off fit and α*, claims, report helpers."""

import math
import statistics

import numpy as np
import pandas as pd
import pytest

from mpdp import config, results
from mpdp.claims import engine
from mpdp.errors import InputDataError
from mpdp.studies.admm import claims, report, tradeoff, variance
from mpdp.studies.admm.schema import EXTRA_COLUMNS


def test_results_extra_columns_roundtrip_and_wddp_schema_unchanged(tmp_path):
    row = {"dataset": "adult", "mechanism": "dvp", "rep": 0, "T": 5, "n": 10, "p": 3, "alpha": 0.1,
           "iteration": 2, "mer": 0.2, "topology": "ring", "own_unperturbed_in_dual": False}
    frame = results.to_frame([row], EXTRA_COLUMNS)
    assert list(frame.columns) == list(results.COLUMNS) + list(EXTRA_COLUMNS)
    results.write(frame, tmp_path / "t.parquet", EXTRA_COLUMNS)
    back = results.read(tmp_path / "t.parquet", EXTRA_COLUMNS)
    assert back["iteration"].dtype == "int64" and back.loc[0, "alpha"] == 0.1
    with pytest.raises(InputDataError, match="unknown columns"):
        results.to_frame([row])  # the common schema alone rejects study columns
    with pytest.raises(ValueError, match="clashes"):
        results.columns({"epsilon": "Int64"})  # a study may not retype a common column
    assert list(results.to_frame([{"rep": 0, "T": 1, "n": 1, "p": 1}]).columns) == list(results.COLUMNS)


def test_fit_g_recovers_known_parameters():
    alpha = np.repeat([0.01, 0.03, 0.1, 0.3, 1, 3, 10], 3)
    truth = (2.0, 1.5, 0.7)
    noise = np.random.default_rng(0).normal(scale=1e-4, size=alpha.size)
    fit = tradeoff.fit_g(alpha, tradeoff.g(alpha, *truth) + noise)
    assert (fit.kappa1, fit.kappa2, fit.kappa3) == pytest.approx(truth, rel=1e-2)
    assert fit.rmse < 1e-3
    assert math.isnan(tradeoff.fit_g(np.array([1.0, 2.0]), np.array([1.0, 0.5])).kappa1)


def test_alpha_star_matches_the_stationary_point():
    # U − g = q e^{−α} − k1 e^{−k2 α} − k3 is maximal where q e^{−α} = k1 k2 e^{−k2 α}
    fit = tradeoff.GFit(kappa1=0.5, kappa2=3.0, kappa3=0.2, rmse=0.0)
    q = 1.0
    closed = math.log(fit.kappa1 * fit.kappa2 / q) / (fit.kappa2 - 1.0)
    assert tradeoff.alpha_star(fit, q, 0.01, 10.0, points=200_001) == pytest.approx(closed, rel=1e-3)


def _synthetic_table(reps=6, dvp_better_mer=True, T=5):
    rng = np.random.default_rng(1)
    rows = []
    for mech in ("dvp", "pvp"):
        for alpha in (0.1, 1.0, 10.0):
            for rep in range(reps):
                for t in range(1, T + 1):
                    base = 1.0 + 2.0 / (alpha * t)  # larger α: lower loss, converges faster
                    wiggle = 0.3 * (-1) ** t if mech == "pvp" else 0.0  # PVP oscillates
                    loss = base + wiggle + 0.01 * rng.normal()
                    mer = 0.2 + (0.0 if (mech == "dvp") == dvp_better_mer else 0.05) + 0.005 * rng.normal()
                    rows.append({"topology": "ring", "mechanism": mech, "alpha": alpha, "rep": rep,
                                 "iteration": t, "train_loss": loss, "mer": mer})
    for t in range(1, T + 1):
        rows.append({"topology": "ring", "mechanism": "admm", "alpha": np.nan, "rep": 0, "iteration": t,
                     "train_loss": 1.0 + 0.5 / t, "mer": 0.15})
    return pd.DataFrame(rows)


def _cfg():
    return config.load("config/smoke.yaml") | {}


#: a data card whose base-rate predictor every synthetic run beats (with C_R = 100 below)
CARD = {"positive_rate_train": 0.5, "positive_rate": 0.5}


def _run(table, card=CARD, **admm):
    cfg = _cfg()
    cfg["admm"] = {**cfg["admm"], "f4_iterations": [1, table["iteration"].max()], "C_R": 100.0, **admm}
    declared = claims.claims(cfg)
    cells = engine.evaluate(declared, engine.Inputs(claims.observations(table, cfg), claims.baselines(cfg, card),
                                                    claims.unusable(table, cfg)))
    return cells, engine.verdicts(declared, cells).set_index("claim_id")


def _claims(table, **admm):
    return _run(table, **admm)[1]


def test_claims_verdicts_follow_the_data():
    cells, out = _run(_synthetic_table(dvp_better_mer=True))
    # Z2: at α = 0.1 the loss's own descent dominates both mechanisms' steps (their oscillations 3 % apart,
    # inside the practical margin of a factor 1.12): no effect there, a clear one at α = 1 and 10
    z2 = cells[cells["claim_id"] == "Z2"].set_index("cell")["cell_verdict"]
    assert z2.to_dict() == {"ring: α=0.1": "no_effect", "ring: α=1": "for", "ring: α=10": "for"}
    assert out.loc["Z2", "verdict"] == "MIXED"
    assert out.loc["Z3", "verdict"] == "HOLDS"
    # every α is a cell of its own: nothing is averaged over α
    assert set(cells.loc[cells["claim_id"] == "Z4", "cell"]) == {"ring: α=0.1", "ring: α=1", "ring: α=10"}
    flipped = _claims(_synthetic_table(dvp_better_mer=False))
    assert flipped.loc["Z3", "verdict"] == "FAILS"
    few = _claims(_synthetic_table(reps=1))
    # one repetition: no interval (UNDERPOWERED) — and no variance over repetitions for Z6: no data
    assert set(few.drop(index="Z6")["verdict"]) <= {"UNDERPOWERED", "UNINFORMATIVE"}
    assert few.drop(index="Z6")["reason"].str.contains("too few|at chance").all()
    assert few.loc["Z6", "verdict"] == "UNINFORMATIVE" and few.loc["Z6", "reason"] == "no data"


def test_claims_at_the_base_rate_are_uninformative():
    # the constant base-rate predictor beats every run: no comparison of the losses says anything
    out = _claims(_synthetic_table(), C_R=0.01)
    assert (out.loc[["Z2", "Z4", "Z6"], "verdict"] == "UNINFORMATIVE").all()


def test_an_unconverged_reference_makes_z5_uninformative():
    table = _synthetic_table().assign(optimal_loss=1.0)  # ADMM ends at 1.1: 10 % above L(θ*)
    assert _claims(table).loc["Z5", "verdict"] == "UNINFORMATIVE"
    converged = table.assign(optimal_loss=1.1 / (1 + 1e-4))
    assert _claims(converged).loc["Z5", "verdict"] != "UNINFORMATIVE"
    # 0.138 % above L(θ*) (the full build's ring): over the 0.1 % tolerance, but it moves Z5's log-ratio by
    # ≤ 0.0014 against its margin, so the reference stays usable (issue 42)
    close = table.assign(optimal_loss=1.1 / 1.00138)
    assert not claims.unusable(close, _cfg()).empty
    cells, out = _run(close)
    assert out.loc["Z5", "verdict"] != "UNINFORMATIVE"
    assert cells.loc[cells["claim_id"] == "Z5", "note"].str.contains("not more than").all()


def test_every_topology_the_study_ran_is_scored():
    ring = _synthetic_table(dvp_better_mer=True)
    both = pd.concat([ring, ring.assign(topology="complete")], ignore_index=True)
    cells, _ = _run(both)
    z5 = set(cells.loc[cells["claim_id"] == "Z5", "cell"])
    assert {c.split(":")[0] for c in z5} == {"ring", "complete"}
    # the complete graph's reference judged on its own: unconverged there only
    bad = both.assign(optimal_loss=np.where(both["topology"] == "complete", 1.0, 1.1 / (1 + 1e-4)))
    cells, _ = _run(bad)
    z5 = cells[cells["claim_id"] == "Z5"].set_index("cell")
    assert not z5.filter(like="complete:", axis=0)["informative"].any()
    assert z5.filter(like="ring:", axis=0)["informative"].all()


def _table(loss, mer=lambda mech, alpha, t, rep: 0.2, reps=8, T=30, admm=lambda t: 1.0):
    """Rows of DVP and PVP on the ring with loss(mech, α, t, rep) and mer(mech, α, t, rep), plus ADMM."""
    rows = [{"topology": "ring", "mechanism": m, "alpha": a, "rep": r, "iteration": t,
             "train_loss": loss(m, a, t, r), "mer": mer(m, a, t, r)}
            for m in ("dvp", "pvp") for a in (0.1, 1.0, 10.0) for r in range(reps) for t in range(1, T + 1)]
    rows += [{"topology": "ring", "mechanism": "admm", "alpha": np.nan, "rep": 0, "iteration": t,
              "train_loss": admm(t), "mer": 0.15} for t in range(1, T + 1)]
    return pd.DataFrame(rows)


def test_settling_iteration():
    it = np.arange(1, 8)
    assert claims.settling_iteration(it, np.array([5, 3, 1.2, 0.9, 1.04, 1.0, 1.0]), 0.05) == 5
    assert claims.settling_iteration(it, np.ones(7), 0.05) == 1


def test_z1_measures_speed_not_level():
    rng = np.random.default_rng(2)

    def loss(faster_with_alpha, level_with_alpha):
        def f(m, a, t, r):
            rate = (0.2 * (1 + np.log10(a) + 1.5)) if faster_with_alpha else 0.5
            level = 1.0 + (1.0 / a if level_with_alpha else 0.0)
            return level * (1 + 3 * np.exp(-rate * t)) * (1 + 1e-3 * rng.normal())
        return f

    assert _claims(_table(loss(True, False))).loc["Z1-DVP", "verdict"] == "HOLDS"
    # lower loss at larger α but the same speed: the level alone must not pass
    assert _claims(_table(loss(False, True))).loc["Z1-DVP", "verdict"] != "HOLDS"


def test_z3_reads_the_final_classifier_and_z3_iter_the_iterations():
    """Spec E4 Z-F5 ii: Z3 is the final classifier's MER (the paper's reading); the mean over the own releases
    1..T−1 is the second reading, Z3-iter (issue 55)."""
    T = 20

    def mer(m, a, t, r):  # DVP better at every own release, worse at t = T (PVP's DVP step)
        return 0.2 + (0.0 if m == "dvp" else 0.03) * (t < T) + (0.1 if m == "dvp" and t == T else 0.0) + 1e-3 * r
    out = _claims(_table(lambda m, a, t, r: 1.0, mer=mer, T=T))
    assert out.loc["Z3-iter", "verdict"] == "HOLDS"
    assert out.loc["Z3", "verdict"] == "FAILS" and out.loc["Z3", "n_against"] == 3
    worse = _claims(_table(lambda m, a, t, r: 1.0, mer=lambda m, a, t, r: 0.2 + (0.03 if m == "dvp" else 0) + 1e-3 * r,
                           T=T))
    assert worse.loc["Z3-iter", "verdict"] == "FAILS" and worse.loc["Z3", "verdict"] == "FAILS"
    declared = {c.claim_id: c for c in claims.claims(_cfg())}
    assert declared["Z3"].metric == "mer" and declared["Z3-iter"].metric == "mer_iter"
    assert declared["Z2"].hedge == "for most values of α" and "range of values of α" in declared["Z3"].hedge


def test_mer_carries_its_record_grid():
    """The MER is the mean over the P nodes of their errors on the same n_test records: its grid is
    1 / (P · n_test), the resolution of a difference and the unit of the guard's 10-record margin."""
    cfg = _cfg()
    obs = claims.observations(_synthetic_table(), cfg, n_test=1000)
    mer = obs["metric"] == "mer"
    assert (obs.loc[mer, "n_test"] == cfg["admm"]["P"] * 1000).all() and obs.loc[~mer, "n_test"].isna().all()
    cfg["admm"] = {**cfg["admm"], "C_R": 100.0}
    declared = claims.claims(cfg)
    cells = engine.evaluate(declared, engine.Inputs(obs, claims.baselines(cfg, CARD)))
    z3 = cells[cells["claim_id"] == "Z3"]
    assert np.allclose(z3["resolution"], 0.5 / (cfg["admm"]["P"] * 1000))


def test_baselines_carry_the_converged_references():
    """The guard's practical margin is a quarter of the way from the trivial baseline to the converged
    non-private reference (docs/claims.md): L(θ*) for the final loss, non-private ADMM's final MER."""
    table = _synthetic_table().assign(optimal_loss=1.05)
    cfg = _cfg()
    cfg["admm"] = {**cfg["admm"], "C_R": 100.0}
    base = claims.baselines(cfg, CARD, table)
    cell = base[base["cell"] == "ring: α=1"].set_index("metric")
    assert cell.loc["final_loss", "reference"] == 1.05 and cell.loc["mer", "reference"] == pytest.approx(0.15)
    assert {"ring: α=0.1", "ring: α=10", "ring: α-sweep", "*"} <= set(base["cell"])
    assert base.loc[base["cell"] == "*", "reference"].isna().all()  # the fallback keeps no reference
    declared = claims.claims(cfg)
    cells = engine.evaluate(declared, engine.Inputs(claims.observations(table, cfg), base))
    z4 = cells[cells["claim_id"] == "Z4"]
    loss_base = cfg["admm"]["P"] * 100.0 * math.log(2)  # H(0.5) nats
    assert np.allclose(z4["guard_margin"], 0.25 * (loss_base - 1.05))
    z3 = cells[cells["claim_id"] == "Z3"]
    assert np.allclose(z3["guard_margin"], 0.25 * (0.5 - 0.15))
    # without a non-private run the final loss falls back to L(θ*) and the MER has no reference
    alone = claims.references(table[table["mechanism"] != "admm"])
    assert alone["final_loss"] == 1.05 and math.isnan(alone["mer"])


def test_z7_finds_a_planted_fall_of_the_mer_along_alpha():
    """Zhang–Zhu: "the accuracy of the algorithm increases as α becomes larger" (Z7, the final MER along
    log α, per mechanism)."""
    rng = np.random.default_rng(7)

    def mer(slope):
        return lambda m, a, t, r: 0.3 - slope * np.log10(a) + 0.002 * rng.normal()
    out = _claims(_table(lambda m, a, t, r: 1.0, mer=mer(0.02)))
    assert (out.loc[["Z7-DVP", "Z7-PVP"], "verdict"] == "HOLDS").all()
    cells, _ = _run(_table(lambda m, a, t, r: 1.0, mer=mer(0.02)))
    z7 = cells[cells["claim_id"] == "Z7-DVP"]
    assert list(z7["cell"]) == ["ring: α-sweep"]
    assert z7["estimate"].iloc[0] == pytest.approx(-0.04, abs=0.003)  # fitted change over log α ∈ [−1, 1]
    flat = _claims(_table(lambda m, a, t, r: 1.0, mer=mer(0.0)))
    assert (flat.loc[["Z7-DVP", "Z7-PVP"], "verdict"] != "HOLDS").all()
    rising = _claims(_table(lambda m, a, t, r: 1.0, mer=mer(-0.02)))
    assert (rising.loc[["Z7-DVP", "Z7-PVP"], "verdict"] == "FAILS").all()


def test_z5_nets_out_non_private_convergence():
    rng = np.random.default_rng(4)
    admm = lambda t: 1.0 + 2.0 / t  # noqa: E731  non-private ADMM converging strongly
    constant = _table(lambda m, a, t, r: admm(t) * (1 + 0.5 / a) * (1 + 1e-3 * rng.normal()), admm=admm)
    assert _claims(constant).loc["Z5", "verdict"] == "HOLDS"  # the raw log(L100/L1) would be far outside ±0.1
    growing = _table(lambda m, a, t, r: admm(t) * (1 + 0.5 / a) * (1 + 0.02 * t) * (1 + 1e-3 * rng.normal()),
                     admm=admm)
    assert _claims(growing).loc["Z5", "verdict"] == "FAILS"


def test_z6_compares_the_spread_over_repetitions():
    rng = np.random.default_rng(5)

    def loss(sd_dvp, sd_pvp):
        return lambda m, a, t, r: (1 + 1 / a) * np.exp((sd_dvp if m == "dvp" else sd_pvp) * rng.normal())
    out = _claims(_table(loss(0.01, 0.1)))
    assert out.loc["Z6", "verdict"] == "HOLDS" and out.loc["Z6", "n_for"] == 3
    assert _claims(_table(loss(0.1, 0.01))).loc["Z6", "verdict"] == "FAILS"
    # equal spreads: the ratio is near 1 (log 0), never 'for'
    assert _claims(_table(loss(0.05, 0.05), reps=20)).loc["Z6", "n_for"] == 0


def test_z6_statistic_is_the_log10_variance_ratio_of_ln_loss():
    """Z6 per α: log10(V_DVP / V_PVP), V the mean over the own iterations 1..T−1 of the sample variance over
    repetitions of ln L, checked against a plain loop; the interval brackets it and is reproducible."""
    rng = np.random.default_rng(11)
    T, reps = 6, 12
    values = {(m, a, t, r): float(np.exp(rng.normal(0.0, 0.02 if m == "dvp" else 0.05)) * (1 + t))
              for m in ("dvp", "pvp") for a in (0.1, 1.0, 10.0) for t in range(1, T + 1) for r in range(reps)}
    table = _table(lambda m, a, t, r: values[(m, a, t, r)], reps=reps, T=T)
    obs = claims.observations(table, _cfg())
    z6 = obs[obs["metric"] == "log_var_ratio"].set_index("cell")
    assert set(z6.index) == {"ring: α=0.1", "ring: α=1", "ring: α=10"} and (z6["n"] == reps).all()
    for a in (0.1, 1.0, 10.0):
        pooled = {}
        for m in ("dvp", "pvp"):
            per_iteration = [statistics.variance([math.log(values[(m, a, t, r)]) for r in range(reps)])
                             for t in range(1, T)]  # iterations 1..T−1: the own releases
            pooled[m] = sum(per_iteration) / len(per_iteration)
        row = z6.loc[f"ring: α={a:g}"]
        assert row["value"] == pytest.approx(math.log10(pooled["dvp"] / pooled["pvp"]), rel=1e-9)
        assert row["lo"] < row["value"] < row["hi"]
    again = claims.observations(table, _cfg())
    assert again[again["metric"] == "log_var_ratio"].set_index("cell")[["lo", "hi"]].equals(z6[["lo", "hi"]])
    declared = next(c for c in claims.claims(_cfg()) if c.claim_id == "Z6")
    assert declared.delta == pytest.approx(math.log10(1.25)) and declared.delta_reason.startswith("a variance ratio")


def test_z6_variance_interval_covers_and_needs_enough_runs():
    """The two-sample bootstrap interval of the log variance ratio covers a known ratio (here 1/4) in about
    95 % of seeded draws, and gives no interval below MIN_REPS runs of either mechanism."""
    rng = np.random.default_rng(3)
    true = math.log10(0.25)
    hits = 0
    for k in range(60):
        dvp, pvp = rng.normal(0, 0.5, (20, 4)), rng.normal(0, 1.0, (20, 4))
        est, lo, hi = variance.interval(dvp, pvp, np.random.default_rng(k))
        hits += lo <= true <= hi
    assert 0.85 <= hits / 60 <= 1.0
    est, lo, hi = variance.interval(rng.normal(size=(variance.MIN_REPS - 1, 3)), rng.normal(size=(20, 3)),
                                    np.random.default_rng(0))
    assert np.isfinite(est) and math.isnan(lo) and math.isnan(hi)
    few = _claims(_table(lambda m, a, t, r: (1 + t) * np.exp(0.1 * rng.normal()), reps=variance.MIN_REPS - 1))
    assert few.loc["Z6", "verdict"] == "UNDERPOWERED" and "too few" in few.loc["Z6", "reason"]


def test_report_helpers_without_and_with_results():
    assert report.load(None) is None and report.load({}) is None
    assert report.context({"tables": [], "files": []}) is None
    table = _synthetic_table()
    assert not report.spread(table, "ring").empty
    assert report.findings(table[table["topology"] == "complete"], "complete") == ["No runs on the main topology."]
    choices = report.rec_choices(_cfg())
    assert choices["choice"].str.contains("admm.delta").any()


def test_footing_note_says_whether_dvp_and_pvp_share_their_knobs():
    table = _synthetic_table().assign(rho=1e-3, admm_penalty=0.1)
    assert "equal footing" in claims.footing_note(table, _cfg()) and "not on" not in claims.footing_note(table, _cfg())
    table.loc[table["mechanism"] == "pvp", "rho"] = 0.1
    note = claims.footing_note(table, _cfg())
    assert "not on equal footing" in note and "PVP ρ = 0.1" in note


def test_z5_is_net_of_non_private_admm_at_dvps_own_step():
    """Issue 33: Z5 subtracts non-private ADMM run at DVP's own (ρ, η) (``admm_ref``), so where DVP
    follows that reference exactly the drift is 0, whatever ADMM at its own tuned η does."""
    def loss(mech, alpha, t, rep):
        return 1.0 + 1.0 / t  # DVP at negligible noise: exactly the reference's trajectory
    table = _table(loss, admm=lambda t: 1.0 + 0.2 / t)  # ADMM at its own η converges faster
    ref = [{"topology": "ring", "mechanism": "admm_ref", "alpha": np.nan, "rep": 0, "iteration": t,
            "train_loss": 1.0 + 1.0 / t, "mer": 0.15, "reference_for": "dvp+pvp"} for t in range(1, 31)]
    with_ref = pd.concat([table.assign(reference_for=""), pd.DataFrame(ref)], ignore_index=True)
    assert set(claims.reference(with_ref)["mechanism"]) == {"admm_ref"}
    cfg = _cfg()
    cfg["admm"] = {**cfg["admm"], "f4_iterations": [1, 30]}
    drift = claims.observations(with_ref, cfg).query("metric == 'g_drift'")["value"]
    assert len(drift) and np.allclose(drift, 0.0)
    # the old reference (ADMM at its own η) puts convergence into the statistic
    old = claims.observations(table, cfg).query("metric == 'g_drift'")["value"]
    assert np.all(np.abs(old) > 0.1)


def test_registry_entry_hands_the_engine_n_test_and_references(tmp_path, monkeypatch):
    """The study's registry entry passes the card's test-set size (MER's record grid) and the table (the
    guard's converged references) to the claims module."""
    import json

    from mpdp.studies.admm import study
    from mpdp.studies.interface import Cards

    card = tmp_path / "card.json"
    card.write_text(json.dumps({**CARD, "n_test": 1000}))
    table = _synthetic_table().assign(optimal_loss=1.05)
    monkeypatch.setattr(study, "read_table", lambda path: table)
    cfg = _cfg()
    _, inputs = study.claims(["adult.parquet"], cfg, Cards({cfg["admm"]["dataset"]: str(card)}))
    mer = inputs.observations[inputs.observations["metric"] == "mer"]
    assert (mer["n_test"] == cfg["admm"]["P"] * 1000).all()
    assert (inputs.baselines.loc[inputs.baselines["cell"] != "*", "reference"].notna()).all()
