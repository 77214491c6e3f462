"""Lexical BM25 index on tantivy (embedded, on disk)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import tantivy

from indexer.base import Hit
from indexer.errors import BackendUnavailableError
from indexer.records import ArticleRecord
from indexer.stopwords import query_terms

_WRITER_HEAP_BYTES = 128 * 1024 * 1024


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("pmid", stored=True, tokenizer_name="raw")
    builder.add_text_field("title", stored=False, tokenizer_name="en_stem")
    builder.add_text_field("body", stored=False, tokenizer_name="en_stem")
    return builder.build()


class TantivyIndex:
    """BM25 over title (boosted) and title + abstract; one writer per process, searchers reload on commit."""

    def __init__(self, path: Path, *, title_boost: float = 2.0) -> None:
        self.path = path
        self.title_boost = title_boost
        self._index: tantivy.Index | None = None
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        self._open()

    def _open(self) -> tantivy.Index:
        if self._index is None:
            self.path.mkdir(parents=True, exist_ok=True)
            try:
                self._index = tantivy.Index(_schema(), path=str(self.path))
            except ValueError as exc:
                raise BackendUnavailableError(f"cannot open the tantivy index at {self.path}: {exc}") from exc
        return self._index

    @contextmanager
    def _writer(self) -> Iterator[tantivy.IndexWriter]:
        """One writer per batch, committed and made visible to searchers when the batch is done."""
        index = self._open()
        with self._lock:
            writer = index.writer(_WRITER_HEAP_BYTES, 1)
            yield writer
            writer.commit()
            writer.wait_merging_threads()
            index.reload()

    def add(self, records: Sequence[ArticleRecord]) -> None:
        if not records:
            return
        with self._writer() as writer:
            for record in records:
                # Delete-then-add makes re-ingesting a file idempotent: one document per PMID.
                writer.delete_documents_by_term("pmid", record.pmid)
                writer.add_document(tantivy.Document(pmid=record.pmid, title=record.title, body=record.text))

    def delete(self, pmids: Sequence[str]) -> None:
        if not pmids:
            return
        with self._writer() as writer:
            for pmid in pmids:
                writer.delete_documents_by_term("pmid", pmid)

    def search(self, query: str, *, limit: int) -> list[Hit]:
        terms = query_terms(query)
        if not terms:
            return []
        index = self._open()
        parsed = index.parse_query(" ".join(terms), ["title", "body"], field_boosts={"title": self.title_boost})
        searcher = index.searcher()
        hits = searcher.search(parsed, limit).hits
        return [Hit(pmid=searcher.doc(address)["pmid"][0], score=float(score)) for score, address in hits]

    def count(self) -> int:
        index = self._open()
        index.reload()
        return int(index.searcher().num_docs)

    def close(self) -> None:
        self._index = None
