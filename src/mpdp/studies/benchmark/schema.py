"""The benchmark's table columns (spec experiments.md E10); mechanisms: :mod:`.registry`.

Tables ``data/results/benchmark/<dataset>.parquet`` hold one row per (mechanism, ε, m, u,
repetition) in the common schema :data:`mpdp.results.COLUMNS` (``experiment = "benchmark"``;
``epsilon``/``delta`` the common target; ``accuracy``; ``optimal_gap`` against the pooled θ* of the
same λ) plus :data:`EXTRA_COLUMNS`. Repetition ``rep`` of every mechanism in a cell uses the same
data split and partition, so repetitions pair across mechanisms (the ranking's paired test).
"""

from __future__ import annotations

#: columns the benchmark adds to the common schema (mpdp.results ``extra``)
EXTRA_COLUMNS: dict[str, str] = {
    "label": "string",  # Mechanism.label: the legend label (figures and report read it from the rows)
    "spec": "string",  # Mechanism.spec: its spec section
    "family": "string",  # Mechanism.family
    "privacy_unit": "string",  # record | party
    "public_data": "boolean",  # True for Hamm's methods (public unlabeled pool)
    "calibration": "string",  # Mechanism.calibration (PVP: to the hidden-state bound, I-20)
    "eps_total": "float64",  # accounted ε of the whole released transcript at delta_total
    "delta_total": "float64",  # δ of that statement (0 for pure-DP releases)
    # added by the training code (branch bench)
    "beta": "float64",  # N-L2 parameter actually used (output/voting: ε/Δ; ADMM: mean ζ)
    "alpha_step": "float64",  # ADMM: per-iteration pure-DP budget α of every node release
    "hparam": "string",  # name of the tuned hyper-parameter (eta | lambda | admm_penalty | none)
    "hparam_value": "float64",  # its frozen value (selected at the reference cell)
    "noise_norm": "float64",  # ‖noise‖ actually drawn (output/voting); NaN where not one draw
    "sampling_rate": "float64",  # DP-SGD: Poisson sampling rate q of its tuned candidate; NaN elsewhere
    "test_logloss": "float64",  # mean logistic loss on the test set (the ranking's primary metric)
    # test log-loss of the row's noise-free reference θ*(λ) at the row's own λ (issue 56: whether the
    # selected λ puts the row at chance whatever ε; optimal_accuracy is its accuracy)
    "optimal_logloss": "float64",
    "partition": "string",  # fingerprint of the (m, u, rep) partition: equal across mechanisms
    # selection protocol and what the whole procedure paid (issue 34, :mod:`.selection`)
    "selection": "string",  # private | public | oracle
    "eps_trial": "float64",  # private: each selection trial's (ε_t, δ) target; NaN otherwise
    "eps_selection": "float64",  # the selection alone at δ (private), 0 (public), +inf (oracle)
    "eps_end_to_end": "float64",  # selection ∘ final run at delta_end_to_end, in privacy_unit; +inf for oracle
    "delta_end_to_end": "float64",
    # the guarantee of one validation record (issue 58): the selection's reads of the validation split
    "eps_validation_record": "float64",  # whole procedure for one validation record; +inf public/oracle
    "delta_validation_record": "float64",
    "score_multiplier": "float64",  # private: the trials' score noise std over its sensitivity clip/n_val
    "validation_records": "string",  # where the validation records lie and what protects them
}

#: the cells of the grid: the ranking compares mechanisms within each
CELL = ["dataset", "epsilon", "m", "u"]
