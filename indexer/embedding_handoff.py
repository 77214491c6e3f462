"""Vectors computed by one process and written into the vector index by another.

The embedded profile's vector index (qdrant-edge) may be opened by one process only: the worker that answers
questions. Embedding is most of an ingest (a 13k-abstract demo corpus takes half an hour and more on two cores) and
must not hold that worker: a low-priority process embeds the articles still pending and leaves each batch's vectors
as one file in an inbox folder; the worker writes a batch into the index in a fraction of a second between questions.

A batch records a digest of every chunk's text. The writer chunks the articles again as they are stored when it
writes, and writes only the articles whose chunks still match: an article revised after it was embedded stays
pending and is embedded again, never indexed with the vectors of its old text. Files are written whole (a temporary
name, then a rename), so a killed embedder leaves no half batch; an unreadable file is discarded and its articles,
still pending, are embedded again.
"""

from __future__ import annotations

import hashlib
import os
import time
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from indexer.base import Chunk, Embedder, VectorIndex
from indexer.chunking import Chunker
from indexer.errors import IndexerError
from indexer.ingest import IngestReport, timed
from indexer.records import ArticleRecord

BATCH_SUFFIX = ".npz"


class HandoffBatchError(IndexerError):
    """A batch file that cannot be read: it is discarded and its articles are embedded again."""


def chunk_digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()


@dataclass(frozen=True)
class HandoffBatch:
    """One chunk key per vector row: which article, which of its chunks, and a digest of the text embedded."""

    pmids: list[str]
    chunk_indexes: list[int]
    digests: list[str]
    vectors: np.ndarray

    @property
    def articles(self) -> list[str]:
        return list(dict.fromkeys(self.pmids))


def embed_batch(
    records: Sequence[ArticleRecord], *, chunker: Chunker, embedder: Embedder, report: IngestReport
) -> HandoffBatch:
    """Chunk and embed these articles (timed into `report` as the chunk and embed stages)."""
    with timed(report, "chunk"):
        chunks = chunker.chunks(records)
    with timed(report, "embed"):
        vectors = embedder.embed([chunk.text for chunk in chunks])
    report.embedded += len(records)
    report.chunks += len(chunks)
    return HandoffBatch(
        pmids=[chunk.pmid for chunk in chunks],
        chunk_indexes=[chunk.index for chunk in chunks],
        digests=[chunk_digest(chunk.text) for chunk in chunks],
        vectors=np.asarray(vectors, dtype=np.float32),
    )


def write_batch(folder: Path, batch: HandoffBatch) -> Path:
    """Write the batch whole under a new name in `folder` (names sort in the order batches were written)."""
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{time.time_ns():020d}-{os.getpid()}"
    partial = folder / f".{name}.partial"
    with partial.open("wb") as stream:
        np.savez(
            stream,
            pmids=np.asarray(batch.pmids, dtype=str),
            chunk_indexes=np.asarray(batch.chunk_indexes, dtype=np.int32),
            digests=np.asarray(batch.digests, dtype=str),
            vectors=batch.vectors,
        )
        stream.flush()
        os.fsync(stream.fileno())
    final = folder / f"{name}{BATCH_SUFFIX}"
    os.replace(partial, final)
    return final


def read_batch(path: Path) -> HandoffBatch:
    try:
        with np.load(path, allow_pickle=False) as stored:
            batch = HandoffBatch(
                pmids=[str(pmid) for pmid in stored["pmids"]],
                chunk_indexes=[int(index) for index in stored["chunk_indexes"]],
                digests=[str(digest) for digest in stored["digests"]],
                vectors=np.asarray(stored["vectors"], dtype=np.float32),
            )
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        raise HandoffBatchError(f"cannot read the embedding batch {path.name}: {exc}") from exc
    rows = len(batch.vectors)
    if not (len(batch.pmids) == len(batch.chunk_indexes) == len(batch.digests) == rows):
        raise HandoffBatchError(f"the embedding batch {path.name} has keys and vectors of different lengths")
    return batch


def waiting_batches(folder: Path) -> list[Path]:
    """Complete batch files, oldest first (a partial file of a killed writer is never listed)."""
    if not folder.is_dir():
        return []
    return sorted(path for path in folder.iterdir() if path.suffix == BATCH_SUFFIX and not path.name.startswith("."))


def discard_partial_batches(folder: Path) -> int:
    """Remove what a writer killed mid-write left; only safe while no writer runs. How many were removed."""
    if not folder.is_dir():
        return 0
    partial = [path for path in folder.iterdir() if path.name.startswith(".") and path.suffix == ".partial"]
    for path in partial:
        path.unlink(missing_ok=True)
    return len(partial)


def waiting_articles(folder: Path) -> set[str]:
    """PMIDs embedded into a batch that the index has not taken yet (so the embedder does not embed them twice)."""
    pmids: set[str] = set()
    for path in waiting_batches(folder):
        try:
            with np.load(path, allow_pickle=False) as stored:
                pmids.update(str(pmid) for pmid in stored["pmids"])
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
            continue  # the writer discards it and its articles are embedded again
    return pmids


def apply_batch(
    batch: HandoffBatch, *, current: Sequence[ArticleRecord], chunker: Chunker, vectors: VectorIndex
) -> list[str]:
    """Write into `vectors` the articles of `batch` whose stored text (`current`) still gives the chunks embedded;
    return their PMIDs. An article no longer stored, or changed since, is left out."""
    embedded: dict[str, list[tuple[int, str, int]]] = {}
    for row, (pmid, index, digest) in enumerate(zip(batch.pmids, batch.chunk_indexes, batch.digests, strict=True)):
        embedded.setdefault(pmid, []).append((index, digest, row))
    chunks_now: dict[str, list[Chunk]] = {}
    for chunk in chunker.chunks([record for record in current if record.pmid in embedded]):
        chunks_now.setdefault(chunk.pmid, []).append(chunk)
    chunks: list[Chunk] = []
    rows: list[int] = []
    for pmid, keys in embedded.items():
        now = chunks_now.get(pmid, [])
        if [(chunk.index, chunk_digest(chunk.text)) for chunk in now] != [(index, digest) for index, digest, _ in keys]:
            continue
        chunks.extend(now)  # the chunks as stored now carry the current facets too
        rows.extend(row for _, _, row in keys)
    applied = list(dict.fromkeys(chunk.pmid for chunk in chunks))
    if applied:
        # An earlier version may have had more chunks: its old points go first, as ingestion does.
        vectors.delete(applied)
        vectors.upsert(chunks, batch.vectors[rows])
    return applied
