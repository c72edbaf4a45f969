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

from mpdp.errors import ConfigError
from mpdp.seeding import rng

MULTICLASS_SUFFIX = "_multiclass"
#: data sets with a multiclass label in the data layer (spec E5)
MULTICLASS_DATASETS = ("kddcup99",)

#: private mechanisms per task (spec M5, M6a, M6b, M11, M12, M13)
PRIVATE_BINARY = ("hamm_vote", "hamm_soft", "param_avg", "pathak", "jayaraman_output")
PRIVATE_MULTICLASS = ("hamm_vote", "hamm_soft", "param_avg")
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
    "lambda_source": "string",  # validated | config | local
}


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


def dataset_of(table: str) -> tuple[str, bool]:
    """(data set id, multiclass?) of a table id."""
    if table.endswith(MULTICLASS_SUFFIX):
        return table[: -len(MULTICLASS_SUFFIX)], True
    return table, False


def feasible_M(M_grid: Sequence[int], n_private: int, min_party_size: int) -> list[int]:
    """The M of the grid with at least ``min_party_size`` records per party (spec E5)."""
    return [M for M in M_grid if n_private // M >= min_party_size]


def aux_split(n_train: int, n_total: int, aux_frac: float, seed: int, dataset: str) -> tuple[np.ndarray, np.ndarray]:
    """Sorted (aux, private) indices into the training rows: N = ceil(aux_frac · n_total) [REC].

    The pool is fixed per data set (like the test set, spec E0); labels of the pool are never
    used for training (spec E5 "labels dropped").
    """
    N = math.ceil(round(aux_frac * n_total, 9))
    if not 0 < N < n_train:
        raise ConfigError(f"voting.aux_frac = {aux_frac} gives an auxiliary pool of {N} of {n_train} records")
    perm = rng(seed, "voting", "aux", dataset).permutation(n_train)
    return np.sort(perm[:N]), np.sort(perm[N:])


def party_split(n_private: int, M: int, seed: int, dataset: str, rep: int) -> list[np.ndarray]:
    """M near-equal random parts of the private pool (spec E5), redrawn per repetition."""
    perm = rng(seed, "voting", "partition", dataset, M, rep).permutation(n_private)
    return [np.sort(part) for part in np.array_split(perm, M)]
