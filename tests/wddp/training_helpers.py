"""Shared builders for the WD-DP training tests."""

from mpdp.mechanisms import RunSpec


def make_run(**kw) -> RunSpec:
    base = dict(dataset="toy", experiment="eps_sweep", mechanism="wyx", mode="central",
                accountant="ma16", epsilon=0.5, delta=1e-3, rep=0, eta=0.5, T=60, lam=1e-2, G=1.0)
    base.update(kw)
    return RunSpec(**base)
