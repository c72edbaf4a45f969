"""The private selection's budgets of the benchmark, computed once for every job (spec E10
"Hyper-parameters"; issue 45).

:func:`mpdp.studies.benchmark.selection.budget` searches each mechanism's per-trial ε at every ε of
``benchmark.eps_grid`` (a bisection on the mechanism's RDP curve; for DVP/PVP each point of the curve
is a PLD composition, ≈ 20 CPU s per ε). It reads nothing but the ``benchmark`` section, so rule
``benchmark_budgets`` computes it once (:func:`compute`, :func:`write`: every configured mechanism at
every ε of the grid, with its :func:`~mpdp.studies.benchmark.selection.slack` record) into
:data:`PATH`, and every ``benchmark_job`` loads that file (:func:`install`) instead of repeating the
search in each data set's job; likewise the ADMM family's per-step α at every ε its jobs calibrate to
(:func:`admm_alphas`). The file names the hash of the section it was made for
(:func:`section_hash`); a job of another section refuses it with one line. Floats go through JSON
unchanged (shortest round-trip repr), so the tables are bit-identical to computing in the job.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mpdp import io
from mpdp.errors import ConfigError, InputDataError
from mpdp.studies.benchmark import calibration as calib
from mpdp.studies.benchmark import plan, registry, selection
from mpdp.studies.benchmark.builtin import ADMMFamily

#: where rule ``benchmark_budgets`` writes the budgets
PATH = "data/results/benchmark/budgets.json"
#: what the file is, in its error messages
WHAT = "benchmark selection budgets"
#: the ``benchmark`` keys the budgets do not depend on (left out of the hash and of the rule's keys)
NOT_READ = ("primary_metric",)


def section_hash(cfg: Mapping[str, Any]) -> str:
    """sha256 of the ``benchmark`` section (less :data:`NOT_READ`) the budgets are computed from."""
    section = {k: v for k, v in cfg["benchmark"].items() if k not in NOT_READ}
    return "sha256:" + hashlib.sha256(json.dumps(section, sort_keys=True, default=str).encode()).hexdigest()


def compute(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """Every configured private mechanism's budget and slack at every ε of the grid under the
    private protocol (none for the non-private reference, none under ``public``/``oracle``: their
    rows pay no selection budget). A budget that
    cannot be met keeps its one-line :class:`ConfigError` message: the job that would use it fails
    with it, as it would computing it itself."""
    grid = [float(e) for e in cfg["benchmark"]["eps_grid"]]
    mechanisms: dict[str, list[dict[str, Any]]] = {}
    if selection.headline(cfg) == "private":
        for mech in registry.configured(cfg):
            if mech.family == "reference":
                continue
            entries = []
            for eps in grid:
                try:
                    bud = selection.budget(cfg, mech.id, eps)
                    entries.append({"epsilon": eps, "budget": selection.budget_record(bud),
                                    "slack": selection.slack(cfg, mech.id, eps)})
                except ConfigError as exc:
                    entries.append({"epsilon": eps, "error": str(exc)})
            mechanisms[mech.id] = entries
    return {"benchmark_section": section_hash(cfg), "protocol": selection.headline(cfg), "eps_grid": grid,
            "mechanisms": mechanisms, "admm_alphas": admm_alphas(cfg, mechanisms)}


def admm_alphas(cfg: Mapping[str, Any], mechanisms: Mapping[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The per-step α (:func:`mpdp.studies.benchmark.calibration.admm_alpha`) of every ε an ADMM job
    calibrates a run to: each ε of the grid and the reference cell's (papers' reading, public and
    oracle protocols) and each private budget's trial and final ε. Each is a bisection of ~47 PLD
    compositions of T steps, the same in every data set's job (issue 45), so it is computed here
    once. Empty when no ADMM-family mechanism is configured."""
    a, b = cfg["benchmark"]["admm"], cfg["benchmark"]
    admm = [m.id for m in registry.configured(cfg) if isinstance(m, ADMMFamily)]
    if not admm:
        return {}
    eps = {float(e) for e in b["eps_grid"]} | {plan.reference_cell(cfg)[2]}
    for mech in admm:
        for entry in mechanisms.get(mech, []):
            if "budget" in entry:
                eps |= {float(entry["budget"]["eps_trial"]), float(entry["budget"]["eps_final"])}
    T, delta, method = int(a["T"]), float(b["delta"]), str(a["accountant"])
    return {"T": T, "delta": delta, "accountant": method,
            "alphas": [[e, calib.admm_alpha(e, T, delta, method)] for e in sorted(eps)]}


def write(cfg: Mapping[str, Any], path: str | Path) -> None:
    """Rule ``benchmark_budgets``: :func:`compute`, written atomically."""
    io.write_json(compute(cfg), path)


def install(cfg: Mapping[str, Any], path: str | Path) -> int:
    """Load the budgets file ``path`` into :func:`mpdp.studies.benchmark.selection.budget`'s memo
    for ``cfg``; returns how many (mechanism, ε) budgets it holds.

    Raises :class:`InputDataError` (one line: the file and its rebuild command) when the file is
    missing, damaged or made for another ``benchmark`` section.
    """
    record = io.read_json(path, WHAT)
    try:
        made_for, mechanisms = record["benchmark_section"], record["mechanisms"]
        entries = [(mech, e) for mech, es in mechanisms.items() for e in es]
        installed = [(mech, float(e["epsilon"]), _installed(e)) for mech, e in entries]
    except (TypeError, KeyError, ValueError, AttributeError) as exc:
        raise io.unreadable(path, WHAT, ValueError(f"no valid budget record: {exc!r}")) from None
    if made_for != section_hash(cfg):
        raise InputDataError(f"{WHAT} {path} were made for another 'benchmark' config section ({made_for}, this "
                             f"run's is {section_hash(cfg)}); {io.rebuild_hint(path)}")
    for mech, eps, rec in installed:
        selection.install(cfg, mech, eps, rec)
    if alphas := record.get("admm_alphas"):
        try:
            for eps, alpha in alphas["alphas"]:
                calib.install_admm_alpha(eps, alphas["T"], alphas["delta"], alphas["accountant"], alpha)
        except (TypeError, KeyError, ValueError) as exc:
            raise io.unreadable(path, WHAT, ValueError(f"no valid ADMM α record: {exc!r}")) from None
    return len(installed)


def _installed(entry: Mapping[str, Any]) -> selection.Installed:
    if "error" in entry:
        return selection.Installed(str(entry["error"]), None)
    b = entry["budget"]
    bud = selection.Budget(**{k: float(b[k]) for k in selection.Budget.__dataclass_fields__})
    return selection.Installed(bud, {k: float(v) for k, v in entry["slack"].items()})
