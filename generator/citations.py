"""The citation format: the one regex that finds `PUBMED:<id>` references in model output, and helpers around it."""

from __future__ import annotations

import re
from dataclasses import dataclass

# An id is a PMID, or an `S2:<corpus id>` for the Semantic Scholar documents some benchmark corpora carry.
_ID = r"(?:S2:)?\d{1,10}"
# `PUBMED:123`, `PUBMED: 123`, `PMID 123`, `PMID:123`, case-insensitive; group 1 is the id.
CITATION = re.compile(rf"\b(?:PUBMED|PMID)\s*:?\s*({_ID})\b", re.IGNORECASE)
# A whole citation group as written in the text, e.g. ` (PUBMED:1; PUBMED:2)` or ` [PMID 3, 4]`, for display.
CITATION_GROUP = re.compile(
    rf"\s*[\(\[]\s*(?:PUBMED|PMID)\s*:?\s*{_ID}(?:\s*[,;]\s*(?:(?:PUBMED|PMID)\s*:?\s*)?{_ID})*\s*[\)\]]"
    rf"|\s*\b(?:PUBMED|PMID)\s*:?\s*{_ID}\b",
    re.IGNORECASE,
)
_ID_IN_GROUP = re.compile(_ID, re.IGNORECASE)


@dataclass(frozen=True)
class CitationCheck:
    pmid: str
    retrieved: bool  # False means NO_REFERENCE: the model cited something it was not given


def cited_ids(text: str) -> list[str]:
    """Every id cited in `text`, in order of first appearance, without repeats."""
    ids: dict[str, None] = {}
    for group in CITATION_GROUP.finditer(text):
        for match in _ID_IN_GROUP.finditer(group.group(0)):
            ids.setdefault(match.group(0).upper(), None)
    return list(ids)


def strip_citations(text: str) -> str:
    """The text without its citation markup (the page shows citations as chips instead)."""
    stripped = CITATION_GROUP.sub("", text)
    return re.sub(r"\s+([.,;:!?])", r"\1", stripped).strip()


def check_citations(ids: list[str], retrieved: set[str]) -> list[CitationCheck]:
    return [CitationCheck(pmid=pmid, retrieved=pmid in retrieved) for pmid in ids]
