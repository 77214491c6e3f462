"""The roles an index backend plays, as Protocols every adapter implements, and the values they exchange."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from indexer.records import ArticleRecord

Vectors = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Hit:
    """One document a single search leg returned, with that leg's raw score."""

    pmid: str
    score: float


@dataclass(frozen=True)
class FusedHit:
    pmid: str
    score: float
    lexical_score: float  # min-max normalised, 0 when the lexical leg did not return the PMID
    semantic_score: float
    lexical_raw: float | None
    semantic_raw: float | None
    rerank_score: float | None = None  # the reranker's score of the best passage, when it re-scored this hit


@dataclass(frozen=True)
class Facets:
    """The fields of an article that search filters look at; every index stores them beside the text or vector."""

    year: int | None = None
    journal: str = ""
    publication_types: tuple[str, ...] = ()
    mesh: tuple[str, ...] = ()  # descriptor names
    owner: str = ""  # the library owner of a researcher's own passage (ArticleRecord.owner); empty: public

    @classmethod
    def of(cls, record: ArticleRecord) -> Facets:
        return cls(
            year=record.year,
            journal=record.journal,
            publication_types=record.publication_types,
            mesh=tuple(heading.descriptor for heading in record.mesh),
            owner=record.owner,
        )


@dataclass(frozen=True)
class SearchFilters:
    """Restrictions applied inside each search leg, never to its results afterwards.

    Kinds combine with AND; the values of one kind with OR. A year bound excludes articles without a year.
    Journal, publication type and MeSH values match exactly (case-sensitive), as PubMed spells them.
    `owner` admits only that researcher's own passages: a library index is always searched with it, and an owned
    document is admitted by no other filter (the reference semantics below; adapters refuse the other cases).
    """

    year_from: int | None = None
    year_to: int | None = None
    journals: tuple[str, ...] = ()
    publication_types: tuple[str, ...] = ()
    mesh: tuple[str, ...] = ()
    owner: str = ""

    @property
    def empty(self) -> bool:
        return (
            not self.owner
            and self.year_from is None
            and self.year_to is None
            and not self.journals
            and not self.publication_types
            and not self.mesh
        )

    def admits(self, facets: Facets) -> bool:
        """The reference semantics every adapter must reproduce (the contract suites compare against it)."""
        if facets.owner != self.owner:
            return False
        if self.year_from is not None or self.year_to is not None:
            if facets.year is None:
                return False
            if self.year_from is not None and facets.year < self.year_from:
                return False
            if self.year_to is not None and facets.year > self.year_to:
                return False
        if self.journals and facets.journal not in self.journals:
            return False
        if self.publication_types and not set(self.publication_types) & set(facets.publication_types):
            return False
        return not (self.mesh and not set(self.mesh) & set(facets.mesh))


NO_FILTERS = SearchFilters()


@dataclass(frozen=True)
class Chunk:
    """A piece of one article's title + abstract that fits the embedding model; `index` counts from 0."""

    pmid: str
    index: int
    text: str
    facets: Facets = Facets()


def best_per_pmid(hits: Iterable[Hit], *, limit: int) -> list[Hit]:
    """Chunk hits aggregated to their article by the best chunk's score, best first, at most `limit`."""
    best: dict[str, float] = {}
    for hit in hits:
        if hit.score > best.get(hit.pmid, float("-inf")):
            best[hit.pmid] = hit.score
    ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))
    return [Hit(pmid=pmid, score=score) for pmid, score in ranked[:limit]]


class LexicalIndex(Protocol):
    """A BM25 full-text index over title + abstract, one document per PMID, with facets to filter on."""

    def add(self, records: Sequence[ArticleRecord]) -> None:
        """Index records, replacing any document with the same PMID."""

    def delete(self, pmids: Sequence[str]) -> None: ...

    def search(
        self,
        query: str,
        *,
        limit: int,
        filters: SearchFilters = NO_FILTERS,
        expansion: Mapping[str, float] | None = None,
    ) -> list[Hit]:
        """Best `limit` PMIDs for the query's terms (stopwords removed) among the documents `filters` admits.

        `expansion` adds words (letters and digits only) to the query, each weighted by its value against the
        query's own words (pseudo-relevance feedback, `indexer.query_expansion`)."""

    def count(self) -> int: ...

    def close(self) -> None: ...


class VectorIndex(Protocol):
    """A dense-vector nearest-neighbour index of article chunks; searches answer with PMIDs."""

    def upsert(self, chunks: Sequence[Chunk], vectors: Vectors) -> None:
        """Store one point per chunk; a (pmid, index) already stored is replaced, never duplicated.

        The caller passes every chunk of an article together and deletes the article first when it may have
        had more chunks before (ingestion does), so that no stale chunk outlives a shorter new version.
        """

    def delete(self, pmids: Sequence[str]) -> None:
        """Remove every chunk of these articles."""

    def search(self, vector: Vectors, *, limit: int, filters: SearchFilters = NO_FILTERS) -> list[Hit]:
        """Best `limit` distinct PMIDs, each scored by its best chunk (`best_per_pmid`), among admitted ones."""

    def count(self) -> int:
        """Stored points (chunks), not articles."""

    def optimize(self) -> None:
        """Build the ANN structures (HNSW, quantisation) after a bulk load."""

    def close(self) -> None: ...


class Embedder(Protocol):
    """Turns texts into L2-normalised vectors."""

    model_id: str
    dimension: int

    @property
    def max_tokens(self) -> int:
        """The longest input, in the model's tokens, it reads before truncating."""

    def token_lengths(self, texts: Sequence[str]) -> list[int]:
        """Each text's length in the model's own tokens, special tokens included."""

    def embed(self, texts: Sequence[str]) -> Vectors: ...


class Reranker(Protocol):
    """Scores (question, passage) pairs for relevance; higher is more relevant, comparable within one question."""

    def warm_up(self) -> None: ...

    def score(self, query: str, passages: Sequence[str]) -> Vectors: ...


# PMID -> (title, abstract) for the PMIDs asked for; a PMID it does not know is left out.
AbstractLookup = Callable[[Sequence[str]], Mapping[str, tuple[str, str]]]


# What indexer.registry builds each adapter from, keyed by `backend`; each adapter reads the fields that apply to it.


@dataclass(frozen=True)
class LexicalOptions:
    backend: str
    owned: bool = False  # a library index: every document has an owner and every search names one
    folder: Path | None = None  # tantivy: the index's own folder
    url: str = ""  # opensearch: the cluster
    index: str = ""  # opensearch: the index name

    def required_folder(self) -> Path:
        return _required_folder(self.folder, f"the {self.backend} lexical backend")


@dataclass(frozen=True)
class VectorOptions:
    backend: str
    dimension: int
    owned: bool = False  # a library index: every chunk has an owner and every search names one
    folder: Path | None = None  # qdrant_edge: the shard's own folder
    url: str = ""  # qdrant: a server URL, or a folder or ":memory:" for qdrant-client's local mode
    collection: str = ""
    api_key: str | None = None

    def required_folder(self) -> Path:
        return _required_folder(self.folder, f"the {self.backend} vector backend")


@dataclass(frozen=True)
class EmbedderOptions:
    backend: str
    model: str  # "minilm" (the packaged all-MiniLM-L6-v2) or a sentence-transformers id or path
    threads: int | None = None
    cache_dir: Path | None = None  # where the ONNX backends keep their one-time export


def _required_folder(folder: Path | None, backend: str) -> Path:
    if folder is None:
        raise ValueError(f"{backend} needs a folder")
    return folder
