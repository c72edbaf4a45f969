"""Issue 56 items 3–5 in the report: the papers' tuning rule's consequence, DVP's plateau and the
``xp_glance`` figure, computed from small synthetic benchmark frames (no build)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mpdp.models import logistic
from mpdp.report import names
from mpdp.studies.benchmark import figures, ranking, registry, report, runner
from mpdp.studies.benchmark.report import Benchmark

EPS = (0.1, 1.0, 10.0)
REFERENCE = {"m": 8, "u": 1, "epsilon": 1.0}
#: H(0.752), the constant base-rate predictor's test log-loss at a majority rate of 0.752
BASE = float(ranking.base_rate_logloss(0.752))
#: (mechanism, hparam, knob per protocol, noise-free θ*(λ) test log-loss per protocol)
MECHS = (("nonprivate", "none", {"oracle": np.nan, "private": np.nan}, {"oracle": 0.40, "private": 0.40}),
         ("jayaraman_output", "lambda", {"oracle": 0.1, "private": 0.01}, {"oracle": BASE + 0.0045, "private": 0.49}),
         ("pathak", "lambda", {"oracle": 1.0, "private": 0.01}, {"oracle": BASE + 0.095, "private": 0.49}),
         ("objpert", "lambda", {"oracle": 1e-3, "private": 1e-3}, {"oracle": 0.40, "private": 0.40}),
         ("wyx", "eta", {"oracle": 1.0, "private": 1.0}, {"oracle": 0.40, "private": 0.40}),
         ("dvp", "admm_penalty", {"oracle": 10.0, "private": 0.1}, {"oracle": 0.40, "private": 0.40}))


def _frame(datasets=("adult", "bank")) -> pd.DataFrame:
    gen = np.random.default_rng(5)
    rows = []
    for ds in datasets:
        for protocol in ("private", "oracle"):
            for mech, hparam, knob, star in MECHS:
                spec = registry.get(mech)
                for eps in EPS:
                    for m in (2, 8):
                        for rep in range(3):
                            loss = 0.40 if mech == "nonprivate" else 0.45 + 0.3 / eps + 0.01 * gen.standard_normal()
                            if mech == "dvp":
                                loss = 0.578 + 0.001 * rep + 0.001 * np.log10(eps)
                            rows.append({
                                "dataset": ds, "mechanism": mech, "label": spec.label, "spec": spec.spec,
                                "family": spec.family, "privacy_unit": spec.privacy_unit, "public_data": False,
                                "selection": protocol, "epsilon": eps, "m": m, "u": 1.0, "rep": rep, "n": 4000,
                                "T": 100 if mech == "dvp" else 0, "hparam": hparam, "hparam_value": knob[protocol],
                                "lambda": knob[protocol] if hparam == "lambda" else 1e-3,
                                "alpha_step": eps / 40 if mech == "dvp" else np.nan,
                                "optimal_logloss": star[protocol] if ds == "adult" else 0.40,
                                "test_logloss": loss, "accuracy": 0.8, "majority_rate": 0.752,
                                "eps_total": eps, "eps_end_to_end": eps if protocol == "private" else np.inf,
                            })
    return pd.DataFrame(rows)


def _bench(frame: pd.DataFrame) -> Benchmark:
    return Benchmark(frame[frame["selection"] == "private"].reset_index(drop=True), [], {},
                     pd.DataFrame(), frame)


def test_optimal_logloss_is_the_test_log_loss_of_the_noise_free_reference(bench_data):
    """The column the sentence reads (issue 56): θ*(λ)'s test log-loss at the row's λ, the same for
    every column of the batch, computed here independently of mpdp.models.logistic."""
    opt = runner.Optimum(bench_data)
    thetas = np.random.default_rng(1).normal(size=(bench_data.p, 3))
    for lam in (1e-3, 1.0):
        out = runner.outcome(opt, thetas, lam)
        star = logistic.solve_optimum(bench_data.X, bench_data.y, lam)
        margin = bench_data.y_test * (bench_data.X_test @ star)
        assert out["optimal_logloss"] == pytest.approx(np.full(3, np.mean(np.logaddexp(0.0, -margin))))
    assert runner.outcome(opt, thetas, 1.0)["optimal_logloss"][0] > runner.outcome(opt, thetas, 1e-3)[
        "optimal_logloss"][0]


def test_tuning_rule_sentence_names_the_rows_at_chance_from_the_table():
    frame = _frame()
    text = report.tuning_rule_sentence(_bench(frame))
    adult, bank = text.split("Measured here — ")[1].split("; Bank Marketing: ")
    # Adult: the oracle's λ = 0.1 and λ = 1 are at or above chance, objpert's λ = 1e-3 is not
    assert f"Jayaraman output perturbation (λ = 0.1: θ*(λ) test log-loss {BASE + 0.0045:.4f} ≥ {BASE:.4f}" in adult
    assert f"Pathak parameter averaging (λ = 1: θ*(λ) test log-loss {BASE + 0.095:.4f} ≥ {BASE:.4f}" in adult
    assert "in 18 of 18 rows, at every ε of the grid (0.1, 1, 10), every repetition in 6 of 6 (ε, m, u) cells" in adult
    assert "objective perturbation" not in adult
    assert "headline `private` selection, on validation log-loss: 0 of 54 λ-tuned rows" in adult
    assert bank.startswith("no row")
    # change the table: the sentence follows it
    lifted = frame.copy()
    hit = (lifted["dataset"] == "bank") & (lifted["mechanism"] == "objpert") & (lifted["selection"] == "oracle") \
        & (lifted["epsilon"] == 10.0) & (lifted["rep"] == 0)
    lifted.loc[hit, "optimal_logloss"] = 0.7
    bank = report.tuning_rule_sentence(_bench(lifted)).split("; Bank Marketing: ")[1]
    assert "objective perturbation, trusted curator (CMS11 Alg. 2) (λ = 0.001: θ*(λ) test log-loss 0.7000" in bank
    assert "in 2 of 18 rows, at ε = 10, every repetition in 0 of 6 (ε, m, u) cells" in bank


def test_tuning_rule_sentence_says_what_is_missing():
    frame = _frame()
    assert "do not carry `optimal_logloss`" in report.tuning_rule_sentence(
        _bench(frame.assign(optimal_logloss=np.nan)))
    private = frame[frame["selection"] == "private"]
    assert "no `oracle` rows" in report.tuning_rule_sentence(_bench(private))


def test_dvp_plateau_sentence_is_computed_at_the_reference_cell():
    frame = _frame(("adult",))
    text = report.dvp_plateau_sentence(_bench(frame), REFERENCE)
    oracle = text.split("Adult, `oracle` ")[1].split("; Adult")[0]
    assert oracle.startswith("(penalty 10, frozen; T = 100, per-release α 0.0025 → 0.25)")
    assert "0.578 at ε = 0.1 → 0.580 at ε = 10 (paired change +0.002, 95 % CI [+0.002, +0.002]" in oracle
    assert "base rate 0.560; θ*(λ) 0.400" in oracle
    assert "Adult, `private` (penalty 0.1, frozen" in text
    # another m's rows are not read; a change at the reference cell is
    moved = frame.copy()
    at = (moved["mechanism"] == "dvp") & (moved["epsilon"] == 10.0) & (moved["selection"] == "oracle")
    moved.loc[at & (moved["m"] == 2), "test_logloss"] = 9.0
    assert report.dvp_plateau_sentence(_bench(moved), REFERENCE) == text
    moved.loc[at & (moved["m"] == 8), "test_logloss"] -= 0.2
    assert "0.578 at ε = 0.1 → 0.380 at ε = 10 (paired change -0.198" in report.dvp_plateau_sentence(
        _bench(moved), REFERENCE)


@pytest.fixture()
def drawn(monkeypatch):
    figs = []
    real = figures.save_figure
    monkeypatch.setattr(figures, "save_figure", lambda fig, png, pdf: (real(fig, png, pdf), figs.append(fig)))
    monkeypatch.setattr(figures.plt, "close", lambda fig: None)
    return figs


def test_glance_has_a_panel_per_data_set_and_draws_the_references_apart(drawn, tmp_path):
    from mpdp.figures import check

    frame = _frame(("adult", "bank", "credit_card", "kddcup99"))
    table = frame[frame["selection"] == "private"].reset_index(drop=True)
    figures.plot_glance(table, REFERENCE, 1e-5, tmp_path / "g.png", tmp_path / "g.pdf", cap=4000)
    fig = drawn[0]
    layout = check.read_record(check.record_path(tmp_path / "g.png"))
    assert layout.problems == [] and layout.width_px <= 12.6 * 110 + 1, layout
    axes = fig.axes
    shown = {names.dataset(d): d for d in ("adult", "bank", "credit_card", "kddcup99")}
    assert len(axes) == 4 and [ax.get_title().split(" (")[0] for ax in axes] == list(shown)  # display names
    for ax in axes:
        lines = {line.get_gid() or line.get_label(): line for line in ax.get_lines()}
        objpert, ref = lines["objpert"], lines["reference"]
        competitors = [line for key, line in lines.items() if key not in ("objpert", "reference", "base_rate")]
        assert {line.get_label() for line in competitors} == {registry.get(m).label for m in
                                                              ("jayaraman_output", "pathak", "wyx", "dvp")}
        assert objpert.get_color() not in {line.get_color() for line in competitors}
        assert objpert.get_linewidth() > max(line.get_linewidth() for line in competitors)
        assert ref.get_linestyle() == ":" and ref.get_ydata()[0] == pytest.approx(0.40)
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
        # only the reference cell's rows (m = 8): objpert's curve is its mean per ε there
        at = table[(table["dataset"] == shown[ax.get_title().split(" (")[0]]) & (table["mechanism"] == "objpert")
                   & (table["m"] == 8)]
        np.testing.assert_allclose(objpert.get_ydata(), at.groupby("epsilon")["test_logloss"].mean().to_numpy())


def test_glance_caption_states_the_reading_of_what_is_drawn():
    frame = _frame()
    private = frame[frame["selection"] == "private"]
    text = report.glance_caption(private, REFERENCE)
    assert "protocol `private`" in text and "end-to-end" in text and "ratio of `eps_end_to_end`" in text
    assert "(5 drawn" in text and "m = 8, u = 1" in text
    oracle = report.glance_caption(frame[frame["selection"] == "oracle"], REFERENCE)
    assert "protocol `oracle`" in oracle and "final run only" in oracle and "`eps_total`" in oracle


def test_load_keeps_every_protocol_for_the_sentences_and_the_headline_for_the_rest(tmp_path):
    from mpdp import results
    from mpdp.studies.benchmark.schema import EXTRA_COLUMNS

    path = tmp_path / "adult.parquet"
    results.write(_frame(("adult",)).assign(experiment="benchmark", p=5), path, EXTRA_COLUMNS)
    bench = report.load({"tables": [str(path)]})
    assert set(bench.table["selection"]) == {"private"} and set(bench.rows["selection"]) == {"private", "oracle"}
    assert "Jayaraman output perturbation (λ = 0.1" in report.tuning_rule_sentence(bench)
    assert "Adult, `oracle` (penalty 10, frozen" in report.dvp_plateau_sentence(bench, REFERENCE)
    assert "xp_glance" in report.captions(bench, {"benchmark": {"reference": REFERENCE, "max_train_records": 4000}})
