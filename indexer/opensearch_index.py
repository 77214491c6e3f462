"""Lexical BM25 index on an OpenSearch cluster: one document per PMID (`_id` = PMID), facets as keyword fields."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from opensearchpy import OpenSearch, helpers
from opensearchpy.exceptions import ConnectionError as OpenSearchConnectionError
from opensearchpy.exceptions import RequestError, TransportError

from indexer.base import NO_FILTERS, Facets, Hit, LexicalOptions, SearchFilters
from indexer.errors import BackendUnavailableError, IndexerError
from indexer.ownership import check_owners, check_search
from indexer.records import ArticleRecord
from indexer.stopwords import query_terms

_ANALYZER = "verimed_english"
# Statuses that say the cluster is overloaded or between nodes, not that the request was wrong.
_TRANSIENT_STATUSES = frozenset({429, 502, 503, 504})
_BULK_CHUNK = 500
_PAUSED = "-1"  # refresh_interval that turns periodic refresh off

# Snowball English (porter2) is the stemmer of tantivy's en_stem: both adapters conflate the same word forms. It also
# strips "'s", which a possessive_english filter would do too, were it not broken in osmem (it matches every document).
_SETTINGS: dict[str, Any] = {
    "analysis": {
        "filter": {
            "verimed_stop": {"type": "stop", "stopwords": "_english_"},
            "verimed_stemmer": {"type": "stemmer", "language": "porter2"},
        },
        "analyzer": {
            _ANALYZER: {
                "type": "custom",
                "tokenizer": "standard",
                "filter": ["lowercase", "verimed_stop", "verimed_stemmer"],
            }
        },
    }
}

_MAPPINGS: dict[str, Any] = {
    # A document with a field we did not plan for is a bug in this adapter, not something to map on the fly.
    "dynamic": "strict",
    "properties": {
        "pmid": {"type": "keyword"},
        "title": {"type": "text", "analyzer": _ANALYZER, "similarity": "BM25"},
        "full_text": {"type": "text", "analyzer": _ANALYZER, "similarity": "BM25"},
        # Kept in `_source` only, so that `documents` can hand back the abstract without the title glued on.
        "abstract": {"type": "text", "index": False},
        "year": {"type": "integer"},
        "pubdate": {"type": "date", "format": "yyyy"},
        "journal": {"type": "keyword"},
        "publication_types": {"type": "keyword"},
        "mesh": {"type": "keyword"},
        "authors": {"type": "text"},
        # A library index's documents only (an index made before libraries lacks it and never receives one).
        "owner": {"type": "keyword"},
    },
}


def _redacted(url: str) -> str:
    """The URL without any user:password, fit for an error message or a log."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port is not None else host
    return urlunsplit(parts._replace(netloc=netloc))


def _source(record: ArticleRecord) -> dict[str, Any]:
    facets = Facets.of(record)
    source: dict[str, Any] = {
        "pmid": record.pmid,
        "title": record.title,
        "abstract": record.abstract,
        "full_text": record.text,
        "journal": facets.journal,
        "publication_types": list(facets.publication_types),
        "mesh": list(facets.mesh),
        "authors": list(record.author_names),
    }
    # No year means no year field at all, so that a range filter on year leaves the article out.
    if facets.year is not None:
        source["year"] = facets.year
        source["pubdate"] = f"{facets.year:04d}"
    if facets.owner:
        source["owner"] = facets.owner
    return source


def _filter_clauses(filters: SearchFilters) -> list[dict[str, Any]]:
    """One clause per restricted kind (bool filter ANDs them); `terms` ORs the values within a kind."""
    clauses: list[dict[str, Any]] = []
    if filters.year_from is not None or filters.year_to is not None:
        bounds = {"gte": filters.year_from, "lte": filters.year_to}
        clauses.append({"range": {"year": {key: value for key, value in bounds.items() if value is not None}}})
    for field, values in (
        ("journal", filters.journals),
        ("publication_types", filters.publication_types),
        ("mesh", filters.mesh),
        ("owner", (filters.owner,) if filters.owner else ()),
    ):
        if values:
            clauses.append({"terms": {field: list(values)}})
    return clauses


class OpenSearchIndex:
    """BM25 over title (boosted) and title + abstract in one OpenSearch index, created with our mapping if missing."""

    def __init__(
        self, hosts: str, index: str, *, title_boost: float = 2.0, timeout: float = 30.0, owned: bool = False
    ) -> None:
        self.url = hosts
        self.index = index
        self.owned = owned
        self.title_boost = title_boost
        self.timeout = timeout
        self._client: OpenSearch | None = None
        self._index_ready = False

    @classmethod
    def from_options(cls, options: LexicalOptions) -> OpenSearchIndex:
        return cls(options.url, options.index, owned=options.owned)

    def warm_up(self) -> None:
        self._ensure_index()

    @contextmanager
    def _translated_errors(self) -> Iterator[None]:
        """Client exceptions as indexer errors: an unreachable or overloaded cluster is worth a retry, the rest not."""
        try:
            yield
        except OpenSearchConnectionError as exc:  # covers timeouts too
            raise BackendUnavailableError(f"OpenSearch at {_redacted(self.url)} is unreachable: {exc}") from exc
        except TransportError as exc:
            message = f"OpenSearch at {_redacted(self.url)}, index {self.index!r}: {exc}"
            if exc.status_code in _TRANSIENT_STATUSES:
                raise BackendUnavailableError(message) from exc
            raise IndexerError(message) from exc
        except helpers.BulkIndexError as exc:
            first = exc.errors[0] if exc.errors else {}
            raise IndexerError(f"OpenSearch rejected {len(exc.errors)} documents in {self.index!r}: {first}") from exc

    def _connection(self) -> OpenSearch:
        if self._client is None:
            # One retry on another node at most: the caller decides about longer retries (the error is transient).
            self._client = OpenSearch(hosts=[self.url], timeout=self.timeout, max_retries=1)
        return self._client

    def _ensure_index(self) -> OpenSearch:
        client = self._connection()
        if not self._index_ready:
            with self._translated_errors():
                if not client.indices.exists(index=self.index):
                    self._create(client)
            self._index_ready = True
        return client

    def _create(self, client: OpenSearch) -> None:
        try:
            client.indices.create(index=self.index, body={"settings": _SETTINGS, "mappings": _MAPPINGS})
        except RequestError as exc:
            # Another process (a worker beside the site) created it between our check and our create.
            if exc.error != "resource_already_exists_exception":
                raise

    def add(self, records: Sequence[ArticleRecord]) -> None:
        if not records:
            return
        check_owners((record.owner for record in records), owned=self.owned)
        client = self._ensure_index()
        # `_id` = PMID, so a PMID indexed again (or twice in one batch) replaces its document instead of adding one.
        actions = ({"_index": self.index, "_id": record.pmid, "_source": _source(record)} for record in records)
        with self._translated_errors(), self._refresh_paused(client):
            helpers.bulk(client, actions, chunk_size=_BULK_CHUNK)

    @contextmanager
    def _refresh_paused(self, client: OpenSearch) -> Iterator[None]:
        """No periodic refresh during a bulk load (it would rebuild segments for every chunk), then one refresh.

        The index's own refresh interval is put back afterwards, and the explicit refresh makes the documents
        searchable when `add` returns.
        """
        setting = "index.refresh_interval"
        current = client.indices.get_settings(index=self.index, name=setting)
        previous = current.get(self.index, {}).get("settings", {}).get("index", {}).get("refresh_interval")
        if previous == _PAUSED:
            # Another load is under way (or died mid-way): putting its pause back would leave refresh off for good.
            previous = None
        client.indices.put_settings(index=self.index, body={"index": {"refresh_interval": _PAUSED}})
        try:
            yield
        finally:
            # None resets the setting to the cluster default, which is what an unset interval meant.
            client.indices.put_settings(index=self.index, body={"index": {"refresh_interval": previous}})
            client.indices.refresh(index=self.index)

    def delete(self, pmids: Sequence[str]) -> None:
        if not pmids:
            return
        client = self._ensure_index()
        actions = ({"_op_type": "delete", "_index": self.index, "_id": pmid} for pmid in pmids)
        with self._translated_errors():
            # 404: the PMID was never indexed, which is what a delete wants anyway.
            helpers.bulk(client, actions, chunk_size=_BULK_CHUNK, ignore_status=(404,))
            client.indices.refresh(index=self.index)

    def search(
        self,
        query: str,
        *,
        limit: int,
        filters: SearchFilters = NO_FILTERS,
        expansion: Mapping[str, float] | None = None,
    ) -> list[Hit]:
        terms = query_terms(query)
        if not check_search(filters, owned=self.owned) or not terms or limit <= 0:
            return []
        client = self._ensure_index()
        body = {"query": self._query(terms, filters, expansion or {}), "size": limit, "_source": False}
        with self._translated_errors():
            response = client.search(index=self.index, body=body)
        return [Hit(pmid=str(hit["_id"]), score=float(hit["_score"])) for hit in response["hits"]["hits"]]

    def _query(self, terms: list[str], filters: SearchFilters, expansion: Mapping[str, float]) -> dict[str, Any]:
        # most_fields sums the title and full-text scores per term, as tantivy's query over both fields does;
        # filters sit in the bool query's filter context: inside the search, and without changing scores.
        text = {
            "multi_match": {
                "query": " ".join(terms),
                "fields": [f"title^{self.title_boost}", "full_text"],
                "type": "most_fields",
            }
        }
        # As tantivy's query (an OR over every word): an expansion word may match on its own, its score weighted.
        extra = [
            {"multi_match": {**text["multi_match"], "query": word, "boost": weight}}
            for term, weight in expansion.items()
            for word in query_terms(term)
        ]
        should = {"should": [text, *extra], "minimum_should_match": 1}
        return {"bool": {**should, "filter": _filter_clauses(filters)}}

    def count(self) -> int:
        client = self._ensure_index()
        with self._translated_errors():
            return int(client.count(index=self.index)["count"])

    def documents(self, pmids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The stored fields of these articles by PMID, in one round trip; unknown PMIDs are absent."""
        if not pmids:
            return {}
        client = self._ensure_index()
        with self._translated_errors():
            response = client.mget(index=self.index, body={"ids": list(dict.fromkeys(pmids))})
        return {str(doc["_id"]): doc["_source"] for doc in response["docs"] if doc.get("found")}

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        self._index_ready = False
