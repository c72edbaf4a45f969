"""Extra results columns and config access of the ADMM study (spec E4 "Metrics", I-11).

The table ``data/results/admm/adult.parquet`` has the common columns of :mod:`mpdp.results`
(``epsilon`` = ``eps_claimed`` = α per node per iteration, ``eps_accounted`` = the PLD
composition of the claimed α after ``iteration`` steps with scope ``per_node`` (basic where
dp-accounting overflows, ``eps_pld_fallback``), ``train_loss``, ``accuracy`` =
1 − MER, ``optimal_loss`` = the data term at the centralised CR-ERM optimum for the run's ρ)
plus :data:`EXTRA_COLUMNS`. One row per (mechanism, topology, α, repetition, recorded iteration).
``mechanism`` is ``admm`` (non-private ADMM at its own η), ``dvp``, ``pvp`` or ``admm_ref``
(non-private ADMM at the (ρ, η) of the private mechanisms named in ``reference_for``). Under the
fixed split ``admm`` and ``admm_ref`` run once (repetition 0); with ``split.per_repetition``
(issue 60) once in every repetition, on its own split, and ``optimal_loss``, ``admm_penalty``,
``footing`` and ``tuning_loss`` are that repetition's (:mod:`mpdp.studies.admm.cases`).
"""

from __future__ import annotations

from typing import Any

#: the study's columns beyond mpdp.results.COLUMNS (name -> pandas dtype)
EXTRA_COLUMNS: dict[str, str] = {
    "topology": "string",  # ring | complete
    "alpha": "float64",  # α per node per iteration (NaN for non-private admm)
    "iteration": "int64",  # t (1..T): released iterate f_p(t)
    "mer": "float64",  # test misclassification rate, mean over nodes
    "eps_cumulative_basic": "float64",  # t α (basic composition)
    "eps_cumulative_pld": "float64",  # dp-accounting PLD of t (α, 0)-DP steps at delta
    "eps_cumulative_exact": "float64",  # optimal composition (Kairouz et al.), exact
    "rho": "float64",  # regulariser weight ρ of CR-ERM (eq. 1)
    "admm_penalty": "float64",  # ADMM penalty η
    "C_R": "float64",
    "alpha_prime": "float64",  # DVP α′ (M9 step 2; PVP: its final DVP step)
    "phi": "float64",  # DVP extra penalty Φ
    "dvp_case": "string",  # phi_zero | phi_positive | n/a
    "zeta": "float64",  # N-L2 parameter of the run's regular releases (mean over nodes)
    "noise_norm": "float64",  # mean over nodes of ‖ε‖ drawn at this iteration
    "noise_norm_expected": "float64",  # B7: d/ζ
    "own_unperturbed_in_dual": "boolean",
    "tuning_loss": "float64",  # mean final loss of the chosen (ρ, η) in the tuning runs (at tune_alpha); NaN for admm_ref
    # equal footing (issue 33 §4): dvp/pvp "shared" (one η for both) | "per_method_stable" (each its own
    # η, the same winner in every tuning draw); admm "own" (its own best η); admm_ref: its mechanisms'
    "footing": "string",
    # admm_ref rows (non-private ADMM at a private mechanism's (ρ, η), the reference of statistics net of
    # convergence, claim Z5): the private mechanisms it is the reference for, joined by "+"; "" elsewhere
    "reference_for": "string",
    "eps_pld_fallback": "boolean",  # eps_cumulative_pld is basic composition (dp-accounting overflowed)
    "pvp_gain": "float64",  # PVP: r = ηV_p/κ_p of the hidden-state bound (spec I-20), worst node
    "eps_real": "float64",  # ε this release really gives given the history (DVP α; PVP I-20 bound)
    "eps_real_cumulative_basic": "float64",  # Σ_{s≤t} eps_real (basic composition)
}

#: config keys of the ``admm`` section each job depends on (a Snakemake param)
TRAIN_KEYS = (
    "dataset", "P", "C_R", "T", "reps", "alpha_grid", "rho", "penalty_grid", "tune_reps",
    "tune_draws", "tune_alpha", "footing",
    "delta", "own_unperturbed_in_dual", "record_every",
)


def settings(cfg: dict[str, Any]) -> dict[str, Any]:
    """The ``admm`` config section (validated by the schema; defaults filled in)."""
    return cfg["admm"]


def enabled(cfg: dict[str, Any]) -> bool:
    """Whether the config has an ``admm`` section (the study is optional)."""
    return bool(cfg.get("admm"))
