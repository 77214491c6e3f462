"""A researcher's passages as the search legs hold them: one document per passage in the library's own indexes, each
with its owner, so that every search of the library is filtered to one person inside each leg."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from indexer.base import Embedder, LexicalIndex, VectorIndex
from indexer.chunking import Chunker
from indexer.records import ArticleRecord


class Passage(Protocol):
    """What indexing reads of a passage: `indexer.library_passages.Passage` or the site's stored row alike."""

    @property
    def ordinal(self) -> int: ...

    @property
    def section(self) -> str: ...

    @property
    def text(self) -> str: ...


_PREFIX = "DOC:"


def passage_index_id(document_id: int, ordinal: int) -> str:
    """The id a passage has in the library's indexes; answers cite the page instead (`DOC:<id>:p<page>`)."""
    return f"{_PREFIX}{document_id}:{ordinal}"


def parse_passage_index_id(index_id: str) -> tuple[int, int] | None:
    """(document id, ordinal) of an id `passage_index_id` made; None for anything else."""
    document, _, ordinal = index_id.removeprefix(_PREFIX).partition(":")
    if not index_id.startswith(_PREFIX) or not document.isdigit() or not ordinal.isdigit():
        return None
    return int(document), int(ordinal)


def page_citation_id(document_id: int, page: int) -> str:
    """The id an answer cites a page of a library document by (generator.citations reads it): `DOC:<id>:p<page>`.
    A format without pages (JATS) numbers its passages instead: p<n> is its n-th passage."""
    return f"{_PREFIX}{document_id}:p{page}"


def parse_page_citation_id(source_id: str) -> tuple[int, int] | None:
    """(document id, page) of a `page_citation_id`; None for a PMID or anything else."""
    document, _, page = source_id.removeprefix(_PREFIX).partition(":p")
    if not source_id.startswith(_PREFIX) or not document.isdigit() or not page.isdigit():
        return None
    return int(document), int(page)


def passage_records(*, owner: str, document_id: int, title: str, passages: Sequence[Passage]) -> list[ArticleRecord]:
    """Each passage under its paper's title and section ("Title. Methods > Dose"), which the lexical leg boosts and
    the dense leg reads first: a passage deep in a methods section means little without them."""
    return [
        ArticleRecord(
            pmid=passage_index_id(document_id, passage.ordinal),
            title=". ".join(part for part in (title.strip().rstrip("."), passage.section) if part),
            abstract=passage.text,
            owner=owner,
        )
        for passage in passages
    ]


def library_add(
    records: Sequence[ArticleRecord], *, lexical: LexicalIndex, vectors: VectorIndex, embedder: Embedder
) -> int:
    """Write the passages to both legs (replacing any stored under the same ids); the number of vector chunks."""
    if not records:
        return 0
    chunks = Chunker(embedder.token_lengths, max_tokens=embedder.max_tokens).chunks(records)
    embedded = embedder.embed([chunk.text for chunk in chunks])
    lexical.add(records)
    vectors.delete([record.pmid for record in records])
    vectors.upsert(chunks, embedded)
    return len(chunks)


def library_remove(index_ids: Sequence[str], *, lexical: LexicalIndex, vectors: VectorIndex) -> None:
    lexical.delete(index_ids)
    vectors.delete(index_ids)
