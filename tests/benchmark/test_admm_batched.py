"""The benchmark's ADMM family batches its repetitions (issue 45): every graph of one call gives
what it gives alone (same noise draws, iterates within the solver's tolerance)."""

import numpy as np

from mpdp.studies.benchmark import admm_runner, plan


def test_repetitions_batched_together_equal_each_alone(bench_cfg, bench_data):
    cfg = bench_cfg
    cfg["benchmark"]["admm"]["T"] = 20
    m, u, reps = 4, 3, 3
    part = plan.partitions(cfg, "synthetic", bench_data.n, m, u, reps, "grid")
    settings = [("dvp", 0.3, 0.1), ("pvp", 0.3, 1.0), ("dvp", 3.0, 1.0), ("pvp", 3.0, 0.1)]
    graphs = [(part.party_indices(rep), rep, settings[: 4 - rep]) for rep in range(reps)]
    together = admm_runner._admm_batch(cfg, "synthetic", bench_data.X, bench_data.y, m, u, graphs, "grid")
    assert len(together) == reps
    for graph, (theta, res, ledgers) in zip(graphs, together, strict=True):
        [(alone, res_alone, ledgers_alone)] = admm_runner._admm_batch(cfg, "synthetic", bench_data.X, bench_data.y,
                                                                m, u, [graph], "grid")
        assert theta.shape == (bench_data.p, len(graph[2]))
        np.testing.assert_allclose(theta, alone, rtol=0, atol=1e-8)
        np.testing.assert_array_equal(res.noise_norm, res_alone.noise_norm)
        np.testing.assert_array_equal(res.zeta, res_alone.zeta)
        assert ledgers == ledgers_alone
    # the repetitions' streams differ: the same settings give different noise
    assert not np.array_equal(together[0][1].noise_norm[:, :2], together[1][1].noise_norm[:, :2])
