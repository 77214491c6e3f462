"""The re-check of one watched answer, as a thin Celery task that owns the retry policy.

Routed to the verify queue (webapp/settings.py): a re-check is mostly verifier work. Its search reads the indexes
as the retrieve stage does: servers in production (OpenSearch, Qdrant), the embedded profile's one worker otherwise.
"""

from __future__ import annotations

from celery import Task, shared_task

from generator.errors import GenerationError
from indexer.errors import IndexerError
from webapp.task_retries import RetryPolicy, run_retrying
from webapp.watch import services

MAX_RETRIES = 3
RETRY_POLICY = RetryPolicy(
    max_retries=MAX_RETRIES, delay_seconds=30, retry_on=(GenerationError, IndexerError), backoff=2.0
)


# acks_late comes from CELERY_TASK_ACKS_LATE: a re-check is stored once per key, so a redelivery is harmless.
@shared_task(name="watch.question_recheck", bind=True, max_retries=MAX_RETRIES)
def question_recheck_task(self: Task, question_id: int, trigger: str, key: str) -> int:
    # A re-check that cannot be made leaves the answer and its earlier re-checks as they are: nothing to mark, the
    # next sync tries again; the failure is logged with the question's id.
    run_retrying(
        self,
        lambda: services.question_recheck(question_id=question_id, trigger=trigger, key=key),
        RETRY_POLICY,
        describe=f"re-check {key} of question {question_id}",
    )
    return question_id
