"""Every study's declarations (issue 55, item 5): each claim states its practical margin ±δ > 0 on its
metric's natural scale and one line on why that is the smallest effect that matters; the paper's own
hedges travel with the claims that carry one."""

from __future__ import annotations

import math

import pytest

from mpdp import config
from mpdp.claims.declare import METRICS
from mpdp.studies.admm import claims as admm
from mpdp.studies.benchmark import claims as benchmark
from mpdp.studies.ls import claims as ls
from mpdp.studies.voting import claims as voting
from mpdp.studies.wddp import claims as wddp

CFG = config.load("config/config.yaml")
DECLARED = [*wddp.CLAIMS, *admm.claims(CFG), *voting.claims(CFG), *ls.CLAIMS, *benchmark.CLAIMS]


@pytest.mark.parametrize("claim", DECLARED, ids=lambda c: f"{c.study}-{c.claim_id}")
def test_every_claim_declares_its_margin_and_why(claim):
    assert claim.delta > 0 and math.isfinite(claim.delta)
    assert claim.delta_reason and claim.delta_reason != "declared with the claim"
    assert "\n" not in claim.delta_reason  # one line


def test_claim_ids_are_unique_per_study():
    keys = [(c.study, c.claim_id) for c in DECLARED]
    assert len(keys) == len(set(keys))


def test_margins_on_the_scales_issue_55_names():
    by_id = {(c.study, c.claim_id): c for c in DECLARED}
    assert by_id[("admm", "Z6")].metric == "log_var_ratio"
    assert by_id[("admm", "Z6")].delta == pytest.approx(math.log10(1.25))
    assert by_id[("ls", "LS-sgd")].delta == pytest.approx(math.log10(1.25))
    assert METRICS["log_gap_spread"].effect_margin == pytest.approx(math.log10(1.25) / 2)
    assert by_id[("admm", "Z2")].hedge == "for most values of α"
    assert by_id[("admm", "Z3")].hedge == by_id[("admm", "Z3-iter")].hedge == "for a large range of values of α"
