"""The library's Celery tasks: thin wrappers that own the retry policy. Routed to the embed queue (webapp/settings.py):
indexing a document is mostly embedding its passages."""

from __future__ import annotations

from collections.abc import Callable

from celery import Task, shared_task

from indexer.errors import IndexerError
from webapp.library import indexing
from webapp.task_retries import DatabaseUnavailableError, RetryPolicy, database_errors_as_transient, run_retrying

MAX_RETRIES = 5
RETRY_POLICY = RetryPolicy(
    max_retries=MAX_RETRIES, delay_seconds=10, retry_on=(IndexerError, DatabaseUnavailableError), backoff=2.0
)


def _guarded(work: Callable[[], None]) -> None:
    with database_errors_as_transient():
        work()


# acks_late (CELERY_TASK_ACKS_LATE): both tasks are idempotent, so a redelivery after a crash is harmless.
@shared_task(name="library.document_index", bind=True, max_retries=MAX_RETRIES)
def document_index_task(self: Task, document_id: int) -> int:
    failure = run_retrying(
        self,
        lambda: _guarded(lambda: indexing.document_index_queued(document_id=document_id)),
        RETRY_POLICY,
        describe=f"indexing library document {document_id}",
    )
    if failure is not None:
        reason = failure.reason(timed_out="indexing took too long", internal="indexing failed")
        indexing.document_index_failed(document_id=document_id, reason=reason)
    return document_id


@shared_task(name="library.document_unindex", bind=True, max_retries=MAX_RETRIES)
def document_unindex_task(self: Task, document_id: int) -> int:
    # A deletion that cannot finish shows the document again, passages and all, so that the owner sees it is still
    # there and may delete it again.
    failure = run_retrying(
        self,
        lambda: _guarded(lambda: indexing.document_unindex(document_id=document_id)),
        RETRY_POLICY,
        describe=f"deleting library document {document_id}",
    )
    if failure is not None:
        indexing.document_delete_failed(document_id=document_id)
    return document_id
