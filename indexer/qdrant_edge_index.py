"""Dense-vector chunk index on Qdrant's in-process engine (qdrant-edge): HNSW, int8 quantisation, rescoring."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

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
    from qdrant_edge import EdgeConfig, EdgeShard, Filter

# Bumped whenever what a shard holds changes incompatibly (point ids, payload, payload indexes): a shard written
# under another version is refused instead of being silently searched or updated with mismatched ids.
# Version 2: one point per chunk, id uuid5("{pmid}#{index}"), facet payload with payload indexes.
SCHEMA_VERSION = 2
SCHEMA_MARKER = "verimed_schema.json"


class QdrantEdgeIndex:
    """One shard directory, owned by one process at a time (the engine locks its write-ahead log)."""

    def __init__(
        self,
        path: Path,
        *,
        dimension: int,
        hnsw_ef: int = 128,
        oversampling: float = 2.0,
        quantize: bool = True,
        chunks_per_article: int = DEFAULT_CHUNKS_PER_ARTICLE,
        owned: bool = False,
    ) -> None:
        self.owned = owned
        self.path = path
        self.dimension = dimension
        self.hnsw_ef = hnsw_ef
        self.oversampling = oversampling
        self.quantize = quantize
        self.chunks_per_article = chunks_per_article
        self._shard: EdgeShard | None = None
        self._lock_file: IO[bytes] | None = None

    @classmethod
    def from_options(cls, options: VectorOptions) -> QdrantEdgeIndex:
        return cls(options.required_folder(), dimension=options.dimension, owned=options.owned)

    def warm_up(self) -> None:
        self._open()

    def _config(self) -> EdgeConfig:
        from qdrant_edge import (
            Distance,
            EdgeConfig,
            EdgeVectorParams,
            HnswIndexConfig,
            ScalarQuantizationConfig,
            ScalarType,
        )

        quantization = ScalarQuantizationConfig(type=ScalarType.Int8, quantile=0.99, always_ram=True)
        return EdgeConfig(
            vectors={VECTOR_NAME: EdgeVectorParams(size=self.dimension, distance=Distance.Cosine)},
            hnsw_config=HnswIndexConfig(m=16, ef_construct=100, full_scan_threshold=10_000),
            quantization_config=quantization if self.quantize else None,
        )

    def _acquire_process_lock(self) -> None:
        """Take our own lock before the engine touches the shard.

        The engine refuses a second opener only after that opener has already disturbed the holder's files (the
        holder's next flush then fails), so a second process must be turned away before it calls the engine.
        """
        self.path.mkdir(parents=True, exist_ok=True)
        lock_file = (self.path.parent / f".{self.path.name}.lock").open("wb")
        try:
            fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            lock_file.close()
            raise BackendUnavailableError(
                f"the vector index at {self.path} is held by another process; "
                "only one process may open it: is a worker or another ingest running?"
            ) from exc
        self._lock_file = lock_file

    def _open(self) -> EdgeShard:
        if self._shard is None:
            self._acquire_process_lock()
            try:
                if (self.path / "edge_config.json").exists():
                    self._check_schema()
                    self._shard = self._load()
                else:
                    self._shard = self._create()
            except BaseException:
                self._release_process_lock()
                raise
        return self._shard

    def _check_schema(self) -> None:
        """Refuse a shard written under another point scheme or for another embedding size: it needs a rebuild."""
        marker = self.path / SCHEMA_MARKER
        try:
            written = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            written = {}
        if written.get("schema") != SCHEMA_VERSION:
            raise BackendUnavailableError(
                f"the vector index at {self.path} was built by an older version (one point per article, no payload "
                f"indexes; found schema {written.get('schema')!r}, need {SCHEMA_VERSION}): "
                "delete that directory and re-ingest the corpus to rebuild it"
            )
        if written.get("dimension") != self.dimension:
            raise BackendUnavailableError(
                f"the vector index at {self.path} holds {written.get('dimension')}-dimensional vectors but the "
                f"embedder gives {self.dimension}: delete that directory and re-ingest the corpus to rebuild it"
            )

    def _load(self) -> EdgeShard:
        from qdrant_edge import EdgeShard

        try:
            return EdgeShard.load(str(self.path))
        except Exception as exc:  # the engine raises a bare Exception for a held lock or a broken store
            raise BackendUnavailableError(
                f"cannot open the vector index at {self.path} ({exc}); "
                "only one process may hold it: is a worker or another ingest running?"
            ) from exc

    def _create(self) -> EdgeShard:
        from qdrant_edge import EdgeShard, PayloadSchemaType, UpdateOperation

        schema_types = {"keyword": PayloadSchemaType.Keyword, "integer": PayloadSchemaType.Integer}
        try:
            shard = EdgeShard.create(str(self.path), self._config())
            # Indexed before any point arrives, so every segment the optimiser builds carries them.
            for field, kind in PAYLOAD_INDEXES.items():
                shard.update(UpdateOperation.create_field_index(field, schema_types[kind]))
            shard.flush()
        except Exception as exc:
            raise BackendUnavailableError(f"cannot create the vector index at {self.path} ({exc})") from exc
        # Written last: a creation interrupted before this point leaves a shard that is refused, not one that
        # silently lacks its payload indexes.
        self._write_schema_marker()
        return shard

    def _write_schema_marker(self) -> None:
        marker = self.path / SCHEMA_MARKER
        partial = marker.with_suffix(".tmp")
        partial.write_text(json.dumps({"schema": SCHEMA_VERSION, "dimension": self.dimension}), encoding="utf-8")
        os.replace(partial, marker)

    def upsert(self, chunks: Sequence[Chunk], vectors: Vectors) -> None:
        from qdrant_edge import Point, UpdateOperation

        if len(chunks) != len(vectors):
            raise ValueError(f"{len(chunks)} chunks but {len(vectors)} vectors")
        check_owners((chunk.facets.owner for chunk in chunks), owned=self.owned)
        shard = self._open()
        for start in range(0, len(chunks), UPSERT_BATCH):
            points = [
                Point(
                    id=point_id(chunk.pmid, chunk.index),
                    vector={VECTOR_NAME: vector.tolist()},
                    payload=payload(chunk),
                )
                for chunk, vector in zip(
                    chunks[start : start + UPSERT_BATCH], vectors[start : start + UPSERT_BATCH], strict=True
                )
            ]
            shard.update(UpdateOperation.upsert_points(points))
        shard.flush()

    def delete(self, pmids: Sequence[str]) -> None:
        from qdrant_edge import UpdateOperation

        if not pmids:
            return
        shard = self._open()
        # By payload, not by id: the index does not know how many chunks an article had.
        shard.update(UpdateOperation.delete_points_by_filter(_edge_filter([pmid_condition(pmids)])))
        shard.flush()

    def search(self, vector: Vectors, *, limit: int, filters: SearchFilters = NO_FILTERS) -> list[Hit]:
        if not check_search(filters, owned=self.owned):
            return []
        # Several chunks of one article may crowd the nearest points: fetch enough chunks for `limit` articles.
        points = self.nearest_points(vector, limit=limit * self.chunks_per_article, filters=filters)
        return best_per_pmid((Hit(pmid=pmid, score=score) for pmid, score in points), limit=limit)

    def nearest_points(
        self,
        vector: Vectors,
        *,
        limit: int,
        filters: SearchFilters = NO_FILTERS,
        quantized: bool = True,
        exact: bool = False,
        hnsw_ef: int | None = None,
    ) -> list[tuple[str, float]]:
        """(pmid, score) of the `limit` nearest points, a chunk each. The product's search is quantised: oversampled
        int8 candidates rescored on the full vectors (quantised speed, exact final scores). `quantized=False` reads
        the full vectors only and `exact=True` walks every point: what a recall check compares the product with."""
        from qdrant_edge import QuantizationSearchParams, Query, QueryRequest, SearchParams

        conditions = filter_conditions(filters)
        quantization = (
            QuantizationSearchParams(rescore=True, oversampling=self.oversampling)
            if quantized
            else QuantizationSearchParams(ignore=True)
        )
        request = QueryRequest(
            limit=limit,
            query=Query.Nearest(vector.tolist(), using=VECTOR_NAME),
            # Inside the query, so the engine walks only admitted points and still finds `limit` of them.
            filter=_edge_filter(conditions) if conditions else None,
            with_payload=["pmid"],
            params=SearchParams(
                hnsw_ef=None if exact else max(hnsw_ef or self.hnsw_ef, limit), exact=exact, quantization=quantization
            ),
        )
        # Every point is written with its pmid; the guard skips a foreign point.
        return [
            (str(point.payload["pmid"]), float(point.score)) for point in self._open().query(request) if point.payload
        ]

    def count(self) -> int:
        from qdrant_edge import CountRequest

        return int(self._open().count(CountRequest()))

    def optimize(self) -> None:
        self._open().optimize()

    def close(self) -> None:
        if self._shard is not None:
            self._shard.close()
            self._shard = None
        self._release_process_lock()

    def _release_process_lock(self) -> None:
        if self._lock_file is not None:
            self._lock_file.close()  # closing the descriptor releases the flock
            self._lock_file = None


def _edge_filter(conditions: Sequence[Condition]) -> Filter:
    """The library-neutral conditions as a qdrant-edge filter that must all hold."""
    from qdrant_edge import FieldCondition, Filter, MatchAny, RangeFloat

    return Filter(
        must=[
            FieldCondition(key=condition.key, match=MatchAny(any=list(condition.values)))
            if isinstance(condition, AnyOf)
            else FieldCondition(key=condition.key, range=RangeFloat(gte=condition.gte, lte=condition.lte))
            for condition in conditions
        ]
    )
