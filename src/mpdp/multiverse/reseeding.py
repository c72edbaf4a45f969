"""The reseeding check (issue 60 item 5): one study rebuilt on its full grid under other seeds,
its verdicts and cells compared with the headline (the main build's claims tables of that study,
rule ``claims_tables_of_study``).

The reseeds are ``multiverse.check_reseeds`` (by default one: ``root_seed: 1`` and ``split.seed: 1``
together, the root of every random stream and the train/test splits' own seed; the schema's
default when the config has no ``multiverse`` section). Each runs as a universe of the
multiverse's machinery (:func:`mpdp.multiverse.universe.run`: its own folder, a nested Snakemake,
its ``status.json``) with the **main config** and the reseed's keys set (:func:`reseed_config`:
``multiverse.full_grid``'s universe config, so no ``multiverse.base``), from scratch (a reseed
reruns the data preparation and every job that draws noise, so nothing of the main build could
be kept), building only the study's own claims tables (:func:`targets`: rule
``claims_tables_of_study``, the one engine on that study's results; the same rows as the study's
rows of the main build's tables, since the engine scores each study on its own).

:func:`compare` lines the reseeded tables up with the headline's rows of that study:

* per **claim-reading** (``study``, ``claim_id``, ``reading``): the headline's and the reseed's
  verdict and whether the verdict class changed (a claim-reading without a row in one build counts
  as changed, its verdict shown as :data:`NO_ROW`);
* per **cell** present in both builds: *decided* = ``for`` or ``against`` (the engine's significant
  cell verdicts, after Holm); a **sign reversal** is a cell decided ``for`` in one build and
  ``against`` in the other; a cell *moves* when it is decided in one build only.

:func:`summary` gives, per reseed, the share of claim-readings whose class changed and the
reversals among the cells decided in both builds; :func:`markdown` the table for docs/claims.md.

Entry point: ``python -m mpdp.pipeline.reseeding --study <id>`` (:func:`main`) runs
``snakemake`` on :func:`table_path` and prints the table (docs/claims.md "Reseeding check").
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from mpdp import config as mpdp_config
from mpdp import results
from mpdp.errors import ConfigError, InputDataError, MpdpError
from mpdp.multiverse import spec
from mpdp.multiverse.effect import CELL_KEYS, KEYS

#: where each reseeded study runs (``<ROOT>/<study>/<reseed id>/``), relative to the workflow root
ROOT = f"{spec.ROOT}/reseeding"
#: a study's claims tables inside a nested run (rule ``claims_tables_of_study``)
STUDY_TABLES = "data/results/claims/by_study/{study}/{name}.parquet"
#: the check's outputs: the comparison table and its markdown rendering
TABLE = "data/results/claims/reseeding_{study}.parquet"
MARKDOWN = "data/results/claims/reseeding_{study}.md"
#: the cell verdicts that decide a cell one way (significant after Holm)
DECIDED: tuple[str, ...] = ("for", "against")
#: the verdict shown for a claim-reading one build has no row for
NO_ROW = "(no row)"
#: the comparison table's columns (one row per reseed and claim-reading)
COLUMNS = ["reseed", "study", "claim_id", "reading", "claim", "headline_verdict", "verdict", "class_changed",
           "class_change", "n_cells_both", "n_decided_both", "n_reversed", "n_moved"]

log = logging.getLogger("mpdp.reseeding")


def study_tables(study: str) -> tuple[str, str]:
    """(cells, verdicts) of ``study``'s own claims tables (rule ``claims_tables_of_study``)."""
    return (STUDY_TABLES.format(study=study, name="cells"), STUDY_TABLES.format(study=study, name="verdicts"))


def targets(study: str) -> tuple[str, str]:
    """What a reseeded run of ``study`` builds: its own claims tables."""
    return study_tables(study)


def table_path(study: str) -> str:
    """The check's table for ``study`` (the Snakemake target)."""
    return TABLE.format(study=study)


def folder(study: str, reseed: spec.Universe) -> str:
    """The folder of one reseeded run of ``study``."""
    return f"{ROOT}/{study}/{reseed.id}"


def reseeds(cfg: Mapping[str, Any]) -> list[spec.Universe]:
    """The reseeds to run: ``multiverse.check_reseeds`` (the schema's default, one reseed of both
    ``root_seed`` and ``split.seed``, without a ``multiverse`` section or the key), seed keys only
    (:func:`mpdp.multiverse.spec.check_seed_keys`), each as a universe of kind ``reseed``; one whose
    values are the main config's is left out (it would repeat the headline: :func:`repeats_headline`)."""
    listed = spec.section(cfg).get("check_reseeds") if "multiverse" in cfg else None
    if listed is None:
        listed = mpdp_config.schema()["properties"]["multiverse"]["properties"]["check_reseeds"]["default"]
    out = []
    for i, seeds in enumerate(listed):
        spec.check_seed_keys(seeds, f"multiverse.check_reseeds.{i}")
        u = spec.Universe(spec.RESEED, ", ".join(seeds), dict(seeds), "the main build with other random streams", i)
        if not repeats_headline(cfg, u):
            out.append(u)
    return out


def repeats_headline(cfg: Mapping[str, Any], reseed: spec.Universe) -> bool:
    """Whether ``reseed`` sets only the main config's own values (its run would be the headline)."""
    return all(spec.same(spec.get(cfg, k), v) for k, v in reseed.settings.items())


def reseed_config(cfg: Mapping[str, Any], reseed: spec.Universe) -> dict[str, Any]:
    """The config of a reseeded run: the main config (no ``multiverse`` section, no
    ``multiverse.base``: the full grid) with the reseed's keys set."""
    full = {**cfg, "multiverse": {**spec.section(cfg), "full_grid": True}}
    return spec.universe_config(full, reseed)


def check_study(study: str, running: Sequence[str]) -> None:
    """``study`` must be a study this config runs and that declares claims (one line otherwise)."""
    if study not in running:
        raise ConfigError(f"reseeding check: study {study!r} has no claims under this config (its studies with "
                          f"claims: {list(running)}); pick one of them with --study")


def _verdict_rows(verdicts: pd.DataFrame, study: str) -> pd.DataFrame:
    rows = verdicts[verdicts["study"].astype(str) == study]
    return rows[[*KEYS, "claim", "verdict"]].astype({"verdict": str})


def compare(study: str, headline: tuple[pd.DataFrame, pd.DataFrame], reseeded: Mapping[str, tuple[pd.DataFrame,
            pd.DataFrame]]) -> pd.DataFrame:
    """The comparison table (:data:`COLUMNS`): per reseed (label -> its (cells, verdicts)) and
    claim-reading of ``study``, the headline's and the reseed's verdicts, whether the class
    changed, and the claim's cells present in both builds, decided in both, reversed and moved.
    ``headline``: the main build's (cells, verdicts), every study's rows (only ``study``'s are used)."""
    h_cells, h_verdicts = headline
    h_rows = _verdict_rows(h_verdicts, study)
    h_cells = h_cells[h_cells["study"].astype(str) == study]
    out = []
    for label, (cells, verdicts) in reseeded.items():
        r_rows = _verdict_rows(verdicts, study)
        rows = h_rows.merge(r_rows, on=KEYS, how="outer", suffixes=("_h", "_r"))
        # the headline's declaration order, then the claim-readings only the reseed has (an outer merge sorts)
        order = list(dict.fromkeys(tuple(k) for k in [*h_rows[KEYS].to_numpy(), *r_rows[KEYS].to_numpy()]))
        rank = {k: i for i, k in enumerate(order)}
        rows = rows.assign(_rank=[rank[tuple(k)] for k in rows[KEYS].to_numpy()]).sort_values("_rank", kind="stable")
        paired = h_cells[[*CELL_KEYS, "cell_verdict"]].merge(
            cells[cells["study"].astype(str) == study][[*CELL_KEYS, "cell_verdict"]], on=CELL_KEYS,
            suffixes=("_h", "_r"))
        hv, rv = paired["cell_verdict_h"].astype(str), paired["cell_verdict_r"].astype(str)
        dh, dr = hv.isin(DECIDED), rv.isin(DECIDED)
        paired = paired.assign(n_cells_both=1, n_decided_both=(dh & dr).astype(int),
                               n_reversed=(dh & dr & (hv != rv)).astype(int), n_moved=(dh != dr).astype(int))
        per_claim = paired.groupby(KEYS, as_index=False)[["n_cells_both", "n_decided_both", "n_reversed",
                                                          "n_moved"]].sum()
        rows = rows.merge(per_claim, on=KEYS, how="left")
        for _, r in rows.iterrows():
            h = NO_ROW if pd.isna(r["verdict_h"]) else str(r["verdict_h"])
            v = NO_ROW if pd.isna(r["verdict_r"]) else str(r["verdict_r"])
            out.append({"reseed": label, "study": study, "claim_id": str(r["claim_id"]), "reading": str(r["reading"]),
                        "claim": str(r["claim_h"] if not pd.isna(r["claim_h"]) else r["claim_r"]),
                        "headline_verdict": h, "verdict": v, "class_changed": h != v,
                        "class_change": "" if h == v else f"{h}→{v}",
                        **{c: int(0 if pd.isna(r[c]) else r[c])
                           for c in ("n_cells_both", "n_decided_both", "n_reversed", "n_moved")}})
    table = pd.DataFrame(out, columns=COLUMNS)
    return table.astype({"class_changed": bool, "n_cells_both": "int64", "n_decided_both": "int64",
                         "n_reversed": "int64", "n_moved": "int64"})


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per reseed: claim-readings, how many changed class and their share; cells decided in both
    builds, sign reversals among them, cells that moved between decided and not."""
    rows = []
    for label, g in table.groupby("reseed", sort=False):
        n, changed = len(g), int(g["class_changed"].sum())
        rows.append({"reseed": label, "claim_readings": n, "class_changed": changed,
                     "share_changed": changed / n if n else float("nan"),
                     "cells_decided_both": int(g["n_decided_both"].sum()), "sign_reversals": int(g["n_reversed"].sum()),
                     "cells_moved": int(g["n_moved"].sum())})
    return pd.DataFrame(rows, columns=["reseed", "claim_readings", "class_changed", "share_changed",
                                       "cells_decided_both", "sign_reversals", "cells_moved"])


def markdown(table: pd.DataFrame) -> str:
    """The comparison as two markdown tables: per claim-reading (headline, each reseed's verdict,
    class changed?, reversals) and the per-reseed summary."""
    labels = list(dict.fromkeys(table["reseed"]))
    wide = table.pivot_table(index=["claim_id", "reading"], columns="reseed", values="verdict", aggfunc="first",
                             sort=False)
    first = table.drop_duplicates(["claim_id", "reading"]).set_index(["claim_id", "reading"])
    changed = table.groupby(["claim_id", "reading"], sort=False)["class_changed"].any()
    reversed_ = table.groupby(["claim_id", "reading"], sort=False)["n_reversed"].apply(
        lambda s: " / ".join(str(int(x)) for x in s))
    head = ["claim", "reading", "headline", *labels, "class changed?", f"sign reversals ({' / '.join(labels)})"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in first.index:
        reading = str(key[1])
        lines.append("| " + " | ".join([str(key[0]), reading, first.loc[key, "headline_verdict"],
                                        *(str(wide.loc[key, lab]) if lab in wide.columns else NO_ROW for lab in labels),
                                        "yes" if changed[key] else "no", reversed_[key]]) + " |")
    s = summary(table)
    lines += ["", "| reseed | claim-readings | class changed | share | cells decided in both | sign reversals "
              "| cells moved |", "|---|---|---|---|---|---|---|"]
    for _, r in s.iterrows():
        lines.append(f"| {r['reseed']} | {r['claim_readings']} | {r['class_changed']} | {r['share_changed']:.0%} | "
                     f"{r['cells_decided_both']} | {r['sign_reversals']} | {r['cells_moved']} |")
    return "\n".join(lines) + "\n"


def read(root: str | Path, study: str) -> pd.DataFrame | None:
    """``study``'s comparison table under the workflow root ``root``, or None when the check was
    not run for it (the report reads it when present: the check is not part of ``all``)."""
    path = Path(root) / table_path(study)
    if not path.is_file():
        return None
    table = results.read_parquet(path, f"reseeding check table of {study}")  # damaged: one line
    if missing := [c for c in COLUMNS if c not in table]:
        raise InputDataError(f"{path} lacks columns {missing}: rerun `python -m mpdp.pipeline.reseeding "
                             f"--study {study}`")
    return table


def stale_readings(table: pd.DataFrame, verdicts: pd.DataFrame, study: str) -> list[str]:
    """The claim-readings whose headline verdict in ``table`` is not the current build's verdict in
    ``verdicts`` (the claims engine's table): a check made against an earlier build (non-empty:
    its numbers no longer speak for this build's verdicts)."""
    now = {(str(r["claim_id"]), str(r["reading"])): str(r["verdict"])
           for _, r in verdicts[verdicts["study"].astype(str) == study].iterrows()}
    then = {(str(r["claim_id"]), str(r["reading"])): str(r["headline_verdict"]) for _, r in table.iterrows()}
    keys = set(now) | set(then)
    return sorted(f"{c} ({r})" for c, r in keys if now.get((c, r), NO_ROW) != then.get((c, r), NO_ROW))


def command(study: str) -> str:
    """The one command that runs the check for ``study`` (docs/claims.md)."""
    return f"python -m mpdp.pipeline.reseeding --study {study}"


def tables_stamp(root: str | Path, studies: Sequence[str]) -> str:
    """A digest of the check tables present under ``root`` for ``studies`` (the report's rule
    carries it as a parameter, so a check run after the report rebuilds the report without
    pulling the check into the report's DAG; '' when none exists)."""
    digest = hashlib.sha256()
    found = False
    for study in studies:
        path = Path(root) / table_path(study)
        if path.is_file():
            found = True
            digest.update(study.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest() if found else ""


def report_note(table: pd.DataFrame | None, verdicts: pd.DataFrame, study: str, limit: int = 4) -> str:
    """One line for a study's verdicts on the report's first screen (issue 60: the share of
    claim-readings that change class stated beside the verdicts): per reseed, how many
    claim-readings change class and their share (the first ``limit`` named), and the sign reversals
    among the cells decided in both builds. Without a table, or with one made against another
    build (:func:`stale_readings`), the line says so and gives the :func:`command`."""
    if table is None or table.empty:
        return f"**Reseeding check**: not run for this build (`{command(study)}`; docs/claims.md)."
    if stale := stale_readings(table, verdicts, study):
        return (f"**Reseeding check**: the table on disk was made against another build ({len(stale)} headline "
                f"verdicts differ from this build's, e.g. {stale[0]}); rerun `{command(study)}`.")
    parts = []
    for _, r in summary(table).iterrows():
        changed = table[(table["reseed"] == r["reseed"]) & table["class_changed"]]
        named = ", ".join(f"{c['claim_id']} ({c['reading']}) {c['class_change']}" for _, c in changed.head(limit).iterrows())
        more = f" and {len(changed) - limit} more" if len(changed) > limit else ""
        which = f": {named}{more}" if named else ""
        parts.append(f"rebuilt on the full grid with {r['reseed']}, {r['class_changed']} of {r['claim_readings']} "
                     f"claim-readings change class ({r['share_changed']:.0%}){which}; "
                     f"**{r['sign_reversals']} sign reversals** among the {r['cells_decided_both']} cells decided "
                     f"in both builds, {r['cells_moved']} cells moved between decided and undecided")
    return "**Reseeding check**: " + "; ".join(parts) + "."


def main(argv: Sequence[str] | None, studies: Any) -> int:
    """``python -m mpdp.pipeline.reseeding --study <id> [--cores N] [--configfile F …] [-n]``:
    build the check's table with Snakemake in the current directory (the workflow root) and print it.
    ``studies``: the study registry (:mod:`mpdp.studies.registry`, passed in by the entry point: a
    shared layer imports no study)."""
    parser = argparse.ArgumentParser(prog="python -m mpdp.pipeline.reseeding",
                                     description="Rebuild one study on its full grid under the multiverse's reseeds "
                                                 "and compare its verdicts and cells with the main build's "
                                                 "(docs/claims.md, 'Reseeding check').")
    parser.add_argument("--study", required=True, help="a study id (wddp, voting, admm, benchmark, ls)")
    parser.add_argument("--cores", default="all", help="cores for Snakemake (default: all)")
    parser.add_argument("--configfile", nargs="+", default=[], help="config files, as for snakemake")
    parser.add_argument("-n", "--dry-run", action="store_true", help="plan only (snakemake -n)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s mpdp.reseeding: %(message)s", datefmt="%H:%M:%S")
    try:
        studies.get(args.study)  # an unknown id: one line naming the known ones
        if not Path("Snakefile").is_file():
            raise ConfigError("reseeding check: run it in the workflow's root (the folder holding the Snakefile)")
        cfg = mpdp_config.validate(_merged(args.configfile))
        check_study(args.study, [s.id for s in studies.running(cfg, cfg["datasets"]) if s.claims is not None])
        labels = [u.value_label for u in reseeds(cfg)]
        if not labels:
            raise ConfigError("reseeding check: every entry of multiverse.check_reseeds equals the main config's seeds; "
                              "give another seed (e.g. multiverse: {check_reseeds: [{root_seed: 1, split.seed: 1}]})")
    except MpdpError as exc:
        sys.stderr.write(f"mpdp: {exc}\n")
        return 2
    target = table_path(args.study)
    log.info("study %s on its full grid, reseeds: %s; headline: the main build's claims tables of the study (built first if "
             "missing); each reseeded run logs to logs/reseeding/%s/<reseed>.snakemake.log", args.study,
             "; ".join(labels), args.study)
    cmd = [sys.executable, "-m", "snakemake", "--cores", str(args.cores), target,
           *(["--configfile", *args.configfile] if args.configfile else []), *(["-n"] if args.dry_run else [])]
    log.info("running: %s", " ".join(cmd))
    proc = subprocess.run(cmd)
    if proc.returncode != 0:
        sys.stderr.write(f"mpdp: reseeding check of {args.study}: snakemake exited with status {proc.returncode}; "
                         f"see its output above and logs/reseeding/{args.study}/\n")
        return proc.returncode
    if args.dry_run:
        return 0
    try:
        text = Path(MARKDOWN.format(study=args.study)).read_text(encoding="utf-8")
    except OSError as exc:
        sys.stderr.write(f"mpdp: reseeding check of {args.study}: {exc}\n")
        return 1
    log.info("done: %s (and %s)", target, MARKDOWN.format(study=args.study))
    sys.stdout.write(text)
    return 0


def _merged(configfiles: Sequence[str]) -> dict[str, Any]:
    """The config Snakemake loads: the Snakefile's config/config.yaml, then the given files merged
    over it in order (a later file's keys over an earlier one's, section by section)."""
    merged: dict[str, Any] = {}
    for f in ["config/config.yaml", *configfiles]:
        path = Path(f)
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist")
        try:
            _update(merged, yaml.safe_load(path.read_text()) or {})
        except yaml.YAMLError as exc:
            raise ConfigError(f"config file {path} is not valid YAML: {exc}") from None
    return merged


def _update(into: dict[str, Any], new: Mapping[str, Any]) -> None:
    for k, v in new.items():
        if isinstance(v, Mapping) and isinstance(into.get(k), dict):
            _update(into[k], v)
        else:
            into[k] = v


def read_status(status_path: str | Path) -> dict[str, Any]:
    """A reseeded run's status; :class:`InputDataError` when its run failed (its reason and log)."""
    from mpdp.io import read_json

    status = read_json(status_path, "reseeded run status file")
    if not status.get("ok"):
        raise InputDataError(f"reseeded run {status.get('universe')} failed: {status.get('error')} "
                             f"(log: {status.get('log')})")
    return status
