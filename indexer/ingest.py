"""Ingestion in two resumable steps.

`store_file` streams a file into the article store and the lexical index and applies its deletions; the store marks
every new or changed article as not yet embedded. `embed_pending` then chunks, embeds and upserts exactly those
articles and marks them embedded. A run killed in either step is resumed by running the step again: the first
rewrites by PMID (idempotent), the second picks up whatever is still unmarked, so nothing is duplicated or skipped.

`ingest_paths` stores every file before it embeds anything: the lexical index is complete (and the site can answer
from it) within a minute or two, where embedding takes most of an ingest; embedding can also be left to a background
process (indexer/embedding_handoff.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Protocol

from indexer.base import Embedder, LexicalIndex, VectorIndex
from indexer.chunking import Chunker
from indexer.compressed import GZIP_ERRORS, open_binary
from indexer.readers import expand_paths, read_articles
from indexer.records import ArticleRecord, Notice, ReadStats

STAGES = ("parse", "database", "lexical", "chunk", "embed", "vector")
# What a progress display counts, in articles: stored (parse, database and lexical), then chunked, embedded and
# upserted into the vector index.
PROGRESS_STAGES = ("store", "chunk", "embed", "upsert")


class IngestProgress(Protocol):
    """Hears how many articles each stage has been through, to draw one progress bar per stage."""

    def stage_started(self, stage: str, total: int) -> None:
        """The stage starts, with `total` articles to go through."""

    def stage_advanced(self, stage: str, count: int) -> None: ...


class ArticleSink(Protocol):
    """Where article rows live (the Django database, through a service)."""

    def save(self, records: Sequence[ArticleRecord], *, source: str) -> list[ArticleRecord]:
        """Store records by PMID and return those actually written.

        Left out: a record whose stored version is newer, and one identical to what is stored (re-ingesting a file
        then costs no re-indexing). Written records are marked not embedded.
        """

    def delete(self, pmids: Sequence[str]) -> None: ...

    def save_notices(self, notices: Sequence[Notice]) -> None:
        """Retraction, concern and erratum notices read without an abstract: never articles, but they mark the
        papers they point at."""

    def pending_embedding(self, *, source: str | None, limit: int) -> list[ArticleRecord]:
        """Up to `limit` articles not yet embedded (from one source file, or any when None), in PMID order."""

    def mark_embedded(self, pmids: Sequence[str]) -> None: ...

    def pending_count(self) -> int:
        """How many articles are not yet embedded."""


@dataclass
class IngestReport:
    files: int = 0
    articles: int = 0  # records read with an abstract
    written: int = 0  # new or changed: sent to the indexes
    embedded: int = 0
    chunks: int = 0
    skipped_without_abstract: int = 0
    deleted: int = 0
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))

    def rate(self, stage: str) -> float:
        """Articles per second through one stage alone."""
        spent = self.seconds[stage]
        count = self.embedded if stage in ("chunk", "embed", "vector") else self.articles
        return count / spent if spent > 0 else 0.0

    def add(self, other: IngestReport) -> None:
        for counter in fields(self):
            if counter.name != "seconds":
                setattr(self, counter.name, getattr(self, counter.name) + getattr(other, counter.name))
        for stage in STAGES:
            self.seconds[stage] += other.seconds[stage]


def estimate_records(path: Path) -> int:
    """A cheap count of the records in a file, to size the progress bar."""
    # Every citation has one MedlineCitation element in both the current and the pre-2017 layout (whose root,
    # MedlineCitationSet, must not count: hence the space or '>' after the name).
    jsonl = ".jsonl" in path.name
    markers = [b"\n"] if jsonl else [b"<MedlineCitation ", b"<MedlineCitation>"]
    total = 0
    try:
        with open_binary(path) as stream:
            last = b""
            while chunk := stream.read(1 << 20):
                total += sum(chunk.count(marker) for marker in markers)
                last = chunk
            if jsonl and last and not last.endswith(b"\n"):
                total += 1  # the last line has no newline
    except (OSError, *GZIP_ERRORS):
        pass  # a damaged file is reported properly by the reader; the estimate only sizes a progress bar
    return total


@contextmanager
def timed(report: IngestReport, stage: str) -> Iterator[None]:
    """Add the time the block takes to `report.seconds[stage]`."""
    start = time.perf_counter()
    try:
        yield
    finally:
        report.seconds[stage] += time.perf_counter() - start


def _batches(stream: Iterator[ArticleRecord], size: int, report: IngestReport) -> Iterator[list[ArticleRecord]]:
    while True:
        with timed(report, "parse"):
            batch: dict[str, ArticleRecord] = {}
            for record in stream:
                batch[record.pmid] = record  # a PMID repeated in one batch: the later record wins
                if len(batch) >= size:
                    break
        if not batch:
            return
        yield list(batch.values())


def store_file(
    path: Path,
    *,
    sink: ArticleSink,
    lexical: LexicalIndex,
    vectors: VectorIndex,
    source: str | None = None,
    batch_size: int = 256,
    progress: IngestProgress | None = None,
) -> IngestReport:
    """Step 1 for one file: articles into the store and the lexical index; its DeleteCitations out of everything."""
    report = IngestReport(files=1)
    stats = ReadStats()
    label = source or path.name
    for batch in _batches(read_articles(path, stats), batch_size, report):
        with timed(report, "database"):
            written = sink.save(batch, source=label)
        with timed(report, "lexical"):
            lexical.add(written)
        report.articles += len(batch)
        report.written += len(written)
        if progress:
            progress.stage_advanced("store", len(batch))
    if stats.notices:
        with timed(report, "database"):
            sink.save_notices(stats.notices)
    if stats.deleted_pmids:
        with timed(report, "database"):
            sink.delete(stats.deleted_pmids)
        with timed(report, "lexical"):
            lexical.delete(stats.deleted_pmids)
        with timed(report, "vector"):
            vectors.delete(stats.deleted_pmids)
    report.skipped_without_abstract = stats.skipped_without_abstract
    report.deleted = len(stats.deleted_pmids)
    return report


def embed_records(
    records: Sequence[ArticleRecord],
    *,
    chunker: Chunker,
    embedder: Embedder,
    vectors: VectorIndex,
    report: IngestReport,
    progress: IngestProgress | None = None,
) -> None:
    """Chunk, embed and write these articles' vectors, timed into `report`.

    Their stored chunks are deleted first: an earlier version may have had more chunks than this one.
    """
    with timed(report, "chunk"):
        chunks = chunker.chunks(records)
    if progress:
        progress.stage_advanced("chunk", len(records))
    with timed(report, "embed"):
        embedded = embedder.embed([chunk.text for chunk in chunks])
    if progress:
        progress.stage_advanced("embed", len(records))
    with timed(report, "vector"):
        vectors.delete([record.pmid for record in records])
        vectors.upsert(chunks, embedded)
    report.embedded += len(records)
    report.chunks += len(chunks)


def embed_pending(
    *,
    sink: ArticleSink,
    vectors: VectorIndex,
    embedder: Embedder,
    source: str | None = None,
    batch_size: int = 256,
    progress: IngestProgress | None = None,
) -> IngestReport:
    """Step 2: chunk, embed and store every article the sink still lists as not embedded."""
    report = IngestReport()
    chunker = Chunker(embedder.token_lengths, max_tokens=embedder.max_tokens)
    while records := sink.pending_embedding(source=source, limit=batch_size):
        embed_records(records, chunker=chunker, embedder=embedder, vectors=vectors, report=report, progress=progress)
        with timed(report, "database"):
            sink.mark_embedded([record.pmid for record in records])
        if progress:
            progress.stage_advanced("upsert", len(records))
    return report


def ingest_paths(
    paths: Iterable[Path],
    *,
    sink: ArticleSink,
    lexical: LexicalIndex,
    vectors: VectorIndex,
    embedder: Embedder,
    batch_size: int = 256,
    progress: IngestProgress | None = None,
    defer_embedding: bool = False,
) -> IngestReport:
    """Step 1 for every file, in order, then step 2 for every article pending (unless `defer_embedding`: the
    articles then wait, marked pending, for a background embedder). Re-running on the same files is idempotent."""
    report = IngestReport()
    for path in expand_paths(paths):
        report.add(
            store_file(path, sink=sink, lexical=lexical, vectors=vectors, batch_size=batch_size, progress=progress)
        )
    if defer_embedding:
        return report
    pending = sink.pending_count()
    if progress:
        for stage in PROGRESS_STAGES[1:]:
            progress.stage_started(stage, pending)
    report.add(embed_pending(sink=sink, vectors=vectors, embedder=embedder, batch_size=batch_size, progress=progress))
    if pending:
        vectors.optimize()
    return report
