"""qdrant-edge specifics: one process per shard, the schema marker, payload indexes (the contract is in
test_vector_contract.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from indexer.base import Chunk, Facets, Vectors
from indexer.errors import BackendUnavailableError
from indexer.qdrant_edge_index import SCHEMA_MARKER, SCHEMA_VERSION, QdrantEdgeIndex
from indexer.qdrant_points import PAYLOAD_INDEXES

DIMENSION = 8


def unit_vectors(count: int, *, seed: int) -> Vectors:
    vectors = np.random.default_rng(seed).normal(size=(count, DIMENSION)).astype(np.float32)
    normalised: Vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    return normalised


CHUNKS = [Chunk(pmid, 0, "", Facets(year=2020, journal="BMJ")) for pmid in ("101", "102", "103")]


@pytest.fixture
def shard_path(tmp_path: Path) -> Path:
    return tmp_path / "qdrant"


@pytest.fixture
def index(shard_path: Path) -> Iterator[QdrantEdgeIndex]:
    index = QdrantEdgeIndex(shard_path, dimension=DIMENSION)
    index.upsert(CHUNKS, unit_vectors(len(CHUNKS), seed=7))
    yield index
    index.close()


def test_opening_a_second_index_on_a_held_path_is_a_transient_backend_error(
    index: QdrantEdgeIndex, shard_path: Path
) -> None:
    second = QdrantEdgeIndex(shard_path, dimension=DIMENSION)

    with pytest.raises(BackendUnavailableError) as raised:
        second.count()

    assert raised.value.transient is True
    assert str(shard_path) in str(raised.value)


def test_a_refused_second_open_leaves_the_holder_able_to_write(index: QdrantEdgeIndex, shard_path: Path) -> None:
    # A worker that starts while an ingest holds the shard must be refused without damaging the ingest's shard.
    with pytest.raises(BackendUnavailableError):
        QdrantEdgeIndex(shard_path, dimension=DIMENSION).warm_up()

    index.upsert([Chunk("107", 0, "")], unit_vectors(1, seed=5))
    index.delete(["101"])

    assert index.count() == len(CHUNKS)


def test_closing_releases_the_shard_for_the_next_process(index: QdrantEdgeIndex, shard_path: Path) -> None:
    index.close()

    successor = QdrantEdgeIndex(shard_path, dimension=DIMENSION)
    try:
        assert successor.count() == len(CHUNKS)
    finally:
        successor.close()


def test_a_new_shard_indexes_every_filtered_field_and_records_its_schema(
    index: QdrantEdgeIndex, shard_path: Path
) -> None:
    from qdrant_edge import EdgeShard, PayloadSchemaType

    index.close()

    shard = EdgeShard.load(str(shard_path))
    try:
        schema = shard.info().payload_schema
    finally:
        shard.close()
    kinds = {"keyword": PayloadSchemaType.Keyword, "integer": PayloadSchemaType.Integer}
    assert {field: info.data_type for field, info in schema.items()} == {
        field: kinds[kind] for field, kind in PAYLOAD_INDEXES.items()
    }
    marker = json.loads((shard_path / SCHEMA_MARKER).read_text(encoding="utf-8"))
    assert marker == {"schema": SCHEMA_VERSION, "dimension": DIMENSION}


def make_shard_of_the_previous_version(path: Path) -> None:
    """One point per article, id uuid5(pmid), payload {pmid}, no payload indexes and no marker."""
    from qdrant_edge import Distance, EdgeConfig, EdgeShard, EdgeVectorParams, Point, UpdateOperation

    config = EdgeConfig(vectors={"dense": EdgeVectorParams(size=DIMENSION, distance=Distance.Cosine)})
    shard = EdgeShard.create(str(path), config)
    vector = unit_vectors(1, seed=1)[0].tolist()
    shard.update(UpdateOperation.upsert_points([Point(id=1, vector={"dense": vector}, payload={"pmid": "101"})]))
    shard.flush()
    shard.close()


def test_a_shard_of_the_previous_version_is_refused_with_a_rebuild_hint(shard_path: Path) -> None:
    make_shard_of_the_previous_version(shard_path)

    for _ in range(2):  # the refusal releases the process lock: the second attempt is refused for the same reason
        index = QdrantEdgeIndex(shard_path, dimension=DIMENSION)
        with pytest.raises(BackendUnavailableError, match="rebuild") as raised:
            index.count()
        assert str(shard_path) in str(raised.value)
        assert "held by another process" not in str(raised.value)
        index.close()


def test_a_shard_built_for_another_embedding_size_is_refused_with_a_rebuild_hint(
    index: QdrantEdgeIndex, shard_path: Path
) -> None:
    index.close()

    other = QdrantEdgeIndex(shard_path, dimension=DIMENSION * 2)
    with pytest.raises(BackendUnavailableError, match="8-dimensional vectors but the embedder gives 16"):
        other.count()
    other.close()


def test_an_existing_empty_directory_becomes_a_new_shard(shard_path: Path) -> None:
    shard_path.mkdir()

    index = QdrantEdgeIndex(shard_path, dimension=DIMENSION)
    try:
        assert index.count() == 0
    finally:
        index.close()
