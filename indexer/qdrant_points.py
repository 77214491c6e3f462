"""What both Qdrant adapters (qdrant-edge and qdrant-client) store and how they filter, independent of either library.

The two libraries spell points, filters and index types differently, so this module describes them once in plain
values; each adapter keeps a single, mechanical conversion into its own library's classes.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from indexer.base import Chunk, SearchFilters

VECTOR_NAME = "dense"
DEFAULT_CHUNKS_PER_ARTICLE = 4
UPSERT_BATCH = 512

_POINT_NAMESPACE = uuid.UUID("5b0e1c8a-2f7e-4d53-9f57-0c5d6c1f2a10")

# Every field a filter or a delete looks at, indexed so that filtered searches and deletes use the payload index
# instead of scanning payloads (and so that HNSW builds its filter-aware links for them).
PAYLOAD_INDEXES: dict[str, Literal["keyword", "integer"]] = {
    "pmid": "keyword",
    "journal": "keyword",
    "publication_types": "keyword",
    "mesh": "keyword",
    "year": "integer",
    # Library shards only (no PubMed point carries it); a shard made before libraries lacks the index and never
    # needs it, so the shard schema version stays.
    "owner": "keyword",
}


def point_id(pmid: str, index: int) -> str:
    """A stable point id for one chunk of an article, so that re-upserting a (pmid, index) replaces, never duplicates.

    A UUID because ids such as `S2:123` are not integers; the `#` cannot occur in the integer chunk index, so two
    different (pmid, index) pairs never share a name.
    """
    return str(uuid.uuid5(_POINT_NAMESPACE, f"{pmid}#{index}"))


def payload(chunk: Chunk) -> dict[str, Any]:
    """The payload stored with a chunk's vector: its article and the facets searches filter on."""
    facets = chunk.facets
    stored: dict[str, Any] = {
        "pmid": chunk.pmid,
        "chunk": chunk.index,
        "year": facets.year,  # null when unknown: a range condition never matches null, as `admits` requires
        "journal": facets.journal,
        "publication_types": list(facets.publication_types),
        "mesh": list(facets.mesh),
    }
    if facets.owner:
        stored["owner"] = facets.owner
    return stored


@dataclass(frozen=True)
class AnyOf:
    """The keyword field (or one element of the keyword array) equals one of `values`, exactly."""

    key: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Between:
    """The integer field lies in [gte, lte]; an open end is None. A missing or null field never matches."""

    key: str
    gte: int | None
    lte: int | None


Condition = AnyOf | Between


def filter_conditions(filters: SearchFilters) -> list[Condition]:
    """`SearchFilters` as conditions that must all hold (kinds AND), each admitting any of its values (OR)."""
    conditions: list[Condition] = []
    if filters.year_from is not None or filters.year_to is not None:
        conditions.append(Between("year", filters.year_from, filters.year_to))
    if filters.journals:
        conditions.append(AnyOf("journal", filters.journals))
    if filters.publication_types:
        conditions.append(AnyOf("publication_types", filters.publication_types))
    if filters.mesh:
        conditions.append(AnyOf("mesh", filters.mesh))
    if filters.owner:
        conditions.append(AnyOf("owner", (filters.owner,)))
    return conditions


def pmid_condition(pmids: Sequence[str]) -> AnyOf:
    """Every chunk of these articles, whatever their count."""
    return AnyOf("pmid", tuple(pmids))
