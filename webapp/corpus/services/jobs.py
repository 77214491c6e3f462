"""An indexing job's life: created with its files, finished when every file is, cancelled at an admin's request."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, User
from django.db import transaction
from django.utils import timezone

from indexer.errors import IndexerError
from webapp.corpus import engines
from webapp.corpus.models import IndexJob, PubmedFile
from webapp.corpus.services.joblog import index_job_log
from webapp.corpus.signals import index_job_announce_finished


class IndexJobRefusedError(Exception):
    """A job cannot be started or cancelled now; the message says why, for the admin."""


def index_job_create(
    *,
    kind: IndexJob.Kind,
    files: list[PubmedFile],
    started_by: AbstractBaseUser | None = None,
    articles_total: int = 0,
    message: str = "",
) -> IndexJob:
    with transaction.atomic():
        job = IndexJob.objects.create(
            kind=kind,
            files_total=len(files),
            started_by=started_by if isinstance(started_by, User) else None,
            articles_total=articles_total,
        )
        index_job_attach_files(job=job, files=files)
        index_job_log(job_id=job.pk, message=message or f"{kind} job created with {len(files)} files")
    return job


def index_job_attach_files(*, job: IndexJob, files: list[PubmedFile]) -> None:
    PubmedFile.objects.filter(pk__in=[item.pk for item in files]).update(job=job, error="")


def index_job_finish_if_complete(job_id: int) -> bool:
    """Finish the job once every file is indexed, failed or cancelled; call inside a transaction.

    Returns whether this call finished it (the caller then records the index counts).
    """
    job = IndexJob.objects.select_for_update().get(pk=job_id)
    if job.files_done + job.files_failed + job.files_cancelled < job.files_total or job.finished_at:
        return False
    if job.files_cancelled:
        job.status = IndexJob.Status.CANCELLED
    else:
        job.status = IndexJob.Status.FAILED if job.files_failed else IndexJob.Status.DONE
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "finished_at", "updated_at"])
    index_job_log(
        job_id=job_id,
        message=f"job {job.status}: {job.files_done} files indexed, {job.files_failed} failed, "
        f"{job.files_cancelled} cancelled; {job.articles} articles, {job.deleted} deleted",
    )
    index_job_announce_finished(job_id=job_id, kind=job.kind, status=job.status)
    return True


def index_job_finish(*, job_id: int, status: IndexJob.Status, message: str, error: str = "") -> None:
    """Finish a job that has no files left to wait for (a rebuild, a sync with nothing to do, a failed listing)."""
    with transaction.atomic():
        updated = IndexJob.objects.filter(pk=job_id, finished_at__isnull=True).update(
            status=status, error=error[:4000], finished_at=timezone.now(), updated_at=timezone.now()
        )
        if updated:
            index_job_log(job_id=job_id, message=message)
            kind = IndexJob.objects.values_list("kind", flat=True).get(pk=job_id)
            index_job_announce_finished(job_id=job_id, kind=kind, status=status)


def index_job_record_counts(*, job_id: int) -> None:
    """Store what the indexes hold now on the finished job (run by the worker, which holds the engines)."""
    try:
        lexical, points = engines.lexical_index().count(), engines.vector_index().count()
    except IndexerError as exc:
        index_job_log(job_id=job_id, message=f"could not count the indexes: {exc}")
        return
    IndexJob.objects.filter(pk=job_id).update(lexical_documents=lexical, vector_points=points)
    index_job_log(job_id=job_id, message=f"the indexes hold {lexical} documents and {points} vector points")


def index_job_cancel(*, job_id: int, user: AbstractBaseUser) -> IndexJob:
    """Ask the workers to stop the job; one nothing has started on yet is stopped here and now.

    A running job stops at its next step: each worker checks the flag before every file step (and a rebuild
    between batches), marks the files it has not finished as cancelled and leaves what is already indexed.
    """
    with transaction.atomic():
        job = IndexJob.objects.select_for_update().get(pk=job_id)
        if job.finished_at:
            raise IndexJobRefusedError(f"job {job.pk} has already finished ({job.status}).")
        if job.cancel_requested:
            return job
        job.cancel_requested = True
        job.save(update_fields=["cancel_requested", "updated_at"])
        index_job_log(job_id=job.pk, message=f"cancel requested by {user.get_username()}")
        if job.status == IndexJob.Status.QUEUED:
            # Workers move a job to running before their first step, so none has touched these files: a
            # worker that is down (or busy elsewhere) must not keep the admin waiting for a cancel.
            _cancel_queued(job)
    return job


def _cancel_queued(job: IndexJob) -> None:
    now = timezone.now()
    cancelled = (
        PubmedFile.objects.filter(job=job)
        .exclude(status__in=PubmedFile.TERMINAL)
        .update(status=PubmedFile.Status.CANCELLED, error="cancelled before it started", finished_at=now)
    )
    job.files_cancelled += cancelled
    job.status, job.finished_at = IndexJob.Status.CANCELLED, now
    job.save(update_fields=["files_cancelled", "status", "finished_at", "updated_at"])
    index_job_log(job_id=job.pk, message=f"job cancelled before it started; {cancelled} files not processed")
    index_job_announce_finished(job_id=job.pk, kind=job.kind, status=job.status)
