"""The deep check as a thin Celery task that owns the retry policy and the failed and stopped states.

Routed to the `llm` queue (webapp/settings.py): its longest step is the model's claim extraction, on the same server
the answers are written with; its searches are the retrieve stage's (also on `llm`), its verifier pairs a few dozen.
"""

from __future__ import annotations

from celery import Task, shared_task

from generator.errors import GenerationError
from indexer.errors import IndexerError
from verifier.claim_tree import DeepCheckStoppedError
from webapp.deepcheck import services
from webapp.task_retries import RetryPolicy, run_retrying

MAX_RETRIES = 2
RETRY_POLICY = RetryPolicy(max_retries=MAX_RETRIES, delay_seconds=5, retry_on=(GenerationError, IndexerError))


# acks_late comes from CELERY_TASK_ACKS_LATE: a run rewrites its row's result, so a redelivery is harmless.
@shared_task(name=services.TASK_NAME, bind=True, max_retries=MAX_RETRIES)
def deep_check_run_task(self: Task, deep_check_id: int, run: int | None = None) -> int:
    # `run`: the start it was queued for (None from a caller that runs the check as it stands, the command).
    def work() -> None:
        try:
            services.deep_check_run(deep_check_id=deep_check_id, run=run)
        except DeepCheckStoppedError:
            services.deep_check_mark_stopped(deep_check_id=deep_check_id)

    failure = run_retrying(self, work, RETRY_POLICY, describe=f"deep check {deep_check_id}")
    if failure is not None:
        services.deep_check_fail(
            deep_check_id=deep_check_id,
            reason=failure.reason(
                timed_out="The deep check took too long and was stopped.", internal="Internal error in the deep check"
            ),
        )
    return deep_check_id
