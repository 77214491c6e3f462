"""Services behind the indexing tasks: one PubMed file goes download -> store -> embed, each step resumable, and
its job's counters move as files finish."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from indexer import ncbi
from indexer.ingest import embed_pending, store_file
from webapp.corpus import engines
from webapp.corpus.models import IndexJob, PubmedFile
from webapp.corpus.services import DatabaseArticleSink

# The order a file moves through; a step whose status is already reached does nothing (a redelivered task).
_ORDER = [PubmedFile.Status.PENDING, PubmedFile.Status.DOWNLOADED, PubmedFile.Status.STORED, PubmedFile.Status.INDEXED]


def _reached(pubmed_file: PubmedFile, status: PubmedFile.Status) -> bool:
    """Whether the step leading to `status` has nothing to do: it was done, or the file failed earlier."""
    if pubmed_file.status == PubmedFile.Status.FAILED:
        return True
    return _ORDER.index(PubmedFile.Status(pubmed_file.status)) >= _ORDER.index(status)


def download_dir() -> Path:
    return Path(settings.VERIMED_PUBMED_DIR)


def local_path(pubmed_file: PubmedFile) -> Path:
    return download_dir() / pubmed_file.name


def index_job_create(*, kind: IndexJob.Kind, files: list[PubmedFile]) -> IndexJob:
    with transaction.atomic():
        job = IndexJob.objects.create(kind=kind, files_total=len(files))
        PubmedFile.objects.filter(pk__in=[item.pk for item in files]).update(job=job, error="")
    return job


def _start(pubmed_file: PubmedFile) -> None:
    now = timezone.now()
    if pubmed_file.started_at is None:
        pubmed_file.started_at = now
    pubmed_file.attempts = F("attempts") + 1
    pubmed_file.save(update_fields=["started_at", "attempts", "updated_at"])
    pubmed_file.refresh_from_db(fields=["attempts"])
    if pubmed_file.job_id:
        IndexJob.objects.filter(pk=pubmed_file.job_id, started_at__isnull=True).update(started_at=now)
        IndexJob.objects.filter(pk=pubmed_file.job_id, status=IndexJob.Status.QUEUED).update(
            status=IndexJob.Status.RUNNING
        )


def pubmed_file_download(*, file_id: int) -> None:
    pubmed_file = PubmedFile.objects.get(pk=file_id)
    if _reached(pubmed_file, PubmedFile.Status.DOWNLOADED):
        return
    _start(pubmed_file)
    remote = ncbi.RemoteFile(name=pubmed_file.name, url=pubmed_file.url, md5_url=f"{pubmed_file.url}.md5")
    with ncbi.default_client() as client:
        md5 = pubmed_file.md5 or ncbi.fetch_md5(remote, client=client)
        path = ncbi.download(
            remote,
            download_dir(),
            client=client,
            expected_md5=md5,
            retries=settings.VERIMED_PUBMED_DOWNLOAD_RETRIES,
            backoff=settings.VERIMED_PUBMED_RETRY_BACKOFF_SECONDS,
        )
    pubmed_file.md5, pubmed_file.size = md5, path.stat().st_size
    pubmed_file.status = PubmedFile.Status.DOWNLOADED
    pubmed_file.save(update_fields=["md5", "size", "status", "updated_at"])


def pubmed_file_store(*, file_id: int) -> None:
    pubmed_file = PubmedFile.objects.get(pk=file_id)
    if _reached(pubmed_file, PubmedFile.Status.STORED):
        return
    _start(pubmed_file)
    report = store_file(
        local_path(pubmed_file),
        sink=DatabaseArticleSink(),
        lexical=engines.lexical_index(),
        vectors=engines.vector_index(),
        source=pubmed_file.name,
    )
    pubmed_file.articles = report.articles
    pubmed_file.skipped_without_abstract = report.skipped_without_abstract
    pubmed_file.deleted = report.deleted
    pubmed_file.status = PubmedFile.Status.STORED
    pubmed_file.save(update_fields=["articles", "skipped_without_abstract", "deleted", "status", "updated_at"])


def pubmed_file_embed(*, file_id: int) -> None:
    pubmed_file = PubmedFile.objects.get(pk=file_id)
    if _reached(pubmed_file, PubmedFile.Status.INDEXED):
        return
    _start(pubmed_file)
    vectors = engines.vector_index()
    embed_pending(sink=DatabaseArticleSink(), vectors=vectors, embedder=engines.embedder(), source=pubmed_file.name)
    vectors.optimize()
    if not settings.VERIMED_PUBMED_KEEP_FILES:
        # A baseline is tens of GB compressed; once indexed, its md5 in this row is all a re-run needs.
        local_path(pubmed_file).unlink(missing_ok=True)
    with transaction.atomic():
        pubmed_file.status = PubmedFile.Status.INDEXED
        pubmed_file.error = ""
        pubmed_file.finished_at = timezone.now()
        pubmed_file.save(update_fields=["status", "error", "finished_at", "updated_at"])
        if pubmed_file.job_id:
            IndexJob.objects.filter(pk=pubmed_file.job_id).update(
                files_done=F("files_done") + 1,
                articles=F("articles") + pubmed_file.articles,
                deleted=F("deleted") + pubmed_file.deleted,
            )
            _finish_job_if_complete(pubmed_file.job_id)


def pubmed_file_fail(*, file_id: int, reason: str) -> None:
    with transaction.atomic():
        pubmed_file = PubmedFile.objects.select_for_update().get(pk=file_id)
        if pubmed_file.status == PubmedFile.Status.FAILED:
            return
        pubmed_file.status = PubmedFile.Status.FAILED
        pubmed_file.error = reason[:4000]
        pubmed_file.finished_at = timezone.now()
        pubmed_file.save(update_fields=["status", "error", "finished_at", "updated_at"])
        if pubmed_file.job_id:
            IndexJob.objects.filter(pk=pubmed_file.job_id).update(
                files_failed=F("files_failed") + 1, error=f"{pubmed_file.name}: {reason}"[:4000]
            )
            _skip_later_updates(pubmed_file)
            _finish_job_if_complete(pubmed_file.job_id)


def _skip_later_updates(failed: PubmedFile) -> None:
    """Update files apply in order: after one fails, the later ones of its job must wait for a re-run."""
    job = failed.job
    if job is None:
        return
    if job.kind != IndexJob.Kind.UPDATES:
        return
    later = PubmedFile.objects.filter(job=job, name__gt=failed.name).exclude(
        status__in=[PubmedFile.Status.INDEXED, PubmedFile.Status.FAILED]
    )
    skipped = later.update(
        status=PubmedFile.Status.FAILED, error=f"not applied: the earlier update file {failed.name} failed"
    )
    if skipped:
        IndexJob.objects.filter(pk=job.pk).update(files_failed=F("files_failed") + skipped)


def _finish_job_if_complete(job_id: int) -> None:
    job = IndexJob.objects.select_for_update().get(pk=job_id)
    if job.files_done + job.files_failed < job.files_total or job.finished_at:
        return
    job.status = IndexJob.Status.FAILED if job.files_failed else IndexJob.Status.DONE
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "finished_at", "updated_at"])


def pubmed_files_to_sync(*, remote_files: list[ncbi.RemoteFile], md5s: dict[str, str]) -> list[PubmedFile]:
    """Rows for the listed files that still need work: a file indexed with the same md5 is skipped.

    A file whose md5 changed on the server (NCBI re-publishes a baseline) starts over from the download.
    """
    pending: list[PubmedFile] = []
    for remote in remote_files:
        md5 = md5s.get(remote.name, "")
        row, created = PubmedFile.objects.get_or_create(name=remote.name, defaults={"url": remote.url, "md5": md5})
        if not created and row.md5 and md5 and row.md5 != md5:
            row.status, row.md5, row.url = PubmedFile.Status.PENDING, md5, remote.url
            row.save(update_fields=["status", "md5", "url", "updated_at"])
        elif row.status == PubmedFile.Status.INDEXED:
            continue
        elif row.status == PubmedFile.Status.FAILED:
            # A failed file is tried again from the step it had reached; a partial download resumes.
            row.status = _resume_status(row)
            row.save(update_fields=["status", "updated_at"])
        pending.append(row)
    return pending


def _resume_status(row: PubmedFile) -> PubmedFile.Status:
    path = local_path(row)
    return PubmedFile.Status.DOWNLOADED if path.exists() and row.md5 else PubmedFile.Status.PENDING
