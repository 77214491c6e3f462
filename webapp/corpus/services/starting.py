"""Starting indexing jobs from the site: each creates its job, then queues the work once the job is committed."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction

from webapp.corpus.models import Article, IndexJob
from webapp.corpus.services.jobs import IndexJobRefusedError, index_job_create
from webapp.corpus.services.local_sources import pubmed_files_for_paths, upload_save
from webapp.corpus.tasks import index_job_sync_task, index_job_workflow, index_rebuild_task


def _refuse_beside_a_rebuild(kind: IndexJob.Kind) -> None:
    """A rebuild copies the article table into a new generation: files indexed meanwhile would land in the old
    one after its catch-up pass, and be lost at the switch. So a rebuild runs alone; update files run in order."""
    unfinished = IndexJob.objects.filter(finished_at__isnull=True)
    if kind == IndexJob.Kind.REBUILD:
        running = unfinished.first()
    elif kind == IndexJob.Kind.UPDATES:
        running = unfinished.filter(kind__in=[IndexJob.Kind.REBUILD, IndexJob.Kind.UPDATES]).first()
    else:
        running = unfinished.filter(kind=IndexJob.Kind.REBUILD).first()
    if running is not None:
        raise IndexJobRefusedError(
            f"Job {running.pk} ({running.get_kind_display()}) is still {running.status}: "
            "wait for it to finish or cancel it first."
        )


def index_job_start_files(*, paths: list[Path], user: AbstractBaseUser) -> IndexJob:
    """Ingest local files (already resolved inside the allowed folders, or saved uploads) as a files job."""
    with transaction.atomic():
        _refuse_beside_a_rebuild(IndexJob.Kind.FILES)
        files = pubmed_files_for_paths(paths=paths)
        names = ", ".join(item.name for item in files)
        job = index_job_create(
            kind=IndexJob.Kind.FILES,
            files=files,
            started_by=user,
            message=f"ingest of {names} started by {user.get_username()}",
        )
        transaction.on_commit(lambda: index_job_workflow(job).apply_async())
    return job


def index_job_start_upload(*, upload: UploadedFile, user: AbstractBaseUser) -> IndexJob:
    _refuse_beside_a_rebuild(IndexJob.Kind.FILES)
    path = upload_save(upload=upload)
    try:
        return index_job_start_files(paths=[path], user=user)
    except Exception:
        path.unlink(missing_ok=True)  # no job will ever read it
        raise


def index_job_start_updates(*, user: AbstractBaseUser | None, max_files: int | None = None) -> IndexJob:
    """Sync NCBI's update files, as `pubmed_sync --updates` does; the worker lists them (a request per file).

    Without a user it is Celery beat's daily sync.
    """
    base_url = settings.VERIMED.pubmed.updates_url
    with transaction.atomic():
        _refuse_beside_a_rebuild(IndexJob.Kind.UPDATES)
        limit = f" (at most {max_files} files)" if max_files is not None else ""
        job = index_job_create(
            kind=IndexJob.Kind.UPDATES,
            files=[],
            started_by=user,
            message=f"sync of the PubMed update files at {base_url}{limit} started by "
            f"{user.get_username() if user is not None else 'the daily schedule'}",
        )
        transaction.on_commit(lambda: index_job_sync_task.delay(job.pk, base_url, max_files))
    return job


def index_job_start_rebuild(*, user: AbstractBaseUser) -> IndexJob:
    """Rebuild both indexes from the article table into a new generation, switched to when complete."""
    with transaction.atomic():
        _refuse_beside_a_rebuild(IndexJob.Kind.REBUILD)
        job = index_job_create(
            kind=IndexJob.Kind.REBUILD,
            files=[],
            started_by=user,
            articles_total=Article.objects.count(),
            message=f"rebuild into a new index generation started by {user.get_username()}",
        )
        transaction.on_commit(lambda: index_rebuild_task.delay(job.pk))
    return job
