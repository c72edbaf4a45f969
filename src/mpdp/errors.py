"""Readable errors for users of the pipeline.

Every error a user can trigger by bad config or bad input is an :class:`MpdpError`; the
workflow scripts print its message (never a traceback) and exit non-zero.
"""

from __future__ import annotations


class MpdpError(Exception):
    """Base class of user-facing errors: the message says what is wrong and what to do."""


class ConfigError(MpdpError):
    """The configuration is invalid; the message names the key."""


class ChecksumMismatchError(MpdpError):
    """A raw file's SHA-256 differs from the pinned value."""


class DatasetUnavailableError(MpdpError):
    """A raw file could not be obtained from data/raw, the mirror or the network."""


class InputDataError(MpdpError):
    """A raw or processed file does not have the expected format."""
