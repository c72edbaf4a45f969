"""The extension point of the cross-paper benchmark: what a mechanism declares (spec E10).

A benchmark mechanism is one object, defined in one module, that declares

- **who it is**: ``id`` (the ``mechanism`` column), ``label`` (legend), ``spec`` section,
  ``family``, ``paper`` and ``privacy_unit`` (``record`` | ``party``: a party-level guarantee
  implies the record-level one, spec E10), ``public_data`` (needs Hamm's public pool);
- **its calibration**: ``calibration`` (one line, the ``calibration`` column) and, in code, how
  its noise makes its *whole released transcript* (ε, δ)-DP under the benchmark's unit
  (replace one record of one party) — returned as a :class:`~mpdp.studies.benchmark.calibration.
  Ledger`, whose ``eps_total`` is recomputed from the noise actually used;
- **how to train a batch of runs**: :meth:`Mechanism.train_job` trains every mechanism of its
  ``job`` on every cell of a data set (one Snakemake job per data set and job) and returns the
  rows and its selection record; mechanisms that share a job share work (the paper families batch
  their columns through one engine call). A new mechanism subclasses :class:`BatchMechanism`,
  which supplies the whole job (tuning by the common protocol, cells, partitions, rows) and asks
  only for :meth:`BatchMechanism.ledger` and :meth:`BatchMechanism.train_batch`;
- **what its ledger records**: the :class:`~mpdp.studies.benchmark.calibration.Ledger` fields
  (accountant, sensitivity, σ or β, per-step α, ε and δ of the transcript, scope) in every row;
- **how the audit attacks it**: ``audit``, the id of an adapter of :mod:`mpdp.audit.registry`
  ("same as family X": name X's adapter), and optionally :meth:`Mechanism.audit_adapter`, an
  adapter of its own, with :meth:`Mechanism.audit_settings` (registered and listed by
  :func:`mpdp.audit.registry.register_benchmark` and
  :func:`mpdp.studies.benchmark.registry.audit_settings`; the benchmark never imports the audit).

The registry (:mod:`mpdp.studies.benchmark.registry`) maps the names in
``benchmark.mechanisms`` to these objects; tables, figures, the ranking and the report read
only the rows, so naming a mechanism there is all it takes (docs/extending.md).
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from mpdp.studies.benchmark.calibration import Ledger
    from mpdp.studies.benchmark.plan import BenchmarkData

Rows = list[dict[str, Any]]


@dataclass(frozen=True)
class Mechanism:
    """One benchmark mechanism (module docstring). Subclasses implement :meth:`train_job`."""

    id: str
    label: str  # legend label a reader understands without the paper
    spec: str  # spec section of the mechanism
    family: str  # reference | gradient | output | voting | admm | any new family name
    paper: str  # study whose paper proposes or uses it ("extension" for new ones)
    privacy_unit: str  # record | party
    public_data: bool = False  # needs a public unlabeled auxiliary pool (Hamm)
    calibration: str = ""  # how its whole transcript is calibrated (the ``calibration`` column)
    job: str = ""  # the training job it belongs to (default: its own id)
    audit: str = ""  # audit adapter id that attacks it ("" = not audited)

    @property
    def job_group(self) -> str:
        """The Snakemake job that trains it (``{ds}/{job_group}`` parts)."""
        return self.job or self.id

    def train_job(self, cfg: Mapping[str, Any], dataset: str, data: BenchmarkData, ids: Sequence[str],
                  log: logging.Logger) -> tuple[Rows, dict[str, Any]]:
        """Train the mechanisms ``ids`` of this job on every cell; (rows, selection record by id).

        The hook of a mechanism that runs its whole job itself; a :class:`BatchMechanism` and the
        papers' families are run by the framework instead
        (:func:`mpdp.studies.benchmark.train.run_job`, which dispatches on the type)."""
        raise NotImplementedError(f"benchmark mechanism {self.id!r} does not say how it trains")

    def audit_adapter(self) -> Any | None:
        """An audit adapter of its own (:class:`mpdp.audit.adapters.Adapter`), or None."""
        return None

    def rdp_curve(self, cfg: Mapping[str, Any], epsilon: float) -> np.ndarray | None:
        """RDP curve ε(λ) on :data:`mpdp.privacy.private_selection.ORDERS` of one run calibrated to
        (``epsilon``, ``benchmark.delta``), the maximum over its candidates; it is what the private
        selection protocol accounts (issue 34, :mod:`mpdp.studies.benchmark.selection`). None: not
        declared (the built-in families are known to :mod:`.selection`; any other mechanism without
        a curve is refused at planning under ``benchmark.selection.protocol: private``)."""
        return None

    def audit_settings(self, cfg: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Settings (rows of ``audit.settings``) that attack it with its own adapter; none by default."""
        return []


@dataclass(frozen=True)
class Run:
    """One run of a :class:`BatchMechanism` batch (a column of its result)."""

    epsilon: float
    hparam: float  # the value of the mechanism's tuned knob
    rep: int  # repetition (or tuning seed)
    ledger: Ledger  # from :meth:`BatchMechanism.ledger`
    rng: np.random.Generator  # the run's own noise stream (tuning streams while tuning)
    key: tuple[Any, ...] = ()  # that stream's key under ``root_seed`` (for engines that take keys)


@dataclass(frozen=True)
class BatchMechanism(Mechanism, ABC):
    """A mechanism whose job the framework runs (:func:`mpdp.studies.benchmark.batch_runner.run_batch_mechanism`).

    The framework tunes ``hparam`` over :meth:`candidates` by the common protocol (same
    validation split, reference cell, ``tune_seeds``, tuning streams), then trains every cell of
    the grid, R repetitions, every ε, and writes the rows. The mechanism gives its calibration
    and trains one batch of runs on one partition.
    """

    hparam: str = "lambda"  # name of its one tuned knob (the ``hparam`` column)

    @abstractmethod
    def candidates(self, cfg: Mapping[str, Any]) -> list[float]:
        """The knob's candidates (as many as every other mechanism's, spec E10)."""

    @abstractmethod
    def ledger(self, cfg: Mapping[str, Any], epsilon: float, sizes: np.ndarray, hparam: float,
               dim: int) -> Ledger:
        """Calibrate to the target: noise and the (ε, δ) its whole transcript gives."""

    @abstractmethod
    def train_batch(self, cfg: Mapping[str, Any], X: np.ndarray, y: np.ndarray,
                    parties: list[np.ndarray], runs: Sequence[Run]) -> np.ndarray:
        """The released models (p, len(runs)) of ``runs`` on the parties' rows of (X, y)."""

    def row_fields(self, cfg: Mapping[str, Any], hparam: float) -> dict[str, Any]:
        """Further columns of its rows for the chosen ``hparam`` (e.g. ``T``, ``eta``); none by default."""
        return {}

    def lam(self, cfg: Mapping[str, Any], hparam: float) -> float:
        """The λ of its objective for ``hparam`` (the optimality gap's θ*): the knob if it is λ."""
        return float(hparam) if self.hparam == "lambda" else float(cfg["benchmark"]["lambda"])

