"""Privacy calibration and privacy ledger of full-batch Gaussian gradient perturbation.

Spec §0.5 (C1, C2), M2, M3.1, M3.2, M4; bounds.md B9.

- :mod:`mpdp.privacy.calibration` maps a target (ε, δ) and T steps to a noise multiplier
  σ/Δ, where Δ = 2G/n_eff is the per-step replace-one sensitivity (:func:`noise_std` returns
  σ = multiplier × Δ). Accountants:

  - ``ma16``: WD-DP Theorem 1 with the constant c = 16 fixed by its proof (spec C1),
    σ² = 16 G² T ln(1/δ)/(n² ε²); valid for ε ≤ 2 ln(1/δ). The paper's own calibration.
  - ``ma_tight``: C1 without the λ+1 ≤ 2λ step, σ² = (8 ln(1/δ) + 4ε) G² T/(n² ε²).
  - ``ma_int``: C1 with an integer moment order, c_int = 8ε⌈2 ln(1/δ)/ε⌉/ln(1/δ).
  - ``exact``: the smallest σ for which the T-step mechanism is (ε, δ)-DP: sqrt(T) times the
    analytic Gaussian mechanism's σ (dp-accounting; equal to PLD).
  - ``rdp``: calibrated with dp-accounting's RDP accountant.
  - ``zcdp_code``: Jayaraman et al.'s released code, zCDP with ρ + 2 sqrt(ρ ln(1/δ)) = ε
    (spec C2).
  - ``exact_per_party`` (literal local mode only): ``exact`` with each party's own
    sensitivity 2G/n_j (:func:`per_party_noise_std`), the ``equal_privacy`` reading.

  For ε < 2 ln(1/δ): exact < rdp < zcdp_code < ma_tight < ma16 ≤ ma_int.

- :mod:`mpdp.privacy.ledger` reports the ε really given by the noise that was used:
  :func:`composed_gaussian_epsilon` (analytic, PLD or RDP), :func:`accounted_epsilon` for a
  std and a sensitivity, and :func:`worst_party_epsilon` for the literal local-then-aggregate
  mode: an upper bound by post-processing of the worst party's trajectory (spec M3.1, M4.1,
  I-1), valid for independent per-party noise only.

Import names from their modules: this package module imports nothing, so no module of the
package imports a package that imports it back (tests/test_import_graph.py).
"""
