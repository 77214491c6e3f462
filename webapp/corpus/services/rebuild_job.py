"""A rebuild run as an indexing job: progress in articles, phases in the job log, cancellable before the switch."""

from __future__ import annotations

import logging

from django.db.models import F
from django.utils import timezone

from webapp.corpus.models import Article, IndexJob
from webapp.corpus.services.joblog import index_job_log
from webapp.corpus.services.jobs import index_job_finish, index_job_record_counts
from webapp.corpus.services.rebuild import RebuildCancelledError, index_rebuild
from webapp.task_locks import running_alone

logger = logging.getLogger(__name__)


def index_job_rebuild(*, job_id: int, batch_size: int = 256) -> None:
    """Run the rebuild of a queued rebuild job; every outcome, failures included, ends up on the job.

    A second copy of the task that arrives while the first runs (a redelivery) does nothing: failing the job, as a
    copy that finds it started otherwise does, would hide the running rebuild's end and let an updates sync run
    beside it."""
    with running_alone(f"index-rebuild-{job_id}") as alone:
        if not alone:
            logger.warning("rebuild job %s: a second copy of its task arrived while it runs; ignored", job_id)
            index_job_log(job_id=job_id, message="a second copy of this rebuild's task arrived while it runs: ignored")
            return
        _index_job_rebuild(job_id=job_id, batch_size=batch_size)


def _index_job_rebuild(*, job_id: int, batch_size: int) -> None:
    started = IndexJob.objects.filter(pk=job_id, status=IndexJob.Status.QUEUED).update(
        status=IndexJob.Status.RUNNING, started_at=timezone.now(), articles_total=Article.objects.count()
    )
    if not started:
        # Cancelled while queued, or a redelivery after the worker died mid-rebuild (no copy holds the lock): the
        # half-built generation is not resumed, so the admin starts a fresh one instead.
        index_job_finish(
            job_id=job_id,
            status=IndexJob.Status.FAILED,
            message="interrupted: the worker stopped during the rebuild; start a new one",
            error="interrupted: the worker stopped during the rebuild",
        )
        return

    def progress(count: int) -> None:
        IndexJob.objects.filter(pk=job_id).update(articles=F("articles") + count)

    def should_stop() -> bool:
        return IndexJob.objects.filter(pk=job_id, cancel_requested=True).exists()

    def phase(message: str) -> None:
        index_job_log(job_id=job_id, message=message)

    try:
        report = index_rebuild(batch_size=batch_size, on_progress=progress, should_stop=should_stop, on_phase=phase)
    except RebuildCancelledError:
        index_job_finish(job_id=job_id, status=IndexJob.Status.CANCELLED, message="rebuild cancelled")
        return
    except Exception as exc:
        # The active generation is untouched; the half-built one is removed by the next rebuild.
        logger.exception("rebuild job %s failed", job_id)
        index_job_finish(job_id=job_id, status=IndexJob.Status.FAILED, message=f"rebuild failed: {exc}", error=str(exc))
        return
    IndexJob.objects.filter(pk=job_id).update(generation=report.generation)
    index_job_finish(
        job_id=job_id,
        status=IndexJob.Status.DONE,
        message=f"rebuild done: {report.articles} articles, {report.chunks} chunks in {report.seconds:.1f} s",
    )
    index_job_record_counts(job_id=job_id)
