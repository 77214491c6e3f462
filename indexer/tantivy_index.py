"""Lexical BM25 index on tantivy (embedded, on disk), with the article facets stored for filtering inside the query."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import tantivy

from indexer.base import NO_FILTERS, Facets, Hit, LexicalOptions, SearchFilters
from indexer.errors import BackendUnavailableError
from indexer.ownership import check_owners, check_search
from indexer.records import ArticleRecord
from indexer.stopwords import query_terms

_WRITER_HEAP_BYTES = 128 * 1024 * 1024


def _schema(*, owned: bool = False) -> tantivy.Schema:
    """The fields every index at a path must have; an index built with any other schema is refused on open. A
    library index has an owner field besides; the PubMed index has none, so indexes built before libraries existed
    open unchanged."""
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("pmid", stored=True, tokenizer_name="raw")
    builder.add_text_field("title", stored=False, tokenizer_name="en_stem")
    builder.add_text_field("body", stored=False, tokenizer_name="en_stem")
    builder.add_integer_field("year", indexed=True, fast=True)
    for keyword in ("journal", "publication_type", "mesh"):
        # Facets match whole: the raw tokenizer keeps "Journal Article" one case-sensitive term, as PubMed spells it,
        # and "basic" indexing skips the positions and frequencies that filters never read.
        builder.add_text_field(keyword, stored=False, tokenizer_name="raw", index_option="basic")
    if owned:
        builder.add_text_field("owner", stored=False, tokenizer_name="raw", index_option="basic")
    return builder.build()


def _document(record: ArticleRecord) -> tantivy.Document:
    facets = Facets.of(record)
    document = tantivy.Document(pmid=record.pmid, title=record.title, body=record.text)
    # An article without a year gets no year value at all, so that any year bound leaves it out.
    if facets.year is not None:
        document.add_integer("year", facets.year)
    if facets.journal:
        document.add_text("journal", facets.journal)
    for publication_type in facets.publication_types:
        document.add_text("publication_type", publication_type)
    for descriptor in facets.mesh:
        document.add_text("mesh", descriptor)
    if facets.owner:
        document.add_text("owner", facets.owner)
    return document


def _filter_queries(schema: tantivy.Schema, filters: SearchFilters) -> list[tantivy.Query]:
    """One query per restricted kind (the kinds are ANDed); a term-set query ORs the values within a kind."""
    queries = []
    if filters.year_from is not None or filters.year_to is not None:
        queries.append(
            tantivy.Query.range_query(
                schema, "year", tantivy.FieldType.Integer, lower_bound=filters.year_from, upper_bound=filters.year_to
            )
        )
    for field, values in (
        ("journal", filters.journals),
        ("publication_type", filters.publication_types),
        ("mesh", filters.mesh),
        ("owner", (filters.owner,) if filters.owner else ()),
    ):
        if values:
            queries.append(tantivy.Query.term_set_query(schema, field, list(values)))
    return queries


class TantivyIndex:
    """BM25 over title (boosted) and title + abstract; one writer per process, searchers reload on commit."""

    def __init__(self, path: Path, *, title_boost: float = 2.0, owned: bool = False) -> None:
        self.path = path
        self.title_boost = title_boost
        self.owned = owned
        self._index: tantivy.Index | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_options(cls, options: LexicalOptions) -> TantivyIndex:
        return cls(options.required_folder(), owned=options.owned)

    def warm_up(self) -> None:
        self._open()

    def _open(self) -> tantivy.Index:
        if self._index is None:
            self.path.mkdir(parents=True, exist_ok=True)
            schema = _schema(owned=self.owned)
            try:
                self._refuse_another_schema(schema)
                self._index = tantivy.Index(schema, path=str(self.path))
            except ValueError as exc:
                raise BackendUnavailableError(f"cannot open the tantivy index at {self.path}: {exc}") from exc
        return self._index

    def _refuse_another_schema(self, schema: tantivy.Schema) -> None:
        """An index written by an earlier release lacks the facet fields; filtering it would silently drop articles."""
        location = str(self.path)
        if tantivy.Index.exists(location) and tantivy.Index.open(location).schema != schema:
            raise BackendUnavailableError(
                f"the tantivy index at {self.path} was built by an older version of VeriMed with a different schema; "
                "it must be rebuilt: delete the directory and re-ingest the corpus"
            )

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
        check_owners((record.owner for record in records), owned=self.owned)
        with self._writer() as writer:
            for record in records:
                # Delete-then-add makes re-ingesting a file idempotent: one document per PMID.
                writer.delete_documents_by_term("pmid", record.pmid)
                writer.add_document(_document(record))

    def delete(self, pmids: Sequence[str]) -> None:
        if not pmids:
            return
        with self._writer() as writer:
            for pmid in pmids:
                writer.delete_documents_by_term("pmid", pmid)

    def search(
        self,
        query: str,
        *,
        limit: int,
        filters: SearchFilters = NO_FILTERS,
        expansion: Mapping[str, float] | None = None,
    ) -> list[Hit]:
        terms = query_terms(query)
        if not check_search(filters, owned=self.owned) or not terms:
            return []
        index = self._open()
        # Expansion words pass through query_terms too (letters and digits only): no syntax reaches the parser but
        # the boost written here.
        extra = [f"{word}^{weight:.3f}" for term, weight in (expansion or {}).items() for word in query_terms(term)]
        text = index.parse_query(
            " ".join([*terms, *extra]), ["title", "body"], field_boosts={"title": self.title_boost}
        )
        searcher = index.searcher()
        hits = searcher.search(self._filtered(index.schema, text, filters), limit).hits
        return [Hit(pmid=searcher.doc(address)["pmid"][0], score=float(score)) for score, address in hits]

    @staticmethod
    def _filtered(schema: tantivy.Schema, text: tantivy.Query, filters: SearchFilters) -> tantivy.Query:
        """The text query restricted by the filters inside the search, so `limit` counts admitted documents only.

        Each filter scores a constant 0, which leaves every hit's score the text query's BM25.
        """
        restrictions = _filter_queries(schema, filters)
        if not restrictions:
            return text
        clauses = [(tantivy.Occur.Must, text)]
        clauses += [(tantivy.Occur.Must, tantivy.Query.const_score_query(query, 0.0)) for query in restrictions]
        return tantivy.Query.boolean_query(clauses)

    def count(self) -> int:
        index = self._open()
        index.reload()
        return int(index.searcher().num_docs)

    def close(self) -> None:
        self._index = None
