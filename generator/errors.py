"""Generation failures, labelled with whether a retry may help."""

from __future__ import annotations


class GenerationError(Exception):
    transient: bool = False


class LLMUnavailableError(GenerationError):
    """The model server cannot be reached or timed out: retrying later may succeed."""

    transient = True


class LLMResponseError(GenerationError):
    """The model server answered with an error that a retry will not fix (bad model name, bad request)."""
