"""Detection rate of a planted bug: the audit repeated under independent root seeds (spec A4).

``python -m mpdp.audit.detection CONFIG TRIALS [N_TRAIN …]`` runs every planted-bug setting
of ``audit.settings`` in ``CONFIG`` ``TRIALS`` times, each with its own root seed (so fresh
canary signs, noise and selection split), and prints per setting the share of trials whose ε̂
exceeds the claimed ε with its two-sided 95 % Clopper–Pearson interval. ``N_TRAIN`` entries
``dataset=n`` give the training sizes (the data cards' ``n_train``) of the data sets used.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from scipy.stats import beta as beta_dist

from mpdp import config
from mpdp.audit.adapters import AuditContext, setting_label
from mpdp.audit.registry import get
from mpdp.audit.table import context_from_config


@dataclass(frozen=True)
class DetectionRate:
    """Caught in ``caught`` of ``trials`` runs; ``low``, ``high``: two-sided 95 % CP interval."""

    caught: int
    trials: int
    low: float
    high: float

    @property
    def rate(self) -> float:
        return self.caught / self.trials


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Two-sided Clopper–Pearson interval of a binomial rate k/n."""
    a = (1 - level) / 2
    low = 0.0 if k == 0 else float(beta_dist.ppf(a, k, n - k + 1))
    high = 1.0 if k == n else float(beta_dist.isf(a, k + 1, n - k))
    return low, high


def detection_rate(setting: Mapping[str, Any], ctx: AuditContext, trials: int) -> DetectionRate:
    """Share of ``trials`` audits of ``setting`` (root seeds ctx.root_seed + 0, 1, …) with ε̂ > ε."""
    adapter = get(str(setting["mechanism"]))
    caught = sum(
        adapter.run(setting, replace(ctx, root_seed=ctx.root_seed + i))["eps_lower"] > float(setting["epsilon"])
        for i in range(trials)
    )
    return DetectionRate(caught, trials, *clopper_pearson(caught, trials))


def main(argv: list[str]) -> None:
    path, trials, *sizes = argv
    cfg = config.load(path)
    n_train = {k: int(v) for k, v in (s.split("=") for s in sizes)}
    ctx = context_from_config(cfg["audit"], cfg["root_seed"], n_train, None,
                              (cfg.get("benchmark") or {}).get("delta"))
    print("| mechanism | setting | method | trials | caught | rate | 95 % CI |")
    print("|---|---|---|---|---|---|---|")
    for setting in cfg["audit"]["settings"]:
        if not setting.get("planted_bug") or (setting.get("dataset") and setting["dataset"] not in n_train):
            continue
        r = detection_rate(setting, ctx, int(trials))
        method = setting.get("method", get(setting["mechanism"]).method)
        print(f"| {setting['mechanism']} | {setting_label(setting)} | {method} | {r.trials} | {r.caught} | "
              f"{r.rate:.2f} | [{r.low:.2f}, {r.high:.2f}] |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
