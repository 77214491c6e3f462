"""Exceptions raised by the indexer, split by whether a retry can help."""

from __future__ import annotations


class IndexerError(Exception):
    """Base for indexer failures. `transient` says whether retrying the same call may succeed."""

    transient: bool = False


class CorpusFormatError(IndexerError):
    """The input file is malformed, truncated or of an unsupported type; retrying will not help."""


class BackendUnavailableError(IndexerError):
    transient = True
