"""The benchmark's selection draws only from tuning streams (spec E10 "Hyper-parameters")."""

from __future__ import annotations

import logging

import pytest

from mpdp import seeding
from mpdp.mechanisms import gradient_batch as batch
from mpdp.studies.benchmark import runner as common
from mpdp.studies.benchmark import train


def _dpsgd(cfg, dataset, data, log):
    return train.run_job(cfg, dataset, data, ("dpsgd",), log)


@pytest.mark.parametrize("runner", [*train.FAMILY_RUNNERS.values(), _dpsgd])
def test_selection_streams_are_disjoint_from_the_evaluated_ones(monkeypatch, bench_cfg, bench_data, runner):
    """Under every protocol, every stream opened by the selection is a tuning stream; none after it."""
    keys: dict[str, list[tuple]] = {"tuning": [], "evaluated": []}
    phase = ["evaluated"]
    real_seq, real_select, real_split = seeding.seed_sequence, common.select, common.tuning_data

    def recording(root_seed, *key):
        keys[phase[0]].append(tuple(key))
        return real_seq(root_seed, *key)

    def select(*args, **kwargs):
        phase[0] = "tuning"
        try:
            return real_select(*args, **kwargs)
        finally:
            phase[0] = "evaluated"

    monkeypatch.setattr(seeding, "seed_sequence", recording)
    monkeypatch.setattr(batch, "seed_sequence", recording)
    def tuning_data(*args, **kwargs):
        phase[0] = "tuning"
        try:
            return real_split(*args, **kwargs)
        finally:
            phase[0] = "evaluated"

    monkeypatch.setattr(common, "select", select)
    monkeypatch.setattr(common, "tuning_data", tuning_data)
    bench_cfg["benchmark"]["tune_seeds"] = 2
    runner(bench_cfg, "synthetic", bench_data, logging.getLogger("test"))
    assert keys["tuning"] and keys["evaluated"]
    seeding.assert_disjoint(keys["tuning"], keys["evaluated"])
