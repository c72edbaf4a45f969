"""Plan of the voting study (spec experiments.md E5): tables, M grid, splits, mechanism lists.

A *table* is one data set in one task: ``<dataset>`` (binary ±1 labels) or
``kddcup99_multiclass`` (the 5-class label, spec M13). Each table is one coarse job writing
``data/results/voting/<table>.parquet``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from mpdp.data import registry
from mpdp.errors import ConfigError
from mpdp.seeding import KeyPart, rng, tuning_key, tuning_rng

MULTICLASS_SUFFIX = "_multiclass"
#: data sets with a multiclass label in the data layer (spec E5)
MULTICLASS_DATASETS = registry.multiclass()

#: private mechanisms per task (spec M5, M6a, M6b, M11, M12, M13 incl. B.1 ``pooled_output``)
PRIVATE_BINARY = ("hamm_vote", "hamm_soft", "param_avg", "pathak", "jayaraman_output")
PRIVATE_MULTICLASS = ("hamm_vote", "hamm_soft", "param_avg", "pooled_output")
#: curator ERMs on the auxiliary pool (their λ is the global λ); the others release the mean of
#: local minimisers (or the pooled minimiser) fitted with their own λ
CURATOR = frozenset({"hamm_vote", "hamm_soft"})
#: mechanisms of the λ sweep (figure ``hamm_lambda``)
SWEEP_MECHANISMS = ("hamm_vote", "hamm_soft", "param_avg")
#: ``experiment`` of the main rows and of the λ-sweep rows of a table
MAIN, SWEEP = "voting", "voting_lambda_sweep"
#: non-private controls (spec E5 "methods"); ``*_np`` are Alg. 1/2 and averaging with η = 0
CONTROLS = ("pooled_lr", "local_mean", "ensemble", "hamm_vote_np", "hamm_soft_np", "param_avg_np")

#: extra columns of the voting tables (mpdp.results ``extra``)
EXTRA_COLUMNS: dict[str, str] = {
    "M": "Int64",  # number of parties (= m)
    "n_classes": "int64",  # 2 (binary) or K
    "privacy_unit": "string",  # party | record | none
    "beta": "float64",  # N-L2 parameter actually used, = epsilon / sensitivity (inf: no noise)
    "noise": "string",  # l2_laplace | laplace_per_coordinate | none
    "noise_norm": "float64",  # ||eta|| drawn
    "test_error": "float64",  # test error rate
    "risk_gap": "float64",  # B6: weighted empirical risk R_S(w_p) - R_S(w_s) (Hamm methods)
    "lemma6_bound": "float64",  # B6 Lemma 6 line at delta_p (Hamm methods)
    "lemma6_expected": "float64",  # B6 expected version
    "heldout_risk": "float64",  # B6 Thm 4: weighted risk on the held-out pool (hamm_soft)
    "thm4_bound": "float64",  # B6 Theorem 4 right-hand side
    "excess_risk": "float64",  # B5: J(theta_p) - J* on the pooled private data (averaging methods)
    "b5_bound": "float64",  # B5 expected excess-risk bound
    "N_aux": "int64",  # auxiliary pool size N
    "lambda_source": "string",  # tuned (private validation) | config | local | sweep
    "majority_error": "float64",  # test error of always predicting the private pool's majority class
    # λ selection protocol and what the whole procedure paid (issue 34, mpdp.studies.voting.selection)
    "selection": "string",  # private | oracle | none (λ configured or ε = ∞)
    "eps_trial": "float64",  # private: each selection trial's ε_t; NaN otherwise
    "eps_selection": "float64",  # the selection alone (pure), +inf for oracle
    "eps_end_to_end": "float64",  # selection + release (basic composition of pure DP); +inf for oracle
    "delta_end_to_end": "float64",
    # the guarantee for one validation record (issue 58): private: noised scores, (2 + η)ε_s = ε, δ = 0
    "eps_validation_record": "float64",  # +inf oracle and controls; 0 when nothing is selected
    "delta_validation_record": "float64",
    "score_multiplier": "float64",  # private: the scores' Laplace scale over its sensitivity 1/n_val (1/ε_s)
    "validation_records": "string",  # where the validation records lie and what protects them
}


def main_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of the study's mechanisms and controls (λ tuned or configured)."""
    return df[df["experiment"] == MAIN]


def sweep_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of the λ sweep (every λ of the grid at M = h1_M, ε of ``lambda_sweep_eps``)."""
    return df[df["experiment"] == SWEEP]


def majority_error(df: pd.DataFrame) -> float:
    """The majority-class test error of a table's rows (column ``majority_error``).

    Under the fixed split it is one value; with a split per repetition (issue 60) each
    repetition has its own (its private pool's majority class on its test records), and this is
    their mean over repetitions. For a binary label the stratified splits hold the same class
    counts in every repetition, so the values agree there too.
    """
    col = df["majority_error"]
    per_rep = df.loc[col.notna()].groupby("rep")["majority_error"].first() if "rep" in df else col.dropna()
    values = per_rep.unique()
    return float(values[0]) if len(values) == 1 else float(per_rep.mean())


def selection_key(rep: int | None) -> tuple[KeyPart, ...]:
    """The suffix of the λ selection's tuning-stream keys: ``()`` for the one selection per M of
    the fixed split, ``("repetition", rep)`` for repetition ``rep``'s own (issue 60)."""
    return () if rep is None else ("repetition", int(rep))


class Streams:
    """The random streams of one table, keyed by :mod:`mpdp.seeding`; every key used is recorded.

    ``rng`` serves the evaluated (reported) draws, ``tuning_rng`` those of the λ selection
    (keys ``("tuning", ...)``), so a test can check with :func:`mpdp.seeding.assert_disjoint`
    that the selection never sees a reported repetition's noise or partition.
    """

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.evaluated: set[tuple[KeyPart, ...]] = set()
        self.tuning: set[tuple[KeyPart, ...]] = set()

    def rng(self, *key: KeyPart) -> np.random.Generator:
        self.evaluated.add(key)
        return rng(self.seed, *key)

    def tuning_rng(self, *key: KeyPart) -> np.random.Generator:
        self.tuning.add(tuning_key(*key))
        return tuning_rng(self.seed, *key)


def tables(cfg: Mapping[str, Any], available: Sequence[str]) -> list[str]:
    """Table ids of the study for the available data sets (binary first, then multiclass)."""
    v = cfg["voting"]
    binary = [ds for ds in v["datasets"] if ds in available]
    multi = [
        f"{ds}{MULTICLASS_SUFFIX}"
        for ds in v["multiclass_datasets"]
        if ds in available and ds in MULTICLASS_DATASETS
    ]
    return binary + multi


def table_path(table: str) -> str:
    """Results table of ``table`` (workflow output)."""
    return f"data/results/voting/{table}.parquet"


def table_pattern() -> str:
    """A regular expression matching every table id (the workflow's wildcard constraint): a data
    set of the registry, or a multiclass one with :data:`MULTICLASS_SUFFIX`."""
    return f"({registry.pattern()})|({registry.pattern(MULTICLASS_DATASETS)}){MULTICLASS_SUFFIX}"


def dataset_of(table: str) -> tuple[str, bool]:
    """(data set id, multiclass?) of a table id."""
    if table.endswith(MULTICLASS_SUFFIX):
        return table[: -len(MULTICLASS_SUFFIX)], True
    return table, False


def feasible_M(M_grid: Sequence[int], n_private: int, min_party_size: int) -> list[int]:
    """The M of the grid with at least ``min_party_size`` records per party (spec E5)."""
    return [M for M in M_grid if n_private // M >= min_party_size]


def aux_split(n_train: int, n_total: int, aux_frac: float, seed: int, dataset: str,
              val_frac: float = 0.0, rep: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted (aux, validation, private) positions among a repetition's training records [REC].

    N = ceil(aux_frac · n_total) auxiliary records and ceil(val_frac · n_total) validation
    records (the same counts in every repetition: each has n_train training records). ``rep``
    None: one draw per data set, ``rng(seed, "voting", "aux", dataset)`` (the fixed split,
    ``split.per_repetition: false``: the pools are fixed like the test set); with ``rep`` each
    repetition draws its own from ``rng(seed, "voting", "aux", dataset, "repetition", rep)``
    within its own training records (issue 60). Labels of the auxiliary pool are never used
    (spec E5 "labels dropped"), those of the validation split only by the λ selection.
    """
    N = math.ceil(round(aux_frac * n_total, 9))
    V = math.ceil(round(val_frac * n_total, 9))
    if not (N > 0 and n_train > N + V):
        raise ConfigError(f"voting.aux_frac = {aux_frac} and voting.val_frac = {val_frac} leave "
                          f"{n_train - N - V} of {n_train} training records for the parties")
    key: tuple[KeyPart, ...] = ("voting", "aux", dataset) if rep is None else ("voting", "aux", dataset, "repetition", rep)
    perm = rng(seed, *key).permutation(n_train)
    return np.sort(perm[:N]), np.sort(perm[N:N + V]), np.sort(perm[N + V:])


def split_parts(n_private: int, M: int, gen: np.random.Generator) -> list[np.ndarray]:
    """M near-equal random parts of the private pool (spec E5) from generator ``gen``."""
    perm = gen.permutation(n_private)
    return [np.sort(part) for part in np.array_split(perm, M)]


def partition_key(dataset: str, M: int, rep: int | None = None) -> tuple[KeyPart, ...]:
    """Stream key of a partition: per repetition (evaluated) or, with ``rep=None``, the selection's."""
    return ("voting", "partition", dataset, M) if rep is None else ("voting", "partition", dataset, M, rep)


def party_split(n_private: int, M: int, seed: int, dataset: str, rep: int) -> list[np.ndarray]:
    """M near-equal random parts of the private pool (spec E5), redrawn per repetition."""
    return split_parts(n_private, M, rng(seed, *partition_key(dataset, M, rep)))
