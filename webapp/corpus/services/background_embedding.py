"""Embedding in the background: the site answers from the lexical index at once, and the dense leg covers more of
the corpus as vectors arrive.

A low-priority process (`manage.py embed_pending --follow`, one of the stack's services) embeds the articles still
pending and leaves each batch in an inbox folder; the worker, which alone may open the embedded vector index, writes
the waiting batches in through a short task (indexer/embedding_handoff.py has the why and the safety rules). The
embedder writes its progress to a small JSON file that the index status page reads for its rate and ETA.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from django.conf import settings

from indexer.base import Embedder, VectorIndex
from indexer.chunking import Chunker
from indexer.embedding_handoff import (
    HandoffBatchError,
    apply_batch,
    embed_batch,
    read_batch,
    waiting_articles,
    waiting_batches,
    write_batch,
)
from indexer.ingest import IngestReport
from webapp.corpus.models import Article
from webapp.corpus.services.articles import DatabaseArticleSink, article_counts

logger = logging.getLogger(__name__)


def inbox_folder() -> Path:
    return Path(settings.VERIMED.paths.index_dir) / "embedding-inbox"


def progress_file() -> Path:
    return Path(settings.VERIMED.paths.index_dir) / "embedding-progress.json"


def chunker_for(embedder: Embedder) -> Chunker:
    return Chunker(embedder.token_lengths, max_tokens=embedder.max_tokens)


def embed_next_batch(*, embedder: Embedder, chunker: Chunker, limit: int, report: IngestReport) -> int:
    """Embed up to `limit` pending articles that no waiting batch holds yet into a new inbox batch; how many."""
    waiting = waiting_articles(inbox_folder())
    # Pending articles come in PMID order, and those already waiting in a batch come first among them only by
    # chance: ask for enough to skip them all (the inbox is kept to a few batches, so this stays small).
    pending = DatabaseArticleSink().pending_embedding(source=None, limit=limit + len(waiting))
    records = [record for record in pending if record.pmid not in waiting][:limit]
    if not records:
        return 0
    write_batch(inbox_folder(), embed_batch(records, chunker=chunker, embedder=embedder, report=report))
    return len(records)


def apply_waiting_batches(*, vectors: VectorIndex, embedder: Embedder) -> int:
    """The worker's side: write every waiting batch into the vector index, oldest first; articles written.

    A batch is removed once written; a redelivered task finds nothing left to do. When the last pending article is
    in, the index builds its search structures, as a bulk ingest does at its end.
    """
    sink = DatabaseArticleSink()
    chunker = chunker_for(embedder)
    written = 0
    for path in waiting_batches(inbox_folder()):
        try:
            batch = read_batch(path)
        except HandoffBatchError as exc:
            logger.warning("%s; its articles stay pending and will be embedded again", exc)
            path.unlink(missing_ok=True)
            continue
        applied = apply_batch(batch, current=sink.records(batch.articles), chunker=chunker, vectors=vectors)
        # Left open: an `ingest` in another process that revises one of these articles between the read above and
        # this mark leaves it marked embedded with the vectors of its previous text (a window of milliseconds; the
        # worker's own index jobs run one task at a time, so only a command-line ingest beside the stack can hit it).
        sink.mark_embedded(applied)
        path.unlink(missing_ok=True)
        written += len(applied)
        if len(applied) < len(batch.articles):
            logger.info("%d articles changed or left since they were embedded: embedded again", len(batch.articles))
    if written and not waiting_batches(inbox_folder()) and not Article.objects.filter(embedded=False).exists():
        vectors.optimize()
    return written


@dataclass(frozen=True)
class EmbeddingProgress:
    """What the background embedder last reported."""

    state: str  # "embedding", "waiting for the worker" or "idle"
    articles: int  # stored articles
    embedded: int  # in the vector index
    waiting: int  # embedded, waiting for the worker to write them in
    rate: float | None  # articles per second this embedder has embedded at since it started
    updated_at: float  # Unix time
    pid: int

    @property
    def remaining(self) -> int:
        return max(self.articles - self.embedded - self.waiting, 0)

    @property
    def eta_seconds(self) -> float | None:
        if not self.remaining:
            return 0.0
        return self.remaining / self.rate if self.rate else None

    @property
    def eta_minutes(self) -> int | None:
        eta = self.eta_seconds
        return None if eta is None else max(round(eta / 60), 1 if eta else 0)


@dataclass(frozen=True)
class SemanticCoverage:
    """How much of the corpus the dense (semantic) leg of search can find: the articles already in the vector index.

    The lexical leg covers every stored article at once; while the rest is being embedded, hybrid search fuses the
    lexical ranking with a dense ranking over this share only.
    """

    articles: int
    embedded: int

    @property
    def share(self) -> float:
        return self.embedded / self.articles if self.articles else 1.0

    @property
    def complete(self) -> bool:
        return self.embedded >= self.articles


def semantic_coverage() -> SemanticCoverage:
    """One row's read, as every question records it: the database keeps the figures as articles are written."""
    articles, embedded = article_counts()
    return SemanticCoverage(articles=articles, embedded=embedded)


def report_progress(*, state: str, rate: float | None) -> EmbeddingProgress:
    coverage = semantic_coverage()
    progress = EmbeddingProgress(
        state=state,
        articles=coverage.articles,
        embedded=coverage.embedded,
        waiting=len(waiting_articles(inbox_folder())),
        rate=rate,
        updated_at=time.time(),
        pid=os.getpid(),
    )
    target = progress_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    partial.write_text(json.dumps(asdict(progress)), encoding="utf-8")
    os.replace(partial, target)
    return progress


def last_progress(*, stale_after_seconds: float) -> EmbeddingProgress | None:
    """The embedder's last report, or None when there is none or it is older than `stale_after_seconds`."""
    try:
        stored = json.loads(progress_file().read_text(encoding="utf-8"))
        progress = EmbeddingProgress(**stored)
    except (OSError, ValueError, TypeError):
        return None
    if time.time() - progress.updated_at > stale_after_seconds:
        return None
    return progress
