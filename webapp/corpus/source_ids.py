"""Which source ids are PubMed's. The corpus holds PMIDs and, from benchmark corpora, other ids (SciFact's Semantic
Scholar `S2:<corpus id>`) that have no PubMed record: those are shown as they are, never as a PMID or a PubMed link.
"""

from __future__ import annotations


def is_pmid(source_id: str) -> bool:
    return source_id.isascii() and source_id.isdigit()


def source_label(source_id: str) -> str:
    """'PMID 123' for a PubMed id; any other id as it is ('S2:123')."""
    return f"PMID {source_id}" if is_pmid(source_id) else source_id


def pubmed_url(source_id: str) -> str:
    """The record's PubMed page; empty for an id that is not a PMID, which has no page there."""
    return f"https://pubmed.ncbi.nlm.nih.gov/{source_id}/" if is_pmid(source_id) else ""
