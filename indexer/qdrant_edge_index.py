"""Dense-vector index on Qdrant's in-process engine (qdrant-edge): HNSW, int8 quantisation, full-vector rescoring."""

from __future__ import annotations

import fcntl
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from indexer.base import Hit, Vectors
from indexer.errors import BackendUnavailableError

if TYPE_CHECKING:
    from qdrant_edge import EdgeConfig, EdgeShard

_VECTOR = "dense"
_POINT_NAMESPACE = uuid.UUID("5b0e1c8a-2f7e-4d53-9f57-0c5d6c1f2a10")
_UPSERT_BATCH = 512


def point_id(pmid: str) -> str:
    """A stable point id for a PMID (ids like `S2:123` are not integers), so upserts replace, never duplicate."""
    return str(uuid.uuid5(_POINT_NAMESPACE, pmid))


class QdrantEdgeIndex:
    """One shard directory, owned by one process at a time (the engine locks its write-ahead log)."""

    def __init__(
        self, path: Path, *, dimension: int, hnsw_ef: int = 128, oversampling: float = 2.0, quantize: bool = True
    ) -> None:
        self.path = path
        self.dimension = dimension
        self.hnsw_ef = hnsw_ef
        self.oversampling = oversampling
        self.quantize = quantize
        self._shard: EdgeShard | None = None
        self._lock_file: IO[bytes] | None = None

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
            vectors={_VECTOR: EdgeVectorParams(size=self.dimension, distance=Distance.Cosine)},
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
            from qdrant_edge import EdgeShard

            self._acquire_process_lock()
            try:
                if (self.path / "edge_config.json").exists():
                    self._shard = EdgeShard.load(str(self.path))
                else:
                    self.path.mkdir(parents=True, exist_ok=True)
                    self._shard = EdgeShard.create(str(self.path), self._config())
            except Exception as exc:  # the engine raises a bare Exception for a held lock or a broken store
                self._release_process_lock()
                raise BackendUnavailableError(
                    f"cannot open the vector index at {self.path} ({exc}); "
                    "only one process may hold it: is a worker or another ingest running?"
                ) from exc
        return self._shard

    def upsert(self, pmids: Sequence[str], vectors: Vectors) -> None:
        from qdrant_edge import Point, UpdateOperation

        if len(pmids) != len(vectors):
            raise ValueError(f"{len(pmids)} pmids but {len(vectors)} vectors")
        shard = self._open()
        for start in range(0, len(pmids), _UPSERT_BATCH):
            points = [
                Point(id=point_id(pmid), vector={_VECTOR: vector.tolist()}, payload={"pmid": pmid})
                for pmid, vector in zip(
                    pmids[start : start + _UPSERT_BATCH], vectors[start : start + _UPSERT_BATCH], strict=True
                )
            ]
            shard.update(UpdateOperation.upsert_points(points))
        shard.flush()

    def delete(self, pmids: Sequence[str]) -> None:
        from qdrant_edge import UpdateOperation

        if not pmids:
            return
        shard = self._open()
        shard.update(UpdateOperation.delete_points([point_id(pmid) for pmid in pmids]))
        shard.flush()

    def search(self, vector: Vectors, *, limit: int) -> list[Hit]:
        from qdrant_edge import (
            QuantizationSearchParams,
            Query,
            QueryRequest,
            SearchParams,
        )

        shard = self._open()
        # Oversampled int8 candidates rescored on the full vectors: quantised speed, exact final scores.
        params = SearchParams(
            hnsw_ef=max(self.hnsw_ef, limit),
            quantization=QuantizationSearchParams(rescore=True, oversampling=self.oversampling),
        )
        request = QueryRequest(
            limit=limit, query=Query.Nearest(vector.tolist(), using=_VECTOR), with_payload=True, params=params
        )
        return [
            Hit(pmid=str(point.payload["pmid"]), score=float(point.score))
            for point in shard.query(request)
            if point.payload  # every point is written with its pmid; guard against a foreign point
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
