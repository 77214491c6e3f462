"""Vectors handed from a background embedder to the process that owns the vector index: written whole, read back,
and written into the real in-process Qdrant engine only for articles whose text has not changed since."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from indexer.chunking import Chunker
from indexer.embedding_handoff import (
    HandoffBatchError,
    apply_batch,
    discard_partial_batches,
    embed_batch,
    read_batch,
    waiting_articles,
    waiting_batches,
    write_batch,
)
from indexer.fake_embedder import FakeEmbedder
from indexer.ingest import IngestReport
from indexer.qdrant_edge_index import QdrantEdgeIndex
from indexer.records import ArticleRecord

RECORDS = [
    ArticleRecord(pmid="1", title="Zinc and colds", abstract="Zinc lozenges shortened colds in adults."),
    ArticleRecord(pmid="2", title="Statins", abstract="Statins lowered LDL cholesterol by a third."),
    ArticleRecord(pmid="3", title="Metformin", abstract="Metformin lowered HbA1c in type 2 diabetes."),
]


@pytest.fixture
def embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
def chunker(embedder: FakeEmbedder) -> Chunker:
    return Chunker(embedder.token_lengths, max_tokens=embedder.max_tokens)


@pytest.fixture
def vectors(tmp_path: Path) -> Iterator[QdrantEdgeIndex]:
    index = QdrantEdgeIndex(tmp_path / "shard", dimension=384)
    yield index
    index.close()


def test_a_batch_round_trips_through_its_file(tmp_path: Path, embedder: FakeEmbedder, chunker: Chunker) -> None:
    report = IngestReport()
    batch = embed_batch(RECORDS, chunker=chunker, embedder=embedder, report=report)

    path = write_batch(tmp_path / "inbox", batch)
    read = read_batch(path)

    assert read.pmids == batch.pmids == ["1", "2", "3"]
    assert read.chunk_indexes == [0, 0, 0]
    assert read.digests == batch.digests
    np.testing.assert_array_equal(read.vectors, batch.vectors)
    assert (report.embedded, report.chunks) == (3, 3)
    assert waiting_batches(tmp_path / "inbox") == [path]
    assert waiting_articles(tmp_path / "inbox") == {"1", "2", "3"}


def test_batches_are_listed_oldest_first_and_a_partial_file_never(
    tmp_path: Path, embedder: FakeEmbedder, chunker: Chunker
) -> None:
    inbox = tmp_path / "inbox"
    first = write_batch(inbox, embed_batch(RECORDS[:1], chunker=chunker, embedder=embedder, report=IngestReport()))
    second = write_batch(inbox, embed_batch(RECORDS[1:], chunker=chunker, embedder=embedder, report=IngestReport()))
    (inbox / ".123-4.partial").write_bytes(b"half a batch")  # what a writer killed mid-write leaves

    assert waiting_batches(inbox) == [first, second]
    assert waiting_batches(tmp_path / "no-such-folder") == []
    assert discard_partial_batches(inbox) == 1
    assert sorted(inbox.iterdir()) == [first, second]


def test_an_unreadable_batch_is_an_error_naming_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "00000000000000000001-1.npz"
    broken.write_bytes(b"PK\x03\x04 not really a zip")

    with pytest.raises(HandoffBatchError, match=broken.name):
        read_batch(broken)
    assert waiting_articles(tmp_path) == set()


def test_applying_a_batch_makes_its_articles_searchable_and_is_idempotent(
    tmp_path: Path, embedder: FakeEmbedder, chunker: Chunker, vectors: QdrantEdgeIndex
) -> None:
    batch = read_batch(
        write_batch(tmp_path, embed_batch(RECORDS, chunker=chunker, embedder=embedder, report=IngestReport()))
    )

    assert apply_batch(batch, current=RECORDS, chunker=chunker, vectors=vectors) == ["1", "2", "3"]
    assert apply_batch(batch, current=RECORDS, chunker=chunker, vectors=vectors) == ["1", "2", "3"]

    assert vectors.count() == 3  # the second write replaced, never duplicated
    top = vectors.search(embedder.embed(["statins LDL cholesterol"])[0], limit=1)
    assert [hit.pmid for hit in top] == ["2"]


def test_an_article_changed_or_deleted_since_it_was_embedded_is_not_written(
    embedder: FakeEmbedder, chunker: Chunker, vectors: QdrantEdgeIndex
) -> None:
    batch = embed_batch(RECORDS, chunker=chunker, embedder=embedder, report=IngestReport())
    revised = replace(RECORDS[0], abstract="Zinc lozenges did not shorten colds in adults.")

    applied = apply_batch(batch, current=[revised, RECORDS[1]], chunker=chunker, vectors=vectors)

    assert applied == ["2"]  # 1 was revised (embedded again later), 3 is no longer stored
    assert vectors.count() == 1


def test_a_long_article_keeps_all_its_chunks_in_order(
    embedder: FakeEmbedder, vectors: QdrantEdgeIndex, tmp_path: Path
) -> None:
    small = Chunker(embedder.token_lengths, max_tokens=24)
    long_record = ArticleRecord(
        pmid="9",
        title="Dosing",
        abstract=" ".join(f"Patients in arm {arm} received dose {arm} of the study drug daily." for arm in range(8)),
    )
    batch = read_batch(
        write_batch(tmp_path, embed_batch([long_record], chunker=small, embedder=embedder, report=IngestReport()))
    )

    assert len(batch.chunk_indexes) > 1
    assert batch.chunk_indexes == list(range(len(batch.chunk_indexes)))
    assert apply_batch(batch, current=[long_record], chunker=small, vectors=vectors) == ["9"]
    assert vectors.count() == len(batch.chunk_indexes)
