"""Jobs, outputs and config checks of the least-squares study (workflow/rules/ls.smk)."""

from __future__ import annotations

from typing import Any

from mpdp.errors import ConfigError
from mpdp.studies.ls import EXPERIMENTS

RESULTS_DIR = "data/results/ls"
FIGURES_DIR = "reports/figures"


def enabled(cfg: dict[str, Any]) -> bool:
    """Whether the config runs the study (it has an ``ls:`` section)."""
    return "ls" in cfg


def check_config(cfg: dict[str, Any]) -> None:
    """Cross-checks the schema cannot express: the classical Gaussian mechanism (C3) needs each
    part εₖ of the budget below 1 (I-15)."""
    if not enabled(cfg):
        return
    ls = cfg["ls"]
    if ls["calibration"] == "classical":
        worst = max(ls["eps_grid"]) * max(ls["eps_split"], 1 - ls["eps_split"])
        if worst >= 1:
            raise ConfigError(
                "config key 'ls.eps_grid': the classical Gaussian mechanism (spec C3) holds only for "
                f"epsilon < 1 per release (I-15), but max(eps_grid) x split = {worst:g}; lower the "
                "grid or set ls.calibration: analytic"
            )


def table(experiment: str) -> str:
    return f"{RESULTS_DIR}/{experiment}.parquet"


def tail_table() -> str:
    return f"{RESULTS_DIR}/ls_1_tail.parquet"


def figure(experiment: str, ext: str = "png") -> str:
    return f"{FIGURES_DIR}/{experiment}.{ext}"


def figure_inputs(experiment: str) -> list[str]:
    """Tables the figure of ``experiment`` reads (LS-1 also its heavy-tail draws)."""
    files = [table(experiment)]
    return files + [tail_table()] if experiment == "ls_1" else files


def derived_tables() -> dict[str, str]:
    """Tables built from all experiment tables: the negative-closed-form table (the study's claims are
    in data/results/claims/, rule claims_tables)."""
    return {"negative_closed_form": f"{RESULTS_DIR}/negative_closed_form.parquet"}


def experiment_settings(cfg: dict[str, Any], experiment: str) -> dict[str, Any]:
    """The config subset an experiment job depends on (a Snakemake param: changes rerun it)."""
    ls = {k: v for k, v in cfg["ls"].items() if k not in EXPERIMENTS}
    return {"root_seed": cfg["root_seed"], **ls, experiment: cfg["ls"][experiment]}


def all_outputs(cfg: dict[str, Any]) -> list[str]:
    """Every file ``snakemake ls`` builds (empty if the study is off)."""
    if not enabled(cfg):
        return []
    files = [table(e) for e in EXPERIMENTS] + [tail_table()]
    files += [figure(e, ext) for e in EXPERIMENTS for ext in ("png", "pdf")]
    return files + list(derived_tables().values())
