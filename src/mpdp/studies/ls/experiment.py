"""One coarse job per experiment of the least-squares study (spec E6): config → tidy table.

Rows (columns in :data:`COLUMNS`, one row per setting, statistics over noise draws):

* ``ls_ssp`` (M14) for every t, ε and noise model (``independent`` | ``write_up``), with the
  B8 overlays (``writeup_formula``, ``delta_method`` mean, ``delta_method_median``);
  LS-1 also has the σ₂ = 0 ablation (``z2 = False``) where the printed closed form is negative;
* ``ls_sgd`` (M15) for every ε and noise option (its output does not depend on t: the
  protocol is the same whoever owns the records, so ``t`` is missing), plus a noise-free
  projected-SGD row (``noise_model = nonprivate``): the floor set by 𝒞;
* ``ols``: the non-private reference (excess 0).

Noise draws are vectorised: all ``draws`` d×d systems of one setting are one batched
``np.linalg.solve``; SGD runs are the rows of one parameter matrix.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from mpdp import seeding
from mpdp.claims.intervals import median_interval
from mpdp.engine import provenance as engine_provenance
from mpdp.errors import ConfigError
from mpdp.mechanisms import least_squares as lsq
from mpdp.privacy.calibration import PrivacyParameterError
from mpdp.studies.ls import data as ls_data
from mpdp.studies.ls import theory

#: column -> dtype of ``data/results/ls/<experiment>.parquet``
COLUMNS: dict[str, str] = {
    "experiment": "string",
    "dataset": "string",
    "synthetic": "bool",
    "mechanism": "string",  # ls_ssp | ls_sgd | ols
    "noise_model": "string",  # independent | write_up | permutation_zcdp | bst_sampling | nonprivate | none
    "calibration": "string",  # classical | analytic | zcdp_code | exact | bst | none
    "z2": "bool",  # False: σ₂ = 0 ablation (B8's negative case), not private
    "t": "Int64",
    "epsilon": "float64",
    "delta": "float64",
    "d": "int64",
    "n": "int64",
    "c_D": "float64",  # c(D) = Σx² (d = 1) or λ_min(XᵀX)
    "theta_star_norm": "float64",
    "zero_excess": "float64",  # excess risk of releasing θ = 0: θ*ᵀXᵀXθ* (the trivial baseline, issue 33)
    "sigma1": "float64",  # per-party std on Σxxᵀ (SSP) / std on the broadcast gradient (SGD)
    "sigma2": "float64",
    "s1": "float64",  # aggregated std on ΣCᵢ
    "s2": "float64",
    "eps_accounted": "float64",  # ε at δ the noise really gives (exact; RDP for bst_sampling)
    "excess_median": "float64",
    "excess_median_lo": "float64",  # distribution-free 95 % interval of the median
    "excess_median_hi": "float64",
    "excess_mean": "float64",  # sample mean over draws (the population mean does not exist)
    "excess_mean_se": "float64",
    "excess_q90": "float64",
    "draws": "int64",
    # the median excess of each of the ``ls.reps`` disjoint blocks of the draws (independent repetitions of
    # the setting, issue 42): the growth exponents in t are fitted per block
    "excess_rep_medians": "object",
    "pd_fallback": "float64",  # fraction of draws that needed the τI fallback
    "writeup_formula": "float64",  # printed closed form (d = 1 only)
    "delta_method": "float64",  # mean of the linearised excess (B8)
    "delta_method_median": "float64",  # its median (d = 1)
    "in_validity": "boolean",  # s₁ ≤ validity_ratio · c(D)
    **engine_provenance.COLUMNS,  # how the rows were computed (mpdp.engine.provenance)
}


#: the fewest noise draws one repetition (block) of a setting may have
MIN_BLOCK_DRAWS: int = 10


def zero_excess(theta_star: np.ndarray, gram: np.ndarray) -> float:
    """Excess risk of releasing θ = 0 (bounds.md B8 identity at θ = 0): the trivial baseline of the claims."""
    return float(lsq.excess_risk(np.zeros_like(theta_star)[None, :], theta_star, gram)[0])


def rep_medians(excess: np.ndarray, reps: int) -> list[float]:
    """The median of each of ``reps`` disjoint, equal blocks of the draws (in draw order: the draws are
    i.i.d., so each block is an independent repetition of the setting with draws // reps draws)."""
    per = excess.size // reps
    if per < MIN_BLOCK_DRAWS:
        raise ConfigError(f"config keys 'ls.draws' / 'ls.reps': {excess.size} draws in {reps} repetitions leave "
                          f"{per} per repetition; at least {MIN_BLOCK_DRAWS} are needed")
    return [float(np.median(b)) for b in excess[: per * reps].reshape(reps, per)]


def _summary(excess: np.ndarray) -> dict[str, float]:
    med, lo, hi = median_interval(excess)
    return {
        "excess_median": med,
        "excess_median_lo": lo,
        "excess_median_hi": hi,
        "excess_mean": float(np.mean(excess)),
        "excess_mean_se": float(np.std(excess, ddof=1) / np.sqrt(excess.size)) if excess.size > 1 else np.nan,
        "excess_q90": float(np.quantile(excess, 0.9)),
        "draws": int(excess.size),
    }


def load_data(experiment: str, cfg: dict[str, Any], root_seed: int) -> ls_data.LSData:
    """The data set of ``experiment`` (E6)."""
    sec = cfg[experiment]
    if experiment == "ls_1":
        return ls_data.synthetic_d1(root_seed, sec["n"], sec["slope"], sec["noise"])
    if experiment == "ls_2":
        return ls_data.synthetic_dd(root_seed, sec["n"], sec["d"], sec["theta_norm"], sec["noise"])
    if experiment == "ls_3":
        return ls_data.diabetes(root_seed, sec.get("max_records"))
    raise ConfigError(f"unknown least-squares experiment {experiment!r}; known: ls_1, ls_2, ls_3")


def ssp_rows(
    experiment: str, ds: ls_data.LSData, cfg: dict[str, Any], root_seed: int,
    noise_models: list[str], z2_options: list[bool],
) -> tuple[list[dict[str, Any]], dict[tuple, np.ndarray]]:
    """``ls_ssp`` rows for every (t, ε, noise model, z₂); also the raw excess draws by setting."""
    gram, xty = lsq.sufficient_statistics(ds.X, ds.y)
    theta_star = np.linalg.solve(gram, xty)
    n, d = ds.X.shape
    lam_min = float(np.linalg.eigvalsh(gram)[0])
    rows, raw = [], {}
    for z2 in z2_options:
        for eps in cfg["eps_grid"]:
            try:
                noise = lsq.ssp_calibrate(
                    eps, cfg["delta"], d, cfg["calibration"], cfg["eps_split"], cfg["delta_split"],
                    perturb_xty=z2,
                )
            except PrivacyParameterError as exc:
                raise ConfigError(f"config key 'ls.eps_grid' ({experiment}): {exc}") from None
            for t in cfg["t_grid"]:
                for model in noise_models:
                    rng = seeding.rng(root_seed, "ls", experiment, "ssp", int(t), float(eps), model, z2)
                    Z1, z2s = lsq.ssp_noise(
                        rng, t, cfg["draws"], d, noise.sigma1, noise.sigma2, model, cfg["symmetric_noise"]
                    )
                    thetas, tau = lsq.ssp_solve(gram, xty, Z1, z2s, cfg["pd_floor"])
                    if cfg["sigma3"] > 0:
                        thetas = thetas + cfg["sigma3"] * rng.standard_normal(thetas.shape)
                    excess = lsq.excess_risk(thetas, theta_star, gram)
                    raw[(int(t), float(eps), model, z2)] = excess
                    s1, s2 = theory.aggregate_stds(noise.sigma1, noise.sigma2, t, model)
                    delta_mean = theory.delta_method_mean(gram, theta_star, s1, s2, cfg["symmetric_noise"])
                    delta_mean += cfg["sigma3"] ** 2 * float(np.trace(gram))  # B8: z₃ adds σ₃² c(D)
                    rows.append({
                        "experiment": experiment, "dataset": ds.name, "synthetic": ds.synthetic,
                        "mechanism": "ls_ssp", "noise_model": model, "calibration": noise.calibration,
                        "z2": z2, "t": int(t), "epsilon": float(eps), "delta": cfg["delta"], "d": d,
                        "n": n, "c_D": lam_min, "theta_star_norm": float(np.linalg.norm(theta_star)),
                        "zero_excess": zero_excess(theta_star, gram),
                        "sigma1": noise.sigma1, "sigma2": noise.sigma2, "s1": s1, "s2": s2,
                        "eps_accounted": noise.eps_accounted, **_summary(excess),
                        "excess_rep_medians": rep_medians(excess, int(cfg["reps"])),
                        "pd_fallback": float(np.mean(tau > 0)),
                        "writeup_formula": (
                            theory.writeup_closed_form(float(gram[0, 0]), float(xty[0]),
                                                       noise.sigma1, noise.sigma2, t)
                            if d == 1 else np.nan
                        ),
                        "delta_method": delta_mean,
                        "delta_method_median": theory.delta_method_median_d1(delta_mean) if d == 1 else np.nan,
                        "in_validity": theory.in_validity_region(s1, gram, cfg["validity_ratio"]),
                    })
    return rows, raw


def sgd_rows(experiment: str, ds: ls_data.LSData, cfg: dict[str, Any], root_seed: int) -> list[dict[str, Any]]:
    """``ls_sgd`` rows: per noise option, all ε and a noise-free run, ``reps`` runs each, as the
    rows of one parameter matrix sharing each repetition's record schedule."""
    sgd = cfg["sgd"]
    gram, xty = lsq.sufficient_statistics(ds.X, ds.y)
    theta_star = np.linalg.solve(gram, xty)
    n, d = ds.X.shape
    radius, reps = sgd["radius"], sgd["reps"]
    eps_grid = [float(e) for e in cfg["eps_grid"]]
    rows = []
    for option in sgd["options"]:
        sigmas = [lsq.sgd_noise_std(option, e, cfg["delta"], n, radius, sgd["accountant"]) for e in eps_grid]
        col_sigma = np.repeat(np.array([*sigmas, 0.0]), reps)  # settings × reps
        schedules = np.stack([
            lsq.sgd_schedule(seeding.rng(root_seed, "ls", experiment, "sgd", option, "schedule", r), option, n)
            for r in range(reps)
        ])
        schedules = np.tile(schedules, (len(eps_grid) + 1, 1))
        rng = seeding.rng(root_seed, "ls", experiment, "sgd", option, "noise")
        thetas = lsq.noisy_sgd(ds.X, ds.y, col_sigma, schedules, radius, rng)
        excess = lsq.excess_risk(thetas, theta_star, gram).reshape(len(eps_grid) + 1, reps)
        for k, eps in enumerate([*eps_grid, np.nan]):
            private = k < len(eps_grid)
            sigma = sigmas[k] if private else 0.0
            rows.append({
                "experiment": experiment, "dataset": ds.name, "synthetic": ds.synthetic,
                "mechanism": "ls_sgd", "noise_model": option if private else "nonprivate",
                "calibration": (sgd["accountant"] if option == "permutation_zcdp" else "bst") if private else "none",
                "z2": True, "t": pd.NA, "epsilon": eps, "delta": cfg["delta"], "d": d, "n": n,
                "c_D": float(np.linalg.eigvalsh(gram)[0]), "theta_star_norm": float(np.linalg.norm(theta_star)),
                "zero_excess": zero_excess(theta_star, gram), "sigma1": sigma, "sigma2": np.nan, "s1": sigma, "s2": np.nan,
                "eps_accounted": lsq.sgd_epsilon(option, sigma, cfg["delta"], n, radius) if private else np.inf,
                **_summary(excess[k]), "pd_fallback": np.nan, "writeup_formula": np.nan,
                "delta_method": np.nan, "delta_method_median": np.nan, "in_validity": pd.NA,
            })
        if len(sgd["options"]) > 1 and option != sgd["options"][0]:
            rows.pop()  # one noise-free row per experiment is enough (same law for both options)
    return rows


def ols_row(experiment: str, ds: ls_data.LSData, cfg: dict[str, Any]) -> dict[str, Any]:
    """The non-private OLS reference row (excess 0 by definition)."""
    gram, xty = lsq.sufficient_statistics(ds.X, ds.y)
    n, d = ds.X.shape
    theta_star = np.linalg.solve(gram, xty)
    return {
        "experiment": experiment, "dataset": ds.name, "synthetic": ds.synthetic, "mechanism": "ols",
        "noise_model": "none", "calibration": "none", "z2": True, "t": pd.NA, "epsilon": np.nan,
        "delta": np.nan, "d": d, "n": n, "c_D": float(np.linalg.eigvalsh(gram)[0]),
        "theta_star_norm": float(np.linalg.norm(theta_star)), "zero_excess": zero_excess(theta_star, gram),
        "sigma1": 0.0, "sigma2": 0.0,
        "s1": 0.0, "s2": 0.0, "eps_accounted": np.inf,
        **_summary(lsq.excess_risk(theta_star[None, :], theta_star, gram)), "pd_fallback": 0.0,
        "writeup_formula": np.nan, "delta_method": 0.0, "delta_method_median": 0.0, "in_validity": pd.NA,
    }


def conform(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Rows as a table with exactly :data:`COLUMNS` and their dtypes."""
    frame = pd.DataFrame(rows)
    for col, dtype in COLUMNS.items():
        if col not in frame:
            frame[col] = pd.NA
        frame[col] = frame[col].astype(dtype)
    # how the rows were computed (mpdp.engine.provenance): the study's own NumPy float64 code
    return engine_provenance.fill(frame[list(COLUMNS)],
                                  lambda f: pd.Series(False, index=f.index)).reset_index(drop=True)


def run(experiment: str, cfg: dict[str, Any], root_seed: int) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """The table of ``experiment`` and, for LS-1, the raw excess draws of its heaviest-tailed
    settings (largest t, smallest ε, both noise models) for the running-mean panel."""
    ds = load_data(experiment, cfg, root_seed)
    sec = cfg[experiment]
    if experiment == "ls_1":
        z2_options = [True, False] if sec["sigma2_zero"] else [True]
        rows, raw = ssp_rows(experiment, ds, cfg, root_seed, sec["noise_models"], z2_options)
        t_max, eps_min = int(max(cfg["t_grid"])), float(min(cfg["eps_grid"]))
        tail = pd.concat([
            pd.DataFrame({"noise_model": model, "t": t_max, "epsilon": eps_min,
                          "draw": np.arange(1, raw[(t_max, eps_min, model, True)].size + 1),
                          "excess": raw[(t_max, eps_min, model, True)]})
            for model in sec["noise_models"]
        ], ignore_index=True)
        return conform([*rows, ols_row(experiment, ds, cfg)]), tail
    rows, _ = ssp_rows(experiment, ds, cfg, root_seed, sec["noise_models"], [True])
    rows += sgd_rows(experiment, ds, cfg, root_seed)
    return conform([*rows, ols_row(experiment, ds, cfg)]), None


def negative_closed_form(table: pd.DataFrame) -> pd.DataFrame:
    """Settings where the printed closed form is negative, against the measured excess (B8)."""
    rows = table[(table["mechanism"] == "ls_ssp") & (table["writeup_formula"] < 0)]
    cols = ["t", "epsilon", "noise_model", "z2", "sigma1", "sigma2", "writeup_formula",
            "excess_median", "excess_mean", "delta_method", "draws"]
    return rows[cols].sort_values(["z2", "noise_model", "t", "epsilon"]).reset_index(drop=True)
