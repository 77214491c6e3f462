"""The log of an indexing job: lines the site and its workers append while the job runs."""

from __future__ import annotations

from webapp.corpus.models import IndexJobEvent, PubmedFile

_MAX_MESSAGE = 2000


def index_job_log(*, job_id: int | None, message: str) -> None:
    """Append one line to the job's log; a file processed outside any job has no log to write to."""
    if job_id is None:
        return
    # One INSERT per line: workers of the same job append at once without reading or rewriting anything.
    IndexJobEvent.objects.create(job_id=job_id, message=message[:_MAX_MESSAGE])


def pubmed_file_log(*, pubmed_file: PubmedFile, message: str) -> None:
    index_job_log(job_id=pubmed_file.job_id, message=f"{pubmed_file.name}: {message}")
