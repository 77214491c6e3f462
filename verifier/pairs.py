"""The passage every claim classifier reads beside the claim."""

from __future__ import annotations

from collections.abc import Sequence


def verifier_passage(title: str, sentences: Sequence[str], chosen: Sequence[int] | None = None) -> str:
    """The second segment the verifier reads: the title, then the chosen sentences in document order."""
    picked = sentences if chosen is None else [sentences[index] for index in sorted(set(chosen))]
    return " ".join(part for part in (title.strip(), *picked) if part).strip()
