"""Celery tasks for indexing PubMed files: one chain of three retryable steps per file; and the tasks that plan a
sync job started from the site and run a rebuild job.

Baseline files are independent, so their chains fan out in parallel; update files must apply in order (a later
file's revision or deletion of a citation wins), so they run as one chain, file after file.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from celery import Task, chain, group, shared_task

from indexer.errors import IndexerError
from webapp.corpus import engines
from webapp.corpus.models import IndexJob, PubmedFile
from webapp.corpus.services import indexing
from webapp.corpus.services.background_embedding import apply_waiting_batches
from webapp.corpus.services.joblog import index_job_log
from webapp.corpus.services.jobs import index_job_finish
from webapp.corpus.services.rebuild_job import index_job_rebuild
from webapp.corpus.services.sync import index_job_plan_sync
from webapp.task_limits import LONG_TASK_SOFT_TIME_LIMIT, LONG_TASK_TIME_LIMIT
from webapp.task_retries import RetryPolicy, retry_if_transient, run_retrying

MAX_RETRIES = 5
RETRY_BACKOFF_SECONDS = 10
RETRY_POLICY = RetryPolicy(
    max_retries=MAX_RETRIES, delay_seconds=RETRY_BACKOFF_SECONDS, retry_on=(IndexerError,), backoff=2.0
)
# A baseline file holds ~30k citations: embedding them on two CPU cores takes far longer than a question's limit.
# The broker's visibility timeout is set above these (webapp/task_limits.py).
_FILE_TIME_LIMITS = {"soft_time_limit": LONG_TASK_SOFT_TIME_LIMIT, "time_limit": LONG_TASK_TIME_LIMIT}
BACKGROUND_WAIT_SECONDS = 15
BACKGROUND_WAIT_LOG_EVERY = 20  # about every five minutes


def _run_step(task: Task, step: Callable[..., None], file_id: int) -> int:
    """Run one step; transient errors are retried with backoff, anything else fails the file with its reason.

    A failure is recorded on the file's row (and its job), not raised: the chain's later steps see the failed
    status and do nothing, and the other files of the job go on.
    """

    def note_retry(error: Exception, countdown: float) -> None:
        indexing.pubmed_file_note(
            file_id=file_id,
            message=f"{_label(step)} failed ({error}); retry {task.request.retries + 1} of {MAX_RETRIES} "
            f"in {countdown:g} s",
        )

    failure = run_retrying(
        task,
        lambda: step(file_id=file_id),
        RETRY_POLICY,
        describe=f"PubMed file {file_id} in {step.__name__}",
        on_retry=note_retry,
    )
    if failure is not None:
        reason = failure.reason(
            timed_out=f"{step.__name__} ran past its time limit", internal=f"internal error in {step.__name__}"
        )
        indexing.pubmed_file_fail(file_id=file_id, reason=reason)
    return file_id


def _label(step: Callable[..., None]) -> str:
    return step.__name__.rsplit("_", 1)[-1]  # pubmed_file_download -> download


_TASK_OPTIONS: dict[str, Any] = {"bind": True, "max_retries": MAX_RETRIES, **_FILE_TIME_LIMITS}


@shared_task(name="corpus.pubmed_file_download", **_TASK_OPTIONS)
def pubmed_file_download_task(self: Task, file_id: int) -> int:
    return _run_step(self, indexing.pubmed_file_download, file_id)


@shared_task(name="corpus.pubmed_file_store", **_TASK_OPTIONS)
def pubmed_file_store_task(self: Task, file_id: int) -> int:
    return _run_step(self, indexing.pubmed_file_store, file_id)


@shared_task(name="corpus.pubmed_file_embed", **_TASK_OPTIONS)
def pubmed_file_embed_task(self: Task, file_id: int) -> int:
    # Run eagerly (tests, `ask --in-process`) there is no worker and no background embedder: the step embeds here.
    waiting = 0 if self.request.is_eager else indexing.pubmed_file_background_wait(file_id=file_id)
    if waiting:
        # The background embedder does the work (VERIMED_BACKGROUND_EMBEDDING): this step only looks again later, so
        # the worker stays free for questions. Waiting is not failing: these retries are not counted.
        if self.request.retries % BACKGROUND_WAIT_LOG_EVERY == 0:
            indexing.pubmed_file_log_waiting(file_id=file_id, waiting=waiting)
        raise self.retry(countdown=BACKGROUND_WAIT_SECONDS, max_retries=None)
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


@shared_task(name="corpus.index_job_sync", bind=True, max_retries=MAX_RETRIES)
def index_job_sync_task(self: Task, job_id: int, base_url: str, max_files: int | None = None) -> None:
    """List NCBI's files for a sync job started from the site, then run the files still to do."""
    try:
        planned = index_job_plan_sync(job_id=job_id, base_url=base_url, max_files=max_files)
    except IndexerError as exc:
        cannot_list = f"cannot list {base_url} ({exc})"
        retry_if_transient(
            self,
            exc,
            RETRY_POLICY,
            on_retry=lambda delay: index_job_log(job_id=job_id, message=f"{cannot_list}; retrying in {delay:g} s"),
        )
        index_job_finish(
            job_id=job_id, status=IndexJob.Status.FAILED, message=f"cannot list {base_url}: {exc}", error=str(exc)
        )
        return
    if planned:
        index_job_workflow(IndexJob.objects.get(pk=job_id)).apply_async()


@shared_task(name="corpus.vectors_apply_waiting")
def vectors_apply_waiting_task() -> int:
    """Write the batches the background embedder left into the vector index this worker holds (a few hundred
    milliseconds: questions never wait long behind it). Several queued at once are harmless: the first takes all."""
    return apply_waiting_batches(vectors=engines.vector_index(), embedder=engines.embedder())


# A rebuild is never retried: a second run would start another generation; the admin starts a fresh job instead.
@shared_task(
    name="corpus.index_rebuild",
    soft_time_limit=_FILE_TIME_LIMITS["soft_time_limit"],
    time_limit=_FILE_TIME_LIMITS["time_limit"],
)
def index_rebuild_task(job_id: int) -> None:
    index_job_rebuild(job_id=job_id)
