"""Dense-vector chunk index on a Qdrant server (or qdrant-client's local mode), through qdrant-client.

The server builds HNSW and int8 quantisation itself; searches are oversampled on the quantised vectors and rescored on
the full ones. Local mode (a path or ":memory:") runs the same calls by brute force: it is for tests and small setups.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from indexer.base import NO_FILTERS, Chunk, Hit, SearchFilters, VectorOptions, Vectors, best_per_pmid
from indexer.errors import BackendUnavailableError
from indexer.ownership import check_owners, check_search
from indexer.qdrant_points import (
    DEFAULT_CHUNKS_PER_ARTICLE,
    PAYLOAD_INDEXES,
    UPSERT_BATCH,
    VECTOR_NAME,
    AnyOf,
    Condition,
    filter_conditions,
    payload,
    pmid_condition,
    point_id,
)

if TYPE_CHECKING:
    from qdrant_client import QdrantClient, models

_MEMORY = ":memory:"
# Answers that mean "the service cannot serve us now (or we may not use it)", not "this request is wrong".
_UNAVAILABLE_STATUSES = frozenset({401, 403, 408, 429, 502, 503, 504})


class QdrantClientIndex:
    """One collection on a server (`location` an http(s) URL) or in local mode (a directory, or ":memory:")."""

    def __init__(
        self,
        location: str,
        collection: str,
        *,
        dimension: int,
        api_key: str | None = None,
        quantize: bool = True,
        oversampling: float = 2.0,
        hnsw_ef: int = 128,
        chunks_per_article: int = DEFAULT_CHUNKS_PER_ARTICLE,
        owned: bool = False,
    ) -> None:
        self.owned = owned
        self.location = location
        self.collection = collection
        self.dimension = dimension
        self.api_key = api_key
        self.quantize = quantize
        self.oversampling = oversampling
        self.hnsw_ef = hnsw_ef
        self.chunks_per_article = chunks_per_article
        self._client: QdrantClient | None = None

    @classmethod
    def from_options(cls, options: VectorOptions) -> QdrantClientIndex:
        return cls(
            options.url, options.collection, dimension=options.dimension, api_key=options.api_key, owned=options.owned
        )

    @property
    def remote(self) -> bool:
        return self.location.startswith(("http://", "https://"))

    def warm_up(self) -> None:
        self._open()

    @contextmanager
    def _unavailable_as_backend_error(self) -> Iterator[None]:
        from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

        try:
            yield
        except ResponseHandlingException as exc:  # what qdrant-client turns connection and transport failures into
            raise BackendUnavailableError(
                f"cannot reach the Qdrant server at {self.location} ({exc.source!r}): is it running?"
            ) from exc
        except UnexpectedResponse as exc:
            if exc.status_code is None or exc.status_code in _UNAVAILABLE_STATUSES or exc.status_code >= 500:
                raise BackendUnavailableError(
                    f"the Qdrant server at {self.location} answered {exc.status_code} {exc.reason_phrase} "
                    f"for collection {self.collection!r}"
                ) from exc
            raise

    def _open(self) -> QdrantClient:
        if self._client is None:
            from qdrant_client import QdrantClient

            try:
                if self.remote:
                    # No version check: it runs in a background thread that can only warn, at some later moment in
                    # whatever code is running then; an unusable server fails the first real call instead.
                    client = QdrantClient(url=self.location, api_key=self.api_key, check_compatibility=False)
                elif self.location == _MEMORY:
                    client = QdrantClient(location=_MEMORY)
                else:
                    client = QdrantClient(path=self.location)
            except RuntimeError as exc:  # local mode: the directory is locked by another client
                raise BackendUnavailableError(
                    f"cannot open the vector index at {self.location} ({exc}); "
                    "only one process may open a local-mode index: is a worker or another ingest running?"
                ) from exc
            try:
                with self._unavailable_as_backend_error():
                    self._ensure_collection(client)
            except BaseException:
                client.close()
                raise
            self._client = client
        return self._client

    def _ensure_collection(self, client: QdrantClient) -> None:
        from qdrant_client import models
        from qdrant_client.http.exceptions import UnexpectedResponse

        if client.collection_exists(self.collection):
            self._check_collection(client)
            return
        quantization = models.ScalarQuantization(
            scalar=models.ScalarQuantizationConfig(type=models.ScalarType.INT8, quantile=0.99, always_ram=True)
        )
        try:
            client.create_collection(
                self.collection,
                vectors_config={VECTOR_NAME: models.VectorParams(size=self.dimension, distance=models.Distance.COSINE)},
                hnsw_config=models.HnswConfigDiff(m=16, ef_construct=100),
                quantization_config=quantization if self.quantize else None,
            )
        except UnexpectedResponse as exc:
            if exc.status_code != 409:
                raise
            # Another process (a worker beside an ingest) created it between our check and our call: use theirs.
            self._check_collection(client)
            return
        # Local mode ignores payload indexes (it scans) and warns about each one, so only a server gets them.
        if self.remote:
            schema_types = {"keyword": models.PayloadSchemaType.KEYWORD, "integer": models.PayloadSchemaType.INTEGER}
            for field, kind in PAYLOAD_INDEXES.items():
                client.create_payload_index(self.collection, field, field_schema=schema_types[kind], wait=True)

    def _check_collection(self, client: QdrantClient) -> None:
        """Refuse a collection built for another embedding size or vector layout: it needs a rebuild."""
        vectors = client.get_collection(self.collection).config.params.vectors
        params = vectors.get(VECTOR_NAME) if isinstance(vectors, dict) else None
        if params is None or params.size != self.dimension:
            found = "no" if params is None else f"{params.size}-dimensional"
            raise BackendUnavailableError(
                f"the collection {self.collection!r} at {self.location} has {found} {VECTOR_NAME!r} vectors but the "
                f"embedder gives {self.dimension}: delete the collection and re-ingest the corpus to rebuild it"
            )

    def upsert(self, chunks: Sequence[Chunk], vectors: Vectors) -> None:
        from qdrant_client import models

        if len(chunks) != len(vectors):
            raise ValueError(f"{len(chunks)} chunks but {len(vectors)} vectors")
        check_owners((chunk.facets.owner for chunk in chunks), owned=self.owned)
        client = self._open()
        with self._unavailable_as_backend_error():
            for start in range(0, len(chunks), UPSERT_BATCH):
                points = [
                    models.PointStruct(
                        id=point_id(chunk.pmid, chunk.index),
                        vector={VECTOR_NAME: vector.tolist()},
                        payload=payload(chunk),
                    )
                    for chunk, vector in zip(
                        chunks[start : start + UPSERT_BATCH], vectors[start : start + UPSERT_BATCH], strict=True
                    )
                ]
                client.upsert(self.collection, points=points, wait=True)

    def delete(self, pmids: Sequence[str]) -> None:
        from qdrant_client import models

        if not pmids:
            return
        client = self._open()
        # By payload, not by id: the index does not know how many chunks an article had.
        selector = models.FilterSelector(filter=_client_filter([pmid_condition(pmids)]))
        with self._unavailable_as_backend_error():
            client.delete(self.collection, points_selector=selector, wait=True)

    def search(self, vector: Vectors, *, limit: int, filters: SearchFilters = NO_FILTERS) -> list[Hit]:
        if not check_search(filters, owned=self.owned):
            return []
        from qdrant_client import models

        client = self._open()
        # Several chunks of one article may crowd the nearest points: fetch enough chunks for `limit` articles.
        fetch = limit * self.chunks_per_article
        # Oversampled int8 candidates rescored on the full vectors: quantised speed, exact final scores.
        params = models.SearchParams(
            hnsw_ef=max(self.hnsw_ef, fetch),
            quantization=models.QuantizationSearchParams(rescore=True, oversampling=self.oversampling),
        )
        conditions = filter_conditions(filters)
        with self._unavailable_as_backend_error():
            response = client.query_points(
                self.collection,
                query=vector.tolist(),
                using=VECTOR_NAME,
                # Inside the query, so the server walks only admitted points and still finds `limit` of them.
                query_filter=_client_filter(conditions) if conditions else None,
                search_params=params if self.remote else None,  # local mode scans exactly, and warns otherwise
                limit=fetch,
                with_payload=["pmid"],
            )
        hits = (
            Hit(pmid=str(point.payload["pmid"]), score=float(point.score))
            for point in response.points
            if point.payload  # every point is written with its pmid; guard against a foreign point
        )
        return best_per_pmid(hits, limit=limit)

    def count(self) -> int:
        client = self._open()
        with self._unavailable_as_backend_error():
            return client.count(self.collection, exact=True).count

    def optimize(self) -> None:
        """Nothing to do: a server's optimiser threads build HNSW and quantisation in the background as points
        arrive (searches stay correct meanwhile, only slower), and local mode has no ANN structures to build."""

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def _client_filter(conditions: Sequence[Condition]) -> models.Filter:
    """The library-neutral conditions as a qdrant-client filter that must all hold."""
    from qdrant_client import models

    return models.Filter(
        must=[
            models.FieldCondition(key=condition.key, match=models.MatchAny(any=list(condition.values)))
            if isinstance(condition, AnyOf)
            else models.FieldCondition(key=condition.key, range=models.Range(gte=condition.gte, lte=condition.lte))
            for condition in conditions
        ]
    )
