"""Which of NCBI's PubMed files still need work, and the planning step of a sync job started from the site."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from indexer import ncbi
from webapp.corpus.models import IndexJob, PubmedFile
from webapp.corpus.services.indexing import download_retry_policy, local_path
from webapp.corpus.services.joblog import index_job_log
from webapp.corpus.services.jobs import index_job_attach_files, index_job_finish


def pubmed_listing(*, base_url: str) -> tuple[list[ncbi.RemoteFile], dict[str, str]]:
    """The files listed at `base_url` and their published md5s (IndexerError when the site cannot be read).

    The listing and the sidecars are retried like the downloads, by the same settings.
    """
    retries, backoff = download_retry_policy()
    with ncbi.default_client() as client:
        remote_files = ncbi.list_files(base_url, client=client, retries=retries, backoff=backoff)
        md5s = {
            remote.name: ncbi.fetch_md5(remote, client=client, retries=retries, backoff=backoff)
            for remote in remote_files
        }
    return remote_files, md5s


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
        elif row.status in (PubmedFile.Status.FAILED, PubmedFile.Status.CANCELLED):
            # Tried again from the step it had reached; a partial download resumes.
            row.status = _resume_status(row)
            row.save(update_fields=["status", "updated_at"])
        pending.append(row)
    return pending


def _resume_status(row: PubmedFile) -> PubmedFile.Status:
    path = local_path(row)
    return PubmedFile.Status.DOWNLOADED if path.exists() and row.md5 else PubmedFile.Status.PENDING


def index_job_plan_sync(*, job_id: int, base_url: str, max_files: int | None = None) -> bool:
    """List NCBI's files for a sync job and attach those still to do; whether there is anything to process.

    The site creates the job without files because listing takes a request per file (its md5): the worker does
    it here. Listing errors propagate, for the task's retry policy.
    """
    # Running from here: a cancel now goes through the flag, which is looked at once the listing is in.
    IndexJob.objects.filter(pk=job_id, status=IndexJob.Status.QUEUED).update(
        status=IndexJob.Status.RUNNING, started_at=timezone.now()
    )
    if IndexJob.objects.get(pk=job_id).finished_at:
        return False  # cancelled before the worker got to it
    index_job_log(job_id=job_id, message=f"listing {base_url}")
    remote_files, md5s = pubmed_listing(base_url=base_url)
    with transaction.atomic():
        job = IndexJob.objects.select_for_update().get(pk=job_id)
        if job.cancel_requested:
            index_job_finish(job_id=job_id, status=IndexJob.Status.CANCELLED, message="job cancelled after listing")
            return False
        todo = pubmed_files_to_sync(remote_files=remote_files, md5s=md5s)
        files = todo[:max_files] if max_files is not None else todo
        index_job_log(
            job_id=job_id,
            message=f"{len(remote_files)} files listed; {len(remote_files) - len(todo)} already indexed; "
            f"{len(files)} to process now",
        )
        if not files:
            index_job_finish(job_id=job_id, status=IndexJob.Status.DONE, message="nothing to do: job done")
            return False
        index_job_attach_files(job=job, files=files)
        IndexJob.objects.filter(pk=job_id).update(files_total=len(files))
    return True
