"""How per-abstract verdicts combine into one verdict per answer sentence."""

from __future__ import annotations

from collections.abc import Iterable

SUPPORT, CONTRADICT, NO_EVIDENCE, NO_REFERENCE, UNCITED, UNCLEAR = (
    "SUPPORT",
    "CONTRADICT",
    "NO_EVIDENCE",
    "NO_REFERENCE",
    "UNCITED",
    "UNCLEAR",
)


def overall_verdict(labels: Iterable[str]) -> str:
    """Any contradiction wins (a reader must see it); otherwise any support; references the model was never
    given count as NO_REFERENCE only when nothing else was cited; no citations at all is UNCITED.

    An UNCLEAR citation (the model was not confident enough to show its label) carries no weight: the verdict is
    made from the others, and is UNCLEAR only when every citation is."""
    seen = set(labels)
    if not seen:
        return UNCITED
    if seen == {UNCLEAR}:
        return UNCLEAR
    seen.discard(UNCLEAR)
    if CONTRADICT in seen:
        return CONTRADICT
    if SUPPORT in seen:
        return SUPPORT
    if seen == {NO_REFERENCE}:
        return NO_REFERENCE
    return NO_EVIDENCE
