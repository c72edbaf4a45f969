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
