"""Tests for the qdrant-edge dense-vector index: nearest-first search, upsert by PMID, deletes, locking, reopening."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from indexer.base import Vectors
from indexer.errors import BackendUnavailableError
from indexer.qdrant_edge_index import QdrantEdgeIndex, point_id

DIMENSION = 8
PMIDS = ["101", "102", "103", "S2:123", "105", "106"]


def unit_vectors(count: int, *, seed: int) -> Vectors:
    vectors = np.random.default_rng(seed).normal(size=(count, DIMENSION)).astype(np.float32)
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


VECTORS = unit_vectors(len(PMIDS), seed=7)


def cosine_ranking(query: Vectors, vectors: Vectors, pmids: list[str]) -> list[str]:
    scores = vectors @ query
    return [pmids[index] for index in np.argsort(-scores, kind="stable")]


@pytest.fixture
def index(tmp_path: Path) -> Iterator[QdrantEdgeIndex]:
    index = QdrantEdgeIndex(tmp_path / "qdrant", dimension=DIMENSION)
    index.upsert(PMIDS, VECTORS)
    yield index
    index.close()


def test_point_ids_are_stable_and_distinct_per_pmid() -> None:
    assert point_id("123") == point_id("123")
    assert point_id("123") != point_id("S2:123")


def test_a_new_index_is_empty(tmp_path: Path) -> None:
    index = QdrantEdgeIndex(tmp_path / "qdrant", dimension=DIMENSION)
    try:
        assert index.count() == 0
    finally:
        index.close()


def test_search_returns_the_identical_vector_first_with_score_one(index: QdrantEdgeIndex) -> None:
    hits = index.search(VECTORS[2], limit=3)

    assert hits[0].pmid == "103"
    assert hits[0].score == pytest.approx(1.0, abs=1e-4)
    assert len(hits) == 3


def test_search_orders_hits_as_exact_cosine_similarity_does(index: QdrantEdgeIndex) -> None:
    query = unit_vectors(1, seed=99)[0]

    hits = index.search(query, limit=len(PMIDS))

    assert [hit.pmid for hit in hits] == cosine_ranking(query, VECTORS, PMIDS)
    expected_scores = sorted((float(score) for score in VECTORS @ query), reverse=True)
    assert [hit.score for hit in hits] == pytest.approx(expected_scores, abs=1e-4)


def test_search_still_finds_the_identical_vector_after_optimize(index: QdrantEdgeIndex) -> None:
    index.optimize()

    hits = index.search(VECTORS[0], limit=2)

    assert hits[0].pmid == "101"
    assert hits[0].score == pytest.approx(1.0, abs=1e-4)
    assert index.count() == len(PMIDS)


def test_upserting_the_same_pmid_again_replaces_its_vector(index: QdrantEdgeIndex) -> None:
    replacement = unit_vectors(1, seed=1234)

    index.upsert(["102"], replacement)

    assert index.count() == len(PMIDS)
    hit = index.search(replacement[0], limit=1)[0]
    assert hit.pmid == "102"
    assert hit.score == pytest.approx(1.0, abs=1e-4)


def test_a_non_numeric_id_is_returned_as_given(index: QdrantEdgeIndex) -> None:
    hit = index.search(VECTORS[3], limit=1)[0]

    assert hit.pmid == "S2:123"


def test_delete_removes_the_point(index: QdrantEdgeIndex) -> None:
    index.delete(["103", "S2:123"])

    assert index.count() == len(PMIDS) - 2
    returned = [hit.pmid for hit in index.search(VECTORS[2], limit=len(PMIDS))]
    assert "103" not in returned
    assert "S2:123" not in returned


def test_deleting_no_pmids_or_unknown_pmids_changes_nothing(index: QdrantEdgeIndex) -> None:
    index.delete([])
    index.delete(["999"])

    assert index.count() == len(PMIDS)


def test_the_index_persists_across_close_and_reopen(index: QdrantEdgeIndex, tmp_path: Path) -> None:
    index.optimize()
    index.close()

    reopened = QdrantEdgeIndex(tmp_path / "qdrant", dimension=DIMENSION)
    try:
        assert reopened.count() == len(PMIDS)
        hit = reopened.search(VECTORS[3], limit=1)[0]
        assert (hit.pmid, hit.score) == ("S2:123", pytest.approx(1.0, abs=1e-4))
        reopened.upsert(["107"], unit_vectors(1, seed=5))
        assert reopened.count() == len(PMIDS) + 1
    finally:
        reopened.close()


def test_closing_twice_is_harmless(index: QdrantEdgeIndex) -> None:
    index.close()
    index.close()


def test_opening_a_second_index_on_a_held_path_is_a_transient_backend_error(
    index: QdrantEdgeIndex, tmp_path: Path
) -> None:
    second = QdrantEdgeIndex(tmp_path / "qdrant", dimension=DIMENSION)

    with pytest.raises(BackendUnavailableError) as raised:
        second.count()

    assert raised.value.transient is True
    assert str(tmp_path / "qdrant") in str(raised.value)


def test_a_refused_second_open_leaves_the_holder_able_to_write(index: QdrantEdgeIndex, tmp_path: Path) -> None:
    # A worker that starts while an ingest holds the shard must be refused without damaging the ingest's shard.
    with pytest.raises(BackendUnavailableError):
        QdrantEdgeIndex(tmp_path / "qdrant", dimension=DIMENSION).warm_up()

    index.upsert(["107"], unit_vectors(1, seed=5))
    index.delete(["101"])

    assert index.count() == len(PMIDS)


def test_upsert_rejects_mismatched_lengths(tmp_path: Path) -> None:
    index = QdrantEdgeIndex(tmp_path / "qdrant", dimension=DIMENSION)
    try:
        with pytest.raises(ValueError, match="2 pmids but 1 vectors"):
            index.upsert(["1", "2"], unit_vectors(1, seed=3))
        assert index.count() == 0
    finally:
        index.close()


def test_upsert_writes_more_points_than_one_internal_batch(tmp_path: Path) -> None:
    index = QdrantEdgeIndex(tmp_path / "qdrant", dimension=DIMENSION)
    vectors = unit_vectors(1100, seed=11)
    pmids = [str(number) for number in range(1100)]
    try:
        index.upsert(pmids, vectors)

        assert index.count() == 1100
        assert index.search(vectors[1050], limit=1)[0].pmid == "1050"
    finally:
        index.close()
