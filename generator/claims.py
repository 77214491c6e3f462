"""Answer sentences as claims, each with the abstracts it cites."""

from __future__ import annotations

from dataclasses import dataclass

from generator.citations import cited_ids, strip_citations
from indexer.sentences import split_sentences


@dataclass(frozen=True)
class Claim:
    text: str  # the sentence as the model wrote it, citations included
    display_text: str  # without citation markup
    citations: tuple[str, ...]


def claims_from_answer(answer: str) -> list[Claim]:
    """Split an answer into claims.

    A "sentence" that is only a citation group (models sometimes write `... effect. (PUBMED:1)`) gives its
    citations to the sentence before it. A sentence with no citation stays a claim with no citations: it is
    labelled uncited and never shown as verified. A citation-only fragment at the very start goes to the first
    sentence.
    """
    claims: list[Claim] = []
    leading: tuple[str, ...] = ()  # a citation-only fragment before any sentence goes to the first sentence
    for span in split_sentences(answer):
        ids = cited_ids(span.text)
        display = strip_citations(span.text)
        citation_only = bool(ids) and not display.strip(" .;,")
        if citation_only and not claims:
            leading += tuple(ids)
            continue
        if citation_only:
            previous = claims[-1]
            merged = tuple(dict.fromkeys(previous.citations + tuple(ids)))
            claims[-1] = Claim(
                text=f"{previous.text} {span.text}", display_text=previous.display_text, citations=merged
            )
            continue
        citations = tuple(dict.fromkeys(leading + tuple(ids)))
        leading = ()
        claims.append(Claim(text=span.text, display_text=display, citations=citations))
    return claims
