"""Services behind the indexing tasks: one PubMed file goes download -> store -> embed, each step resumable, and
its job's counters move as files finish.

Before each step the file's job is checked for a cancel request: the file is then marked cancelled and the step
does nothing, so a cancelled job stops at the next step of each of its files.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.db.models.functions import Coalesce
from django.utils import timezone

from indexer import ncbi
from indexer.errors import CorpusFormatError
from indexer.ingest import embed_pending, store_file
from webapp.corpus import engines
from webapp.corpus.models import Article, IndexJob, PubmedFile
from webapp.corpus.services.articles import DatabaseArticleSink
from webapp.corpus.services.joblog import pubmed_file_log
from webapp.corpus.services.jobs import index_job_finish_if_complete, index_job_record_counts
from webapp.task_locks import running_alone

# The order a file moves through; a step whose status is already reached does nothing (a redelivered task).
_ORDER = [PubmedFile.Status.PENDING, PubmedFile.Status.DOWNLOADED, PubmedFile.Status.STORED, PubmedFile.Status.INDEXED]


def _reached(pubmed_file: PubmedFile, status: PubmedFile.Status) -> bool:
    """Whether the step leading to `status` has nothing to do: it was done, or the file failed or was cancelled."""
    if pubmed_file.status in (PubmedFile.Status.FAILED, PubmedFile.Status.CANCELLED):
        return True
    return _ORDER.index(PubmedFile.Status(pubmed_file.status)) >= _ORDER.index(status)


def download_retry_policy() -> tuple[int, float]:
    """(failed attempts in a row, first backoff in seconds) for every request to NCBI's site: files, listings, md5s."""
    return settings.VERIMED.pubmed.download_retries, settings.VERIMED.pubmed.retry_backoff_seconds


def download_dir() -> Path:
    return Path(settings.VERIMED.paths.pubmed_dir)


def local_path(pubmed_file: PubmedFile) -> Path:
    if pubmed_file.source_path:
        return Path(pubmed_file.source_path)
    return download_dir() / pubmed_file.name


def _start(pubmed_file: PubmedFile) -> bool:
    """Count an attempt and mark the job running; False when the file's status changed since it was read.

    The compare-and-set on the status closes the gap with a cancel of a still-queued job: either the cancel came
    first and this step gives up, or the job is running now and the cancel waits for the next step.
    """
    now = timezone.now()
    if pubmed_file.job_id:
        IndexJob.objects.filter(pk=pubmed_file.job_id, started_at__isnull=True).update(started_at=now)
        IndexJob.objects.filter(pk=pubmed_file.job_id, status=IndexJob.Status.QUEUED).update(
            status=IndexJob.Status.RUNNING
        )
    started = PubmedFile.objects.filter(pk=pubmed_file.pk, status=pubmed_file.status).update(
        started_at=Coalesce(F("started_at"), now), attempts=F("attempts") + 1, updated_at=now
    )
    pubmed_file.refresh_from_db(fields=["started_at", "attempts"])
    return bool(started)


def _cancelled(pubmed_file: PubmedFile) -> bool:
    """Whether the file's job was cancelled; the file is then marked cancelled here."""
    if not pubmed_file.job_id:
        return False
    if not IndexJob.objects.filter(pk=pubmed_file.job_id, cancel_requested=True).exists():
        return False
    pubmed_file_cancel(file_id=pubmed_file.pk)
    return True


def _skip(pubmed_file: PubmedFile, status: PubmedFile.Status) -> bool:
    return _reached(pubmed_file, status) or _cancelled(pubmed_file) or not _start(pubmed_file)


def pubmed_file_download(*, file_id: int) -> None:
    pubmed_file = PubmedFile.objects.get(pk=file_id)
    if _skip(pubmed_file, PubmedFile.Status.DOWNLOADED):
        return
    pubmed_file_log(pubmed_file=pubmed_file, message=f"started (attempt {pubmed_file.attempts})")
    if pubmed_file.source_path:
        path = _checked_local_file(pubmed_file)
        md5 = ncbi.file_md5(path)
    else:
        path, md5 = _downloaded(pubmed_file)
    pubmed_file.md5, pubmed_file.size = md5, path.stat().st_size
    pubmed_file.status = PubmedFile.Status.DOWNLOADED
    pubmed_file.save(update_fields=["md5", "size", "status", "updated_at"])
    source = "local file" if pubmed_file.source_path else "downloaded"
    pubmed_file_log(pubmed_file=pubmed_file, message=f"{source}, {pubmed_file.size} bytes, md5 {md5}")


def _checked_local_file(pubmed_file: PubmedFile) -> Path:
    path = local_path(pubmed_file)
    if not path.is_file():
        raise CorpusFormatError(f"the local file {path} no longer exists")
    return path


def _downloaded(pubmed_file: PubmedFile) -> tuple[Path, str]:
    remote = ncbi.RemoteFile(name=pubmed_file.name, url=pubmed_file.url, md5_url=f"{pubmed_file.url}.md5")
    with ncbi.default_client() as client:
        retries, backoff = download_retry_policy()
        md5 = pubmed_file.md5 or ncbi.fetch_md5(remote, client=client, retries=retries, backoff=backoff)
        path = ncbi.download(remote, download_dir(), client=client, expected_md5=md5, retries=retries, backoff=backoff)
    return path, md5


def pubmed_file_store(*, file_id: int) -> None:
    pubmed_file = PubmedFile.objects.get(pk=file_id)
    if _skip(pubmed_file, PubmedFile.Status.STORED):
        return
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
    pubmed_file_log(
        pubmed_file=pubmed_file,
        message=f"stored {report.articles} articles ({report.written} new or changed, "
        f"{report.skipped_without_abstract} without abstract skipped, {report.deleted} deleted)",
    )


def pubmed_file_background_wait(*, file_id: int) -> int:
    """Articles of this file the stack's background embedder has still to embed before its embed step can finish
    (VERIMED_BACKGROUND_EMBEDDING); 0 when the step embeds here, or has nothing left to wait for."""
    if not settings.VERIMED.engines.background_embedding:
        return 0
    pubmed_file = PubmedFile.objects.get(pk=file_id)
    if pubmed_file.status != PubmedFile.Status.STORED:  # not stored yet, or indexed, failed or cancelled
        return 0
    if pubmed_file.job_id and IndexJob.objects.filter(pk=pubmed_file.job_id, cancel_requested=True).exists():
        return 0  # the step itself marks the file cancelled
    return Article.objects.filter(source_file=pubmed_file.name[:128], embedded=False).count()


def pubmed_file_embed(*, file_id: int) -> None:
    """Embed a stored file's articles and count the file done on its job, once: a second copy of the task that arrives
    while the first runs (a redelivery) does nothing."""
    with running_alone(f"pubmed-file-embed-{file_id}") as alone:
        if not alone:
            pubmed_file_log(
                pubmed_file=PubmedFile.objects.get(pk=file_id),
                message="a second copy of the embed step arrived while it runs: ignored",
            )
            return
        _pubmed_file_embed(file_id=file_id)


def _pubmed_file_embed(*, file_id: int) -> None:
    pubmed_file = PubmedFile.objects.get(pk=file_id)
    if _skip(pubmed_file, PubmedFile.Status.INDEXED):
        return
    vectors = engines.vector_index()
    embed_pending(sink=DatabaseArticleSink(), vectors=vectors, embedder=engines.embedder(), source=pubmed_file.name)
    vectors.optimize()
    if not settings.VERIMED.pubmed.keep_files and not pubmed_file.source_path:
        # A baseline is tens of GB compressed; once indexed, its md5 in this row is all a re-run needs. Local
        # files and uploads belong to the admin and stay.
        local_path(pubmed_file).unlink(missing_ok=True)
    with transaction.atomic():
        if PubmedFile.objects.select_for_update().get(pk=file_id).status == PubmedFile.Status.INDEXED:
            return  # indexed by another copy meanwhile: counted on the job already
        pubmed_file.status = PubmedFile.Status.INDEXED
        pubmed_file.error = ""
        pubmed_file.finished_at = timezone.now()
        pubmed_file.save(update_fields=["status", "error", "finished_at", "updated_at"])
        pubmed_file_log(pubmed_file=pubmed_file, message=f"indexed ({pubmed_file.articles} articles)")
        job_id = pubmed_file.job_id
        if job_id is None:
            return
        IndexJob.objects.filter(pk=job_id).update(
            files_done=F("files_done") + 1,
            articles=F("articles") + pubmed_file.articles,
            deleted=F("deleted") + pubmed_file.deleted,
        )
        finished = index_job_finish_if_complete(job_id)
    if finished:
        index_job_record_counts(job_id=job_id)


def pubmed_file_log_waiting(*, file_id: int, waiting: int) -> None:
    pubmed_file_log(
        pubmed_file=PubmedFile.objects.get(pk=file_id),
        message=f"stored; {waiting} articles wait for the background embedder (questions are answered meanwhile)",
    )


def pubmed_file_fail(*, file_id: int, reason: str) -> None:
    _end(file_id, PubmedFile.Status.FAILED, reason)


def pubmed_file_cancel(*, file_id: int) -> None:
    _end(file_id, PubmedFile.Status.CANCELLED, "cancelled at an admin's request")


def _end(file_id: int, status: PubmedFile.Status, reason: str) -> None:
    """Fail or cancel a file that is not finished yet, count it on its job and finish the job if it was the last."""
    with transaction.atomic():
        pubmed_file = PubmedFile.objects.select_for_update().get(pk=file_id)
        if pubmed_file.status in PubmedFile.TERMINAL:
            return
        pubmed_file.status = status
        pubmed_file.error = reason[:4000]
        pubmed_file.finished_at = timezone.now()
        pubmed_file.save(update_fields=["status", "error", "finished_at", "updated_at"])
        pubmed_file_log(pubmed_file=pubmed_file, message=f"{status}: {reason}")
        job_id = pubmed_file.job_id
        if job_id is None:
            return
        if status == PubmedFile.Status.CANCELLED:
            IndexJob.objects.filter(pk=job_id).update(files_cancelled=F("files_cancelled") + 1)
        else:
            IndexJob.objects.filter(pk=job_id).update(
                files_failed=F("files_failed") + 1, error=f"{pubmed_file.name}: {reason}"[:4000]
            )
            _skip_later_updates(pubmed_file)
        finished = index_job_finish_if_complete(job_id)
    if finished:
        index_job_record_counts(job_id=job_id)


def _skip_later_updates(failed: PubmedFile) -> None:
    """Update files apply in order: after one fails, the later ones of its job must wait for a re-run."""
    job = failed.job
    if job is None:
        return
    if job.kind != IndexJob.Kind.UPDATES:
        return
    later = PubmedFile.objects.filter(job=job, name__gt=failed.name).exclude(status__in=PubmedFile.TERMINAL)
    skipped = later.update(
        status=PubmedFile.Status.FAILED, error=f"not applied: the earlier update file {failed.name} failed"
    )
    if skipped:
        IndexJob.objects.filter(pk=job.pk).update(files_failed=F("files_failed") + skipped)
        pubmed_file_log(pubmed_file=failed, message=f"{skipped} later update files not applied")


def pubmed_file_note(*, file_id: int, message: str) -> None:
    """A line in the file's job log from outside the steps (the task's retry policy)."""
    pubmed_file = PubmedFile.objects.filter(pk=file_id).first()
    if pubmed_file is not None:
        pubmed_file_log(pubmed_file=pubmed_file, message=message)
