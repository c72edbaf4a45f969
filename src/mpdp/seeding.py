"""Deterministic random streams keyed by a run's identity (spec experiments.md E0).

Every random draw of the pipeline comes from a generator built here from the config's root
seed and a key such as ``("partition", "adult", "u_sweep", 16, 3, rep)``. The key is hashed
into a ``numpy.random.SeedSequence`` spawn key, so the stream depends only on the key's
values, never on the order in which runs are executed or batched.
"""

from __future__ import annotations

import hashlib

import numpy as np

KeyPart = str | int | float | bool | None


def _key_words(key: tuple[KeyPart, ...]) -> tuple[int, ...]:
    """Map a key to 32-bit words through SHA-256 of a canonical text form."""
    text = "\x1f".join(f"{type(part).__name__}:{part!r}" for part in key)
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 32, 4))


def seed_sequence(root_seed: int, *key: KeyPart) -> np.random.SeedSequence:
    """The seed sequence of stream ``key`` under ``root_seed``.

    Integers and floats are distinguished (``1`` and ``1.0`` give different streams), so
    pass values with the types they have in the config.
    """
    if not isinstance(root_seed, int | np.integer) or root_seed < 0:
        raise ValueError(f"root_seed must be a non-negative integer, got {root_seed!r}")
    return np.random.SeedSequence(int(root_seed), spawn_key=_key_words(tuple(key)))


def rng(root_seed: int, *key: KeyPart) -> np.random.Generator:
    """A PCG64 generator for stream ``key`` under ``root_seed``."""
    return np.random.Generator(np.random.PCG64(seed_sequence(root_seed, *key)))


#: First part of every key whose stream feeds a hyper-parameter selection (tuning). No
#: evaluated (reported) repetition may draw from a key that starts with it.
TUNING: str = "tuning"


def tuning_key(*key: KeyPart) -> tuple[KeyPart, ...]:
    """The key of a tuning stream: ``("tuning", *key)``.

    Every study's hyper-parameter selection draws its noise (and any other randomness) from
    keys built here, and its evaluated repetitions from keys that never start with
    :data:`TUNING`; :func:`assert_disjoint` checks a study's two key sets. So the selection never
    sees the noise it is later evaluated on (no selection bias; issue 25 §2).
    """
    return (TUNING, *key)


def tuning_rng(root_seed: int, *key: KeyPart) -> np.random.Generator:
    """A generator on the tuning stream ``tuning_key(*key)``."""
    return rng(root_seed, *tuning_key(*key))


def tuning_seed_sequence(root_seed: int, *key: KeyPart) -> np.random.SeedSequence:
    """The seed sequence of the tuning stream ``tuning_key(*key)``."""
    return seed_sequence(root_seed, *tuning_key(*key))


def is_tuning_key(key: tuple[KeyPart, ...]) -> bool:
    """Whether ``key`` names a tuning stream."""
    return len(key) > 0 and key[0] == TUNING


def assert_disjoint(tuning: list[tuple[KeyPart, ...]] | set[tuple[KeyPart, ...]],
                    evaluated: list[tuple[KeyPart, ...]] | set[tuple[KeyPart, ...]]) -> None:
    """Raise ``ValueError`` unless the tuning keys and the evaluated keys share no stream.

    Streams are equal exactly when their keys are equal (SHA-256 of the canonical key), so two
    key sets share no stream when: every tuning key starts with :data:`TUNING`, no evaluated
    key does, and (hence) the sets do not intersect.
    """
    tuning, evaluated = set(tuning), set(evaluated)
    not_tuning = sorted(map(repr, (k for k in tuning if not is_tuning_key(k))))
    if not_tuning:
        raise ValueError(f"tuning streams without the {TUNING!r} prefix: {not_tuning[:3]}")
    leaking = sorted(map(repr, (k for k in evaluated if is_tuning_key(k))))
    if leaking:
        raise ValueError(f"evaluated repetitions draw from tuning streams: {leaking[:3]}")
    shared = tuning & evaluated
    if shared:  # unreachable given the two checks above; kept as the definition
        raise ValueError(f"tuning and evaluation share streams: {sorted(map(repr, shared))[:3]}")
