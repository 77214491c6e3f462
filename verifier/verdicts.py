"""How per-abstract verdicts combine into one verdict per answer sentence."""

from __future__ import annotations

from collections.abc import Iterable

SUPPORT, CONTRADICT, NO_EVIDENCE, NO_REFERENCE, UNCITED = (
    "SUPPORT",
    "CONTRADICT",
    "NO_EVIDENCE",
    "NO_REFERENCE",
    "UNCITED",
)


def overall_verdict(labels: Iterable[str]) -> str:
    """Any contradiction wins (a reader must see it); otherwise any support; references the model was never
    given count as NO_REFERENCE only when nothing else was cited; no citations at all is UNCITED."""
    seen = set(labels)
    if not seen:
        return UNCITED
    if CONTRADICT in seen:
        return CONTRADICT
    if SUPPORT in seen:
        return SUPPORT
    if seen == {NO_REFERENCE}:
        return NO_REFERENCE
    return NO_EVIDENCE
