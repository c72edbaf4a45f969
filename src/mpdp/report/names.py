"""The one name table of the report and the claims figures (issue 59, item 2): what a reader sees for
a method, a data set, a reading or a reason, never the raw id.

* data sets: the data registry's ``display_name`` (:data:`mpdp.data.registry.DATASETS`), and the
  least-squares study's synthetic sets (``synthetic_d1`` → "synthetic (d = 1)");
* methods: the figures' short names (:data:`mpdp.figures.style.MECHANISM_SHORT`) and
  :data:`METHODS` for the methods of the other studies' claims;
* readings: :data:`mpdp.claims.tables.READING_NAMES`;
* reasons and cell verdicts: :data:`REASONS` (``no_effect`` → "no effect").

:func:`prose` rewrites a text of the claims engine (a verdict's ``reason`` or ``where``): every
raw id it names is replaced by its display name, and a reason that repeats its verdict's class
word ("underpowered: 2 repetitions …" under UNDERPOWERED) loses the repetition.
"""

from __future__ import annotations

import re

from mpdp.claims.tables import reading_label
from mpdp.data.registry import DATASETS
from mpdp.figures.style import MECHANISM_SHORT

#: method id -> display name (beyond the figures' short names)
METHODS: dict[str, str] = {
    **MECHANISM_SHORT,
    "wddp_literal": "WD-DP (Alg. 1 as printed)",
    "wddp_per_round": "WD-DP (per-round)",
    "jayaraman_literal": "Jayaraman (as printed)",
    "jayaraman_per_round": "Jayaraman (per-round)",
    "hamm_vote": "Hamm's majority vote",
    "hamm_soft": "Hamm's soft vote",
    "hamm_vote_np": "majority vote without noise",
    "hamm_soft_np": "soft vote without noise",
    "param_avg": "parameter averaging",
    "param_avg_np": "parameter averaging without noise",
    "pathak": "Pathak's averaging",
    "jayaraman_output": "Jayaraman's output perturbation",
    "pooled_output": "pooled output perturbation",
    "pooled_lr": "pooled non-private LR",
    "local_mean": "local classifiers (mean)",
    "nl2_output": "N-L2 output perturbation",
    "pvp_history": "PVP (given its history)",
    "ls_sgd": "DP-SGD least squares",
    "ls_ssp": "sufficient-statistics perturbation",
    "closed_form": "closed-form risk",
    "delta_method": "delta-method risk",
    "private_selection": "private hyper-parameter selection",
    "dpsgd": "DP-SGD",
    "objpert": "objective perturbation (trusted curator)",
    "objpert_avg": "objective perturbation per party, averaged",
}

#: cell verdicts (cells.parquet ``cell_verdict``) in words; the others read as they are ("for",
#: "against", "underpowered", "identical", "uninformative"), as do the engine's reasons ("at chance",
#: "reference unconverged", :data:`mpdp.claims.tables.REASONS`)
REASONS: dict[str, str] = {"no_effect": "no effect", "no_data": "no data"}


def dataset(dataset_id: str) -> str:
    """The display name of a data set (unknown ids: underscores as spaces)."""
    info = DATASETS.get(str(dataset_id))
    if info is not None:
        return info.display_name
    match = re.fullmatch(r"synthetic_d(\d+)", str(dataset_id))
    if match:
        return f"synthetic (d = {match[1]})"
    return str(dataset_id).replace("_", " ")


def method(method_id: str) -> str:
    """The display name of a method (unknown ids: underscores as spaces)."""
    return METHODS.get(str(method_id), str(method_id).replace("_", " "))


def reading(reading_id: str) -> str:
    """The plain name of a reading (empty for a study's only reading)."""
    return reading_label(reading_id)


def reason(word: str) -> str:
    """A cell verdict or reason in plain words (``no_effect`` → "no effect")."""
    return REASONS.get(str(word), str(word).replace("_", " "))


#: every raw id :func:`prose` replaces, longest first (so ``wddp_literal`` wins over ``wddp``)
def _ids() -> dict[str, str]:
    ids = {m: method(m) for m in METHODS} | {d: dataset(d) for d in DATASETS}
    return dict(sorted(ids.items(), key=lambda kv: -len(kv[0])))


_TOKEN = re.compile(r"(?<![\w-])([a-z][a-z0-9]*(?:_[a-z0-9]+)*|synthetic_d\d+)(?![\w-])")


def prose(text: str, verdict: str = "") -> str:
    """``text`` (an engine's reason or where) with display names for raw ids and without a leading
    repetition of ``verdict``'s class word."""
    text = str(text or "")
    if verdict:
        text = re.sub(rf"^\s*{re.escape(verdict)}\s*:\s*", "", text, flags=re.I)
        text = re.sub(rf"^\s*{re.escape(verdict)}\b\s*", "", text, flags=re.I)
    ids = _ids()

    def swap(match: re.Match[str]) -> str:
        word = match[1]
        if word in ids:
            return ids[word]
        if re.fullmatch(r"synthetic_d\d+", word):
            return dataset(word)
        return word

    return _TOKEN.sub(swap, text).strip()
