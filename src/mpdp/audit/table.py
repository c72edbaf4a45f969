"""Run the audit settings of the config and write the audit table (spec audit.md, E10).

One row per audited (mechanism, setting): the claimed ε, the ε the mechanism's ledger
accounts, the exact ε of the implemented noise on the audited pair (ε_up), the 95 % lower
bound ε̂ and the counts behind it. Settings whose data set is not available are skipped
(reported by :func:`run_settings`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from mpdp import results
from mpdp.audit.adapters import AuditContext, GradientCanaryAdapter, setting_label
from mpdp.audit.registry import ADAPTERS, get
from mpdp.engine import provenance as engine_provenance
from mpdp.io import atomic_path

#: column name -> pandas dtype of data/results/audit/audit.parquet
COLUMNS: dict[str, str] = {
    "mechanism": "string",  # audit adapter id (wyx, wddp_literal, nl2_output, …)
    "setting": "string",  # readable setting id
    "method": "string",  # many_draws | one_run
    "dataset": "string",  # data set whose sizes are used (<NA> for synthetic pairs)
    "privacy_unit": "string",  # record | party | validation_record (private_selection, unit validation)
    "planted_bug": "boolean",  # a bug deliberately planted (mpdp.audit.bugs)
    "bug": "string",  # which planted bug (mpdp.audit.bugs; readable names: report.BUG_TEXT)
    "noise_factor": "float64",  # multiplier of the noise std actually used (1 = honest)
    "eps_claimed": "float64",  # ε the mechanism claims
    "eps_accounted": "float64",  # ε its ledger gives for the calibrated noise
    "eps_accounted_scope": "string",  # aggregate | worst_party
    "accountant": "string",  # accountant of the calibration (pure for N-L2)
    "delta": "float64",
    "beta": "float64",  # failure probability of the bound
    "eps_lower": "float64",  # the (1 − β) lower bound ε̂
    "eps_up": "float64",  # exact ε of the implemented noise on the audited pair (ceiling)
    "mu": "float64",  # Gaussian-DP μ of the audited pair (one-run)
    "eps_gdp": "float64",  # Gaussian-DP fit of the scores: a point estimate, not a bound
    "noise": "float64",  # σ per step (Gaussian) or 1/b (N-L2) actually used
    "T": "int64",
    "trials": "int64",  # canaries (one-run) or draws per side (many draws)
    "k": "Int64",  # one-run: guesses per side of the best k
    "guesses": "Int64",
    "correct": "Int64",
    "tp": "Int64",  # many draws: evaluation counts at t*
    "fp": "Int64",
    "threshold": "float64",
    "n_min": "Int64",
    "n": "Int64",
    "data": "string",  # what data the audit used
    "seconds": "float64",
}


def context_from_config(
    audit_cfg: Mapping[str, Any],
    root_seed: int,
    n_train: Mapping[str, int],
    processed: Mapping[str, str] | None = None,
    benchmark_delta: float | None = None,
) -> AuditContext:
    """The :class:`AuditContext` of the validated config section ``audit``.

    ``n_train``: training records per available data set (data cards); ``processed``: the
    folder ``data/processed/<id>`` of each (for real-data pairs). δ of the Gaussian mechanisms
    (spec A0): ``benchmark.delta`` when the config has a ``benchmark`` section (pass it as
    ``benchmark_delta``), so the audit and the cross-paper benchmark state the same (ε, δ);
    ``audit.delta`` otherwise. Single pure-DP releases are audited at δ = 0 regardless.
    """
    return AuditContext(
        root_seed=int(root_seed),
        beta=float(audit_cfg["beta"]),
        delta=float(audit_cfg["delta"] if benchmark_delta is None else benchmark_delta),
        bug_noise_factor={k: float(v) for k, v in audit_cfg["bug_noise_factor"].items()},
        n_train=dict(n_train),
        one_run=dict(audit_cfg["one_run"]),
        many_draws=dict(audit_cfg["many_draws"]),
        processed=dict(processed or {}),
    )


def settings_to_run(audit_cfg: Mapping[str, Any], available: list[str]) -> tuple[list[dict], list[str]]:
    """(settings whose data set is available or not needed, labels of the skipped ones)."""
    keep, skipped = [], []
    for setting in audit_cfg["settings"]:
        if setting.get("dataset") and setting["dataset"] not in available:
            skipped.append(f"{setting['mechanism']} {setting_label(setting)}")
        else:
            keep.append(dict(setting))
    return keep, skipped


def run_settings(
    settings: list[dict], ctx: AuditContext, log: Callable[[str], None] = lambda _: None
) -> pd.DataFrame:
    """Audit every setting and return the table (columns :data:`COLUMNS`)."""
    rows = []
    for setting in settings:
        row = get(setting["mechanism"]).run(setting, ctx)
        log(
            f"{row['mechanism']} [{row['setting']}]: eps_lower={row['eps_lower']:.4g} "
            f"eps_up={row['eps_up']:.4g} eps_accounted={row['eps_accounted']:.4g} "
            f"({row['seconds']:.1f} s)"
        )
        rows.append(row)
    return conform(pd.DataFrame(rows))


def _engine_rows(frame: pd.DataFrame) -> pd.Series:
    """Rows whose mechanism ran in :func:`mpdp.engine.gd.noisy_gd` (the gradient canary audits)."""
    engine_ids = [key for key, adapter in ADAPTERS.items() if isinstance(adapter, GradientCanaryAdapter)]
    return frame["mechanism"].isin(engine_ids)


def conform(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with exactly :data:`COLUMNS` in order and their dtypes (an adapter's row),
    followed by the provenance columns of :mod:`mpdp.engine.provenance` (kept where present,
    else filled)."""
    frame = frame.copy()
    for column in COLUMNS:
        if column not in frame:
            frame[column] = None
    kept = [column for column in engine_provenance.COLUMNS if column in frame]
    return engine_provenance.fill(frame[[*COLUMNS, *kept]].astype(COLUMNS), _engine_rows)


def write(frame: pd.DataFrame, path: str | Path) -> None:
    """Write the audit table atomically (parquet)."""
    with atomic_path(path) as tmp:
        conform(frame).to_parquet(tmp, index=False)


def read(path: str | Path) -> pd.DataFrame:
    """Read an audit table; a one-line error if it is missing or unreadable."""
    return conform(results.read_parquet(path, "audit table"))
