"""Ingestion: stream articles from files into the database, the BM25 index and the vector index, in batches."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from indexer.base import Embedder, LexicalIndex, VectorIndex
from indexer.compressed import GZIP_ERRORS, open_binary
from indexer.readers import expand_paths, read_articles
from indexer.records import ArticleRecord, ReadStats

STAGES = ("parse", "database", "lexical", "embed", "vector")


class ArticleSink(Protocol):
    """Where article rows are stored (the Django database, through a service)."""

    def save(self, records: Sequence[ArticleRecord]) -> None: ...

    def delete(self, pmids: Sequence[str]) -> None: ...


@dataclass
class IngestReport:
    files: int = 0
    articles: int = 0
    skipped_without_abstract: int = 0
    deleted: int = 0
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STAGES, 0.0))

    def rate(self, stage: str) -> float:
        """Articles per second through one stage alone."""
        spent = self.seconds[stage]
        return self.articles / spent if spent > 0 else 0.0


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


class _Timer:
    def __init__(self, report: IngestReport, stage: str) -> None:
        self.report, self.stage = report, stage

    def __enter__(self) -> None:
        self.start = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        self.report.seconds[self.stage] += time.perf_counter() - self.start


def ingest_paths(
    paths: Iterable[Path],
    *,
    sink: ArticleSink,
    lexical: LexicalIndex,
    vectors: VectorIndex,
    embedder: Embedder,
    batch_size: int = 256,
    on_progress: Callable[[int], None] | None = None,
) -> IngestReport:
    """Ingest every file; re-running on the same files is idempotent (every store upserts by PMID)."""
    report = IngestReport()
    for path in expand_paths(paths):
        stats = ReadStats()
        stream = read_articles(path, stats)
        while True:
            with _Timer(report, "parse"):
                batch: dict[str, ArticleRecord] = {}
                for record in stream:
                    batch[record.pmid] = record  # a PMID repeated in one batch: the later record wins
                    if len(batch) >= batch_size:
                        break
            if not batch:
                break
            _store_batch(
                list(batch.values()), sink=sink, lexical=lexical, vectors=vectors, embedder=embedder, report=report
            )
            if on_progress:
                on_progress(len(batch))
        if stats.deleted_pmids:
            with _Timer(report, "database"):
                sink.delete(stats.deleted_pmids)
            lexical.delete(stats.deleted_pmids)
            vectors.delete(stats.deleted_pmids)
        report.files += 1
        report.skipped_without_abstract += stats.skipped_without_abstract
        report.deleted += len(stats.deleted_pmids)
    vectors.optimize()
    return report


def _store_batch(
    records: list[ArticleRecord],
    *,
    sink: ArticleSink,
    lexical: LexicalIndex,
    vectors: VectorIndex,
    embedder: Embedder,
    report: IngestReport,
) -> None:
    with _Timer(report, "database"):
        sink.save(records)
    with _Timer(report, "lexical"):
        lexical.add(records)
    with _Timer(report, "embed"):
        embedded = embedder.embed([record.text for record in records])
    with _Timer(report, "vector"):
        vectors.upsert([record.pmid for record in records], embedded)
    report.articles += len(records)
