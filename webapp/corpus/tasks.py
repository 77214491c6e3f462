"""Celery tasks for indexing PubMed files: one chain of three retryable steps per file.

Baseline files are independent, so their chains fan out in parallel; update files must apply in order (a later
file's revision or deletion of a citation wins), so they run as one chain, file after file.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from celery import Task, chain, group, shared_task
from celery.exceptions import SoftTimeLimitExceeded

from indexer.errors import IndexerError
from webapp.corpus import indexing
from webapp.corpus.models import IndexJob, PubmedFile

logger = logging.getLogger(__name__)

MAX_RETRIES = 5
RETRY_BACKOFF_SECONDS = 10
# A baseline file holds ~30k citations: embedding them on two CPU cores takes far longer than a question's limit.
_FILE_TIME_LIMITS = {"soft_time_limit": 4 * 3600, "time_limit": 4 * 3600 + 120}


def _run_step(task: Task, step: Callable[..., None], file_id: int) -> int:
    """Run one step; transient errors are retried with backoff, anything else fails the file with its reason.

    A failure is recorded on the file's row (and its job), not raised: the chain's later steps see the failed
    status and do nothing, and the other files of the job go on.
    """
    try:
        step(file_id=file_id)
    except IndexerError as exc:
        if exc.transient and task.request.retries < MAX_RETRIES:
            raise task.retry(exc=exc, countdown=RETRY_BACKOFF_SECONDS * 2**task.request.retries) from exc
        logger.warning("PubMed file %s failed in %s: %s", file_id, step.__name__, exc)
        indexing.pubmed_file_fail(file_id=file_id, reason=str(exc))
    except SoftTimeLimitExceeded:
        indexing.pubmed_file_fail(file_id=file_id, reason=f"{step.__name__} ran past its time limit")
    except Exception as exc:
        logger.exception("PubMed file %s failed in %s", file_id, step.__name__)
        indexing.pubmed_file_fail(file_id=file_id, reason=f"internal error in {step.__name__}: {exc}")
    return file_id


_TASK_OPTIONS: dict[str, Any] = {"bind": True, "max_retries": MAX_RETRIES, **_FILE_TIME_LIMITS}


@shared_task(name="corpus.pubmed_file_download", **_TASK_OPTIONS)
def pubmed_file_download_task(self: Task, file_id: int) -> int:
    return _run_step(self, indexing.pubmed_file_download, file_id)


@shared_task(name="corpus.pubmed_file_store", **_TASK_OPTIONS)
def pubmed_file_store_task(self: Task, file_id: int) -> int:
    return _run_step(self, indexing.pubmed_file_store, file_id)


@shared_task(name="corpus.pubmed_file_embed", **_TASK_OPTIONS)
def pubmed_file_embed_task(self: Task, file_id: int) -> int:
    return _run_step(self, indexing.pubmed_file_embed, file_id)


def _file_steps(file_id: int) -> list[Any]:
    return [
        pubmed_file_download_task.si(file_id),
        pubmed_file_store_task.si(file_id),
        pubmed_file_embed_task.si(file_id),
    ]


def index_job_workflow(job: IndexJob) -> Any:
    file_ids = list(PubmedFile.objects.filter(job=job).order_by("name").values_list("pk", flat=True))
    if job.kind == IndexJob.Kind.UPDATES:
        return chain(*[step for file_id in file_ids for step in _file_steps(file_id)])
    return group(chain(*_file_steps(file_id)) for file_id in file_ids)
