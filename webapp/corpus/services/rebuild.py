"""A full rebuild of both indexes from the article table into a new generation, switched to when complete."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet
from django.utils import timezone

from indexer.chunking import Chunker
from indexer.ingest import IngestReport, embed_records
from webapp.corpus import engines
from webapp.corpus.models import Article
from webapp.corpus.services.articles import article_record
from webapp.corpus.services.generations import (
    activate_generation,
    active_generation,
    new_generation_name,
    remove_generation,
    remove_generation_folders,
)


class RebuildCancelledError(Exception):
    """The rebuild stopped at the caller's request before its switch: the active generation is unchanged."""


@dataclass(frozen=True)
class RebuildReport:
    generation: str
    previous: str
    articles: int
    chunks: int
    seconds: float


def _batches(queryset: QuerySet[Article], size: int) -> Iterator[list[Article]]:
    # Keyset pagination by primary key: constant memory and no OFFSET scans over millions of rows.
    last = 0
    while True:
        batch = list(queryset.filter(pk__gt=last).order_by("pk")[:size])
        if not batch:
            return
        yield batch
        last = batch[-1].pk


def index_rebuild(
    *,
    batch_size: int = 256,
    on_progress: Callable[[int], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_phase: Callable[[str], None] | None = None,
) -> RebuildReport:
    """Write every stored article into a new generation, catch up with what changed meanwhile, then switch.

    Questions keep being answered from the active generation throughout; a rebuild that dies leaves it untouched
    (the half-built folders are removed by the next rebuild). `should_stop` is asked between batches and before
    the switch: when it answers True the new generation's folders are removed and RebuildCancelledError raised.
    """
    started, began = timezone.now(), time.perf_counter()
    previous, generation = active_generation(), new_generation_name()
    note = on_phase or (lambda message: None)
    note(f"building generation {generation} beside the active {previous}")
    try:
        report = _build(generation, started, batch_size, on_progress, should_stop or (lambda: False), note)
    except RebuildCancelledError:
        removed = remove_generation(generation)
        note(f"cancelled before the switch: {previous} stays active; removed {', '.join(removed) or 'nothing'}")
        raise
    note(f"switching to {generation}")
    activate_generation(generation)
    removed = remove_generation_folders(keep={generation, previous})
    note(f"{generation} is live; kept {previous} for rollback; removed {', '.join(removed) or 'nothing'}")
    return RebuildReport(generation, previous, report.embedded, report.chunks, time.perf_counter() - began)


def _build(
    generation: str,
    started: datetime,
    batch_size: int,
    on_progress: Callable[[int], None] | None,
    should_stop: Callable[[], bool],
    note: Callable[[str], None],
) -> IngestReport:
    lexical, vectors = engines.lexical_index_for(generation), engines.vector_index_for(generation)
    embedder = engines.embedder()
    chunker = Chunker(embedder.token_lengths, max_tokens=embedder.max_tokens)
    report = IngestReport()
    phases = (
        ("writing every stored article", Article.objects.all()),
        ("catching up with articles changed meanwhile", Article.objects.filter(updated_at__gte=started)),
    )
    try:
        for phase, subset in phases:
            note(phase)
            for batch in _batches(subset, batch_size):
                if should_stop():
                    raise RebuildCancelledError(generation)
                records = [article_record(article) for article in batch]
                lexical.add(records)
                embed_records(records, chunker=chunker, embedder=embedder, vectors=vectors, report=report)
                if on_progress:
                    on_progress(len(records))
        note(f"optimising the vector index ({report.chunks} chunks of {report.embedded} articles)")
        vectors.optimize()
        if should_stop():
            raise RebuildCancelledError(generation)
    finally:
        engines.release_generation(generation)
    return report
