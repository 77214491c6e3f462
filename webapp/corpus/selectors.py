"""Read-side of the index pages: a job's progress as JSON, and the state of the indexes per engine."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import QuerySet

from webapp.corpus import engines
from webapp.corpus.models import IndexJob, IndexJobEvent, PubmedFile
from webapp.corpus.services.background_embedding import (
    EmbeddingProgress,
    SemanticCoverage,
    last_progress,
    semantic_coverage,
)
from webapp.corpus.services.generations import active_generation, generation_names

logger = logging.getLogger(__name__)

LOG_LINES = 500
RECENT_JOBS = 20
FAILED_FILES = 50
# The background embedder reports after every batch (seconds apart) and every poll when idle: a report older than
# this means it is not running.
EMBEDDER_REPORT_STALE_SECONDS = 300


def index_job_get(*, job_id: int) -> IndexJob:
    return IndexJob.objects.select_related("started_by").get(pk=job_id)


def index_job_log_lines(*, job_id: int, limit: int = LOG_LINES) -> list[IndexJobEvent]:
    """The job's latest log lines, newest last."""
    newest = IndexJobEvent.objects.filter(job_id=job_id).order_by("-created_at", "-pk")[:limit]
    return list(reversed(newest))


def index_job_failed_files(*, job_id: int) -> QuerySet[PubmedFile]:
    return PubmedFile.objects.filter(job_id=job_id, status=PubmedFile.Status.FAILED).order_by("name")


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def index_job_data(*, job: IndexJob) -> dict[str, Any]:
    """What the job page shows and its script polls."""
    value, maximum = job.progress
    eta = job.eta_seconds
    return {
        "id": job.pk,
        "kind": job.kind,
        "status": job.status,
        "status_text": index_job_status_text(job),
        "finished": job.finished,
        "cancel_requested": job.cancel_requested,
        "progress": {
            "value": value,
            "max": maximum,
            "unit": "articles" if job.kind == IndexJob.Kind.REBUILD else "files",
            "percent": round(100 * value / maximum) if maximum else (100 if job.finished else 0),
        },
        "files": {
            "total": job.files_total,
            "done": job.files_done,
            "failed": job.files_failed,
            "cancelled": job.files_cancelled,
        },
        "articles": job.articles,
        "articles_total": job.articles_total,
        "deleted": job.deleted,
        "articles_per_second": round(job.articles_per_second, 1),
        "eta_seconds": None if eta is None else round(eta),
        "generation": job.generation,
        "error": job.error,
        "created_at": _iso(job.created_at),
        "started_at": _iso(job.started_at),
        "finished_at": _iso(job.finished_at),
        "log": [{"at": _iso(line.created_at), "message": line.message} for line in index_job_log_lines(job_id=job.pk)],
        "failed_files": [
            {"name": item.name, "error": item.error, "attempts": item.attempts}
            for item in index_job_failed_files(job_id=job.pk)
        ],
    }


def index_job_status_text(job: IndexJob) -> str:
    if job.cancel_requested and not job.finished:
        return "Cancelling: workers stop at their next step…"
    return {
        IndexJob.Status.QUEUED: "Queued: waiting for a worker…",
        IndexJob.Status.RUNNING: "Running…",
        IndexJob.Status.DONE: "Done.",
        IndexJob.Status.FAILED: "Finished with failures.",
        IndexJob.Status.CANCELLED: "Cancelled.",
    }.get(IndexJob.Status(job.status), job.status)


@dataclass(frozen=True)
class EngineCount:
    engine: str  # the adapter, as VERIMED_*_BACKEND names it
    what: str  # what one unit is
    count: int | None
    note: str = ""  # where the count comes from when it is not live, or why it is missing


@dataclass(frozen=True)
class IndexStatus:
    articles: int
    embedded: int
    pending: int
    lexical: EngineCount
    vectors: EngineCount
    active_generation: str
    kept_generations: list[str]
    last_job: IndexJob | None
    last_file: PubmedFile | None
    failed_files: list[PubmedFile]
    recent_jobs: list[IndexJob]
    coverage: SemanticCoverage
    embedder: EmbeddingProgress | None  # the background embedder's last report; None when it is not running


def index_status() -> IndexStatus:
    coverage = semantic_coverage()
    generation = active_generation()
    return IndexStatus(
        articles=coverage.articles,
        embedded=coverage.embedded,
        pending=coverage.articles - coverage.embedded,
        coverage=coverage,
        embedder=last_progress(stale_after_seconds=EMBEDDER_REPORT_STALE_SECONDS),
        lexical=_lexical_count(generation),
        vectors=_vector_count(generation),
        active_generation=generation,
        kept_generations=[name for name in generation_names() if name != generation],
        last_job=IndexJob.objects.filter(finished_at__isnull=False).order_by("-finished_at").first(),
        last_file=PubmedFile.objects.filter(status=PubmedFile.Status.INDEXED).order_by("-finished_at").first(),
        failed_files=list(
            PubmedFile.objects.filter(status=PubmedFile.Status.FAILED).order_by("-finished_at")[:FAILED_FILES]
        ),
        recent_jobs=list(IndexJob.objects.select_related("started_by").order_by("-created_at")[:RECENT_JOBS]),
    )


def _lexical_count(generation: str) -> EngineCount:
    backend = settings.VERIMED.engines.lexical_backend
    try:
        return EngineCount(backend, "documents", engines.lexical_count(generation))
    except Exception as exc:  # a broken or unreachable engine is a fact to show on this page, not a 500
        logger.warning("cannot count the lexical index: %s", exc)
        return EngineCount(backend, "documents", None, f"cannot be read: {exc}")


def _vector_count(generation: str) -> EngineCount:
    backend = settings.VERIMED.engines.vector_backend
    try:
        live = engines.vector_count(generation)
    except Exception as exc:  # as above
        logger.warning("cannot count the vector index: %s", exc)
        return EngineCount(backend, "points (chunks)", None, f"cannot be read: {exc}")
    if live is not None:
        return EngineCount(backend, "points (chunks)", live)
    recorded = (
        IndexJob.objects.filter(vector_points__isnull=False, finished_at__isnull=False).order_by("-finished_at").first()
    )
    if recorded is None:
        return EngineCount(backend, "points (chunks)", None, "held by the worker; no job has recorded a count yet")
    return EngineCount(
        backend,
        "points (chunks)",
        recorded.vector_points,
        f"held by the worker: as counted when job {recorded.pk} finished ({recorded.finished_at:%Y-%m-%d %H:%M} UTC)",
    )
